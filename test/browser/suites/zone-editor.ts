import { before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Browser, Page } from "playwright-core";
import { DEMO_EMAIL } from "../../../src/app/accounts.js";
import { callApi, eventually, signedInPage, type WebServer, type BrowserEnv } from "../../helpers/browser.js";
import { zippedShapefile } from "../../helpers/shapefile.js";

interface ZoneSetSummary {
  name: string;
  uuid: string;
  geom_type: string;
  with_calibration: boolean;
  zone_count: number;
}

interface StoredZone {
  geometry: { type: string; coordinates: number[][][][] | number[][] };
  properties: Record<string, unknown>;
}

export function zoneEditorSuite(env: BrowserEnv): void {
  describe("zone-set editor in Chromium: draw, load files, save, delete", () => {
    let server: WebServer;
    let browser: Browser;
    before(async () => {
      ({ server, browser } = env);
    });

    const api = async <T>(path: string): Promise<T> =>
      (await (await callApi(server, "GET", path, undefined, 200)).json()) as T;
    const zoneSets = () => api<{ zone_sets: ZoneSetSummary[] }>("/api/v2/zone_sets").then((r) => r.zone_sets);
    const zonesOf = (uuid: string) =>
      api<{ features: StoredZone[] }>(`/api/v2/zone_sets/${uuid}`).then((r) => r.features);

    /** Opens the editor with a set name and the demo login filled in. */
    async function newZoneSet(page: Page, name: string): Promise<void> {
      await page.getByRole("button", { name: "New zone set" }).click();
      await page.getByLabel("Zone set name").fill(name);
      await page.getByRole("textbox", { name: "Your login e-mail" }).fill(DEMO_EMAIL);
    }

    /** Clicks the map at a pixel offset from its centre. */
    async function clickMap(page: Page, [dx, dy]: [number, number]): Promise<void> {
      const box = (await page.locator("#map canvas").boundingBox())!;
      const [x, y] = [box.x + box.width / 2 + dx, box.y + box.height / 2 + dy];
      await page.mouse.move(x, y, { steps: 4 });
      await page.mouse.click(x, y);
    }

    /** Clicks a polygon's corners, then its first corner again, which finishes it. */
    async function drawPolygon(page: Page, corners: [number, number][]): Promise<void> {
      for (const corner of [...corners, corners[0]]) await clickMap(page, corner);
    }

    /** The editor's list entry of zone #index (by position: its summary changes as the zone is renamed). */
    const zoneItem = (page: Page, index: number) => page.locator("#zone-editor-zones > li").nth(index);

    /** Saves and waits for the editor to report the set saved; answers the set as the API lists it. */
    async function saveAndFind(page: Page, name: string): Promise<ZoneSetSummary> {
      await page.getByRole("button", { name: "Save zone set" }).click();
      await page.locator("#zone-editor-result", { hasText: `Zone set "${name}" saved` }).waitFor();
      const set = (await zoneSets()).find((s) => s.name === name);
      assert.ok(set, `${name} is listed by the API`);
      return set;
    }

    it("draws a polygon on the map, saves it and the API returns the set with that shape", async () => {
      const page = await signedInPage(browser, server);
      await newZoneSet(page, "Drawn harbour");
      // Corners clockwise from the north-west, around the map's centre (the network fills the view).
      await drawPolygon(page, [
        [-80, -60],
        [80, -60],
        [80, 60],
        [-80, 60],
      ]);
      const zone = zoneItem(page, 0);
      await zone.getByLabel("Name").fill("Harbour");
      await zone.getByLabel("Id (optional)").fill("7");
      await zone.getByLabel("Pass-through zone").check();
      await zone.getByLabel("Direction (degrees 0–359, optional)").fill("90");
      await zone.getByLabel("Both directions").check();
      // Selecting the shape on the map marks its entry in the list.
      await page.getByRole("button", { name: "Select and edit" }).click();
      await clickMap(page, [0, 0]);
      await page.locator("#zone-editor-zones > li.selected", { hasText: "#0 Harbour" }).waitFor();
      const set = await saveAndFind(page, "Drawn harbour");
      assert.equal(set.geom_type, "polygon");
      assert.equal(set.zone_count, 1);

      const [stored] = await zonesOf(set.uuid);
      assert.deepEqual(
        { ...stored.properties },
        { name: "Harbour", id: 7, is_pass: 1, direction: 90, is_bidi: 1, geom_type: "polygon" },
      );
      assert.equal(stored.geometry.type, "MultiPolygon");
      const ring = (stored.geometry.coordinates as number[][][][])[0][0];
      assert.equal(ring.length, 5, "four clicked corners and the closing one");
      assert.deepEqual(ring[0], ring[4]);
      // Every corner lies in the network's box, which the map was fitted to: the shape is where it was drawn.
      const { networks } = await api<{ networks: { bbox: number[] }[] }>("/api/v2/networks");
      const [west, south, east, north] = networks[0].bbox;
      for (const [lon, lat] of ring) {
        assert.ok(lon > west && lon < east && lat > south && lat < north, `${lon},${lat} inside the map`);
      }
      // Clicked as a rectangle on screen: two distinct longitudes and two latitudes.
      const corners = ring.slice(0, 4);
      const lons = [...new Set(corners.map(([lon]) => lon.toFixed(7)))].map(Number);
      const lats = [...new Set(corners.map(([, lat]) => lat.toFixed(7)))].map(Number);
      assert.equal(lons.length, 2);
      assert.equal(lats.length, 2);
      // The editor closed; the list names the new set and draws it (its checkbox is on).
      assert.ok(await page.locator("#zone-editor").isHidden());
      const shown = page.getByRole("checkbox", { name: /Drawn harbour/ });
      await eventually(() => shown.isChecked());
      await page.close();
    });

    it("shows the server's message beside the zone at fault and saves nothing", async () => {
      const page = await signedInPage(browser, server);
      const before = (await zoneSets()).length;
      await newZoneSet(page, "Calibrated gate");
      await page.getByLabel("With calibration").check();
      // The keyboard's way to a zone: the button on the map's toolbar, pressed with Enter.
      await page.getByRole("button", { name: "Add rectangle at map centre" }).focus();
      await page.keyboard.press("Enter");
      const zone = zoneItem(page, 0);
      // Focus moved to the new zone's name, ready to type.
      assert.ok(await zone.getByLabel("Name").evaluate((input) => input === document.activeElement));
      await zone.getByLabel("Name").fill("Counted");
      await zone.getByLabel("Pass-through zone").check();
      await zone.getByLabel("Calibration type").selectOption("AADT");
      await zone.getByLabel("Calibration value (vehicles)").fill("12000");
      // Ratios summing to 0.9: only the server checks the sum.
      await zone.getByLabel("Personal traffic ratio").fill("0.7");
      const posted = page.waitForResponse(
        (r) => r.url().endsWith("/api/v2/zone_sets") && r.request().method() === "POST",
      );
      await page.getByRole("button", { name: "Save zone set" }).click();
      assert.equal((await posted).status(), 400);

      const ratioError = zone.locator(
        "#" + (await zone.getByLabel("Personal traffic ratio").getAttribute("aria-describedby")),
      );
      await ratioError.filter({ hasText: "the three traffic ratios must sum to 1.0" }).waitFor();
      assert.equal(await zone.getByLabel("Personal traffic ratio").getAttribute("aria-invalid"), "true");
      await zone.locator("summary", { hasText: "1 problem" }).waitFor();
      await page.locator("#zone-editor-status", { hasText: "nothing was saved" }).waitFor();
      assert.equal((await zoneSets()).length, before);

      // Fixing the ratio saves the set with its calibration.
      await zone.getByLabel("Personal traffic ratio").fill("0.96");
      const set = await saveAndFind(page, "Calibrated gate");
      assert.equal(set.with_calibration, true);
      const [stored] = await zonesOf(set.uuid);
      assert.equal(stored.properties.calibration_type, "AADT");
      assert.equal(stored.properties.calibration_value, 12000);
      assert.equal(stored.properties.personal_traffic_ratio, 0.96);
      await page.close();
    });

    it("checks duplicate names before sending, deletes zones and keeps them across tab switches", async () => {
      const page = await signedInPage(browser, server);
      await newZoneSet(page, "Twins");
      const add = page.getByRole("button", { name: "Add rectangle at map centre" });
      for (let i = 0; i < 3; i++) await add.click();
      await zoneItem(page, 0).getByLabel("Name").fill("Same");
      await zoneItem(page, 1).getByLabel("Name").fill("same");
      let posts = 0;
      page.on("request", (r) => {
        if (r.method() === "POST") posts++;
      });
      await page.getByRole("button", { name: "Save zone set" }).click();
      await zoneItem(page, 1).getByText("name is already used by zone #0").waitFor();
      await page.locator("#zone-editor-status", { hasText: "Nothing was sent" }).waitFor();
      assert.equal(posts, 0);

      // Leaving the tab takes the drawing tools off the map; the zones wait for the return.
      await page.getByRole("tab", { name: "Analyses" }).click();
      assert.ok(await page.locator(".zone-draw-toolbar").isHidden());
      await page.getByRole("tab", { name: "Zone sets" }).click();
      assert.ok(await page.locator(".zone-draw-toolbar").isVisible());
      const zoneCount = () => page.locator("#zone-editor-zones > li").count();
      assert.equal(await zoneCount(), 3);

      // A zone goes with its button (the list is renumbered) or with the Delete key on the selected shape.
      await zoneItem(page, 1).getByRole("button", { name: "Delete zone" }).click();
      assert.equal(await zoneCount(), 2);
      await page.locator("summary", { hasText: "#1 Zone 3" }).waitFor();
      await page.getByRole("button", { name: "Select and edit" }).click();
      await clickMap(page, [0, 0]);
      await page.keyboard.press("Delete");
      await eventually(async () => (await zoneCount()) === 1);

      // Cancelling asks before discarding the zone left.
      page.once("dialog", (dialog) => void dialog.accept());
      await page.getByRole("button", { name: "Cancel" }).click();
      assert.ok(await page.locator("#zone-editor").isHidden());
      assert.equal(await page.locator(".zone-draw-toolbar").isHidden(), true);
      await page.close();
    });

    it("loads line gates from GeoJSON, keeps their properties editable and saves them", async () => {
      const page = await signedInPage(browser, server);
      await newZoneSet(page, "");
      const gate = (name: string, id: number, direction: number, coordinates: number[][]) => ({
        type: "Feature",
        geometry: { type: "LineString", coordinates },
        properties: { name, id, direction, is_bidi: 1, road_type: "primary" },
      });
      const north = [
        [7.42, 43.735],
        [7.422, 43.736],
      ];
      const south = [
        [7.43, 43.731],
        [7.432, 43.732],
      ];
      const file = {
        type: "FeatureCollection",
        features: [gate("North gate", 1, 10, north), gate("South gate", 2, 190, south)],
      };
      await page.getByLabel("Load zones from a file").setInputFiles({
        name: "gates.geojson",
        mimeType: "application/geo+json",
        buffer: Buffer.from(JSON.stringify(file)),
      });
      await page
        .locator("#zone-editor-file-status", { hasText: "Loaded 2 zones from gates.geojson." })
        .waitFor();
      assert.equal(await page.getByLabel("Zone set name").inputValue(), "gates");
      assert.ok(await page.getByLabel("Line gates (pass-through)").isChecked());
      await page.getByRole("button", { name: "Draw line" }).waitFor();
      const southItem = zoneItem(page, 1);
      await southItem.locator("summary", { hasText: "#1 South gate" }).click();
      assert.equal(await southItem.getByLabel("Road type").inputValue(), "Primary");
      await southItem.getByLabel("Direction (degrees 0–359, optional)").fill("200");

      const set = await saveAndFind(page, "gates");
      assert.equal(set.geom_type, "line");
      const stored = await zonesOf(set.uuid);
      assert.deepEqual(
        stored.map((z) => [
          z.properties.name,
          z.properties.direction,
          z.properties.is_pass,
          z.properties.road_type,
        ]),
        [
          ["North gate", 10, 1, "Primary"],
          ["South gate", 200, 1, "Primary"],
        ],
      );
      assert.deepEqual(
        stored.map((z) => z.geometry.coordinates),
        [north, south],
      );
      await page.close();
    });

    it("loads a zipped shapefile, and says why an unreadable file is refused", async () => {
      const page = await signedInPage(browser, server);
      await newZoneSet(page, "From a shapefile");
      const input = page.getByLabel("Load zones from a file");
      const unreadable = [
        { name: "broken.json", text: "{zones", says: "broken.json is not valid JSON." },
        { name: "broken.zip", text: "not a zip", says: "could not be read as a zipped shapefile" },
      ];
      for (const file of unreadable) {
        await input.setInputFiles({
          name: file.name,
          mimeType: "text/plain",
          buffer: Buffer.from(file.text),
        });
        await page.locator("#zone-editor-file-status[data-kind=error]", { hasText: file.says }).waitFor();
      }

      const square = (lon: number): [number, number][] => [
        [lon, 43.73],
        [lon, 43.735],
        [lon + 0.005, 43.735],
        [lon + 0.005, 43.73],
        [lon, 43.73],
      ];
      const zip = zippedShapefile([
        { ring: square(7.41), attributes: { name: "West", id: 1 } },
        { ring: square(7.42), attributes: { name: "East", id: 2 } },
      ]);
      await input.setInputFiles({ name: "districts.zip", mimeType: "application/zip", buffer: zip });
      await page
        .locator("#zone-editor-file-status", { hasText: "Loaded 2 zones from districts.zip." })
        .waitFor();
      const set = await saveAndFind(page, "From a shapefile");
      const stored = await zonesOf(set.uuid);
      assert.deepEqual(
        stored.map((z) => [z.properties.name, z.properties.id]),
        [
          ["West", 1],
          ["East", 2],
        ],
      );
      const eastRing = (stored[1].geometry.coordinates as number[][][][])[0][0];
      assert.ok(
        eastRing.some(([lon, lat]) => lon === 7.42 && lat === 43.73),
        "the east square's corner",
      );
      await page.close();
    });

    it("deletes a zone set from the list after confirmation", async () => {
      const page = await signedInPage(browser, server);
      await newZoneSet(page, "Short-lived");
      await page.getByRole("button", { name: "Add rectangle at map centre" }).click();
      await saveAndFind(page, "Short-lived");
      page.once("dialog", (dialog) => void dialog.accept());
      await page.getByRole("button", { name: "Delete Short-lived" }).click();
      await page.getByRole("checkbox", { name: /Short-lived/ }).waitFor({ state: "detached" });
      assert.equal(
        (await zoneSets()).some((s) => s.name === "Short-lived"),
        false,
      );
      await page.close();
    });
  });
}
