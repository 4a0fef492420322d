/**
 * Independent traces: car traffic simulated by SUMO (Debian packages `sumo` and `osmium-tool`) on the
 * bundled Monaco extract. SUMO routes and drives the cars with its own demand, routing and car-following
 * models, so nothing of Streetflow's generator or matcher shapes the traces or their ground truth.
 *
 * The scenario is built once into `var/bench/sumo-monaco/` (osmium → netconvert → randomTrips → sumo with
 * geographic FCD output every second) and reduced to `vehicles.json`: per car the driven SUMO edges (OSM
 * way and junction node ids) and its clean position every 10 s. `test/fixtures/sumo-monaco.json` is a
 * subset of that file, so the unit test runs without SUMO.
 */
import { execFileSync } from "node:child_process";
import { createReadStream, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { MONACO_PBF } from "../../test/helpers/bundled-data.js";

/**
 * One driven SUMO edge: the OSM way it comes from and the OSM nodes it starts and ends at, with their
 * positions (SUMO also splits ways at nodes that are no junction for Streetflow, e.g. crossings).
 */
export type SumoEdge = [wayId: number, fromLon: number, fromLat: number, toLon: number, toLat: number];
/** Clean position at a sampling instant: seconds, lon, lat, index into the vehicle's edges. */
export type SumoSample = [t: number, lon: number, lat: number, edge: number];

export interface SumoVehicle {
  id: string;
  edges: SumoEdge[];
  /** Every `SAMPLE_STEP_S` seconds from departure to arrival. */
  samples: SumoSample[];
}

export const SAMPLE_STEP_S = 10;
const ROOT = resolve(import.meta.dirname, "../..");
export const SUMO_CACHE_DIR = join(ROOT, "var/bench/sumo-monaco");
export const SUMO_FIXTURE = join(ROOT, "test/fixtures/sumo-monaco.json");

function hasCommand(name: string): boolean {
  try {
    execFileSync("sh", ["-c", `command -v ${name}`], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** Builds (once) and reads the full scenario; null when SUMO or osmium is not installed. */
export async function sumoVehicles(dir = SUMO_CACHE_DIR): Promise<SumoVehicle[] | null> {
  const out = join(dir, "vehicles.json");
  if (!existsSync(out)) {
    if (!hasCommand("sumo") || !hasCommand("osmium")) return null;
    if (!existsSync(join(dir, "fcd.xml"))) buildScenario(dir);
    writeFileSync(out, JSON.stringify(await readFcd(dir)));
  }
  return JSON.parse(readFileSync(out, "utf8")) as SumoVehicle[];
}

export function fixtureVehicles(): SumoVehicle[] {
  return JSON.parse(readFileSync(SUMO_FIXTURE, "utf8")) as SumoVehicle[];
}

function buildScenario(dir: string): void {
  mkdirSync(dir, { recursive: true });
  const sumoHome = process.env.SUMO_HOME ?? "/usr/share/sumo";
  const run = (cmd: string, args: string[]) =>
    execFileSync(cmd, args, { cwd: dir, stdio: "ignore", env: { ...process.env, SUMO_HOME: sumoHome } });
  run("osmium", ["cat", MONACO_PBF, "-o", "monaco.osm", "-O"]);
  run("netconvert", [
    "--osm-files=monaco.osm",
    "-o=monaco.net.xml",
    "--keep-edges.by-vclass=passenger",
    "--remove-edges.isolated=true",
  ]);
  // Half an hour of trips between random edges (fringe edges preferred, as for through traffic).
  run("python3", [
    join(sumoHome, "tools/randomTrips.py"),
    "-n=monaco.net.xml",
    "-o=trips.trips.xml",
    "-r=routes.rou.xml",
    "-b=0",
    "-e=1800",
    "-p=0.75",
    "--fringe-factor=5",
    "--min-distance=800",
    "--seed=16",
    "--validate",
    "--vehicle-class=passenger",
  ]);
  run("sumo", [
    "-n=monaco.net.xml",
    "-r=routes.rou.xml",
    "--fcd-output=fcd.xml",
    "--fcd-output.geo=true",
    "--step-length=1",
    "--no-step-log=true",
    "--time-to-teleport=120",
    "--seed=16",
  ]);
}

/** Edge id → its way and end positions, for the net's normal (non-internal) edges. */
function readEdges(dir: string): Map<string, SumoEdge> {
  const nodes = new Map<string, [number, number]>();
  const osm = readFileSync(join(dir, "monaco.osm"), "utf8");
  for (const m of osm.matchAll(/<node id="(\d+)"[^>]* lat="([-\d.]+)" lon="([-\d.]+)"/g)) {
    nodes.set(m[1], [Number(m[3]), Number(m[2])]);
  }
  const edges = new Map<string, SumoEdge>();
  const xml = readFileSync(join(dir, "monaco.net.xml"), "utf8");
  for (const m of xml.matchAll(/<edge id="([^"]+)" from="(\d+)" to="(\d+)"/g)) {
    const wayId = Number(m[1].replace(/^-/, "").replace(/#.*$/, ""));
    const from = nodes.get(m[2]);
    const to = nodes.get(m[3]);
    if (Number.isFinite(wayId) && from && to) edges.set(m[1], [wayId, ...from, ...to]);
  }
  return edges;
}

interface Track {
  edges: SumoEdge[];
  edgeIds: string[];
  samples: SumoSample[];
  lastT: number;
  /** A second missing (teleport) or an edge unknown: the car's ground truth is incomplete. */
  broken: boolean;
}

/** Streams the FCD file: each car's edge sequence and its position every SAMPLE_STEP_S seconds. */
async function readFcd(dir: string): Promise<SumoVehicle[]> {
  const edges = readEdges(dir);
  const tracks = new Map<string, Track>();
  let t = 0;
  const lines = createInterface({ input: createReadStream(join(dir, "fcd.xml")) });
  for await (const line of lines) {
    const step = /<timestep time="([\d.]+)"/.exec(line);
    if (step) {
      t = Math.round(Number(step[1]));
      continue;
    }
    const v = /<vehicle id="([^"]+)" x="([-\d.]+)" y="([-\d.]+)".* lane="([^"]+)"/.exec(line);
    if (!v) continue;
    let track = tracks.get(v[1]);
    if (!track) {
      track = { edges: [], edgeIds: [], samples: [], lastT: t - 1, broken: false };
      tracks.set(v[1], track);
    }
    if (t !== track.lastT + 1) track.broken = true;
    track.lastT = t;
    const edgeId = v[4].replace(/_\d+$/, "");
    if (!edgeId.startsWith(":") && track.edgeIds.at(-1) !== edgeId) {
      const edge = edges.get(edgeId);
      if (!edge) track.broken = true;
      else {
        track.edgeIds.push(edgeId);
        track.edges.push(edge);
      }
    }
    if (track.samples.length === 0 || t - track.samples[0][0] === track.samples.length * SAMPLE_STEP_S) {
      if (track.edges.length > 0) {
        const lon = Number(v[2]);
        const lat = Number(v[3]);
        track.samples.push([t, lon, lat, track.edges.length - 1]);
      }
    }
  }
  const vehicles: SumoVehicle[] = [];
  for (const [id, track] of tracks) {
    if (track.broken || track.samples.length < 4) continue;
    vehicles.push({ id, edges: track.edges, samples: track.samples });
  }
  return vehicles;
}
