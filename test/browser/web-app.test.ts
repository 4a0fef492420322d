import { after, before, describe } from "node:test";
import { browserSkip, launchBrowser, startWebServer, type BrowserEnv } from "../helpers/browser.js";
import { analysesSuite } from "./suites/analyses.js";
import { catalogueSuite } from "./suites/catalogue.js";
import { countsSuite } from "./suites/counts.js";
import { firstHourSuite } from "./suites/first-hour.js";
import { journeySuite } from "./suites/journey.js";
import { securitySuite } from "./suites/security.js";
import { signInSuite } from "./suites/sign-in.js";
import { vendorSuite } from "./suites/vendor.js";
import { zoneEditorSuite } from "./suites/zone-editor.js";

/**
 * Every browser suite against one demo server and one Chromium (starting the server is the slow part).
 * The suites run in order and share the organization's data, so each names what it creates uniquely.
 */
describe("web application in Chromium", { skip: browserSkip() }, () => {
  const env = {} as BrowserEnv;
  before(async () => {
    [env.server, env.browser] = await Promise.all([startWebServer(), launchBrowser()]);
  });
  after(async () => {
    await env.browser?.close();
    await env.server?.stop();
  });

  signInSuite(env);
  zoneEditorSuite(env);
  analysesSuite(env);
  catalogueSuite(env);
  journeySuite(env);
  vendorSuite(env);
  // Last: it ends by using up the demo key's counts quota.
  countsSuite(env);
  // After the suites that sign in with the demo key: it adds users, and the forms then ask which one you are.
  securitySuite(env);
  // After the others: it imports a second network, which the earlier suites do not expect.
  firstHourSuite(env);
});
