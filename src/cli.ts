/** The `pglens` command. */
import { parseArgs } from "node:util";
import { UsageError } from "./cli/usage-error.ts";
import { InputError, NotFoundError } from "./errors.ts";
import { VERSION } from "./version.ts";

// Each command loads only the modules it needs: a CLI call should not pay for the whole app's start-up.
const USAGE = `pglens ${VERSION}: PostgreSQL monitoring service

Usage: pglens <command> [options]

Commands:
  serve                 run the HTTP service (default; PORT, default 8080)
  migrate               apply pending datastore migrations and exit
  collect [--once]      run only the collector (every second; --once: one round, then exit)
  alerter [--once]      run only the alerter (every alerter.interval_seconds; --once: one round, then exit)
  openapi [--out FILE]  print the OpenAPI document (or write it to FILE)
  user create NAME [--superuser] [--service-account] [--password-file FILE|-]
                        create a user; the password is prompted for unless given by file or stdin
  user list             list users
  token create --user NAME [--expires 30d|never] [--note TEXT] [--json]
                        create an API (service) token; it is printed once
  token list [--json]   list API tokens (never the secrets)
  group grant NAME [--member USER]... [--mcp TOOL,...] [--connections ID[:read|read_write],...]
                        give a group (created if missing) members, MCP tools and connection rights
  token delete ID       revoke a token
  demo [--server URL] [--monitor-role] [--history-only]
                        register a reachable local PostgreSQL (default postgres://postgres@127.0.0.1:5432)
                        for collection (--monitor-role: as a pg_monitor role it creates, so the live tools
                        work), or load a generated day of history as a demo connection
  samples import --connection-id N --probe P [FILE|-]
                        load NDJSON sample rows (collected_at + columns, one per line)
                        through the sample writer; all or nothing
  help                  show this text

Configuration comes from the YAML file named by PGLENS_CONFIG and from environment
variables (PGLENS_DATASTORE_URL, PGLENS_DATA_DIR, ...); see docs/configuration.md.`;

const COMMANDS = ["serve", "migrate", "collect", "alerter", "openapi", "user", "token", "group", "demo", "samples"];

/** The lines of USAGE about one command (its line and the indented lines that continue it). */
function helpFor(command: string): string {
  const lines = USAGE.split("\n");
  const start = lines.findIndex((l) => l.startsWith(`  ${command} `) || l === `  ${command}`);
  const own: string[] = [];
  for (let i = start; i >= 0 && i < lines.length; i++) {
    if (i > start && !/^ {3,}\S/.test(lines[i]) && !lines[i].startsWith(`  ${command} `)) break;
    own.push(lines[i]);
  }
  return `Usage: pglens ${command} ...\n${own.join("\n")}\n\nSee \`pglens --help\` for every command, docs/configuration.md for configuration.`;
}

/** Commands that take no options still refuse unknown ones (a typo must not start a server). */
function noOptions(command: string, args: string[]): void {
  parseArgs({ args, options: {}, strict: true, allowPositionals: false });
  void command;
}

async function main(argv: string[]): Promise<number> {
  const [command = "serve", ...rest] = argv;
  // `--help` anywhere after a command prints its help and does nothing else.
  if (COMMANDS.includes(command) && (rest.includes("--help") || rest.includes("-h"))) {
    console.log(helpFor(command));
    return 0;
  }
  switch (command) {
    case "help":
    case "--help":
    case "-h":
      console.log(USAGE);
      return 0;
    case "--version":
    case "-v":
      console.log(VERSION);
      return 0;
    case "serve": {
      noOptions(command, rest);
      const [{ loadNodeConfig }, { createLogger }, { runServer }] = await Promise.all([import("./config-file.ts"), import("./log.ts"), import("./node.ts")]);
      const config = loadNodeConfig();
      await runServer(config, createLogger(config.log_level));
      return -1; // keeps running until a signal
    }
    case "migrate": {
      noOptions(command, rest);
      const [{ loadNodeConfig }, { createLogger }, { openMigratedDatastore }] = await Promise.all([
        import("./config-file.ts"),
        import("./log.ts"),
        import("./datastore/open-migrated.ts"),
      ]);
      const config = loadNodeConfig();
      const driver = await openMigratedDatastore(config, createLogger(config.log_level));
      await driver.close();
      return 0;
    }
    case "openapi": {
      const { values } = parseArgs({ args: rest, options: { out: { type: "string" } } });
      const [{ loadNodeConfig }, { createLogger }, { createApp, openApiDocument }, { writeFileSync }] = await Promise.all([
        import("./config-file.ts"),
        import("./log.ts"),
        import("./app.ts"),
        import("node:fs"),
      ]);
      const config = loadNodeConfig({});
      const unused = {
        open: () => {
          throw new Error("the OpenAPI generator does not use the datastore");
        },
      };
      const doc = `${JSON.stringify(openApiDocument(createApp({ config, log: createLogger("error"), datastore: unused })), null, 2)}\n`;
      if (values.out) {
        writeFileSync(values.out, doc);
        console.error(`wrote ${values.out}`);
      } else process.stdout.write(doc);
      return 0;
    }
    case "collect": {
      const { values } = parseArgs({ args: rest, options: { once: { type: "boolean" } } });
      const [{ loadNodeConfig }, { createLogger }, { openMigratedDatastore }, { collectOnce, startCollector }] = await Promise.all([
        import("./config-file.ts"),
        import("./log.ts"),
        import("./datastore/open-migrated.ts"),
        import("./collector/collect.ts"),
      ]);
      const config = loadNodeConfig();
      const log = createLogger(config.log_level);
      const driver = await openMigratedDatastore(config, log);
      if (values.once) {
        const tick = await collectOnce(driver, config, log);
        console.error(
          `collected ${tick.outcomes.reduce((n, o) => n + o.rows, 0)} rows from ${tick.claimed} due probes; ${tick.unreachable.length} server(s) unreachable`,
        );
        await driver.close();
        return 0;
      }
      const collector = startCollector(driver, config, log);
      const stop = async () => {
        await collector.stop();
        await driver.close();
        process.exit(0);
      };
      process.once("SIGTERM", stop);
      process.once("SIGINT", stop);
      return -1;
    }
    case "alerter":
      return (await import("./cli/alerter.ts")).alerterCommand(rest);
    case "samples":
      return (await import("./cli/samples.ts")).samplesCommand(rest);
    case "demo":
      return (await import("./cli/demo.ts")).demoCommand(rest);
    case "user":
      return (await import("./cli/users.ts")).userCommand(rest);
    case "token":
      return (await import("./cli/tokens.ts")).tokenCommand(rest);
    case "group":
      return (await import("./cli/groups.ts")).groupCommand(rest);
    default:
      throw new UsageError(`unknown command "${command}"\n\n${USAGE}`);
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    // Exit only once stdout is flushed: a large document piped elsewhere would otherwise be cut short.
    if (code >= 0) process.stdout.write("", () => process.exit(code));
  },
  (err: Error & { code?: string }) => {
    if (err.code?.startsWith("ERR_PARSE_ARGS_")) {
      // node:util parseArgs: an unknown option, a missing value, a stray argument.
      console.error(`pglens: ${err.message.split("\n")[0]}; see \`pglens ${process.argv[2] ?? ""} --help\``);
      process.exit(2);
    }
    console.error(`pglens: ${err.message}`);
    // Usage and input mistakes are the caller's to fix (2); anything else failed on our side (1).
    process.exit(err instanceof UsageError || err instanceof InputError || err instanceof NotFoundError ? 2 : 1);
  },
);
