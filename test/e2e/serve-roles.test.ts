import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { demoYear } from "../../src/main/bootstrap.js";
import { DEMO_EMAIL } from "../../src/app/accounts.js";
import { demoKey, startServer, type RunningServer } from "../helpers/server.js";
import { monacoDistricts } from "../helpers/zones.js";

const CLI = fileURLToPath(new URL("../../src/cli/index.ts", import.meta.url));

const api = (server: RunningServer, path: string, body: unknown) =>
  fetch(`${server.baseUrl}${path}?key=${demoKey(server.dataDir)}`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json" },
    body: JSON.stringify(body),
  });

function lastDemoMonth() {
  const [y, m] = demoYear().to.split("-").map(Number);
  const mm = String(m).padStart(2, "0");
  return { start_date: `${mm}/01/${y}`, end_date: `${mm}/${new Date(Date.UTC(y, m, 0)).getUTCDate()}/${y}` };
}

async function statusOf(server: RunningServer, uuid: string): Promise<string> {
  const res = await api(server, "/api/v2/analyses/status", { analyses: [{ uuid }] });
  return ((await res.json()) as { analyses: { status: string }[] }).analyses[0].status;
}

/**
 * `serve --role api` answers HTTP and runs no job; `serve --role worker` runs the jobs and no HTTP server.
 * Together, on one data directory, they take an analysis from creation to Data Available.
 */
describe("serve --role api and --role worker as separate processes", () => {
  it("the API queues an analysis that only the worker process computes", { timeout: 600_000 }, async () => {
    const apiOnly = await startServer(["--role", "api"]);
    try {
      const zoneSet = await api(apiOnly, "/api/v2/zone_sets", {
        insight_login_email: DEMO_EMAIL,
        zone_set_name: "Districts",
        zones: { type: "FeatureCollection", features: monacoDistricts() },
      });
      assert.equal(zoneSet.status, 201);
      const created = await api(apiOnly, "/api/v2/analyses", {
        insight_login_email: DEMO_EMAIL,
        analysis_name: "computed by the worker",
        analysis_type: "OD_Analysis",
        travel_mode_type: "All_Vehicles",
        output_type: "index",
        oz_sets: [{ name: "Districts" }],
        dz_sets: [{ name: "Districts" }],
        date_ranges: [lastDemoMonth()],
      });
      assert.equal(created.status, 201);
      const { uuid } = (await created.json()) as { uuid: string };
      assert.equal(await statusOf(apiOnly, uuid), "Processing", "no runner in the API process");

      const worker = spawn(
        process.execPath,
        ["--import", "tsx", CLI, "serve", "--role", "worker", "--job-workers", "1"],
        {
          env: { ...process.env, STREETFLOW_DATA_DIR: apiOnly.dataDir },
        },
      );
      let workerOut = "";
      worker.stdout.on("data", (d) => (workerOut += d));
      worker.stderr.on("data", (d) => (workerOut += d));
      try {
        let status = "Processing";
        while (status === "Processing") {
          await new Promise((r) => setTimeout(r, 200));
          status = await statusOf(apiOnly, uuid);
        }
        assert.equal(status, "Data Available", workerOut);
        assert.match(workerOut, /Streetflow worker: 1 job runner/);
        assert.doesNotMatch(workerOut, /listening on/);
      } finally {
        const exited = new Promise<number | null>((resolve) => worker.once("exit", resolve));
        worker.kill("SIGTERM");
        assert.equal(await exited, 0, "SIGTERM stops the worker cleanly");
      }
    } finally {
      await apiOnly.stop();
    }
  });

  it("refuses an unknown role in one line", async () => {
    const child = spawn(process.execPath, ["--import", "tsx", CLI, "serve", "--role", "cook"]);
    let err = "";
    child.stderr.on("data", (d) => (err += d));
    const code = await new Promise((resolve) => child.once("exit", resolve));
    assert.equal(code, 1);
    assert.match(err, /--role <role>.*one of all, api, worker/);
  });
});
