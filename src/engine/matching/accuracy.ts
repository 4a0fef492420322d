import type { Network } from "../network/network.js";
import type { LonLat } from "../network/types.js";

/** A path as segment ids (direction ignored) or as directed steps. */
export type ComparablePath = readonly number[] | readonly { segmentId: number; forward: boolean }[];

/**
 * Newson & Krumm's route mismatch fraction: (length of truth missing from
 * the match + length of the match not in the truth) / truth length. Paths
 * are compared as multisets, so a segment travelled twice counts twice;
 * directed steps must agree in direction too (when both paths give it).
 */
export function routeMismatchFraction(
  network: Network,
  truth: ComparablePath,
  matched: ComparablePath,
): number {
  const directed = !isIdList(truth) && !isIdList(matched);
  const truthCounts = countsOf(truth, directed);
  const matchedCounts = countsOf(matched, directed);
  const lengthOf = (key: string) => network.segmentById(Number(key.split(":")[0]))?.lengthM ?? 0;
  let truthLengthM = 0;
  let errorM = 0;
  for (const [key, n] of truthCounts) {
    truthLengthM += n * lengthOf(key);
    errorM += Math.max(0, n - (matchedCounts.get(key) ?? 0)) * lengthOf(key);
  }
  for (const [key, n] of matchedCounts) {
    errorM += Math.max(0, n - (truthCounts.get(key) ?? 0)) * lengthOf(key);
  }
  if (truthLengthM === 0) throw new Error("truth path has no length");
  return errorM / truthLengthM;
}

/** Metres between the true and the matched origin, and between the destinations. */
export function endpointErrorM(
  network: Network,
  truth: { origin: LonLat; destination: LonLat },
  matched: { origin: LonLat; destination: LonLat },
): { originM: number; destinationM: number } {
  return {
    originM: network.ruler.distance(truth.origin, matched.origin),
    destinationM: network.ruler.distance(truth.destination, matched.destination),
  };
}

function isIdList(path: ComparablePath): path is readonly number[] {
  return path.length > 0 && typeof path[0] === "number";
}

function countsOf(path: ComparablePath, directed: boolean): Map<string, number> {
  const counts = new Map<string, number>();
  for (const step of path) {
    const key =
      typeof step === "number"
        ? `${step}`
        : directed
          ? `${step.segmentId}:${step.forward}`
          : `${step.segmentId}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}
