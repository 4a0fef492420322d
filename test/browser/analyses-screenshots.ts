/**
 * Screenshots of the analyses view for docs/web-app.md (not part of the test suite):
 *   node --import tsx test/browser/analyses-screenshots.ts
 * Starts the demo server with a fresh bundle, adds a zone set of Monaco districts over the API, fills the
 * "New analysis" form, waits for the result and captures the flow map with its table and chart.
 */
import { DEMO_EMAIL } from "../../src/domain/accounts.js";
import { launchBrowser, signedInPage, startWebServer } from "../helpers/browser.js";
import { boxFeature, monacoDistricts } from "../helpers/zones.js";

const OUT = new URL("../../docs/screenshots/", import.meta.url).pathname;

const server = await startWebServer();
const browser = await launchBrowser();
try {
  await fetch(`${server.baseUrl}/api/v2/zone_sets`, {
    method: "POST",
    headers: { "x-stl-key": server.key, "content-type": "application/json" },
    body: JSON.stringify({
      insight_login_email: DEMO_EMAIL,
      zone_set_name: "Monaco districts",
      zones: {
        type: "FeatureCollection",
        features: [
          ...monacoDistricts(),
          boxFeature("Larvotto", 4, [7.433, 43.742, 7.44, 43.748]),
          boxFeature("Monaco-Ville", 5, [7.417, 43.728, 7.427, 43.733]),
        ],
      },
    }),
  });
  const page = await signedInPage(browser, server, { width: 1280, height: 900 });
  await page.getByRole("tab", { name: "Analyses" }).click();
  await page.getByRole("button", { name: "New analysis" }).click();
  const form = page.getByRole("form", { name: "New analysis" });
  await form.getByText(/^Data available/).waitFor();
  await form.getByLabel("Name", { exact: true }).fill("Districts, last month");
  await form
    .getByRole("group", { name: "Origin zone sets" })
    .getByLabel(/Monaco districts/)
    .check();
  await form
    .getByRole("group", { name: "Destination zone sets" })
    .getByLabel(/Monaco districts/)
    .check();
  await page.screenshot({ path: `${OUT}analysis-form.png` });

  await form.getByRole("button", { name: "Create analysis" }).click();
  const detail = page.getByRole("region", { name: "Districts, last month", exact: true });
  await detail.getByText("Data Available").waitFor({ timeout: 120_000 });
  await detail.getByRole("button", { name: "Show flow map" }).click();
  await page.getByText(/flows on the map\.$/).waitFor();
  await page
    .getByRole("table", { name: "Origin-destination flows" })
    .getByRole("button", { name: /^Chart / })
    .first()
    .click();
  // Let the map finish drawing the arcs before the capture.
  await page.waitForTimeout(1500);
  await page.screenshot({ path: `${OUT}analysis-flow-map.png` });
  console.log(`screenshots written to ${OUT}`);
} finally {
  await browser.close();
  await server.stop();
}
