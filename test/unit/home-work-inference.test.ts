import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { inferDevice, type LocalTrip } from "../../src/engine/analysis/home-work.js";
import type { LonLat } from "../../src/engine/network/types.js";

/** Local wall-clock ms of "2025-01-06T08:00" (a Monday), read as UTC: the inference's local time. */
const at = (iso: string) => Date.parse(`${iso}:00Z`);
const HOME: LonLat = [7.42, 43.73];
const WORK: LonLat = [7.43, 43.74]; // about 1.4 km away
const CAFE: LonLat = [7.421, 43.7305]; // 100 m from home
const trip = (from: LonLat, to: LonLat, start: string, minutes = 15): LocalTrip => ({
  start: at(start),
  end: at(start) + minutes * 60_000,
  origin: from,
  destination: to,
});

describe("home and work inference rules", () => {
  it("takes evening arrivals as nights too, and needs two nights", () => {
    // One first trip from home (night of Sunday) and an evening arrival at home on Monday: two nights.
    const trips = [trip(HOME, CAFE, "2025-01-06T10:00"), trip(CAFE, HOME, "2025-01-06T19:30")];
    assert.deepEqual(inferDevice(trips).nights, 2);
    assert.equal(inferDevice(trips.slice(0, 1)).home, null);
  });

  it("finds work only in weekday daytime stays away from home, on enough of the active weekdays", () => {
    const days = ["06", "07", "08", "09", "10"];
    const commute = (d: string) => [
      trip(HOME, WORK, `2025-01-${d}T08:00`),
      trip(WORK, HOME, `2025-01-${d}T17:00`),
    ];
    assert.equal(inferDevice(days.flatMap(commute)).workDays, 5);
    // Long stays at a café 100 m from home are at home, not at work.
    const nearHome = days.flatMap((d) => [
      trip(HOME, CAFE, `2025-01-${d}T08:00`),
      trip(CAFE, HOME, `2025-01-${d}T17:00`),
    ]);
    assert.equal(inferDevice(nearHome).work, null);
    // The same stays on a weekend are no work.
    const weekend = ["11", "12"].flatMap(commute);
    assert.equal(inferDevice(weekend).work, null);
    // Two working days out of ten active weekdays: a favourite place, not a job.
    const rare = [
      ...["06", "07"].flatMap(commute),
      ...["08", "09", "10", "13", "14", "15", "16", "17"].map((d) => trip(HOME, CAFE, `2025-01-${d}T09:00`)),
    ];
    assert.equal(inferDevice(rare).work, null);
  });
});
