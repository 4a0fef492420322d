/**
 * `npm run bench -- start-up [rounds=1]`: how long a newcomer waits for `npm start` (issue 16: the first start
 * with demo data under 30 s on an idle machine; a start with unchanged sources skips the build).
 *
 * Each round copies the checked-in tree (`git ls-files`, the working copy's contents) into a fresh temp
 * directory beside a hard-linked copy of `node_modules`, so there is no `dist` and no `var`, as after
 * `git clone && npm ci`. It then runs `npm start` there twice, each time until `GET /healthz` answers (the
 * server listens only once the demo data is stored): the first start builds and makes the demo data, the
 * second finds both and must skip the build. Per start: wall seconds, CPU seconds of the whole process tree
 * up to that moment (a process that outlived its parent, as the web bundle's build does, counted as last
 * seen: the tree is sampled every 100 ms), whether it built, and the 1-minute load average at its start.
 */
import { spawn, execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const CLOCK_TICKS = 100;

export default async function startUpBench(args: string[]): Promise<Record<string, unknown>> {
  const rounds = Number(args[0] ?? 1);
  const results = [];
  for (let round = 0; round < rounds; round++) {
    const dir = freshCheckout();
    try {
      const first = await timedStart(dir);
      const second = await timedStart(dir);
      results.push({ first, second });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return {
    what: "npm start on a fresh copy (no dist, no var) until /healthz answers, then again on the same copy",
    rounds: results,
    firstStartS: results.map((r) => r.first.wallS),
    secondStartS: results.map((r) => r.second.wallS),
    secondSkippedBuild: results.every((r) => !r.second.built),
  };
}

/** The tracked files of this working copy plus a hard-linked node_modules, in a new temp directory. */
function freshCheckout(): string {
  const dir = mkdtempSync(join(tmpdir(), "sf-bench-start-"));
  const files = execFileSync("git", ["ls-files", "-z"], { cwd: ROOT, encoding: "utf8" })
    .split("\0")
    .filter(Boolean);
  for (const file of files) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    try {
      copyFileSync(join(ROOT, file), join(dir, file));
    } catch (error) {
      // A file deleted in the working copy but still tracked is absent from a clone of the next commit too.
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
  }
  execFileSync("cp", ["-al", join(ROOT, "node_modules"), join(dir, "node_modules")]);
  return dir;
}

interface StartFigures {
  wallS: number;
  cpuS: number;
  built: boolean;
  loadAvg1m: number;
}

/** Runs `npm start` in `dir` until /healthz answers, then stops it (SIGINT to its process group). */
async function timedStart(dir: string): Promise<StartFigures> {
  const port = await freePort();
  const loadAvg1m = Number(loadavg()[0].toFixed(2));
  const started = performance.now();
  const child = spawn("npm", ["start"], {
    cwd: dir,
    detached: true,
    env: { ...process.env, PORT: String(port), STREETFLOW_DATA_DIR: join(dir, "var") },
  });
  let out = "";
  child.stdout.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr.on("data", (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  const orphans = new OrphanCpu(child.pid!);
  try {
    await untilHealthy(
      port,
      () => child.exitCode !== null,
      () => orphans.sample(),
    );
  } catch (error) {
    throw new Error(`${(error as Error).message}\n${out.slice(-2000)}`);
  }
  const wallS = (performance.now() - started) / 1000;
  const cpuS = groupCpuSeconds(child.pid!) + orphans.goneTicks() / CLOCK_TICKS;
  process.kill(-child.pid!, "SIGINT");
  await exited;
  // build-if-changed.ts says so when it skips the build.
  return { wallS: round(wallS), cpuS: round(cpuS), built: !out.includes("build is up to date"), loadAvg1m };
}

interface GroupMember {
  pid: number;
  ppid: number;
  /** Its own CPU ticks plus those of the children it has reaped. */
  ticks: number;
}

/** The live members of a process group, from /proc. */
function groupMembers(pgid: number): GroupMember[] {
  const members: GroupMember[] = [];
  for (const pid of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    } catch {
      continue; // exited meanwhile
    }
    const fields = stat.slice(stat.lastIndexOf(") ") + 2).split(" ");
    if (Number(fields[2]) !== pgid) continue;
    const ticks = Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
    members.push({ pid: Number(pid), ppid: Number(fields[1]), ticks });
  }
  return members;
}

/**
 * CPU seconds of a process group so far: each live member's own time plus that of the children it has
 * reaped (the finished build is in its shell's reaped time), so nothing is counted twice.
 */
function groupCpuSeconds(pgid: number): number {
  return groupMembers(pgid).reduce((sum, m) => sum + m.ticks, 0) / CLOCK_TICKS;
}

/**
 * Members that outlived their parent (`npm start`'s web bundle build): no member reaps them, so their time
 * is in no live member's; counted as last sampled once they are gone.
 */
class OrphanCpu {
  private readonly orphans = new Map<number, number>();

  constructor(private readonly pgid: number) {}

  sample(): void {
    const members = groupMembers(this.pgid);
    const live = new Set(members.map((m) => m.pid));
    for (const m of members) if (!live.has(m.ppid) && m.pid !== this.pgid) this.orphans.set(m.pid, m.ticks);
  }

  /** Ticks of the orphans sampled that are gone now (a live one is in groupCpuSeconds). */
  goneTicks(): number {
    this.sample();
    const live = new Set(groupMembers(this.pgid).map((m) => m.pid));
    let ticks = 0;
    for (const [pid, t] of this.orphans) if (!live.has(pid)) ticks += t;
    return ticks;
  }
}

async function untilHealthy(port: number, gaveUp: () => boolean, onPoll: () => void): Promise<void> {
  for (;;) {
    onPoll();
    if (gaveUp()) throw new Error("npm start exited before /healthz answered");
    try {
      const res = await fetch(`http://127.0.0.1:${port}/healthz`);
      if (res.ok) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.once("error", reject);
  });
}

const round = (x: number) => Number(x.toFixed(2));
