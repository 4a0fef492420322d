import { before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Browser, Page } from "playwright-core";
import { DEMO_EMAIL } from "../../../src/app/accounts.js";
import { callApi, type BrowserEnv, type WebServer } from "../../helpers/browser.js";
import { demoPassword, runCli } from "../../helpers/server.js";

const ANALYST = "analyst@streetflow.local";
const ANALYST_PASSWORD = "analyst password 1";

/** A page that records CSP violations and page errors, which every test here asserts there are none of. */
async function watchedPage(browser: Browser): Promise<{ page: Page; problems: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const problems: string[] = [];
  page.on("console", (m) => {
    if (/Content Security Policy|Refused to/i.test(m.text())) problems.push(m.text());
  });
  page.on("pageerror", (err) => problems.push(err.message));
  return { page, problems };
}

async function signInWithPassword(page: Page, server: WebServer, email: string, password: string) {
  await page.goto(server.baseUrl);
  await page.getByLabel("E-mail", { exact: true }).fill(email);
  await page.getByLabel("Password", { exact: true }).fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.locator("#account-name", { hasText: email }).waitFor();
  await page
    .locator("#network-status", { hasText: "segments shown" })
    .waitFor({ state: "attached", timeout: 30_000 });
}

/** A same-origin request from the page, as its scripts make them (cookie sent by the browser). */
const pageFetch = (page: Page, method: string, path: string, body?: unknown, csrf = "") =>
  page.evaluate(
    async ([method, path, body, csrf]) => {
      const headers: Record<string, string> = { "content-type": "application/json" };
      if (csrf) headers["x-csrf-token"] = csrf as string;
      const res = await fetch(path as string, {
        method: method as string,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return res.status;
    },
    [method, path, body, csrf] as const,
  );

export function securitySuite(env: BrowserEnv): void {
  describe("web application in Chromium: accounts and security", () => {
    let server: WebServer;
    let browser: Browser;
    before(async () => {
      ({ server, browser } = env);
      const add = await runCli(server.dataDir, [
        "user",
        "add",
        ANALYST,
        "--org",
        "Streetflow Demo",
        "--role",
        "analyst",
      ]);
      assert.equal(add.code, 0, add.stderr);
      const set = await runCli(server.dataDir, ["user", "password", ANALYST], `${ANALYST_PASSWORD}\n`);
      assert.equal(set.code, 0, set.stderr);
    });

    it("an analyst signs in with e-mail and password, works, is refused the admin page, signs out and is refused", async () => {
      const { page, problems } = await watchedPage(browser);
      const email = page.getByLabel("E-mail", { exact: true });
      await page.goto(server.baseUrl);
      // Password managers recognise the form.
      assert.equal(await email.getAttribute("type"), "email");
      assert.equal(await email.getAttribute("autocomplete"), "username");
      assert.equal(
        await page.getByLabel("Password", { exact: true }).getAttribute("autocomplete"),
        "current-password",
      );

      await signInWithPassword(page, server, ANALYST, ANALYST_PASSWORD);
      assert.ok(await page.getByRole("link", { name: "Admin" }).isHidden(), "no admin link for an analyst");
      // The session cookie is HttpOnly: the page's scripts cannot read it.
      assert.equal(await page.evaluate("document.cookie"), "");
      assert.equal(await page.evaluate('sessionStorage.getItem("streetflow.apiKey")'), null);

      // Work as an analyst: a zone set saved with the session (and its CSRF token) shows in the list.
      const csrf = (await page.evaluate(
        'fetch("/auth/session").then((r) => r.json()).then((s) => s.csrf_token)',
      )) as string;
      const zoneSet = {
        zone_set_name: "Analyst browser set",
        insight_login_email: ANALYST,
        zones: {
          type: "FeatureCollection",
          features: [
            {
              type: "Feature",
              properties: { name: "Port", id: 1 },
              geometry: {
                type: "Polygon",
                coordinates: [
                  [
                    [7.42, 43.73],
                    [7.425, 43.73],
                    [7.425, 43.735],
                    [7.42, 43.735],
                    [7.42, 43.73],
                  ],
                ],
              },
            },
          ],
        },
      };
      assert.equal(
        await pageFetch(page, "POST", "/api/v2/zone_sets", zoneSet),
        403,
        "no CSRF token: refused",
      );
      assert.equal(await pageFetch(page, "POST", "/api/v2/zone_sets", zoneSet, csrf), 201);
      await page.reload();
      await page.getByRole("listitem").filter({ hasText: "Analyst browser set" }).first().waitFor();

      // The admin page and its interface refuse an analyst.
      await page.goto(`${server.baseUrl}/admin.html`);
      await page
        .getByRole("alert")
        .getByText("The admin page needs the admin role; you are analyst.")
        .waitFor();
      assert.ok(await page.locator("#admin-content").isHidden());
      assert.equal(await pageFetch(page, "GET", "/admin/api/users"), 403);

      await page.goto(server.baseUrl);
      await page.getByRole("button", { name: "Sign out" }).click();
      await page.getByRole("button", { name: "Sign in" }).waitFor();
      assert.equal(await pageFetch(page, "GET", "/api/v2/zone_sets"), 401, "signed out: refused");
      await page.goto(`${server.baseUrl}/admin.html`);
      await page.getByRole("alert").getByText("Sign in first").waitFor();
      assert.deepEqual(problems, [], "no CSP violation or page error");
      await page.close();
    });

    it("an admin creates a user and a key, sets the key's rate limit and sees its usage", async () => {
      const { page, problems } = await watchedPage(browser);
      await signInWithPassword(page, server, DEMO_EMAIL, demoPassword(server.dataDir));
      await page.getByRole("link", { name: "Admin" }).click();
      await page.getByRole("heading", { name: "Users" }).waitFor();

      await page.getByLabel("E-mail", { exact: true }).fill("new.viewer@streetflow.local");
      await page.getByLabel("Role", { exact: true }).selectOption("viewer");
      await page.getByRole("button", { name: "Invite user" }).click();
      await page.getByText("new.viewer@streetflow.local invited as viewer").waitFor();
      assert.match((await page.locator("#user-link").textContent()) ?? "", /\/#reset=[\w-]+$/);
      const row = page.getByRole("row").filter({ hasText: "new.viewer@streetflow.local" });
      assert.equal(await row.getByRole("combobox").inputValue(), "viewer");

      await page.getByLabel("Label of a new key").fill("Traffic board");
      await page.getByRole("button", { name: "Create key" }).click();
      // The key arrives with the server's answer: wait for it rather than read the empty box.
      await page.locator("#new-key-value").filter({ hasText: /^sf_/ }).waitFor();
      const key = (await page.locator("#new-key-value").textContent())!.trim();
      assert.match(key, /^sf_[\w-]{40,}$/);
      await page.getByLabel("Rate limit of Traffic board").fill("90");
      await page.getByRole("button", { name: "Save Traffic board" }).click();
      await page.getByText("Traffic board saved.").waitFor();
      const keys = (await (await callApi(server, "GET", "/api/v2/account")).json()) as unknown;
      assert.ok(keys, "the demo key still works");

      // A metered counts call with the new key shows in this month's usage.
      const segment = (
        (await (await callApi(server, "GET", "/api/v2/networks/mc/segments")).json()) as {
          features: { properties: { segment_id: number } }[];
        }
      ).features[0].properties.segment_id;
      const now = new Date();
      const res = await fetch(`${server.baseUrl}/counts/v1/metrics`, {
        method: "POST",
        headers: { "x-service-key": key, "content-type": "application/json" },
        body: JSON.stringify({
          geometry: { segment_ids: [segment] },
          country: "mc",
          mode: "vehicle",
          fields: ["segment_id", "trips_volume"],
          day_part: "all",
          day_type: "all",
          direction: "bidirectional",
          date: { year: now.getUTCFullYear() - 1, month: now.getUTCMonth() + 1 },
          data_version: 1,
        }),
      });
      assert.equal(res.status, 200, await res.text());
      await page.reload();
      const month = now.toISOString().slice(0, 7);
      const usage = page.getByRole("table", { name: "Counts usage per key and month" }).getByRole("row");
      await usage.filter({ hasText: month }).filter({ hasText: "Traffic board" }).waitFor();
      await page.locator("#usage-chart").waitFor({ state: "visible" });
      assert.equal(await page.getByLabel("Rate limit of Traffic board").inputValue(), "90");
      const audit = page.getByRole("table", { name: "Audit log" });
      await audit.getByRole("row").filter({ hasText: "key.update" }).first().waitFor();
      assert.deepEqual(problems, [], "no CSP violation or page error");
      await page.close();
    });
  });
}
