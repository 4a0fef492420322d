/**
 * An empty number array that already holds doubles (V8's PACKED_DOUBLE elements kind). Rows built
 * from `[]`, `[0]` or `Array.prototype.map` start as small integers or generic elements and change
 * kind at their first fractional value, at a point that depends on the data; code optimised for one
 * kind is thrown away when another reaches it, and recompiled: on a cold matching pass (1,000 traces)
 * that was ~20 of the ~35 deoptimisations. Every row of scores, emissions, distances and times is made
 * here, so all of them share one kind.
 */
export function doubleRow(): number[] {
  const row = [0.5];
  row.pop();
  return row;
}
