/** The `pglens` command. */
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { createApp, openApiDocument } from "./app.ts";
import { ConfigError } from "./config.ts";
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
    default:
      console.error(`pglens: unknown command "${command}"\n\n${USAGE}`);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (err: Error) => {
    console.error(`pglens: ${err instanceof ConfigError ? err.message : err.message}`);
    process.exit(1);
  },
);
