import { before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import JSZip from "jszip";
import type { Browser, Page } from "playwright-core";
import { DEMO_EMAIL } from "../../../src/app/accounts.js";
import { callApi, eventually, type WebServer, type BrowserEnv } from "../../helpers/browser.js";
import { demoPassword, runCli } from "../../helpers/server.js";
import { monacoDistricts } from "../../helpers/zones.js";

const TAG = "Vendor web tag";
const VIEWER = "vendor.viewer@streetflow.local";
const VIEWER_PASSWORD = "vendor viewer password 1";

/** Signed in as a user (session cookie): tagging and creating need to know who acts. */
async function signedInAs(browser: Browser, server: WebServer, email: string, password: string) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 }, acceptDownloads: true });
  await page.goto(server.baseUrl);
  await page.getByLabel("E-mail", { exact: true }).fill(email);
  await page.getByLabel("Password", { exact: true }).fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.locator("#account-name", { hasText: email }).waitFor();
  await page
    .locator("#network-status", { hasText: "segments shown" })
    .waitFor({ state: "attached", timeout: 30_000 });
  return page;
}

/** The vendor interface in the page (issue 11): output types, tags and shapefile downloads. */
export function vendorSuite(env: BrowserEnv): void {
  describe("web application in Chromium: output types, tags and shapefiles", () => {
    let server: WebServer;
    let browser: Browser;
    let page: Page;

    const api = (method: string, path: string, body?: unknown, status?: number) =>
      callApi(server, method, path, body, status);
    const listed = async (query = "") =>
      (
        (await (await api("GET", `/api/v2/analyses${query}`)).json()) as {
          analyses: { name: string; uuid: string; tags: string[]; shapefiles?: string[] }[];
        }
      ).analyses;

    before(async () => {
      ({ server, browser } = env);
      await api("POST", "/api/v2/zone_sets", {
        insight_login_email: DEMO_EMAIL,
        zone_set_name: "Vendor districts",
        zones: { type: "FeatureCollection", features: monacoDistricts() },
      });
      // A second analysis that stays untagged, so the tag filter has something to leave out.
      const { date_ranges } = (await (await api("GET", "/api/v2/date_ranges/mc/All_Vehicles")).json()) as {
        date_ranges: { default: { start_date: string; end_date: string }[] };
      };
      await api("POST", "/api/v2/analyses", {
        insight_login_email: DEMO_EMAIL,
        analysis_name: "Vendor untagged",
        analysis_type: "OD_Analysis",
        travel_mode_type: "All_Vehicles",
        oz_sets: [{ name: "Vendor districts" }],
        dz_sets: [{ name: "Vendor districts" }],
        date_ranges: date_ranges.default.slice(-1),
      });
      page = await signedInAs(browser, server, DEMO_EMAIL, demoPassword(server.dataDir));
    });

    it("creates a trip_counts analysis from the form and labels its unit", async () => {
      await page.getByRole("tab", { name: "Analyses" }).click();
      await page.getByRole("button", { name: "New analysis" }).click();
      const form = page.getByRole("form", { name: "New analysis" });
      await form.getByText(/^Data available \(MC\)/).waitFor();
      await form.getByLabel("Name", { exact: true }).fill("Vendor trip counts");
      for (const group of ["Origin zone sets", "Destination zone sets"])
        await form
          .getByRole("group", { name: group })
          .getByLabel(/Vendor districts/)
          .check();
      // Every output type of the API is offered with its hint.
      const output = form.getByRole("group", { name: "Output" });
      for (const label of ["Index", "Volume", "Trip counts", "AADT", "Zone counts"])
        await output.getByLabel(label, { exact: true }).waitFor({ state: "attached" });
      const tripCounts = output.getByLabel("Trip counts", { exact: true });
      assert.match((await tripCounts.getAttribute("aria-describedby")) ?? "", /af-hint/);
      await tripCounts.check();
      await form.getByRole("button", { name: "Create analysis" }).click();

      const detail = page.getByRole("region", { name: "Vendor trip counts", exact: true });
      await detail.getByText("Data Available").waitFor({ timeout: 90_000 });
      const created = (await listed()).find((a) => a.name === "Vendor trip counts")!;
      const stored = (await (await api("GET", `/api/v2/analyses/${created.uuid}`)).json()) as {
        analysis: { output_type: string };
      };
      assert.equal(stored.analysis.output_type, "trip_counts");
      await detail.getByText("trip_counts: trips over the analysed days").waitFor();
    });

    it("creates a tag, tags the analysis, filters the list by it and removes it", async () => {
      const detail = page.getByRole("region", { name: "Vendor trip counts", exact: true });
      // A name the server refuses: its message is shown as it says it, and nothing is tagged.
      await detail.getByLabel("Add a tag").fill("x".repeat(60));
      await detail.getByRole("button", { name: "Add tag" }).click();
      await detail
        .getByRole("status")
        .getByText(/must be a tag name of 1 to 50 characters/)
        .waitFor();
      await detail.getByText("No tags.").waitFor();

      await detail.getByLabel("Add a tag").fill(TAG);
      await detail.getByRole("button", { name: "Add tag" }).click();
      await detail.getByRole("list", { name: "Tags" }).getByText(TAG).waitFor();
      const tags = (await (await api("GET", "/api/v2/tags")).json()) as { tags: { tag_name: string }[] };
      assert.ok(tags.tags.some((t) => t.tag_name === TAG));
      const tagged = await listed(`?tag=${encodeURIComponent(TAG)}`);
      assert.deepEqual(
        tagged.map((a) => a.name),
        ["Vendor trip counts"],
      );
      // The row shows the chip.
      await page
        .getByRole("row", { name: /Vendor trip counts/ })
        .getByText(TAG)
        .waitFor();

      // Filtering keeps exactly the tagged analyses; the untagged one leaves the list.
      await page.getByLabel("Tag", { exact: true }).selectOption(TAG);
      await eventually(async () => (await page.locator("#analysis-rows tr").count()) === tagged.length);
      assert.deepEqual(await page.locator("#analysis-rows tr td:first-child").allInnerTexts(), [
        "Vendor trip counts",
      ]);
      await page.getByLabel("Tag", { exact: true }).selectOption("");
      await page.getByRole("row", { name: /Vendor untagged/ }).waitFor();

      await detail.getByRole("button", { name: `Remove tag ${TAG}` }).click();
      await detail.getByText("No tags.").waitFor();
      assert.deepEqual(await listed(`?tag=${encodeURIComponent(TAG)}`), []);
    });

    it("shows a viewer the server's refusal to tag", async () => {
      const add = await runCli(server.dataDir, [
        "user",
        "add",
        VIEWER,
        "--org",
        "Streetflow Demo",
        "--role",
        "viewer",
      ]);
      assert.equal(add.code, 0, add.stderr);
      const set = await runCli(server.dataDir, ["user", "password", VIEWER], `${VIEWER_PASSWORD}\n`);
      assert.equal(set.code, 0, set.stderr);
      const viewer = await signedInAs(browser, server, VIEWER, VIEWER_PASSWORD);
      await viewer.getByRole("tab", { name: "Analyses" }).click();
      await viewer
        .getByRole("row", { name: /Vendor trip counts/ })
        .getByRole("button")
        .click();
      const detail = viewer.getByRole("region", { name: "Vendor trip counts", exact: true });
      await detail.getByLabel("Add a tag").fill(TAG);
      await detail.getByRole("button", { name: "Add tag" }).click();
      // The server's 403 in its own words (the tag exists, so the page goes straight to tagging).
      await detail
        .getByRole("status")
        .getByText(
          "Adding tag Vendor web tag failed: tagging analyses needs the analyst role; you are viewer",
        )
        .waitFor();
      await detail.getByText("No tags.").waitFor();
      await viewer.close();
    });

    it("downloads a shapefile zip with .shp, .dbf and .prj", async () => {
      const detail = page.getByRole("region", { name: "Vendor trip counts", exact: true });
      const { shapefiles } = (await listed()).find((a) => a.name === "Vendor trip counts")!;
      assert.ok(shapefiles && shapefiles.length > 0, "a finished analysis offers shapefiles");
      const [download] = await Promise.all([
        page.waitForEvent("download"),
        detail.getByRole("button", { name: `Download ${shapefiles[0]} shapefile` }).click(),
      ]);
      assert.match(download.suggestedFilename(), /\.zip$/);
      const zip = await JSZip.loadAsync(await readFile((await download.path())!));
      const extensions = Object.keys(zip.files).map((f) => f.slice(f.lastIndexOf(".")));
      for (const ext of [".shp", ".dbf", ".prj"]) assert.ok(extensions.includes(ext), `${ext} in the zip`);
    });
  });
}
