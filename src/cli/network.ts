import { existsSync } from "node:fs";
import type { Command } from "commander";
import { fail } from "../domain/errors.js";
import { networkTimeZone } from "../app/networks.js";
import { importNetwork } from "../app/network-import.js";
import { withContext } from "./context.js";

const COUNTRY_CODE = /^[a-z]{2,3}$/i;

export function networkCommands(program: Command): void {
  program
    .command("import-osm <file>")
    .description(
      "import the road network of an OSM file (.osm.pbf, .osm, .osm.gz), replacing the country's network",
    )
    .requiredOption("--country <code>", "country code the network is stored under, e.g. mc or de")
    .option(
      "--time-zone <zone>",
      "IANA time zone that day types and day parts follow, e.g. America/Chicago (default: by country, else UTC)",
    )
    .action((file: string, opts: { country: string; timeZone?: string }) =>
      withContext(program, async (ctx) => {
        if (!COUNTRY_CODE.test(opts.country)) throw fail("invalid_country", { country: opts.country });
        if (!existsSync(file)) throw fail("file_not_found", { path: file });
        const started = performance.now();
        await importNetwork(ctx, file, opts.country, (line) => console.log(line), opts.timeZone);
        console.log(`done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
      }),
    );

  program
    .command("networks")
    .description("list the imported road networks")
    .action(() =>
      withContext(program, async ({ store }) => {
        const countries = await store.network.countries();
        if (countries.length === 0)
          console.log("no road network imported yet (streetflow import-osm FILE --country CODE)");
        for (const c of countries)
          console.log(
            `${c.country}  ${c.segmentCount} segments  from ${c.source}  imported ${c.importedAt}  ` +
              `local time ${await networkTimeZone(store, c.country)}`,
          );
      }),
    );
}
