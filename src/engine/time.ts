/**
 * Local calendar of a trip timestamp. Day types and day parts are defined in
 * local time, so a trip at 07:30 Monaco time is "Peak AM" whatever UTC says.
 */
export interface LocalTime {
  /** YYYY-MM-DD in local time. */
  day: string;
  /** ISO weekday: 1 = Monday … 7 = Sunday. */
  weekday: number;
  hour: number;
}

const WEEKDAYS: Record<string, number> = { Mon: 1, Tue: 2, Wed: 3, Thu: 4, Fri: 5, Sat: 6, Sun: 7 };
const HOUR_MS = 3_600_000;

/** Converts epoch ms to local time; caches per UTC hour because offsets only change on whole hours here. */
export class LocalClock {
  private static readonly shared = new Map<string, LocalClock>();
  private readonly format: Intl.DateTimeFormat;
  private readonly cache = new Map<number, LocalTime>();

  /**
   * The process's clock for a time zone: its hours, once formatted, serve every later ingest and analysis
   * (a fresh clock formats each hour it meets again: ~700 `formatToParts` calls per month of trips).
   */
  static of(timeZone: string): LocalClock {
    let clock = LocalClock.shared.get(timeZone);
    if (!clock) {
      clock = new LocalClock(timeZone);
      LocalClock.shared.set(timeZone, clock);
    }
    return clock;
  }

  constructor(readonly timeZone: string) {
    this.format = new Intl.DateTimeFormat("en-US", {
      timeZone,
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      weekday: "short",
      hour: "2-digit",
      hourCycle: "h23",
    });
  }

  at(t: number): LocalTime {
    const key = Math.floor(t / HOUR_MS);
    let local = this.cache.get(key);
    if (!local) {
      const parts = Object.fromEntries(
        this.format.formatToParts(new Date(key * HOUR_MS)).map((p) => [p.type, p.value]),
      );
      local = {
        day: `${parts.year}-${parts.month}-${parts.day}`,
        weekday: WEEKDAYS[parts.weekday],
        hour: Number(parts.hour),
      };
      if (this.cache.size > 100_000) this.cache.clear();
      this.cache.set(key, local);
    }
    return local;
  }
}

/**
 * Local wall-clock time of an epoch time, as ms from the epoch (so local days and hours are plain
 * arithmetic); exact for zones on whole-hour offsets, which every shipped country has.
 */
export function localMs(clock: LocalClock, t: number): number {
  let offset = (clock.at(t).hour - (Math.floor(t / HOUR_MS) % 24) + 48) % 24;
  if (offset > 14) offset -= 24;
  return t + offset * HOUR_MS;
}

/** Time zones of the countries Streetflow ships data for; others fall back to UTC (see docs/analyses.md). */
const COUNTRY_TIME_ZONES: Record<string, string> = {
  mc: "Europe/Monaco",
  ad: "Europe/Andorra",
  li: "Europe/Vaduz",
  de: "Europe/Berlin",
  fr: "Europe/Paris",
  pl: "Europe/Warsaw",
  at: "Europe/Vienna",
  ch: "Europe/Zurich",
  it: "Europe/Rome",
  es: "Europe/Madrid",
  gb: "Europe/London",
  nl: "Europe/Amsterdam",
  be: "Europe/Brussels",
  tr: "Europe/Istanbul",
  rs: "Europe/Belgrade",
  us: "America/New_York",
  ca: "America/Toronto",
};

export function timeZoneOfCountry(country: string): string {
  return COUNTRY_TIME_ZONES[country.toLowerCase()] ?? "UTC";
}

/** A calendar month. */
export interface YearMonth {
  year: number;
  month: number;
}

/** A calendar month as YYYY-MM, the key trips and tallies are filed under. */
export function monthKey(m: { year: number; month: number }): string {
  return `${String(m.year).padStart(4, "0")}-${String(m.month).padStart(2, "0")}`;
}

/** The YYYY-MM before a YYYY-MM. */
export function monthBefore(month: string): string {
  const [year, m] = month.split("-").map(Number);
  return m === 1 ? monthKey({ year: year - 1, month: 12 }) : monthKey({ year, month: m - 1 });
}

/** ISO weekday (1 = Monday … 7 = Sunday) of a calendar date given as UTC midnight or YYYY-MM-DD. */
export function isoWeekday(day: Date | string): number {
  const d = typeof day === "string" ? new Date(`${day}T00:00:00Z`) : day;
  return ((d.getUTCDay() + 6) % 7) + 1;
}

/** Every local calendar day from `from` to `to` (YYYY-MM-DD, inclusive) with its ISO weekday. */
export function* daysBetween(from: string, to: string): Generator<{ day: string; weekday: number }> {
  const end = Date.parse(`${to}T00:00:00Z`);
  for (let t = Date.parse(`${from}T00:00:00Z`); t <= end; t += 24 * HOUR_MS) {
    const d = new Date(t);
    yield { day: d.toISOString().slice(0, 10), weekday: isoWeekday(d) };
  }
}
