import { before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { signedInPage, type BrowserEnv } from "../../helpers/browser.js";
import {
  analysisDetailNamed,
  CATALOGUE_CASES,
  createAndMap,
  createCatalogueZoneSets,
} from "../catalogue-form.js";

/** Issue 13: each catalogue type is offered by the form, runs, and its results are drawn on the map. */
export function catalogueSuite(env: BrowserEnv): void {
  describe("web application in Chromium: the analysis catalogue", () => {
    before(async () => {
      await createCatalogueZoneSets(env.server);
    });

    for (const c of CATALOGUE_CASES)
      it(`creates a ${c.type} (${c.name}) through the form and draws its results on the map`, async () => {
        const page = await signedInPage(env.browser, env.server);
        const { drawer, drawn } = await createAndMap(page, c);
        assert.ok(drawn > 0, `${c.type}: results drawn on the map (${drawn})`);
        if (c.detail) {
          // The form sent the type's own fields (top_routes_count, metric_type) and the analysis kept them.
          const detail = await analysisDetailNamed(env.server, c.name);
          for (const [field, value] of Object.entries(c.detail)) assert.equal(detail[field], value, field);
        }
        if (c.metric) {
          // Home/work places of at least 5 devices are shaded: createAndMap waited for the map to render them.
          assert.ok(Number(await drawer.getAttribute("data-places-shaded")) > 0, "shaded places");
          const rows = await drawer.locator("tbody td").allTextContents();
          assert.ok(
            rows.some((place) => /^Cell -?\d+_-?\d+$/.test(place.trim())),
            `${c.metric} rows name cells: ${rows.join()}`,
          );
        }
        // The map's layers hold what the note counts: the legend is shown with them.
        await drawer.locator(".flow-legend").waitFor();
        if (c.type === "Network_Performance") {
          // Speeds per hour of entering: the period filter offers the hours the rows hold.
          const periods = await drawer.locator("#flows-day-part option").allTextContents();
          assert.ok(
            periods.length > 0 && periods.every((p) => /^\d\d:\d\d-\d\d:\d\d$/.test(p)),
            periods.join(),
          );
          assert.ok(
            (await page.locator(".flow-table th", { hasText: "Travel time index" }).count()) === 1,
            "the table shows the travel time index",
          );
          const byTime = c.detail?.metric_type === "travel_time";
          const legend = await drawer.locator(".flow-legend").textContent();
          assert.match(legend ?? "", byTime ? /average travel time/ : /average speed/, legend ?? "");
          const headers = await page.locator(".flow-table th").allTextContents();
          assert.equal(
            headers.some((h) => /Avg speed/.test(h)),
            !byTime,
            headers.join(),
          );
        }
        await page.close();
      });
  });
}
