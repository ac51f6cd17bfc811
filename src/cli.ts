/** The `pglens` command. */
import { parseArgs } from "node:util";
import { UsageError } from "./cli/usage-error.ts";
import { InputError, NotFoundError } from "./errors.ts";
import { VERSION } from "./version.ts";
import { COMMANDS, type CommandSpec, commandHelp, parserOptions, subcommandsOf, usageError } from "./cli/options.ts";

// Each command loads only the modules it needs: a CLI call should not pay for the whole app's start-up.
// Commands, options and the environment each reads come from cli/options.ts, for the parsers and the help alike.
const USAGE = `pglens ${VERSION}: PostgreSQL monitoring service

Usage: pglens <command> [options]

Commands:
${Object.values(COMMANDS as Record<string, CommandSpec>)
  .map((c) => `  ${c.usage.padEnd(26)} ${c.summary}`)
  .join("\n")}
  ${"version".padEnd(26)} print the version
  ${"help".padEnd(26)} show this text

\`pglens <command> --help\` lists a command's options and the environment variables it reads.
Configuration comes from the YAML file named by PGLENS_CONFIG and from environment variables;
see docs/configuration.md.`;

const COMMAND_NAMES = [...new Set(Object.keys(COMMANDS).map((k) => k.split(" ")[0]))];

function helpFor(command: string): string {
  return `${commandHelp(command)}\n\nSee \`pglens --help\` for every command, docs/configuration.md for configuration.`;
}

/** Commands that take no options still refuse unknown ones (a typo must not start a server). */
function noOptions(command: string, args: string[]): void {
  parseArgs({ args, options: {}, strict: true, allowPositionals: false });
  void command;
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  // Bare `pglens` explains itself rather than starting a server (`pglens serve` does that).
  if (command === undefined) {
    console.error(USAGE);
    return 2;
  }
  // `--help` anywhere after a command prints its help and does nothing else.
  if (COMMAND_NAMES.includes(command) && (rest.includes("--help") || rest.includes("-h"))) {
    console.log(helpFor(command));
    return 0;
  }
  // A command with subcommands (user, token, group, samples, connection) names one of them.
  const subcommands = subcommandsOf(command);
  if (subcommands.length && !subcommands.includes(rest[0]))
    throw usageError(command, rest[0] === undefined ? `\`${command}\` needs one of: ${subcommands.join(", ")}` : `unknown ${command} command "${rest[0]}"`);
  switch (command) {
    case "help":
    case "--help":
    case "-h":
      console.log(USAGE);
      return 0;
    case "version":
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
      const { values } = parseArgs({ args: rest, options: parserOptions("openapi") });
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
      const { values } = parseArgs({ args: rest, options: parserOptions("collect") });
      const [{ loadNodeConfig }, { createLogger }, { openMigratedDatastore }, { collectDue, startCollector }] = await Promise.all([
        import("./config-file.ts"),
        import("./log.ts"),
        import("./datastore/open-migrated.ts"),
        import("./collector/collect.ts"),
      ]);
      const config = loadNodeConfig();
      const log = createLogger(config.log_level);
      const driver = await openMigratedDatastore(config, log);
      if (values.once) {
        const tick = await collectDue(driver, config, log);
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
    case "connection":
      return (await import("./cli/remote.ts")).connectionCommand(rest);
    case "alerts":
      return (await import("./cli/remote.ts")).alertsCommand(rest);
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
