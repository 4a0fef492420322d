import assert from "node:assert/strict";
import type { Locator, Page } from "playwright-core";
import { DEMO_EMAIL } from "../../src/app/accounts.js";
import { callApi, type WebServer } from "../helpers/browser.js";
import { monacoDistricts } from "../helpers/zones.js";
import { headingOf } from "../../src/web/client/views/analyses/flows.js";

/**
 * One analysis of each catalogue type, created through the real form as a planner would, for the browser
 * suite (which checks the results map) and for the screenshots of docs/web-app.md.
 */

/** The zone sets the cases choose: the three districts, and the same boxes as pass-through zones. */
export const CATALOGUE_ZONE_SETS = {
  districts: "Catalogue districts",
  gates: "Catalogue gates",
  roads: "Catalogue roads",
};

/** Up to twelve main-road OSM ways of central Monaco (the segments answer lists main roads first). */
async function mainRoadWays(server: WebServer): Promise<number[]> {
  const res = await callApi(server, "GET", "/api/v2/networks/mc/segments?bbox=7.415,43.728,7.435,43.745");
  const { features } = (await res.json()) as {
    features: { properties: { segment_id: number; road_class: string } }[];
  };
  const main = ["trunk", "primary", "secondary"];
  const ways = features
    .filter((f) => main.includes(f.properties.road_class))
    .map((f) => Math.floor(f.properties.segment_id / 10_000));
  return [...new Set(ways)].slice(0, 12);
}

export async function createCatalogueZoneSets(server: WebServer): Promise<void> {
  const post = (name: string, passThrough: boolean) =>
    callApi(server, "POST", "/api/v2/zone_sets", {
      insight_login_email: DEMO_EMAIL,
      zone_set_name: name,
      zones: {
        type: "FeatureCollection",
        features: monacoDistricts().map((f) => ({
          ...f,
          properties: { ...f.properties, is_pass: passThrough ? 1 : 0 },
        })),
      },
    });
  await post(CATALOGUE_ZONE_SETS.districts, false);
  await post(CATALOGUE_ZONE_SETS.gates, true);
  // Line zones for the network types: the main roads' OSM ways.
  await callApi(server, "POST", "/api/v2/zone_sets", {
    insight_login_email: DEMO_EMAIL,
    zone_set_name: CATALOGUE_ZONE_SETS.roads,
    osm_ids: await mainRoadWays(server),
  });
}

export interface CatalogueCase {
  type: string;
  name: string;
  /** File name of its results-map screenshot in docs/screenshots/. */
  screenshot: string;
  /** Fills the type's own fields (the name and type are already set). */
  fill: (form: Locator) => Promise<void>;
  /** The metric the map shows, when not the first one offered. */
  metric?: string;
  /** Top-routes types draw routes: "Show routes map" opens the drawer "Top routes: <name>". */
  routes?: boolean;
  /** Type-specific fields the form set, as the analysis detail (GET /api/v2/analyses/{uuid}) echoes them. */
  detail?: Record<string, unknown>;
}

/** The first date range set to the first to the last day with data (the inputs' limits). */
async function wholeDataPeriod(form: Locator): Promise<void> {
  const [start, end] = [form.locator('input[data-end="start"]'), form.locator('input[data-end="end"]')];
  await start.first().fill((await start.first().getAttribute("min"))!);
  await end.first().fill((await end.first().getAttribute("max"))!);
}

const check = (form: Locator, group: string, set: string) =>
  form.getByRole("group", { name: group }).getByLabel(set).check();
const origins = (form: Locator, set = CATALOGUE_ZONE_SETS.districts) => check(form, "Origin zone sets", set);

export const CATALOGUE_CASES: CatalogueCase[] = [
  {
    type: "Zone_Activity_Analysis",
    name: "Catalogue zone activity",
    screenshot: "result-zone-activity.png",
    fill: (form) => origins(form),
  },
  {
    type: "Zone_Activity_Analysis",
    name: "Catalogue home and work",
    screenshot: "result-home-work.png",
    metric: "home_grid_all",
    fill: async (form) => {
      await origins(form);
      const kinds = form.getByRole("group", { name: /^Home and work locations/ });
      await kinds.getByLabel(/^Visitors/).check();
      await kinds.getByLabel(/^Residents/).check();
      await kinds.getByLabel(/^Workers/).check();
      // Over 500 m cells (the default). A demo phone is seen about one day in twenty (a panel), so a
      // month places few homes: the whole year of data gives cells of at least 5 devices.
      await wholeDataPeriod(form);
    },
  },
  {
    type: "OD_Preset_Geography",
    name: "Catalogue preset areas",
    screenshot: "result-od-preset-geography.png",
    fill: async (form) => {
      await origins(form);
      // The presets imported with the demo network arrive after the form opens: take the first.
      const areas = form.getByLabel("Destination preset areas");
      await areas.locator("option").nth(1).waitFor({ state: "attached" });
      const first = await areas.locator("option").nth(1).getAttribute("value");
      await areas.selectOption(first!);
    },
  },
  {
    type: "OD_MF_Analysis",
    name: "Catalogue middle filters",
    screenshot: "result-od-mf.png",
    fill: async (form) => {
      await origins(form);
      await check(form, "Middle-filter zone sets (pass-through zones)", CATALOGUE_ZONE_SETS.gates);
      await check(form, "Destination zone sets", CATALOGUE_ZONE_SETS.districts);
    },
  },
  {
    type: "Segment_Analysis",
    name: "Catalogue segments",
    screenshot: "result-segment-analysis.png",
    fill: (form) => origins(form),
  },
  {
    type: "AADT",
    name: "Catalogue AADT",
    screenshot: "result-aadt.png",
    fill: async (form) => {
      await origins(form, CATALOGUE_ZONE_SETS.gates);
      await check(form, "AADT reference zone sets (calibrated counts)", CATALOGUE_ZONE_SETS.gates);
      // The year of the month the form proposes, so the stored days of that year are averaged.
      const start = await form.getByLabel("Start date").inputValue();
      await form.getByLabel("AADT year").fill(start.slice(0, 4));
    },
  },
  {
    type: "Network_OD",
    name: "Catalogue road to road",
    screenshot: "result-network-od.png",
    fill: async (form) => {
      await origins(form, CATALOGUE_ZONE_SETS.roads);
      await check(form, "Destination zone sets", CATALOGUE_ZONE_SETS.roads);
    },
  },
  {
    type: "Network_Performance",
    name: "Catalogue road speeds",
    screenshot: "result-network-performance.png",
    detail: { metric_type: "all" },
    fill: async (form) => {
      await origins(form, CATALOGUE_ZONE_SETS.roads);
      // Chosen from the other value back to the default: the map draws speeds and the travel time index.
      await form.getByLabel("Figures").selectOption({ label: "Speeds only" });
      await form.getByLabel("Figures").selectOption({ label: "Speeds and travel times" });
    },
  },
  {
    type: "Network_Performance",
    name: "Catalogue road travel times",
    screenshot: "result-network-performance-travel-time.png",
    detail: { metric_type: "travel_time" },
    fill: async (form) => {
      await origins(form, CATALOGUE_ZONE_SETS.roads);
      // No speed columns: the map colours the segments by their seconds on the segment.
      await form.getByLabel("Figures").selectOption({ label: "Travel times only" });
    },
  },
  {
    type: "Top_Routes_OD",
    name: "Catalogue top routes",
    screenshot: "result-top-routes-od.png",
    routes: true,
    detail: { top_routes_count: 5 },
    fill: async (form) => {
      await origins(form);
      await check(form, "Destination zone sets", CATALOGUE_ZONE_SETS.districts);
      await form.getByLabel("Routes per zone pair or zone").fill("5");
    },
  },
  {
    type: "Top_Routes_ZA",
    name: "Catalogue zone routes",
    screenshot: "result-top-routes-za.png",
    routes: true,
    detail: { top_routes_count: 10 },
    fill: (form) => origins(form),
  },
];

/**
 * Opens the form, creates the case's analysis, waits for Data Available and opens its results map.
 * Answers the drawer and the number of results the map draws.
 */
export async function createAndMap(
  page: Page,
  c: CatalogueCase,
): Promise<{ drawer: Locator; drawn: number }> {
  await page.getByRole("tab", { name: "Analyses" }).click();
  await page.getByRole("button", { name: "New analysis" }).click();
  const form = page.getByRole("form", { name: "New analysis" });
  await form.getByText(/^Data available \(MC\)/).waitFor();
  await form.getByLabel("Name", { exact: true }).fill(c.name);
  await form.getByLabel("Analysis type").selectOption(c.type);
  await c.fill(form);
  await form.getByRole("button", { name: "Create analysis" }).click();

  const detail = page.getByRole("region", { name: c.name, exact: true });
  // A loaded machine runs the job slowly: as long as the row is still being processed, wait.
  await detail.getByText("Data Available").waitFor({ timeout: 300_000 });
  await detail.getByRole("button", { name: c.routes ? "Show routes map" : "Show flow map" }).click();
  const measure = c.detail?.metric_type === "travel_time" ? "travel_time" : "speed";
  const drawerNamed = (metric: string) =>
    page.getByRole("region", { name: headingOf(c.type, c.name, metric, measure) });
  let drawer = drawerNamed("");
  await drawer
    .getByText(c.routes ? / routes on the map\b/ : / (flows|segments) on the map\b/)
    .waitFor({ timeout: 120_000 })
    .catch(async (err: Error) => {
      // Say what the drawer shows instead (an error or "no rows" status), not only that the wait ran out.
      throw new Error(
        `${c.type}: no map note; the drawer reads: ${await drawer.innerText().catch(() => "")}`,
        {
          cause: err,
        },
      );
    });
  if (c.metric) {
    await drawer.getByLabel("Metric").selectOption(c.metric);
    // The heading follows the metric shown: a home/work metric's places, not trips per zone.
    drawer = drawerNamed(c.metric);
    await drawer.getByText(/^Home and work locations: the share/).waitFor();
    await drawer.getByText(/ flows on the map\b/).waitFor();
    // The map reports the places it rendered shaded once it is idle (0 before, from za_all's render).
    await page.waitForFunction(
      () => Number(document.querySelector("[data-places-shaded]")?.getAttribute("data-places-shaded")) > 0,
      null,
      { timeout: 60_000 },
    );
  }
  const drawn = Number(await drawer.getAttribute("data-flows-drawn"));
  assert.ok(Number.isInteger(drawn), `${c.type}: the drawer says how many results it drew`);
  return { drawer, drawn };
}

/** The analysis detail of the organization's analysis named `name` (GET /api/v2/analyses/{uuid}). */
export async function analysisDetailNamed(server: WebServer, name: string): Promise<Record<string, unknown>> {
  const list = (await (await callApi(server, "GET", "/api/v2/analyses")).json()) as {
    analyses: { uuid: string; name: string }[];
  };
  const entry = list.analyses.find((a) => a.name === name);
  assert.ok(entry, `analysis "${name}" listed`);
  const res = await callApi(server, "GET", `/api/v2/analyses/${entry.uuid}`);
  return ((await res.json()) as { analysis: Record<string, unknown> }).analysis;
}
