import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildApp } from "../../src/api/app.js";
import { ensureDemoAccount } from "../../src/main/bootstrap.js";
import { DEMO_EMAIL } from "../../src/app/accounts.js";
import type { AppContext } from "../../src/app/context.js";
import { openContext } from "../../src/main/runtime.js";
import { demoPassword, runCli } from "../helpers/server.js";
import { signInRequest } from "../helpers/security.js";

describe("passwords from the command line and the demo sign-in", () => {
  const dir = mkdtempSync(join(tmpdir(), "streetflow-security-cli-"));
  after(() => rmSync(dir, { recursive: true, force: true }));

  const signIn = async (email: string, password: string) => {
    const rt: AppContext = openContext(dir);
    const app = await buildApp({ store: rt.store, networks: rt.networks });
    try {
      return (await signInRequest(app, email, password)).statusCode;
    } finally {
      await app.close();
      await rt.store.close();
    }
  };

  before(async () => {
    assert.equal((await runCli(dir, ["org", "create", "Agency"])).code, 0);
    const added = await runCli(dir, [
      "user",
      "add",
      "ann@agency.example",
      "--org",
      "Agency",
      "--role",
      "viewer",
    ]);
    assert.equal(added.code, 0, added.stderr);
  });

  it("sets a password read from standard input, and generates one on request", async () => {
    const set = await runCli(dir, ["user", "password", "ann@agency.example"], "a piped password\n");
    assert.equal(set.code, 0, set.stderr);
    assert.equal(set.stdout, "", "a given password is not echoed");
    assert.equal(await signIn("ann@agency.example", "a piped password"), 200);

    const generated = await runCli(dir, ["user", "password", "ann@agency.example", "--generate"]);
    assert.equal(generated.code, 0, generated.stderr);
    const password = generated.stdout.trim();
    assert.match(password, /^[\w-]{20}$/);
    assert.equal(await signIn("ann@agency.example", "a piped password"), 401, "the old one no longer works");
    assert.equal(await signIn("ann@agency.example", password), 200);
  });

  it("refuses a short password and an unknown user", async () => {
    const short = await runCli(dir, ["user", "password", "ann@agency.example"], "short\n");
    assert.notEqual(short.code, 0);
    assert.match(short.stderr, /at least 10 characters/);
    const unknown = await runCli(dir, ["user", "password", "bob@agency.example", "--generate"]);
    assert.notEqual(unknown.code, 0);
    assert.match(unknown.stderr, /no user bob@agency.example/);
  });

  it("gives the demo admin a password on first start, printed and written beside the key file", async () => {
    const demoDir = mkdtempSync(join(tmpdir(), "streetflow-demo-"));
    const rt = openContext(demoDir);
    const lines: string[] = [];
    try {
      await ensureDemoAccount(rt, demoDir, (line) => lines.push(line));
      const password = demoPassword(demoDir);
      assert.ok(lines.some((l) => l.includes(DEMO_EMAIL) && l.includes(password)));
      assert.equal(statSync(join(demoDir, "demo-password.txt")).mode & 0o777, 0o600);
      const org = (await rt.store.security.organizationsOf(DEMO_EMAIL))[0];
      assert.equal((await rt.store.security.member(DEMO_EMAIL, org))?.role, "admin");
    } finally {
      await rt.store.close();
      rmSync(demoDir, { recursive: true, force: true });
    }
  });
});
