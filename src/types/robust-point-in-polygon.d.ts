declare module "robust-point-in-polygon" {
  /** -1 inside, 0 on the boundary, 1 outside. */
  export default function classifyPoint(
    loop: ReadonlyArray<readonly [number, number]>,
    point: readonly [number, number],
  ): -1 | 0 | 1;
}
