import { readFileSync, writeFileSync } from "node:fs";

/**
 * The month's trace file as `files` files of consecutive days (of about equal length), each
 * with the header; the file itself when `files` is 1. Written beside it; answers their paths.
 */
export function inDayFiles(path: string, files: number): string[] {
  if (files <= 1) return [path];
  const [header, ...rows] = readFileSync(path, "utf8").trimEnd().split("\n");
  const days = 31;
  const parts: string[][] = Array.from({ length: files }, () => [header]);
  for (const row of rows) {
    // The timestamp's day of the month: YYYY-MM-DD… in the second column.
    const dayAt = row.indexOf(",") + 9;
    const day = Number(row.slice(dayAt, dayAt + 2));
    parts[Math.min(files - 1, Math.floor(((day - 1) * files) / days))].push(row);
  }
  return parts.map((lines, i) => {
    const part = path.replace(/\.csv$/, `-part${i + 1}.csv`);
    writeFileSync(part, lines.join("\n") + "\n");
    return part;
  });
}
