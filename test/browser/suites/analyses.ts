import { before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import type { Browser, Page } from "playwright-core";
import { DEMO_EMAIL } from "../../../src/app/accounts.js";
import { callApi, signedInPage, type WebServer, type BrowserEnv } from "../../helpers/browser.js";
import { monacoDistricts } from "../../helpers/zones.js";

export function analysesSuite(env: BrowserEnv): void {
  describe("web application in Chromium: analyses", () => {
    let server: WebServer;
    let browser: Browser;

    const api = (method: string, path: string, body?: unknown) => callApi(server, method, path, body);
    const analysisCount = async () =>
      ((await (await api("GET", "/api/v2/analyses")).json()) as { analyses: unknown[] }).analyses.length;

    before(async () => {
      ({ server, browser } = env);
      await api("POST", "/api/v2/zone_sets", {
        insight_login_email: DEMO_EMAIL,
        zone_set_name: "Districts",
        zones: { type: "FeatureCollection", features: monacoDistricts() },
      });
    });

    async function openForm(page: Page) {
      await page.getByRole("tab", { name: "Analyses" }).click();
      await page.getByRole("button", { name: "New analysis" }).click();
      const form = page.getByRole("form", { name: "New analysis" });
      // The supported periods arrive and the first range is filled with the latest month.
      await form.getByText(/^Data available \(MC\)/).waitFor();
      return form;
    }

    async function chooseZoneSets(form: ReturnType<Page["getByRole"]>) {
      await form
        .getByRole("group", { name: "Origin zone sets" })
        .getByLabel(/Districts/)
        .check();
      await form
        .getByRole("group", { name: "Destination zone sets" })
        .getByLabel(/Districts/)
        .check();
    }

    it("creates an OD analysis, waits for Data Available, maps, tabulates, charts and downloads it", async () => {
      const page = await signedInPage(browser, server);
      const form = await openForm(page);
      await form.getByLabel("Name", { exact: true }).fill("Districts flows");
      await form.getByLabel("Travel mode").selectOption("All_Vehicles");
      await chooseZoneSets(form);
      await form.getByRole("button", { name: "Create analysis" }).click();

      // The new analysis opens with its live status; its row moves on to Data Available by itself.
      const detail = page.getByRole("region", { name: "Districts flows", exact: true });
      await detail.waitFor();
      const row = page.getByRole("row", { name: /Districts flows/ });
      await row.getByText("Data Available").waitFor({ timeout: 60_000 });
      await detail.getByText("Data Available").waitFor();
      const { analyses } = (await (await api("GET", "/api/v2/analyses")).json()) as {
        analyses: { name: string; uuid: string; metrics: string[] }[];
      };
      const created = analyses.find((a) => a.name === "Districts flows")!;
      assert.deepEqual(created.metrics, ["od_all", "od_pers", "od_comm", "zone_od_all", "sample_size"]);
      const detailed = (await (await api("GET", `/api/v2/analyses/${created.uuid}`)).json()) as {
        analysis: { oz_sets: { name: string }[]; date_ranges: unknown[]; day_parts: unknown[] };
      };
      assert.deepEqual(
        detailed.analysis.oz_sets.map((s) => s.name),
        ["Districts"],
      );
      assert.equal(detailed.analysis.day_parts.length, 6);

      // The flow map, table and chart: the default slice is the first device type, day type and day part.
      await detail.getByRole("button", { name: "Show flow map" }).click();
      const drawer = page.getByRole("region", { name: "Origin-destination flows: Districts flows" });
      const csv = await (await api("GET", `/api/v2/analyses/download/uuid/${created.uuid}/od_all`)).text();
      const expected = csv
        .trim()
        .split("\n")
        .slice(1)
        .map((line) => line.split(","))
        .filter(
          (c) =>
            c[0] === "All Vehicles" && c[9] === "0: Average Day (M-Su)" && c[10] === "0: All Day (12am-12am)",
        )
        .map((c) => [c[2], c[6], c[11], c[12], c[13], c[14]]);
      assert.ok(expected.length > 1, "the demo month has flows between the districts");
      await drawer.getByText(`${expected.length} of ${expected.length} flows on the map.`).waitFor();
      assert.equal(await drawer.getAttribute("data-flows-drawn"), String(expected.length));

      const table = drawer.getByRole("table", { name: "Origin-destination flows" });
      const cells = async () =>
        (await table
          .locator("tbody tr")
          .evaluateAll((rows) =>
            rows.map((r) => [...r.querySelectorAll("td")].slice(1).map((td) => td.textContent ?? "")),
          )) as string[][];
      const plain = (rows: string[][]) =>
        rows.map((r) => r.map((v) => v.replace(/[,\s]/g, "").replace("–", "")));
      const byPair = (a: string[], b: string[]) => `${a[0]}>${a[1]}`.localeCompare(`${b[0]}>${b[1]}`);
      assert.deepEqual(plain(await cells()).sort(byPair), [...expected].sort(byPair));

      // Sorted by trips per day, largest first, to begin with; the header says so.
      // Index output is labelled as an index, not as counted trips, with a link to the method.
      const tripsHeader = table.getByRole("columnheader", { name: "Index (trips/day)" });
      assert.equal(await tripsHeader.getAttribute("aria-sort"), "descending");
      assert.match(await drawer.locator(".unit-note").innerText(), /expanded to a panel of 10,000 devices/);
      const method = drawer.getByRole("link", { name: "How the figures are made" });
      assert.equal(await method.getAttribute("href"), "method.html#expansion");
      const methodPage = await fetch(new URL("method.html", page.url()));
      assert.equal(methodPage.status, 200);
      assert.match(await methodPage.text(), /10,000 ÷ distinct devices/);
      const trips = async () => (await cells()).map((r) => Number(r[2].replace(/\D/g, "")));
      const initial = await trips();
      assert.deepEqual(
        initial,
        [...initial].sort((a, b) => b - a),
      );
      // Origin by keyboard: A to Z.
      await table.getByRole("button", { name: "Origin", exact: true }).focus();
      await page.keyboard.press("Enter");
      assert.equal(
        await table.getByRole("columnheader", { name: "Origin", exact: true }).getAttribute("aria-sort"),
        "ascending",
      );
      assert.equal(await tripsHeader.getAttribute("aria-sort"), "none");
      const origins = (await cells()).map((r) => r[0]);
      assert.deepEqual(
        origins,
        [...origins].sort((a, b) => a.localeCompare(b)),
      );
      await page.keyboard.press("Enter");
      const descending = (await cells()).map((r) => r[0]);
      assert.deepEqual(
        descending,
        [...origins].sort((a, b) => b.localeCompare(a)),
      );

      // Choosing a pair charts it by day part.
      const [first] = await cells();
      const pick = table.getByRole("button", { name: `Chart ${first[0]} → ${first[1]}` });
      await pick.click();
      assert.equal(await pick.getAttribute("aria-pressed"), "true");
      await drawer
        .getByText(`Trips per day by day part, Average Day (M-Su): ${first[0]} → ${first[1]}`)
        .waitFor();
      assert.equal(await drawer.getByRole("img").getAttribute("aria-labelledby"), "flows-chart-title");

      // Download the CSV through the button: the same bytes as GET of the metric.
      const [download] = await Promise.all([
        page.waitForEvent("download"),
        detail.getByRole("button", { name: "Download od_all CSV" }).click(),
      ]);
      assert.equal(download.suggestedFilename(), "Districts_flows_od_all.csv");
      assert.equal(await readFile((await download.path())!, "utf8"), csv);

      // Leaving the tab hides the drawer; coming back shows it again.
      await page.getByRole("tab", { name: "Zone sets" }).click();
      assert.ok(await drawer.isHidden());
      await page.getByRole("tab", { name: "Analyses" }).click();
      await drawer.waitFor();

      // Delete (after the confirmation): the API answers Deleted, the row, the detail and the drawer go.
      page.once("dialog", (dialog) => void dialog.accept());
      await detail.getByRole("button", { name: "Delete analysis" }).click();
      await row.waitFor({ state: "detached" });
      assert.ok(await drawer.isHidden());
      assert.ok(await detail.isHidden());
      const status = await api("POST", "/api/v2/analyses/status", { analyses: [{ uuid: created.uuid }] });
      assert.equal(
        ((await status.json()) as { analyses: { status: string }[] }).analyses[0].status,
        "Deleted",
      );
      await page.close();
    });

    it("shows date and server validation messages next to the field at fault and creates nothing", async () => {
      const before = await analysisCount();
      const page = await signedInPage(browser, server);
      const form = await openForm(page);
      await form.getByLabel("Name", { exact: true }).fill("Not created");
      await chooseZoneSets(form);
      const start = form.getByLabel("Start date");
      const end = form.getByLabel("End date");
      const create = form.getByRole("button", { name: "Create analysis" });

      // An end before the start.
      const realStart = await start.inputValue();
      await end.fill("2000-01-01");
      await create.click();
      const rangeError = form.getByText("The end date is before the start date.");
      await rangeError.waitFor();
      assert.ok(
        (await end.getAttribute("aria-describedby"))!.includes((await rangeError.getAttribute("id"))!),
      );
      assert.equal(await start.getAttribute("aria-invalid"), "true");

      // Dates outside every supported period.
      await start.fill("2000-01-01");
      await end.fill("2000-01-31");
      await create.click();
      await form.getByText(/^Dates must lie within one data period: /).waitFor();

      // A day type the page lets through and the server refuses: its message lands at the day types.
      await start.fill(realStart);
      await end.fill(realStart);
      await form.getByLabel(/More day types/).fill("Backwards|76");
      await create.click();
      const dayTypes = form.getByRole("group", { name: "Day types" });
      await dayTypes.getByText(/Backwards\|76/).waitFor();
      assert.equal(await dayTypes.getAttribute("aria-invalid"), "true");
      await form.getByText("The server refused the analysis; see the messages above.").waitFor();

      assert.equal(await analysisCount(), before);
      await page.close();
    });
  });
}
