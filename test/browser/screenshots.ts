/**
 * Screenshots of the main screens for docs/web-app.md (not part of the test suite):
 *   node --import tsx test/browser/screenshots.ts
 * Starts the demo server with a fresh bundle and Chromium, then walks the screens as a planner would:
 * sign-in, the map with a zone set, the zone-set editor, the analysis form and flow map, the counts explorer,
 * and one results map per catalogue type. `--catalogue` takes only the catalogue types' maps
 * (`--catalogue --only=Network_OD,Network_Performance`: only those types'; a screenshot file name such as
 * `--only=result-home-work.png` takes that map alone).
 */
import type { Page } from "playwright-core";
import { DEMO_EMAIL } from "../../src/app/accounts.js";
import {
  busiestPrimaryStreet,
  callApi,
  launchBrowser,
  signedInPage,
  startWebServer,
  type WebServer,
} from "../helpers/browser.js";
import { boxFeature, monacoDistricts } from "../helpers/zones.js";
import { CATALOGUE_CASES, createAndMap, createCatalogueZoneSets } from "./catalogue-form.js";

const OUT = new URL("../../docs/screenshots/", import.meta.url).pathname;
const VIEWPORT = { width: 1280, height: 900 };
/** MapLibre draws asynchronously after the data arrives: a moment before each capture. */
const settle = (page: Page) => page.waitForTimeout(1500);

async function signIn(page: Page, server: WebServer) {
  await page.goto(server.baseUrl);
  await page.getByLabel("API key").fill(server.key);
  await page.getByLabel(/E-mail/).fill(DEMO_EMAIL);
  await page.screenshot({ path: `${OUT}sign-in.png` });
}

async function overview(page: Page) {
  const zoneSets = page.getByRole("tabpanel", { name: "Zone sets" });
  await zoneSets.getByRole("checkbox", { name: /Monaco districts/ }).check();
  await zoneSets.locator("summary", { hasText: "Zones (" }).waitFor();
  await settle(page);
  await page.screenshot({ path: `${OUT}map-network-zones-analyses.png` });
  await zoneSets.getByRole("checkbox", { name: /Monaco districts/ }).uncheck();
}

async function zoneEditor(page: Page) {
  await page.getByRole("button", { name: "New zone set" }).click();
  await page.getByLabel("Zone set name").fill("Harbour gates");
  await page.getByRole("button", { name: "Add rectangle at map centre" }).click();
  await page.getByRole("tabpanel", { name: "Zone sets" }).getByLabel("Name").first().fill("Port Hercule");
  await settle(page);
  await page.screenshot({ path: `${OUT}zone-editor.png` });
  page.once("dialog", (dialog) => void dialog.accept());
  await page.getByRole("button", { name: "Cancel" }).click();
}

async function countsExplorer(page: Page, street: string) {
  await page.getByRole("tab", { name: "Counts" }).click();
  const search = page.getByRole("combobox", { name: "Search a street" });
  await search.fill(street);
  await page.getByRole("option", { name: street }).first().waitFor();
  await search.press("ArrowDown");
  await search.press("Enter");
  await page.getByLabel("Radius in metres").fill("400");
  await page.getByLabel("Radius in metres").press("Tab");
  await page.getByText(/^This query counts [\d,]+ segments/).waitFor();
  await page.getByRole("button", { name: "Show counts" }).click();
  const rows = page.locator("#panel-counts tbody tr");
  await rows.first().waitFor();
  await rows.first().getByRole("button").click();
  await page.getByText(/months with trips/).waitFor({ timeout: 30_000 });
  await settle(page);
  await page.screenshot({ path: `${OUT}counts-explorer.png` });
}

/** Network_Performance's speeds in the evening rush hour (local 17-18 h), when the main roads slow down. */
async function eveningPeak(page: Page) {
  const period = page.locator("#flows-day-part");
  const hours = await period.locator("option").allTextContents();
  if (hours.includes("17:00-18:00")) await period.selectOption("17:00-18:00");
}

/** One results map per catalogue type; a type whose map draws nothing is reported, not captured. */
async function catalogueMaps(server: WebServer) {
  await createCatalogueZoneSets(server);
  // `--only=TYPE,TYPE` takes those types' maps alone (or a map by its file name).
  const only = process.argv
    .find((a) => a.startsWith("--only="))
    ?.slice("--only=".length)
    .split(",");
  for (const c of CATALOGUE_CASES.filter(
    (k) => !only || only.includes(k.type) || only.includes(k.screenshot),
  )) {
    const page = await signedInPage(browser, server, VIEWPORT);
    const { drawn } = await createAndMap(page, c).catch((err: Error) => {
      console.log(`${c.type}: ${err.message}`);
      return { drawn: 0 };
    });
    if (drawn > 0) {
      if (c.type === "Network_Performance") await eveningPeak(page);
      await settle(page);
      await page.screenshot({ path: `${OUT}${c.screenshot}` });
    } else console.log(`${c.type}: nothing drawn, no screenshot`);
    await page.close();
  }
}

const server = await startWebServer();
const browser = await launchBrowser();
try {
  if (process.argv.includes("--catalogue")) {
    await catalogueMaps(server);
  } else {
    await callApi(server, "POST", "/api/v2/zone_sets", {
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
    });
    const signInPage = await browser.newPage({ viewport: VIEWPORT });
    await signIn(signInPage, server);
    await signInPage.close();
    const page = await signedInPage(browser, server, VIEWPORT);
    await overview(page);
    await zoneEditor(page);
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
    await settle(page);
    await page.screenshot({ path: `${OUT}analysis-flow-map.png` });
    await countsExplorer(page, await busiestPrimaryStreet(server));
    await catalogueMaps(server);
  }
  console.log(`screenshots written to ${OUT}`);
} finally {
  await browser.close();
  await server.stop();
}
