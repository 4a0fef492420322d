import { matchTrip, routeMismatchFraction } from "../../src/engine/matching/index.js";
import { gridNetwork, syntheticTraces } from "./synthetic.js";
const network = gridNetwork();
const traces = [
  ...syntheticTraces(network, { count: 300, sampleS: 30, noiseM: 10, minRouteM: 1500, seed: 42 }),
];
let endOnly = 0,
  inner = 0,
  n = 0;
const opts = JSON.parse(process.argv[2] ?? "{}");
let tot = 0,
  totL = 0;
for (const t of traces) {
  const m = matchTrip(network, t.trip, opts).flatMap((p) => p.path);
  const L = t.truth.reduce((s, x) => s + network.segmentById(x.segmentId)!.lengthM, 0);
  const f = routeMismatchFraction(network, t.truth, m);
  tot += f * L;
  totL += L;
  const fi = routeMismatchFraction(
    network,
    t.truth.slice(1, -1),
    m.filter(
      (s) =>
        t.truth.slice(1, -1).some((x) => x.segmentId === s.segmentId) ||
        !(s.segmentId === m[0].segmentId || s.segmentId === m[m.length - 1].segmentId),
    ),
  );
  if (f > 0) {
    n++;
    if (fi === 0) endOnly++;
    else inner++;
  }
}
console.log({ mismatch: tot / totL, tripsWithError: n, endOnly, inner });
