import { before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Locator, Page } from "playwright-core";
import { DEMO_EMAIL } from "../../../src/app/accounts.js";
import { callApi, signedInPage, type BrowserEnv, type WebServer } from "../../helpers/browser.js";
import { runCli } from "../../helpers/server.js";
import { boxFeature, monacoDistricts } from "../../helpers/zones.js";

/** A few streets in Andorra la Vella: a second network, alphabetically before Monaco and without trips. */
const ANDORRA_OSM = `<?xml version="1.0" encoding="UTF-8"?>
<osm version="0.6" generator="hand">
  <node id="1" lat="42.5070" lon="1.5210"/>
  <node id="2" lat="42.5075" lon="1.5225"/>
  <node id="3" lat="42.5080" lon="1.5240"/>
  <node id="4" lat="42.5090" lon="1.5230"/>
  <way id="10"><nd ref="1"/><nd ref="2"/><nd ref="3"/><tag k="highway" v="primary"/><tag k="name" v="Avinguda Meritxell"/></way>
  <way id="11"><nd ref="2"/><nd ref="4"/><tag k="highway" v="residential"/><tag k="name" v="Carrer Major"/></way>
</osm>
`;

/** Vertical extent of an element on the page. */
async function rows(locator: Locator): Promise<{ top: number; bottom: number; height: number }> {
  const box = await locator.boundingBox();
  assert.ok(box, "the element is laid out");
  return { top: box.y, bottom: box.y + box.height, height: box.height };
}

/** Whether two elements share a line (their vertical extents overlap). */
async function sameRow(a: Locator, b: Locator): Promise<boolean> {
  const [ra, rb] = [await rows(a), await rows(b)];
  return ra.top < rb.bottom && rb.top < ra.bottom;
}

/** The text of the map's tooltip after hovering at offsets from the map's centre ("" when none shows). */
async function tooltipsAt(page: Page, offsets: [number, number][]): Promise<string[]> {
  const box = (await page.locator("#map canvas").boundingBox())!;
  const texts: string[] = [];
  for (const [dx, dy] of offsets) {
    await page.mouse.move(box.x + box.width / 2 + dx, box.y + box.height / 2 + dy, { steps: 3 });
    const popup = page.locator(".maplibregl-popup-content");
    texts.push((await popup.count()) > 0 ? ((await popup.first().textContent()) ?? "") : "");
  }
  return texts;
}

/**
 * Issue 10's web-app rough edges (items 12–15): zone sets only in their tab, the selection kept after a
 * save, the list's layout with long names, and several networks (the one with trips first, lists by network).
 */
export function firstHourSuite(env: BrowserEnv): void {
  describe("web application in Chromium: first-hour polish", () => {
    let server: WebServer;
    let browser: Browser;
    before(async () => {
      ({ server, browser } = env);
    });

    const createSet = async (name: string, features = monacoDistricts()) =>
      (
        (await (
          await callApi(server, "POST", "/api/v2/zone_sets", {
            zone_set_name: name,
            insight_login_email: DEMO_EMAIL,
            zones: { type: "FeatureCollection", features },
          })
        ).json()) as { uuid: string }
      ).uuid;
    const setItem = (page: Page, uuid: string) => page.locator(`#zone-set-list li[data-uuid="${uuid}"]`);

    it("shows the Zone sets tab's sets on the map only while that tab is in front", async () => {
      const uuid = await createSet("Tab layers");
      const page = await signedInPage(browser, server);
      const item = setItem(page, uuid);
      await item.getByRole("checkbox").check();
      await item.locator("summary", { hasText: "Zones (3)" }).click();
      // The zone's button fits the map to Monte-Carlo: the map's centre lies inside the zone.
      await item.getByRole("button", { name: "Monte-Carlo" }).click();
      const around: [number, number][] = [
        [0, 0],
        [40, 25],
        [-40, -25],
        [60, -30],
      ];
      await page.locator(".maplibregl-popup-content", { hasText: "Zone: Monte-Carlo" }).waitFor();
      const shown = await tooltipsAt(page, around);
      assert.ok(
        shown.some((t) => t === "Zone: Monte-Carlo"),
        `the zone answers the pointer in its tab: ${shown.join(" | ")}`,
      );

      await page.getByRole("tab", { name: "Analyses" }).click();
      const elsewhere = await tooltipsAt(page, around);
      assert.ok(
        elsewhere.every((t) => !t.startsWith("Zone:")),
        `no zone under the Analyses tab: ${elsewhere.join(" | ")}`,
      );

      await page.getByRole("tab", { name: "Zone sets" }).click();
      assert.ok(await item.getByRole("checkbox").isChecked(), "the set is still chosen on return");
      const back = await tooltipsAt(page, around);
      assert.ok(
        back.some((t) => t === "Zone: Monte-Carlo"),
        `the zone is back: ${back.join(" | ")}`,
      );
      await page.close();
    });

    it("keeps the sets the user showed when a new set is saved", async () => {
      const uuid = await createSet("Kept shown");
      const page = await signedInPage(browser, server);
      const item = setItem(page, uuid);
      await item.getByRole("checkbox").check();
      await item.locator("summary", { hasText: "Zones (3)" }).waitFor();
      const colour = await item.locator(".swatch").evaluate((s) => (s as HTMLElement).style.background);
      assert.notEqual(colour, "");

      await page.getByRole("button", { name: "New zone set" }).click();
      await page.getByLabel("Zone set name").fill("Saved beside");
      await page.getByRole("textbox", { name: "Your login e-mail" }).fill(DEMO_EMAIL);
      await page.getByRole("button", { name: "Add rectangle at map centre" }).click();
      await page.locator("#zone-editor-zones > li").first().getByLabel("Name").fill("Box");
      await page.getByRole("button", { name: "Save zone set" }).click();
      await page.locator("#zone-editor-result", { hasText: 'Zone set "Saved beside" saved' }).waitFor();

      // The new set is drawn, and the one shown before stays shown, in its colour, with its zone list.
      const { zone_sets } = (await (await callApi(server, "GET", "/api/v2/zone_sets")).json()) as {
        zone_sets: { name: string; uuid: string }[];
      };
      const saved = zone_sets.find((s) => s.name === "Saved beside")!;
      await setItem(page, saved.uuid).locator("summary", { hasText: "Zones (1)" }).waitFor();
      assert.ok(await item.getByRole("checkbox").isChecked(), "the earlier set is still checked");
      assert.equal(
        await item.locator(".swatch").evaluate((s) => (s as HTMLElement).style.background),
        colour,
      );
      assert.ok(await item.locator("summary", { hasText: "Zones (3)" }).isVisible());
      await page.close();
    });

    it("keeps checkbox, name and Delete on one row for long names, and Sign out on one line at 800 px", async () => {
      const longName = "Monaco districts for the harbour traffic study 26";
      const uuid = await createSet(longName);
      const page = await signedInPage(browser, server, { width: 800, height: 900 });
      const toggle = page.getByRole("button", { name: "Panels" });
      if ((await toggle.getAttribute("aria-expanded")) === "false") await toggle.click();
      const item = setItem(page, uuid);
      const [checkbox, label, remove] = [
        item.getByRole("checkbox"),
        item.locator("label"),
        item.getByRole("button", { name: `Delete ${longName}` }),
      ];
      assert.ok(await sameRow(checkbox, label), "checkbox beside the name");
      assert.ok(await sameRow(label, remove), "Delete beside the name");
      assert.ok(await sameRow(checkbox, remove), "checkbox and Delete on one row");
      // A one-line button is as tall as the Panels button beside it.
      const signOut = await rows(page.getByRole("button", { name: "Sign out" }));
      assert.equal(signOut.height, (await rows(toggle)).height, "Sign out does not wrap");
      await page.close();
    });

    it("opens on the network with the most recent trips and lists the zone sets and analyses of the chosen one", async () => {
      // A second network, alphabetically first and without trips, imported beside the running server.
      const dir = mkdtempSync(join(tmpdir(), "streetflow-andorra-"));
      try {
        const osm = join(dir, "andorra.osm");
        writeFileSync(osm, ANDORRA_OSM);
        const imported = await runCli(server.dataDir, ["import-osm", osm, "--country", "ad"]);
        assert.equal(imported.code, 0, imported.stderr);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
      const andorraSet = await createSet("Andorra centre", [
        boxFeature("Centre", 1, [1.52, 42.506, 1.525, 42.509]),
      ]);
      const monacoSet = await createSet("Monaco only");

      const { analyses } = (await (await callApi(server, "GET", "/api/v2/analyses")).json()) as {
        analyses: { country: string }[];
      };
      const page = await signedInPage(browser, server);
      assert.equal(await page.locator("#network-select").inputValue(), "mc", "Monaco has the trips");
      await setItem(page, monacoSet).waitFor();
      assert.equal(await setItem(page, andorraSet).count(), 0, "Andorra's set is not under Monaco");
      await page.getByRole("tab", { name: "Analyses" }).click();
      await page.locator("#analysis-status", { hasText: /Updated|No analyses/ }).waitFor();
      const monacoAnalyses = analyses.filter((a) => a.country === "mc").length;
      assert.equal(await page.locator("#analysis-rows tr").count(), monacoAnalyses);

      await page.locator("#network-select").selectOption("ad");
      await page.getByRole("tab", { name: "Zone sets" }).click();
      await setItem(page, andorraSet).waitFor();
      assert.equal(await setItem(page, monacoSet).count(), 0, "Monaco's sets are not under Andorra");
      await page.getByRole("tab", { name: "Analyses" }).click();
      await page.locator("#analysis-status", { hasText: "No analyses yet" }).waitFor();
      assert.equal(await page.locator("#analysis-rows tr").count(), 0);
      await page.close();
    });
  });
}
