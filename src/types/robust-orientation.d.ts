declare module "robust-orientation" {
  /** Exact sign of the orientation of three 2-D points (0 when collinear); sign as in robust-point-in-polygon. */
  export default function orient(
    a: readonly [number, number],
    b: readonly [number, number],
    c: readonly [number, number],
  ): number;
}
