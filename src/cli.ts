/** The `pglens` command. */
import { createReadStream, writeFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import { createApp, openApiDocument } from "./app.ts";
import { importSamples } from "./collector/import.ts";
import { loadNodeConfig } from "./config-file.ts";
import { createLogger } from "./log.ts";
import { openMigratedDatastore, runServer } from "./node.ts";
import { VERSION } from "./version.ts";

const USAGE = `pglens ${VERSION}: PostgreSQL monitoring service

Usage: pglens <command> [options]

Commands:
  serve                 run the HTTP service (default; PORT, default 8080)
  migrate               apply pending datastore migrations and exit
  openapi [--out FILE]  print the OpenAPI document (or write it to FILE)
  samples import --connection-id N --probe P [FILE|-]
                        load NDJSON sample rows (collected_at + columns, one per line)
                        through the sample writer; all or nothing
  help                  show this text

Configuration comes from the YAML file named by PGLENS_CONFIG and from environment
variables (PGLENS_DATASTORE_URL, PGLENS_DATA_DIR, ...); see README.md.`;

async function main(argv: string[]): Promise<number> {
  const [command = "serve", ...rest] = argv;
  if (command === "help" || command === "--help" || command === "-h") {
    console.log(USAGE);
    return 0;
  }
  if (command === "--version" || command === "-v") {
    console.log(VERSION);
    return 0;
  }
  switch (command) {
    case "serve": {
      const config = loadNodeConfig();
      await runServer(config, createLogger(config.log_level));
      return -1; // keeps running until a signal
    }
    case "migrate": {
      const config = loadNodeConfig();
      const driver = await openMigratedDatastore(config, createLogger(config.log_level));
      await driver.close();
      return 0;
    }
    case "openapi": {
      const { values } = parseArgs({ args: rest, options: { out: { type: "string" } } });
      const config = loadNodeConfig({});
      const unused = { open: () => { throw new Error("the OpenAPI generator does not use the datastore"); } };
      const doc = `${JSON.stringify(openApiDocument(createApp({ config, log: createLogger("error"), datastore: unused })), null, 2)}\n`;
      if (values.out) {
        writeFileSync(values.out, doc);
        console.error(`wrote ${values.out}`);
      } else process.stdout.write(doc);
      return 0;
    }
    case "samples":
      return samplesCommand(rest);
    default:
      console.error(`pglens: unknown command "${command}"\n\n${USAGE}`);
      return 2;
  }
}

async function samplesCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub !== "import") throw new UsageError(`unknown samples command "${sub ?? ""}"; expected: samples import --connection-id N --probe P [FILE|-]`);
  const { values, positionals } = parseArgs({
    args: rest,
    options: { "connection-id": { type: "string" }, probe: { type: "string" }, "batch-size": { type: "string" } },
    allowPositionals: true,
  });
  const connectionId = Number(values["connection-id"]);
  if (!Number.isInteger(connectionId) || connectionId <= 0) throw new UsageError("--connection-id N is required (a positive integer)");
  if (!values.probe) throw new UsageError("--probe NAME is required (e.g. pg_stat_database)");
  if (positionals.length > 1) throw new UsageError("give one FILE (or - for standard input)");
  const source = positionals[0] ?? "-";
  const config = loadNodeConfig();
  const log = createLogger(config.log_level === "info" ? "warn" : config.log_level);
  const driver = await openMigratedDatastore(config, log);
  // Opened only now: readline starts reading at once.
  const lines = createInterface({ input: source === "-" ? process.stdin : createReadStream(source), crlfDelay: Infinity });
  const started = Date.now();
  let lastReport = started;
  try {
    const rows = await importSamples(driver, {
      connectionId,
      probe: values.probe,
      lines,
      batchSize: values["batch-size"] ? Number(values["batch-size"]) : undefined,
      onProgress(n) {
        if (Date.now() - lastReport < 1000) return;
        lastReport = Date.now();
        console.error(`imported ${n.toLocaleString("en-US")} rows so far...`);
      },
    });
    console.error(`imported ${rows.toLocaleString("en-US")} rows into ${values.probe} for connection ${connectionId} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    return 0;
  } finally {
    await driver.close();
  }
}

class UsageError extends Error {}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (err: Error) => {
    console.error(`pglens: ${err.message}`);
    process.exit(err instanceof UsageError ? 2 : 1);
  },
);
