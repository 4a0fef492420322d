import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { makeTestApp, type TestContext } from "../helpers/app.js";

describe("GET /api/v2/account", () => {
  let ctx: TestContext;
  before(async () => {
    ctx = await makeTestApp();
  });
  after(() => ctx.app.close());

  const account = (key: string) =>
    ctx.app.inject({ method: "GET", url: "/api/v2/account", headers: { "x-stl-key": key } });

  it("names the key's organization, the key's prefix and the organization's users only", async () => {
    await ctx.store.accounts.addUser("Zoe@OrgA.example", ctx.orgA.orgId);
    const res = await account(ctx.orgA.key);
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), {
      status: "success",
      organization: { name: "Org A" },
      key: {
        prefix: ctx.orgA.key.slice(0, (await ctx.store.accounts.listKeys(ctx.orgA.orgId))[0].prefix.length),
        label: null,
      },
      users: [{ email: ctx.orgA.email }, { email: "Zoe@OrgA.example" }],
    });
    const other = (await account(ctx.orgB.key)).json();
    assert.deepEqual(other.users, [{ email: ctx.orgB.email }]);
  });

  it("answers 401 with the error body without a valid key", async () => {
    const res = await account("sf_nope");
    assert.equal(res.statusCode, 401);
    assert.equal(res.json().error.code, "unauthorized");
  });
});
