import { before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Browser } from "playwright-core";
import { DEMO_EMAIL } from "../../../src/app/accounts.js";
import { signedInPage, type WebServer, type BrowserEnv } from "../../helpers/browser.js";

export function signInSuite(env: BrowserEnv): void {
  describe("web application in Chromium: sign-in, network, tabs", () => {
    let server: WebServer;
    let browser: Browser;
    before(async () => {
      ({ server, browser } = env);
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
      // Strings, not functions: the tests are type-checked without the DOM library.
      assert.equal(await page.evaluate('sessionStorage.getItem("streetflow.apiKey")'), server.key);
      assert.equal(await page.evaluate("localStorage.length"), 0);
      // The demo organization has one user, who is then the one creating zone sets and analyses.
      assert.equal(await page.locator("#account-name").textContent(), `Streetflow Demo · ${DEMO_EMAIL}`);
      // The map drew into a WebGL canvas.
      assert.ok(await page.locator("#map canvas").isVisible());
      await page.close();
    });

    it("checks an e-mail given at sign-in against the organization's users", async () => {
      const page = await browser.newPage();
      await page.goto(server.baseUrl);
      await page.getByLabel("API key").fill(server.key);
      await page.getByLabel(/E-mail/).fill("someone@else.example");
      await page.getByRole("button", { name: "Sign in" }).click();
      await page
        .getByRole("alert")
        .getByText("someone@else.example is not a user of Streetflow Demo.")
        .waitFor();
      await page.getByLabel(/E-mail/).fill(DEMO_EMAIL.toUpperCase());
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.locator("#account-name", { hasText: DEMO_EMAIL }).waitFor();
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
}
