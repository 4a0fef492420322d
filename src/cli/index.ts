#!/usr/bin/env node
import { Command, Option } from "commander";
import { configFromEnv } from "../config/config.js";
import { toDomainError } from "../app/error-mapping.js";
import { DomainError } from "../domain/errors.js";
import { accountCommands } from "./accounts.js";
import { networkCommands } from "./network.js";
import { ingestCommand } from "./ingest.js";
import { serveCommand } from "./serve.js";
import { zoneCommands } from "./zones.js";
import { usageCommands } from "./usage.js";
import { simulateCommand } from "./simulate.js";

const program = new Command("streetflow")
  .description("Streetflow: self-hosted traffic analytics")
  .addOption(
    new Option("--data-dir <dir>", "data directory (env STREETFLOW_DATA_DIR)").default(
      configFromEnv().dataDir,
    ),
  )
  .showHelpAfterError();

serveCommand(program);
accountCommands(program);
zoneCommands(program);
networkCommands(program);
usageCommands(program);
simulateCommand(program);
ingestCommand(program);

program.parseAsync(process.argv).catch((thrown: unknown) => {
  // Expected failures read as one line; anything else keeps its stack for the operator.
  const err = toDomainError(thrown);
  if (err instanceof DomainError) console.error(`error: ${err.message}`);
  else console.error(err);
  process.exit(1);
});
