import { runCli as run } from "../../src/cli/main.js";
import { childEnv } from "./process.js";

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `almanac ARGS` in this process (buildProgram), with the environment a spawned CLI would
 * get (helpers/process.ts: no Almanac configuration but `env`), and collects what it writes.
 */
export async function runCli(args: string[], env: Record<string, string>): Promise<CliRun> {
  let stdout = "";
  let stderr = "";
  const io = {
    env: childEnv(env),
    stdout: (text: string) => {
      stdout += text;
    },
    stderr: (text: string) => {
      stderr += text;
    },
    exitCode: 0,
  };
  const code = await run(args, io);
  return { code, stdout, stderr };
}
