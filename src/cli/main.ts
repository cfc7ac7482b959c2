import { Command, CommanderError } from "commander";
import { createLogger } from "../adapters/logger.js";
import { openMigrated } from "../admin.js";
import { registerContactCommands } from "./contact.js";
import { registerDataCommands } from "./data.js";
import { loadDotenvFile } from "./env-file.js";
import { type CliIo, configFrom, errorLine, processIo } from "./io.js";
import { registerKeysCommands, registerPlansCommands } from "./keys.js";

/**
 * The `almanac` command with all its subcommands, reading its configuration from `io.env` and
 * writing to `io` (commander's own messages too). Errors are thrown (exitOverride), not exits:
 * `runCli` turns them into an exit status, so tests run the CLI in-process.
 */
export function buildProgram(io: CliIo): Command {
  const loadConfig = () => configFrom(io);
  const program = new Command()
    .name("almanac")
    .description(
      "Almanac HTTP JSON API: serve it and administer it. Configuration comes from the environment (and .env).",
    )
    .exitOverride()
    // Commander's usage errors ("error: unknown option …") read as every other refusal: `almanac: …`.
    .configureOutput({
      writeOut: io.stdout,
      writeErr: io.stderr,
      outputError: (text, write) => write(text.replace(/^error: /, "almanac: ")),
    });

  program
    .command("serve")
    .description("serve the API (what `npm start` runs)")
    .action(async () => {
      const config = loadConfig();
      // Imported here so the admin commands (and a bad configuration) don't load the whole HTTP app.
      const { serve } = await import("../main.js");
      await serve(config);
    });

  program
    .command("migrate")
    .description("apply pending database migrations and exit")
    .action(async () => {
      const config = loadConfig();
      const logger = createLogger("warn");
      const { database, applied } = await openMigrated(config, logger, { auth: true });
      try {
        io.stdout(`${JSON.stringify({ database: database.dialect, applied })}\n`);
      } finally {
        await database.close();
      }
    });

  registerContactCommands(program, io, loadConfig);
  registerKeysCommands(program, io, loadConfig);
  registerPlansCommands(program, io, loadConfig);
  registerDataCommands(program, io);
  return program;
}

/** Runs the CLI once on `args` (without `node` and the script); resolves with the exit status. */
export async function runCli(args: string[], io: CliIo): Promise<number> {
  try {
    await buildProgram(io).parseAsync(args, { from: "user" });
  } catch (err) {
    // Commander has written its own message (usage errors, --help) through io.
    if (err instanceof CommanderError) return err.exitCode;
    // A refusal (CliError), or a file, dataset or database that failed: its message, never a stack trace.
    io.stderr(`almanac: ${errorLine(err)}\n`);
    return 1;
  }
  return io.exitCode;
}

/** The process's CLI (bin/almanac.js): .env, then the arguments; the exit status as process.exitCode. */
export async function main(): Promise<void> {
  loadDotenvFile();
  process.exitCode = await runCli(process.argv.slice(2), processIo());
  // A cluster worker that failed to start: its channel to the primary would keep it alive, silent.
  if (process.exitCode !== 0 && process.connected) process.disconnect();
}
