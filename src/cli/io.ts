import { InvalidArgumentError } from "commander";
import { type Config, ConfigError, parseConfig } from "../config.js";

/**
 * Where one run of the CLI reads its configuration and writes its output: the process's
 * (`processIo`), or a test's (in-process runs, test/helpers/cli.ts). Commands set `exitCode`
 * instead of process.exitCode, so one process can run the CLI many times.
 */
export interface CliIo {
  env: NodeJS.ProcessEnv;
  stdout(text: string): void;
  stderr(text: string): void;
  /** The run's exit status so far; a command sets 1 for a failure it reports itself. */
  exitCode: number;
}

export function processIo(): CliIo {
  return {
    env: process.env,
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    exitCode: 0,
  };
}

/** A user mistake or refusal: the run prints `almanac: <message>` and ends with exit status 1. */
export class CliError extends Error {}

/** The configuration from the run's environment; a bad variable is a CliError naming every bad one. */
export function configFrom(io: CliIo): Config {
  try {
    return parseConfig(io.env);
  } catch (err) {
    if (err instanceof ConfigError) throw new CliError(err.message);
    throw err;
  }
}

/** Prints `value` as indented JSON. */
export const printJson = (io: CliIo, value: unknown): void => io.stdout(`${JSON.stringify(value, null, 2)}\n`);

/** An option's parser: a whole number from `min` to `max`, else commander's usage error naming the option. */
export const wholeNumber =
  (option: string, min: number, max: number) =>
  (value: string): number => {
    const n = Number(value);
    if (!/^\d{1,16}$/.test(value) || n < min || n > max) {
      throw new InvalidArgumentError(`${option} must be a whole number from ${min} to ${max}.`);
    }
    return n;
  };

/** What went wrong, in one line: the error's message (an AggregateError's, e.g. pg's, may be empty). */
export function errorLine(err: unknown): string {
  if (err instanceof AggregateError && !err.message) return err.errors.map(errorLine).join("; ");
  if (err instanceof Error) return err.message || err.name;
  return String(err);
}
