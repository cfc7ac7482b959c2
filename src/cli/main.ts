import { Command } from "commander";
import { createLogger } from "../adapters/logger.js";
import { openMigrated } from "../admin.js";
import { type Config, ConfigError, parseConfig } from "../config.js";
import { registerContactCommands } from "./contact.js";
import { registerDataCommands } from "./data.js";
import { loadDotenvFile } from "./env-file.js";
import { registerKeysCommands, registerPlansCommands } from "./keys.js";

loadDotenvFile();

/** Parses the configuration once, or exits naming every bad variable. */
function loadConfig(): Config {
  try {
    return parseConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`almanac: ${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
}

const program = new Command()
  .name("almanac")
  .description(
    "Almanac HTTP JSON API: serve it and administer it. Configuration comes from the environment (and .env).",
  );

program
  .command("serve")
  .description("serve the API (what `npm start` runs)")
  .action(async () => {
    // Imported here so the admin commands don't load the whole HTTP app.
    const { serve } = await import("../main.js");
    await serve(loadConfig());
  });

program
  .command("migrate")
  .description("apply pending database migrations and exit")
  .action(async () => {
    const config = loadConfig();
    const logger = createLogger("warn");
    const { database, applied } = await openMigrated(config, logger, { auth: true });
    try {
      process.stdout.write(`${JSON.stringify({ database: database.dialect, applied })}\n`);
    } finally {
      await database.close();
    }
  });

registerContactCommands(program, loadConfig);
registerKeysCommands(program, loadConfig);
registerPlansCommands(program, loadConfig);
registerDataCommands(program);

await program.parseAsync(process.argv);
