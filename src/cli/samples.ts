/** `pglens samples import`: NDJSON through the sample writer. */
import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import { importSamples } from "../collector/import.ts";
import { withDatastore } from "./common.ts";
import { UsageError } from "./usage-error.ts";
import { parserOptions } from "./options.ts";

export async function samplesCommand(args: string[]): Promise<number> {
  const [, ...rest] = args; // "import", the only subcommand (checked by cli.ts)
  const { values, positionals } = parseArgs({
    args: rest,
    options: parserOptions("samples import"),
    allowPositionals: true,
  });
  const connectionId = Number(values["connection-id"]);
  if (!Number.isInteger(connectionId) || connectionId <= 0) throw new UsageError("--connection-id N is required (a positive integer)");
  if (!values.probe) throw new UsageError("--probe NAME is required (e.g. pg_stat_database)");
  if (positionals.length > 1) throw new UsageError("give one FILE (or - for standard input)");
  const source = positionals[0] ?? "-";
  return withDatastore(async (driver) => {
    // Opened only now: readline starts reading at once.
    const lines = createInterface({ input: source === "-" ? process.stdin : createReadStream(source), crlfDelay: Infinity });
    const started = Date.now();
    let lastReport = started;
    const rows = await importSamples(driver, {
      connectionId,
      probe: values.probe!,
      lines,
      batchSize: values["batch-size"] ? Number(values["batch-size"]) : undefined,
      onProgress(n) {
        if (Date.now() - lastReport < 1000) return;
        lastReport = Date.now();
        console.error(`imported ${n.toLocaleString("en-US")} rows so far...`);
      },
    });
    console.error(
      `imported ${rows.toLocaleString("en-US")} rows into ${values.probe} for connection ${connectionId} in ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
    return 0;
  });
}
