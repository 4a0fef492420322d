import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { configFromEnv } from "../../src/config.js";

describe("server address from the environment", () => {
  it("listens on loopback only unless HOST says otherwise", () => {
    assert.equal(configFromEnv({}).host, "127.0.0.1");
    assert.equal(configFromEnv({ HOST: "" }).host, "127.0.0.1");
    assert.equal(configFromEnv({ HOST: "0.0.0.0" }).host, "0.0.0.0");
    assert.equal(configFromEnv({ PORT: "9000" }).port, 9000);
  });
});
