/// <reference lib="dom" />
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Browser } from "playwright-core";
import {
  browserSkip,
  launchBrowser,
  signedInPage,
  startWebServer,
  type WebServer,
} from "../helpers/browser.js";

describe("web application in Chromium: sign-in, network, tabs", { skip: browserSkip() }, () => {
  let server: WebServer;
  let browser: Browser;
  before(async () => {
    [server, browser] = await Promise.all([startWebServer(), launchBrowser()]);
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  it("refuses a wrong key with a visible message", async () => {
    const page = await browser.newPage();
    await page.goto(server.baseUrl);
    await page.getByLabel("API key").fill("sf_not-a-real-key");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("alert").getByText("This API key is not valid.").waitFor();
    await page.close();
  });

  it("signs in, draws the Monaco network and keeps the key for the tab only", async () => {
    const page = await signedInPage(browser, server);
    const status = await page.locator("#network-status").textContent();
    assert.match(status ?? "", /^[\d,]+ segments shown\.$/);
    assert.equal(await page.evaluate(() => sessionStorage.getItem("streetflow.apiKey")), server.key);
    assert.equal(await page.evaluate(() => localStorage.length), 0);
    // The map drew into a WebGL canvas.
    assert.ok(await page.locator("#map canvas").isVisible());
    await page.close();
  });

  it("switches views with the keyboard (arrow keys move between tabs)", async () => {
    const page = await signedInPage(browser, server);
    await page.getByRole("tab", { name: "Zone sets" }).focus();
    await page.keyboard.press("ArrowRight");
    assert.equal(await page.getByRole("tab", { name: "Analyses" }).getAttribute("aria-selected"), "true");
    assert.ok(await page.getByRole("tabpanel", { name: "Analyses" }).isVisible());
    assert.ok(await page.getByRole("tabpanel", { name: "Zone sets" }).isHidden());
    await page.keyboard.press("End");
    assert.equal(await page.getByRole("tab", { name: "Counts" }).getAttribute("aria-selected"), "true");
    await page.close();
  });

  it("opens and closes the sidebar at tablet width", async () => {
    const page = await signedInPage(browser, server, { width: 768, height: 1024 });
    const toggle = page.getByRole("button", { name: "Panels" });
    assert.equal(await toggle.getAttribute("aria-expanded"), "false");
    await toggle.click();
    assert.ok(await page.getByRole("tab", { name: "Analyses" }).isVisible());
    await page.close();
  });
});
