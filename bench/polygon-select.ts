/**
 * Polygon selection cost against polygon size: `npm run bench -- polygon-select [size=100]`.
 * A size × size street grid (150 m blocks); a circle covering most of it drawn with 64 and with
 * 10,000 positions (the geometry cap), selected `within` and `intersects`. Reports process CPU time
 * per selection and the ratio 10,000 : 64, which shows whether cost still grows with the vertices
 * (before the edge index it grew with them: 67× within, 29× intersects).
 */
import { loadavg } from "node:os";
import { cpuUsage } from "node:process";
import { selectSegments, type GeomMode } from "../src/engine/network/select.js";
import type { LonLat } from "../src/engine/network/types.js";
import { gridNetwork } from "../test/helpers/grid-network.js";

function circle(centre: LonLat, radiusDeg: number, positions: number): LonLat[] {
  const ring = Array.from({ length: positions - 1 }, (_, i): LonLat => {
    const a = (2 * Math.PI * i) / (positions - 1);
    return [centre[0] + radiusDeg * Math.cos(a) * 1.4, centre[1] + radiusDeg * Math.sin(a)];
  });
  return [...ring, ring[0]];
}

function cpuMsPerRun(run: () => void, repeats: number): number {
  const start = cpuUsage();
  for (let i = 0; i < repeats; i++) run();
  const used = cpuUsage(start);
  return (used.user + used.system) / 1000 / repeats;
}

export default async function (args: string[]) {
  const size = Number(args[0] ?? 100);
  const network = gridNetwork({ size });
  // The grid spans size × 150 m from (7.41, 43.725); a circle over its middle.
  const span = (size * 150) / 111_000;
  const centre: LonLat = [7.41 + (span * 1.4) / 2, 43.725 + span / 2];
  const results: Record<string, unknown> = { segments: network.segments.length };
  for (const mode of ["within", "intersects"] as GeomMode[]) {
    const ms = (positions: number) => {
      const selector = {
        kind: "polygon" as const,
        polygons: [[circle(centre, span * 0.4, positions)]],
        mode,
      };
      const selected = selectSegments(network, selector, () => true).segments.length;
      return { ms: cpuMsPerRun(() => selectSegments(network, selector, () => true), 5), selected };
    };
    const coarse = ms(64);
    const fine = ms(10_000);
    results[mode] = {
      cpu_ms_64: +coarse.ms.toFixed(1),
      cpu_ms_10000: +fine.ms.toFixed(1),
      ratio: +(fine.ms / coarse.ms).toFixed(2),
      selected: fine.selected,
    };
  }
  return { ...results, loadavg: loadavg().map((l) => +l.toFixed(2)) };
}
