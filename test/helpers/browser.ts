// Page callbacks (evaluate, evaluateAll) are typed against the DOM. Lib references are global to the
// compilation, so they are made once, here.
/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * Real-browser tests: Debian's Chromium driven by playwright-core against `streetflow serve` with a freshly
 * built web bundle. CI installs chromium (`apt-get install -y chromium`, see .ci/run); elsewhere the
 * browser suites are skipped with a message when no Chromium is found, unless CI is set.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { chromium, type Browser, type Page } from "playwright-core";
import { buildWeb } from "../../src/web/build.js";
import { demoKey, startServer, type RunningServer } from "./server.js";
import { tempDir } from "./temp-dir.js";

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/** `describe(..., { skip: browserSkip() })`: a reason to skip, or false when the browser tests can run. */
export function browserSkip(): string | false {
  if (existsSync(CHROMIUM_PATH)) return false;
  if (process.env.CI) throw new Error(`CI needs Chromium at ${CHROMIUM_PATH} (apt-get install -y chromium)`);
  return `no Chromium at ${CHROMIUM_PATH}: apt-get install -y chromium (or set CHROMIUM_PATH)`;
}

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [
      "--no-sandbox",
      // WebGL through SwiftShader: MapLibre needs a GL context and CI has no GPU.
      "--enable-unsafe-swiftshader",
      "--use-angle=swiftshader",
      "--disable-dev-shm-usage",
      "--disable-background-networking",
      "--disable-quic",
      "--no-first-run",
    ],
  });
}

export interface WebServer extends RunningServer {
  key: string;
}

/** Builds the bundle into a temporary directory and starts the server (demo data included) serving it. */
export async function startWebServer(): Promise<WebServer> {
  const webRoot = tempDir("streetflow-web-");
  await buildWeb(webRoot);
  const server = await startServer([], undefined, {
    STREETFLOW_WEB_ROOT: webRoot,
    // The suites share the demo key and sign in many times from one address.
    STREETFLOW_RATE_LIMIT: "100000",
  });
  return { ...server, key: demoKey(server.dataDir) };
}

/**
 * The one server and browser every browser suite shares: starting the demo server takes most of a browser
 * suite's time, so test/browser/web-app.test.ts starts it once and hands it to the suites.
 */
export interface BrowserEnv {
  server: WebServer;
  browser: Browser;
}

/** A page at laptop size, signed in with the demo key, with the road network drawn. */
export async function signedInPage(
  browser: Browser,
  server: WebServer,
  viewport = { width: 1280, height: 800 },
): Promise<Page> {
  const page = await browser.newPage({ viewport, acceptDownloads: true });
  // Page errors fail loudly rather than leaving a test to time out on a half-drawn screen.
  const errors: string[] = [];
  page.on("pageerror", (err) => errors.push(err.message));
  await page.goto(server.baseUrl);
  await page.getByLabel("API key").fill(server.key);
  await page.getByRole("button", { name: "Sign in" }).click();
  // Attached, not visible: at tablet widths the sidebar with the status line starts closed.
  await page
    .locator("#network-status", { hasText: "segments shown" })
    .waitFor({ state: "attached", timeout: 30_000 });
  if (errors.length > 0) throw new Error(`page errors: ${errors.join("; ")}`);
  return page;
}

/**
 * A call of the server's API with the demo key, as a client sends it, beside what the page does. Fails the
 * test unless the answer has `status` (any 2xx when none is given).
 */
export async function callApi(
  server: WebServer,
  method: string,
  path: string,
  body?: unknown,
  status?: number,
): Promise<Response> {
  const res = await fetch(`${server.baseUrl}${path}`, {
    method,
    headers: { "x-stl-key": server.key, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const problem = `${method} ${path}: ${res.status} ${await res.clone().text()}`;
  if (status === undefined) assert.ok(res.ok, problem);
  else assert.equal(res.status, status, problem);
  return res;
}

/** The demo network's primary road with the most segments: a real street name that has traffic. */
export async function busiestPrimaryStreet(server: WebServer): Promise<string> {
  const { features } = (await (
    await callApi(server, "GET", "/api/v2/networks/mc/segments", undefined, 200)
  ).json()) as {
    features: { properties: { name: string | null; road_class: string } }[];
  };
  const segments = new Map<string, number>();
  for (const { properties: p } of features)
    if (p.name && p.road_class === "primary") segments.set(p.name, (segments.get(p.name) ?? 0) + 1);
  return [...segments].sort((a, b) => b[1] - a[1])[0][0];
}

/** Polls `check` until it is true (for API state the page changed). */
export async function eventually(check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 250));
  }
}
