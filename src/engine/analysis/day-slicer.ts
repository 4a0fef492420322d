import { daysBetween, type LocalClock } from "../time.js";
import type { OdSlicing } from "./od-aggregate.js";

/**
 * The day types and day parts a moment falls in, in local time, and how many analysed days each
 * day type has (the divisor of daily averages). For analyses that slice by when a trip is somewhere
 * (a segment, a zone) rather than by when it starts.
 */
export class DaySlicer {
  private readonly days = new Map<string, number>();
  private readonly hourParts: number[][];
  private readonly weekdayTypes: number[][];
  readonly daysPerType: number[];

  constructor(
    slicing: Omit<OdSlicing, "slotMinutes">,
    private readonly clock: LocalClock,
  ) {
    for (const span of slicing.dateSpans)
      for (const d of daysBetween(span.from, span.to)) this.days.set(d.day, d.weekday);
    const weekdays = [...this.days.values()];
    this.daysPerType = slicing.dayTypes.map((t) => weekdays.filter((w) => t.weekdays.includes(w)).length);
    this.hourParts = Array.from({ length: 24 }, (_, h) =>
      slicing.dayParts.flatMap((p, i) => (h >= p.startHour && h <= p.endHour ? [i] : [])),
    );
    this.weekdayTypes = Array.from({ length: 8 }, (_, w) =>
      slicing.dayTypes.flatMap((t, i) => (t.weekdays.includes(w) ? [i] : [])),
    );
  }

  /** Null when the moment's local day is not analysed. */
  at(t: number): { dayTypes: readonly number[]; dayParts: readonly number[] } | null {
    const local = this.clock.at(t);
    if (!this.days.has(local.day)) return null;
    return { dayTypes: this.weekdayTypes[local.weekday], dayParts: this.hourParts[local.hour] };
  }
}
