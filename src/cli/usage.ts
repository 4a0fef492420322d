import type { Command } from "commander";
import { requireOrganization } from "../app/accounts.js";
import { monthPeriod, usageReport } from "../app/counts/metering.js";
import { fail } from "../domain/errors.js";
import { withContext } from "./context.js";

/** `usage` (charged counts metrics per key) and `key quota` (monthly unit quota of a key). */
export function usageCommands(program: Command): void {
  program
    .command("usage")
    .description("charged usage of the counts metrics endpoint per API key (units = segments × fields)")
    .requiredOption("--org <org>", "organization name or id")
    .option("--month <YYYY-MM>", "calendar month (UTC); the current one when absent")
    .action((opts: { org: string; month?: string }) =>
      withContext(program, async ({ store }) => {
        const o = await requireOrganization(store, opts.org);
        const period = monthPeriod(new Date(), opts.month);
        console.log(`usage of ${o.name} from ${period.start} to ${period.end} (exclusive)`);
        console.log(usageLine(["key id", "prefix", "calls", "segments", "fields", "units", "quota"]));
        for (const k of await usageReport(store, o.id, period))
          console.log(
            usageLine([
              k.key_id,
              `${k.prefix}…`,
              k.calls,
              k.segments,
              k.fields,
              k.units,
              k.quota_units ?? "none",
            ]),
          );
      }),
    );

  // `key` is created by the account commands; add to it rather than define a second one.
  const key = program.commands.find((c) => c.name() === "key") ?? program.command("key");
  key
    .command("quota <idOrPrefix> <units>")
    .description('monthly quota of counts metrics units for a key ("none" removes it)')
    .action((idOrPrefix: string, units: string) =>
      withContext(program, async ({ store }) => {
        const quota = parseQuota(units);
        const id = await store.usage.setQuota(idOrPrefix, quota);
        if (!id) throw fail("unknown_key", { key: idOrPrefix });
        console.log(`key ${id}: ${quota === null ? "no quota" : `quota ${quota} units per month`}`);
      }),
    );
}

function parseQuota(text: string): number | null {
  if (text.toLowerCase() === "none") return null;
  if (!/^\d+$/.test(text)) throw fail("invalid_quota", { text });
  return Number(text);
}

/** Key id and prefix left-aligned, numbers right-aligned. */
function usageLine(cells: (string | number)[]): string {
  const widths = [36, 11, 6, 9, 7, 8, 8];
  return cells
    .map((c, i) => (i < 2 ? String(c).padEnd(widths[i]) : String(c).padStart(widths[i])))
    .join("  ");
}
