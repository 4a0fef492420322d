declare module "robust-point-in-polygon" {
  /** -1 inside the ring, 0 on its boundary, 1 outside. */
  export default function classifyPoint(loop: [number, number][], point: [number, number]): -1 | 0 | 1;
}
