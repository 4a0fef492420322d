import { before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import type { Browser, Page } from "playwright-core";
import { DEMO_EMAIL } from "../../../src/app/accounts.js";
import { callApi, signedInPage, type BrowserEnv, type WebServer } from "../../helpers/browser.js";

/**
 * The whole path in one go, as a planner walks it: draw a zone set on the map and save it, find it
 * in the API, create an analysis on it from the form, wait for Data Available, open its flow map and
 * download a metric. The other suites test each step in depth; this one tests that they join up.
 */
export function journeySuite(env: BrowserEnv): void {
  describe("a planner's path: drawn zones → analysis → flow map → CSV", () => {
    let server: WebServer;
    let browser: Browser;
    before(() => {
      ({ server, browser } = env);
    });

    const api = (path: string) => callApi(server, "GET", path, undefined, 200);

    async function clickMap(page: Page, [dx, dy]: [number, number]): Promise<void> {
      const box = (await page.locator("#map canvas").boundingBox())!;
      const [x, y] = [box.x + box.width / 2 + dx, box.y + box.height / 2 + dy];
      await page.mouse.move(x, y, { steps: 4 });
      await page.mouse.click(x, y);
    }

    /** A rectangle of clicks from (x0, y0) to (x1, y1) around the map's centre, closed on its first corner. */
    async function drawBox(page: Page, [x0, y0, x1, y1]: [number, number, number, number]): Promise<void> {
      const corners: [number, number][] = [
        [x0, y0],
        [x1, y0],
        [x1, y1],
        [x0, y1],
      ];
      for (const corner of [...corners, corners[0]]) await clickMap(page, corner);
    }

    it("draws two zones, saves them, analyses them and downloads the flows shown", async () => {
      const page = await signedInPage(browser, server);

      // Draw: the e-mail is the signed-in user's already; two boxes either side of the map's centre.
      await page.getByRole("button", { name: "New zone set" }).click();
      await page.getByLabel("Zone set name").fill("Journey zones");
      assert.equal(await page.getByRole("textbox", { name: "Your login e-mail" }).inputValue(), DEMO_EMAIL);
      await drawBox(page, [-200, -150, -5, 150]);
      await drawBox(page, [5, -150, 200, 150]);
      const zones = page.locator("#zone-editor-zones > li");
      assert.equal(await zones.count(), 2);
      await zones.nth(0).getByLabel("Name").fill("West");
      await zones.nth(1).getByLabel("Name").fill("East");
      await page.getByRole("button", { name: "Save zone set" }).click();
      await page.locator("#zone-editor-result", { hasText: 'Zone set "Journey zones" saved' }).waitFor();

      // The API has it, with the two drawn polygons.
      const { zone_sets } = (await (await api("/api/v2/zone_sets")).json()) as {
        zone_sets: { name: string; uuid: string; zone_count: number }[];
      };
      const set = zone_sets.find((s) => s.name === "Journey zones");
      assert.equal(set?.zone_count, 2);

      // Analyse it from the form.
      await page.getByRole("tab", { name: "Analyses" }).click();
      await page.getByRole("button", { name: "New analysis" }).click();
      const form = page.getByRole("form", { name: "New analysis" });
      await form.getByText(/^Data available \(MC\)/).waitFor();
      await form.getByLabel("Name", { exact: true }).fill("Journey");
      for (const side of ["Origin zone sets", "Destination zone sets"])
        await form
          .getByRole("group", { name: side })
          .getByLabel(/Journey zones/)
          .check();
      await form.getByRole("button", { name: "Create analysis" }).click();
      const detail = page.getByRole("region", { name: "Journey", exact: true });
      await detail.getByText("Data Available").waitFor({ timeout: 120_000 });

      // The flow map shows every flow of the default slice that the metric's CSV holds.
      const { analyses } = (await (await api("/api/v2/analyses")).json()) as {
        analyses: { name: string; uuid: string }[];
      };
      const uuid = analyses.find((a) => a.name === "Journey")!.uuid;
      const csv = await (await api(`/api/v2/analyses/download/uuid/${uuid}/od_all`)).text();
      const slice = csv
        .trim()
        .split("\n")
        .slice(1)
        .filter(
          (line) => line.startsWith("All Vehicles,") && line.includes("0: Average Day (M-Su),0: All Day"),
        );
      assert.ok(slice.length > 0, "trips of the demo month start and end in the drawn zones");
      await detail.getByRole("button", { name: "Show flow map" }).click();
      const drawer = page.getByRole("region", { name: "Origin-destination flows: Journey" });
      await drawer.getByText(`${slice.length} of ${slice.length} flows on the map.`).waitFor();

      // Download through the button: the bytes the API serves.
      const [download] = await Promise.all([
        page.waitForEvent("download"),
        detail.getByRole("button", { name: "Download od_all CSV" }).click(),
      ]);
      assert.equal(await readFile((await download.path())!, "utf8"), csv);
      await page.close();
    });
  });
}
