/**
 * The graduated scale of the map: traffic volume classes with a colour and a line width each. Breaks are
 * quantiles of the shown volumes rounded to readable numbers, so every class holds some segments whatever
 * the place. No DOM here.
 */

/** Light to dark: low to high volume (YlOrRd, the light end dropped so lines show on the pale map). */
export const VOLUME_COLOURS = ["#fdae61", "#f46d43", "#d73027", "#a50026", "#5e0019"] as const;
/** Line width (px at zoom 16) per class. */
export const VOLUME_WIDTHS = [2, 3, 4.5, 6.5, 9] as const;
export const NO_DATA_COLOUR = "#8c959f";

/**
 * Upper-exclusive class limits: a value v is in class `classOf(v, breaks)`, the number of breaks ≤ v. At most
 * `classes - 1` breaks, strictly increasing, each above the smallest value; [] when all values are equal.
 */
export function volumeBreaks(values: readonly number[], classes = VOLUME_COLOURS.length): number[] {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (sorted.length === 0) return [];
  const breaks: number[] = [];
  for (let k = 1; k < classes; k++) {
    const q = sorted[Math.floor((k * sorted.length) / classes)];
    const b = niceCeil(q);
    if (b > sorted[0] && b <= sorted[sorted.length - 1] && (breaks.length === 0 || b > breaks.at(-1)!))
      breaks.push(b);
  }
  return breaks;
}

export function classOf(value: number, breaks: readonly number[]): number {
  let cls = 0;
  while (cls < breaks.length && value >= breaks[cls]) cls++;
  return cls;
}

export interface LegendEntry {
  colour: string;
  width: number;
  label: string;
}

/** One legend row per class: "< 25", "25 – 99", "≥ 400" (trips per day). */
export function legendEntries(
  breaks: readonly number[],
  format = (v: number) => v.toLocaleString("en"),
): LegendEntry[] {
  const count = breaks.length + 1;
  return Array.from({ length: count }, (_, i) => {
    const style = styleOf(i, count);
    let label: string;
    if (count === 1) label = "all shown segments";
    else if (i === 0) label = `< ${format(breaks[0])}`;
    else if (i === count - 1) label = `≥ ${format(breaks[i - 1])}`;
    else label = `${format(breaks[i - 1])} – ${format(breaks[i] - 1)}`;
    return { ...style, label };
  });
}

/**
 * The colour and width of class `cls` of `count`: with fewer classes than colours, spread over the whole
 * ramp so the highest class is always the darkest.
 */
export function styleOf(cls: number, count: number): { colour: string; width: number } {
  const last = VOLUME_COLOURS.length - 1;
  const i = count <= 1 ? Math.floor(last / 2) : Math.round((cls * last) / (count - 1));
  return { colour: VOLUME_COLOURS[i], width: VOLUME_WIDTHS[i] };
}

/** Steps of a readable number within a power of ten. */
const NICE_STEPS = [1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10];

/** Rounds up to a readable whole number (NICE_STEPS × a power of ten): 37 → 40, 140 → 150, 0.4 → 1. */
export function niceCeil(v: number): number {
  if (v <= 1) return 1;
  const power = 10 ** Math.floor(Math.log10(v));
  const step = NICE_STEPS.find((s) => s * power >= v)!;
  return Math.ceil(step * power);
}
