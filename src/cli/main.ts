import { Command } from "commander";
import { config as loadDotenv } from "dotenv";
import { createLogger } from "../adapters/logger.js";
import { type Config, ConfigError, parseConfig } from "../config.js";
import { openDatabase } from "../db/database.js";
import { migrate } from "../db/migrations.js";
import { registerContactCommands } from "./contact.js";
import { registerDataCommands } from "./data.js";
import { registerKeysCommands, registerPlansCommands } from "./keys.js";

loadDotenv({ quiet: true });

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
    const database = openDatabase({ dataDir: config.DATA_DIR, databaseUrl: config.DATABASE_URL, logger });
    try {
      const applied = await migrate(database.db);
      const { migrateAuth } = await import("../features/account/auth.js"); // better-auth is heavy to load
      await migrateAuth({ config, database, logger });
      process.stdout.write(`${JSON.stringify({ database: database.dialect, applied })}\n`);
    } finally {
      await database.close();
    }
  });

// Later slices register their commands (keys, contact) here.
registerContactCommands(program, loadConfig);
registerKeysCommands(program, loadConfig);
registerPlansCommands(program, loadConfig);
registerDataCommands(program);

await program.parseAsync(process.argv);
