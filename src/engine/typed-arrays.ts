/** The typed-array kinds the engine grows as it appends. */
export type GrowableArray =
  Float64Array | Float32Array | Int32Array | Uint32Array | Int16Array | Uint16Array | Int8Array | Uint8Array;

/**
 * A typed array of the same kind as `a`, `size` long (twice as long by default), holding the first `used`
 * values of `a` (all of them by default): how the engine's append-only columns grow.
 */
export function grown<T extends GrowableArray>(a: T, size = 2 * a.length, used = a.length): T {
  const b = new (a.constructor as new (n: number) => T)(size);
  b.set(a.subarray(0, used) as never);
  return b;
}
