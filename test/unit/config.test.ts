import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { availableParallelism } from "node:os";
import {
  configFromEnv,
  DEFAULT_JOB_LEASE_MS,
  jobLeaseOf,
  poolSettingsOf,
  shutdownMsOf,
} from "../../src/config/config.js";

describe("server address from the environment", () => {
  it("listens on loopback only unless HOST says otherwise", () => {
    assert.equal(configFromEnv({}).host, "127.0.0.1");
    assert.equal(configFromEnv({ HOST: "" }).host, "127.0.0.1");
    assert.equal(configFromEnv({ HOST: "0.0.0.0" }).host, "0.0.0.0");
    assert.equal(configFromEnv({ PORT: "9000" }).port, 9000);
  });
});

describe("job lease from the environment", () => {
  it("is 60 s unless STREETFLOW_JOB_LEASE_MS says otherwise, and refuses nonsense in one line", () => {
    assert.equal(jobLeaseOf(configFromEnv({})), DEFAULT_JOB_LEASE_MS);
    assert.equal(jobLeaseOf(configFromEnv({ STREETFLOW_JOB_LEASE_MS: "3000" })), 3000);
    for (const bad of ["0", "12.5", "soon"])
      assert.throws(
        () => jobLeaseOf(configFromEnv({ STREETFLOW_JOB_LEASE_MS: bad })),
        /STREETFLOW_JOB_LEASE_MS must be a whole number/,
      );
  });
});

describe("stop time limit from the environment", () => {
  it("is 8 s unless STREETFLOW_SHUTDOWN_MS says otherwise, and refuses nonsense", () => {
    assert.equal(shutdownMsOf({}), 8_000);
    assert.equal(shutdownMsOf({ STREETFLOW_SHUTDOWN_MS: "1500" }), 1500);
    for (const bad of ["0", "2.5", "later"])
      assert.throws(
        () => shutdownMsOf({ STREETFLOW_SHUTDOWN_MS: bad }),
        /STREETFLOW_SHUTDOWN_MS must be a whole number/,
      );
  });
});

describe("heavy-request threads from the environment", () => {
  it("leaves a core to the event loop on SQLite, and gives PostgreSQL, whose threads wait on it, one per core", () => {
    const cores = availableParallelism();
    assert.equal(poolSettingsOf({}).threads, Math.max(1, cores - 1));
    const onPostgres = poolSettingsOf({ STREETFLOW_DATABASE_URL: "postgres://db/streetflow" });
    assert.equal(onPostgres.threads, Math.max(2, cores));
    assert.equal(onPostgres.maxDepth, 16 * onPostgres.threads);
    assert.equal(
      poolSettingsOf({ STREETFLOW_DATABASE_URL: "postgres://db/x", STREETFLOW_POOL_THREADS: "1" }).threads,
      1,
    );
  });
});
