import { bboxOfCoordinates } from "../../engine/zones/geometry.js";
import type { ZoneFeatureCollection } from "../../domain/records.js";

/** The stored form of a zone set's bounding box: JSON [w, s, e, n], or NULL without positions. */
export function zoneSetBboxJson(collection: ZoneFeatureCollection): string | null {
  const box = bboxOfCoordinates(collection.features.map((f) => f.geometry?.coordinates));
  return box && JSON.stringify(box);
}
