import { before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Browser, Page } from "playwright-core";
import {
  busiestPrimaryStreet,
  callApi,
  signedInPage,
  type WebServer,
  type BrowserEnv,
} from "../../helpers/browser.js";
import { runCli } from "../../helpers/server.js";

interface Paged {
  columns: string[];
  data: unknown[][];
  paging: { next_url: string } | null;
}

export function countsSuite(env: BrowserEnv): void {
  describe("counts explorer in Chromium", () => {
    let server: WebServer;
    let browser: Browser;
    /** A named main road of the demo network, found over the API (not assumed). */
    let street: string;

    const call = async <T>(method: string, path: string, body?: unknown): Promise<T> =>
      (await (await callApi(server, method, path, body, 200)).json()) as T;
    /** Every row of a metrics call, following its pages. */
    const metricsRows = async (body: unknown) => {
      let page = await call<Paged>("POST", "/counts/v1/metrics", body);
      const rows = [...page.data];
      while (page.paging) {
        page = await call<Paged>("GET", page.paging.next_url);
        rows.push(...page.data);
      }
      return rows.map((row) => Object.fromEntries(page.columns.map((c, i) => [c, row[i]])));
    };

    before(async () => {
      ({ server, browser } = env);
      street = await busiestPrimaryStreet(server);
    });

    /** Opens Counts, searches the street, chooses it with the keyboard, sets the radius and runs the query. */
    async function showCounts(page: Page, radiusM: number) {
      await page.getByRole("tab", { name: "Counts" }).click();
      const search = page.getByRole("combobox", { name: "Search a street" });
      await search.fill(street.slice(0, Math.max(4, street.length - 3)));
      await page.getByRole("option", { name: street }).first().waitFor();
      await search.press("ArrowDown");
      await search.press("Enter");
      await page.getByText(`Place: ${street}`).waitFor();
      await page.getByLabel("Radius in metres").fill(String(radiusM));
      await page.getByLabel("Radius in metres").press("Tab");
      // The months come from /date_ranges; the latest is chosen.
      await page.locator("#counts-month option").first().waitFor({ state: "attached" });
      await page.getByText(/^This query counts [\d,]+ segments × 5 fields/).waitFor();
      await page.getByRole("button", { name: "Show counts" }).click();
      const [place] = (
        await call<{ places: { point: [number, number] }[] }>(
          "GET",
          `/api/v2/networks/mc/places?q=${encodeURIComponent(street)}&limit=1`,
        )
      ).places;
      // Within the Counts panel: the (hidden) analysis form has a "Travel mode" too.
      const panel = page.getByRole("tabpanel", { name: "Counts" });
      const value = (label: string) => panel.getByLabel(label, { exact: true }).inputValue();
      const [year, month] = (await value("Month")).split("-").map(Number);
      const filters = {
        country: "mc",
        mode: await value("Travel mode"),
        day_type: await value("Day type"),
        day_part: Number(await value("Day part")),
        direction: await value("Direction"),
        data_version: 1,
      };
      return { place, year, month, filters };
    }

    it("shows the segments around a searched street as the metrics API answers them, then a segment's months", async () => {
      const page = await signedInPage(browser, server);
      const radiusM = 350;
      const { place, year, month, filters } = await showCounts(page, radiusM);
      await page
        .getByRole("status")
        .getByText(/segments within \d+ m have trips/)
        .waitFor({ timeout: 30_000 });

      const expected = await metricsRows({
        ...filters,
        geometry: {
          radius: { point: { type: "point", coordinates: place.point }, buffer: radiusM, unit: "m" },
        },
        fields: ["segment_id", "trips_volume"],
        date: { year, month },
      });
      assert.ok(expected.length > 0, "the demo data has trips around the street");
      await page.getByText(`${expected.length} segments drawn with trips`).waitFor();
      const table = page.getByRole("table", { name: "Segments with trips in the month" });
      const rows = table.locator("tbody tr");
      assert.equal(await rows.count(), expected.length);
      const listed = new Map<number, string>();
      for (const row of await rows.all())
        listed.set(
          Number(await row.getAttribute("data-segment-id")),
          (await row.locator("td").first().textContent())!,
        );
      assert.deepEqual(
        new Map(
          expected.map((r) => [r.segment_id as number, (r.trips_volume as number).toLocaleString("en")]),
        ),
        listed,
      );

      // Sorted by trips per day, highest first; the header says so, and that they are expanded figures.
      assert.equal(
        await table.getByRole("columnheader", { name: /^Expanded trips\/day/ }).getAttribute("aria-sort"),
        "descending",
      );
      // The volumes are an index of a 10,000-device panel, not counted vehicles: the panel says so and links the method.
      assert.match(
        (await page.locator("#counts-units").textContent()) ?? "",
        /expanded to a panel of 10,000 devices/,
      );
      assert.equal(
        await page
          .locator("#counts-units")
          .getByRole("link", { name: "How the figures are made" })
          .getAttribute("href"),
        "method.html#expansion",
      );
      const first = Number(await rows.first().getAttribute("data-segment-id"));
      const top = Math.max(...expected.map((r) => r.trips_volume as number));
      assert.equal(expected.find((r) => r.segment_id === first)?.trips_volume, top);

      // Choosing the segment (keyboard) opens its monthly chart; the data table has one row per month with trips.
      await rows.first().getByRole("button").press("Enter");
      const drawer = page.getByRole("region", { name: new RegExp(`· ${first}$`) });
      await drawer.getByText(/months with trips/).waitFor({ timeout: 30_000 });
      const { years } = await call<{ years: { year: number }[] }>(
        "GET",
        `/counts/v1/date_ranges/mc/${filters.mode}`,
      );
      const monthly = (
        await Promise.all(
          years.map(({ year: y }) =>
            metricsRows({
              ...filters,
              geometry: { segment_ids: [first] },
              fields: ["year_month", "trips_volume"],
              date: { year: y },
            }),
          ),
        )
      ).flat();
      await drawer.getByText("Data table").click();
      const monthRows = drawer.getByRole("table", { name: /^Monthly counts of/ }).locator("tbody tr");
      assert.equal(await monthRows.count(), monthly.length);
      const volumes = await monthRows.locator("td:first-of-type").allTextContents();
      assert.deepEqual(
        volumes,
        monthly
          .sort((a, b) => String(a.year_month).localeCompare(String(b.year_month)))
          .map((m) => (m.trips_volume as number).toLocaleString("en")),
      );
      assert.ok(await drawer.locator("canvas").isVisible());

      // Another column sorts; leaving the tab hides the drawer, coming back shows it again.
      await table.getByRole("button", { name: "VMT" }).click();
      assert.equal(
        await table.getByRole("columnheader", { name: /VMT/ }).getAttribute("aria-sort"),
        "descending",
      );
      await page.getByRole("tab", { name: "Zone sets" }).click();
      assert.ok(await drawer.isHidden());
      await page.getByRole("tab", { name: "Counts" }).click();
      assert.ok(await drawer.isVisible());

      // Escape closes the chart and puts the keyboard back on the segment's row.
      await drawer.getByRole("button", { name: "Close the monthly chart" }).focus();
      await page.keyboard.press("Escape");
      assert.ok(await drawer.isHidden());
      assert.equal(
        await page.evaluate('document.activeElement?.closest("tr")?.getAttribute("data-segment-id")'),
        String(first),
      );
      await page.close();
    });

    it("picks a place by clicking the map and works at tablet width", async () => {
      const page = await signedInPage(browser, server, { width: 768, height: 1024 });
      await page.getByRole("button", { name: "Panels" }).click();
      await page.getByRole("tab", { name: "Counts" }).click();
      await page.getByRole("button", { name: "Panels" }).click();
      // The sidebar is closed: the whole map takes the click.
      await page.locator("#map canvas").click({ position: { x: 384, y: 400 } });
      await page.getByRole("button", { name: "Panels" }).click();
      await page.getByText(/^Place: Map point /).waitFor();
      await page.locator("#counts-month option").first().waitFor({ state: "attached" });
      await page.getByRole("button", { name: "Show counts" }).click();
      await page
        .getByRole("status")
        .getByText(/segments within \d+ m/)
        .waitFor({ timeout: 30_000 });
      await page.close();
    });

    it("says so when the key's counts quota is used up", async () => {
      const prefix = server.key.slice(0, 10);
      const set = await runCli(server.dataDir, ["key", "quota", prefix, "1"]);
      assert.equal(set.code, 0, set.stderr);
      const page = await signedInPage(browser, server);
      await showCounts(page, 200);
      const status = page.locator("#counts-status");
      await page.getByText(/quota of this API key is used up/).waitFor({ timeout: 30_000 });
      assert.equal(await status.getAttribute("data-kind"), "error");
      assert.match((await status.textContent()) ?? "", /quota of this API key is used up/);
      await page.close();
    });
  });
}
