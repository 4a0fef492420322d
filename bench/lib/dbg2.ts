import { matchTrip, routeMismatchFraction } from "../../src/engine/matching/index.js";
import { gridNetwork, syntheticTraces } from "./synthetic.js";
const network = gridNetwork();
const traces = [
  ...syntheticTraces(network, { count: 8, sampleS: 30, noiseM: 10, minRouteM: 1500, seed: 42 }),
];
for (const t of traces) {
  const m = matchTrip(network, t.trip).flatMap((p) => p.path);
  const f = routeMismatchFraction(network, t.truth, m);
  const fmt = (s: { segmentId: number; forward: boolean }) =>
    `${s.segmentId / 10000}${s.forward ? "+" : "-"}`;
  console.log(
    f.toFixed(3),
    t.trip.points.length,
    "\n T",
    t.truth.map(fmt).join(" "),
    "\n M",
    m.map(fmt).join(" "),
  );
}
