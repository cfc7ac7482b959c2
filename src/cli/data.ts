import { readFileSync } from "node:fs";
import type { Command } from "commander";
import { loadVatDataset } from "../features/vat/dataset.js";
import type { CliIo } from "./io.js";

/** `almanac data …`: checks of the bundled datasets against outside references. */
export function registerDataCommands(program: Command, io: CliIo): void {
  const data = program.command("data").description("check the bundled datasets against outside references");
  data
    .command("check")
    .description("diff the VAT dataset against a TEDB export (CSV); exit 1 when they differ")
    .requiredOption("--tedb <file>", "CSV exported from the EC's Taxes in Europe Database (see docs/facts.md)")
    .option("--json", "print the result as JSON")
    .action(async (opts: { tedb: string; json?: boolean }) => {
      // Imported here: csv-parse is for this command only, not for every start of the server.
      const { checkAgainstTedb } = await import("../features/vat/tedb.js");
      const result = checkAgainstTedb(loadVatDataset(), readFileSync(opts.tedb, "utf8"));
      if (opts.json) {
        io.stdout(`${JSON.stringify(result)}\n`);
      } else {
        const fmt = (xs: number[]) => (xs.length ? xs.join("/") : "—");
        for (const d of result.differences) {
          io.stdout(`${d.country} ${d.date} ${d.kind}: ours ${fmt(d.ours)}, TEDB ${fmt(d.tedb)}\n`);
        }
        for (const s of result.skipped) io.stderr(`skipped ${s}\n`);
        io.stdout(
          `${result.compared} country-dates compared, ${result.differences.length} differences, ${result.skipped.length} skipped\n`,
        );
      }
      io.exitCode = result.differences.length > 0 ? 1 : 0;
    });
}
