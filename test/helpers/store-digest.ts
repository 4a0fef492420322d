import { createHash } from "node:crypto";
import type { Store } from "../../src/app/ports/store.js";
import { columnsToTrips } from "../../src/engine/trips/columns.js";
import { VEHICLE_CLASSES, TRACE_SOURCES } from "../../src/engine/trips/types.js";

/**
 * What an ingest leaves in a store, through the ports, in a form that does not depend on the order the
 * trips were stored in (a distributed ingest commits chunks in any order): the trips as a sorted set,
 * the day tallies, devices per month, and every segment-month's counts. Speed sums are float sums whose
 * last bits depend on the order they were added up in, so they are compared to 9 significant digits;
 * every count is exact.
 */
export interface StoreDigest {
  trips: number;
  tripsSha1: string;
  dayTotals: string;
  devicesByMonth: string;
  segmentMonths: number;
  segmentsSha1: string;
}

export async function storeDigest(store: Store, country: string): Promise<StoreDigest> {
  const trips: string[] = [];
  for await (const cols of store.trips.scan(country))
    for (const trip of columnsToTrips(cols)) trips.push(JSON.stringify(trip));
  trips.sort();
  const monthOf = (t: string) =>
    new Date((JSON.parse(t) as { startT: number }).startT).toISOString().slice(0, 7);
  const months = [...new Set(trips.map(monthOf))].sort();
  const dayTotals =
    months.length === 0
      ? []
      : await store.tripStats.dailyTotals(country, VEHICLE_CLASSES, `${months[0]}-01`, `${months.at(-1)}-31`);
  const segments = (await store.network.loadSegments(country)).map((s) => s.id);
  const stats = await store.segmentStats.query({
    country,
    segmentIds: segments,
    months: allMonthsAround(months),
    daysOfWeek: [1, 2, 3, 4, 5, 6, 7],
    hours: Array.from({ length: 24 }, (_, h) => h),
    directions: ["with", "against"],
    vehicleClasses: VEHICLE_CLASSES,
    sources: TRACE_SOURCES,
  });
  const comparable = stats.map((s) => ({ ...s, speedSumKph: Number(s.speedSumKph.toPrecision(9)) }));
  return {
    trips: trips.length,
    tripsSha1: sha1(trips.join("\n")),
    dayTotals: JSON.stringify(dayTotals),
    devicesByMonth: JSON.stringify([...(await store.tripStats.devicesByMonth(country))].sort()),
    segmentMonths: stats.length,
    segmentsSha1: sha1(JSON.stringify(comparable)),
  };
}

/** The trips' months and one on each side (a trip's segment traversals may cross into the next month). */
function allMonthsAround(months: string[]): string[] {
  if (months.length === 0) return [];
  const out: string[] = [];
  const first = new Date(`${months[0]}-01T00:00:00Z`);
  first.setUTCMonth(first.getUTCMonth() - 1);
  const last = new Date(`${months.at(-1)}-01T00:00:00Z`);
  last.setUTCMonth(last.getUTCMonth() + 1);
  for (const d = first; d <= last; d.setUTCMonth(d.getUTCMonth() + 1)) out.push(d.toISOString().slice(0, 7));
  return out;
}

const sha1 = (text: string) => createHash("sha1").update(text).digest("hex");
