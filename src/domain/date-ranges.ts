import type { YearMonth } from "./records.js";

/** A period as the vendor interface writes it: MM/DD/YYYY, both ends inclusive. */
export interface DateRange {
  start_date: string;
  end_date: string;
}

/** How many of the latest supported months the default periods cover. */
export const DEFAULT_MONTHS = 12;

const pad = (n: number) => String(n).padStart(2, "0");
const monthIndex = (m: YearMonth) => m.year * 12 + (m.month - 1);
const daysIn = (m: YearMonth) => new Date(Date.UTC(m.year, m.month, 0)).getUTCDate();

function rangeOf(first: YearMonth, last: YearMonth): DateRange {
  return {
    start_date: `${pad(first.month)}/01/${first.year}`,
    end_date: `${pad(last.month)}/${pad(daysIn(last))}/${last.year}`,
  };
}

/** Whole calendar months folded into runs of consecutive months, oldest first. */
export function monthsToRanges(months: YearMonth[]): DateRange[] {
  const sorted = [...months].sort((a, b) => monthIndex(a) - monthIndex(b));
  const ranges: DateRange[] = [];
  let runStart: YearMonth | undefined;
  sorted.forEach((m, i) => {
    runStart ??= m;
    const next = sorted[i + 1];
    if (!next || monthIndex(next) !== monthIndex(m) + 1) {
      ranges.push(rangeOf(runStart, m));
      runStart = undefined;
    }
  });
  return ranges;
}

export interface DataPeriods {
  supports: DateRange[];
  default: DateRange[];
}

/** Supported = every month with data; default = the latest DEFAULT_MONTHS of them (all if fewer). */
export function dataPeriods(months: YearMonth[]): DataPeriods {
  const sorted = [...months].sort((a, b) => monthIndex(a) - monthIndex(b));
  return { supports: monthsToRanges(sorted), default: monthsToRanges(sorted.slice(-DEFAULT_MONTHS)) };
}

/** Parses MM/DD/YYYY strictly (real calendar date); null when malformed. */
export function parseUsDate(text: string): Date | null {
  const m = /^(\d{2})\/(\d{2})\/(\d{4})$/.exec(text);
  if (!m) return null;
  const [month, day, year] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const d = new Date(Date.UTC(year, month - 1, day));
  return d.getUTCFullYear() === year && d.getUTCMonth() === month - 1 && d.getUTCDate() === day ? d : null;
}
