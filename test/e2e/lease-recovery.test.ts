import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { demoYear } from "../../src/main/bootstrap.js";
import { databaseFile } from "../../src/config/config.js";
import { DEMO_EMAIL } from "../../src/app/accounts.js";
import { parseLeaseOwner } from "../../src/jobs/lease-owner.js";
import { demoKey, startServer, type RunningServer } from "../helpers/server.js";
import { monacoDistricts } from "../helpers/zones.js";

const JOB_PROCESS = fileURLToPath(new URL("../helpers/job-process.ts", import.meta.url));

const api = (server: RunningServer, path: string, body: unknown) =>
  fetch(`${server.baseUrl}${path}?key=${demoKey(server.dataDir)}`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json" },
    body: JSON.stringify(body),
  });

/** The last month of the demo year as an analysis date range. */
function lastDemoMonth() {
  const [y, m] = demoYear().to.split("-").map(Number);
  const mm = String(m).padStart(2, "0");
  return { start_date: `${mm}/01/${y}`, end_date: `${mm}/${new Date(Date.UTC(y, m, 0)).getUTCDate()}/${y}` };
}

function jobRow(dataDir: string) {
  const db = new Database(databaseFile(dataDir), { readonly: true });
  try {
    return db.prepare("SELECT state, attempts, lease_owner FROM jobs").get() as {
      state: string;
      attempts: number;
      lease_owner: string;
    };
  } finally {
    db.close();
  }
}

/**
 * A job process holding an analysis under an hour-long lease is killed with SIGKILL; the server started
 * next on the same data directory sees the lease holder's pid is gone, takes the job back at once (a
 * second attempt, under its own pid) and finishes the analysis — without the hour passing.
 */
describe("kill -9 of the process running an analysis, then a restart on the same data directory", () => {
  // The timeout only keeps a regression from hanging the suite: the old holder's lease lasts an hour.
  it(
    "takes the dead process's job back at once and finishes the analysis",
    { timeout: 600_000 },
    async () => {
      // The API alone first (--no-jobs), so the analysis is claimed by the job process below.
      const apiOnly = await startServer(["--no-jobs"]);
      const dataDir = apiOnly.dataDir;
      const zoneSet = await api(apiOnly, "/api/v2/zone_sets", {
        insight_login_email: DEMO_EMAIL,
        zone_set_name: "Districts",
        zones: { type: "FeatureCollection", features: monacoDistricts() },
      });
      assert.equal(zoneSet.status, 201);
      const created = await api(apiOnly, "/api/v2/analyses", {
        insight_login_email: DEMO_EMAIL,
        analysis_name: "hang until the crash",
        analysis_type: "OD_Analysis",
        travel_mode_type: "All_Vehicles",
        output_type: "index",
        oz_sets: [{ name: "Districts" }],
        dz_sets: [{ name: "Districts" }],
        date_ranges: [lastDemoMonth()],
      });
      assert.equal(created.status, 201);
      const { uuid } = (await created.json()) as { uuid: string };
      await apiOnly.stop();

      const jobs = spawn(process.execPath, ["--import", "tsx", JOB_PROCESS, dataDir]);
      let jobsOut = "";
      jobs.stderr.on("data", (d) => (jobsOut += d));
      await new Promise<void>((resolve, reject) => {
        jobs.stdout.on("data", (d) => {
          jobsOut += d;
          if (jobsOut.includes(`(${uuid}) started, attempt 1`)) resolve();
        });
        jobs.once("exit", (code) => reject(new Error(`job process exited with ${code}:\n${jobsOut}`)));
      });
      const held = jobRow(dataDir);
      assert.deepEqual([held.state, held.attempts], ["running", 1]);
      assert.equal(parseLeaseOwner(held.lease_owner)?.pid, jobs.pid);
      const killed = new Promise((resolve) => jobs.once("exit", resolve));
      jobs.kill("SIGKILL");
      await killed;

      const restarted = await startServer(["--no-demo"], dataDir);
      try {
        // The runners start (and take back dead holders' leases) before the server listens.
        assert.match(restarted.output(), new RegExp(`lease holder ${held.lease_owner} is no longer running`));
        let status = "";
        while (status !== "Data Available" && status !== "Failed") {
          const res = await api(restarted, "/api/v2/analyses/status", { analyses: [{ uuid }] });
          status = ((await res.json()) as { analyses: { status: string }[] }).analyses[0].status;
          if (status === "Processing") await new Promise((r) => setTimeout(r, 200));
        }
        assert.equal(status, "Data Available");
        const done = jobRow(dataDir);
        assert.equal(done.state, "done");
        assert.equal(done.attempts, 2, "the crashed run counts as one interrupted attempt");
        const owner = parseLeaseOwner(done.lease_owner);
        assert.ok(
          owner && owner.pid !== jobs.pid,
          `finished by the restarted server, not ${held.lease_owner}`,
        );
      } finally {
        await restarted.stop();
      }
    },
  );
});
