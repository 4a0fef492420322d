import type { ObservedTrip } from "./od-aggregate.js";

interface ActivityCell {
  weight: number;
  sample: number;
  durationS: number;
  lengthM: number;
}

export interface ZoneActivityRow {
  group: number;
  zone: number;
  dayType: number;
  dayPart: number;
  /** Expanded average daily trips that start, end or (pass-through zones) pass in the zone. */
  traffic: number;
  avgDurationMin: number;
  /** Mean length of the sampled trips, metres. */
  avgLengthM: number;
  sample: number;
}

/** The zones a trip meets, each once (a trip starting and ending in one zone meets it once). */
export function zonesMet(seen: ObservedTrip): Set<number> {
  return new Set([...seen.origins, ...seen.destinations].map((v) => v.zone));
}

/**
 * Zone activity: per zone, device group, day type and day part, the trips that meet the zone the way
 * its pass-through setting says (start or end in a plain zone, pass through a pass-through zone).
 * A trip starting and ending in one zone counts once there. Fed with the OD aggregation's observed
 * trips, so zone assignment and slicing are exactly those of OD_Analysis.
 */
export class ZoneActivity {
  private readonly cells = new Map<string, ActivityCell>();

  add(seen: ObservedTrip): void {
    const zones = zonesMet(seen);
    const { trip } = seen;
    const durationS = (trip.endT - trip.startT) / 1000;
    for (const group of trip.groups)
      for (const dayType of seen.dayTypes)
        for (const dayPart of seen.dayParts)
          for (const zone of zones) {
            const key = `${group}|${zone}|${dayType}|${dayPart}`;
            const cell = this.cells.get(key) ?? { weight: 0, sample: 0, durationS: 0, lengthM: 0 };
            cell.weight += trip.weight;
            cell.sample++;
            cell.durationS += durationS;
            cell.lengthM += trip.lengthM ?? 0;
            this.cells.set(key, cell);
          }
  }

  /**
   * Rows with trips, ordered day type → group → zone → day part; traffic averaged over the day type's
   * days and multiplied by the group's factor of `scaleOfGroup` (volume output).
   */
  rows(daysPerType: readonly number[], scaleOfGroup?: readonly number[]): ZoneActivityRow[] {
    const rows: ZoneActivityRow[] = [];
    for (const [key, cell] of this.cells) {
      const [group, zone, dayType, dayPart] = key.split("|").map(Number);
      const days = daysPerType[dayType];
      rows.push({
        group,
        zone,
        dayType,
        dayPart,
        traffic: days > 0 ? Math.round((cell.weight * (scaleOfGroup?.[group] ?? 1)) / days) : 0,
        avgDurationMin: Math.round(cell.durationS / cell.sample / 60),
        avgLengthM: cell.lengthM / cell.sample,
        sample: cell.sample,
      });
    }
    return rows.sort(
      (a, b) => a.dayType - b.dayType || a.group - b.group || a.zone - b.zone || a.dayPart - b.dayPart,
    );
  }
}
