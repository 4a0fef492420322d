import type { LonLat } from "../engine/network/types.js";

/** Coordinates as packed little-endian float64 pairs: compact and fast to load. */
export function packCoords(coords: LonLat[]): Buffer {
  const arr = new Float64Array(coords.length * 2);
  coords.forEach(([x, y], i) => {
    arr[2 * i] = x;
    arr[2 * i + 1] = y;
  });
  return Buffer.from(arr.buffer);
}

export function unpackCoords(buf: Buffer): LonLat[] {
  const arr = new Float64Array(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength));
  const out: LonLat[] = new Array(arr.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = [arr[2 * i], arr[2 * i + 1]];
  return out;
}
