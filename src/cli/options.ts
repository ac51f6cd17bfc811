/**
 * Every `pglens` command's options and the environment variables it reads, in one place: the parsers take their
 * options from here and `pglens <command> --help` prints them from here, so the two cannot drift apart.
 */
import { UsageError } from "./usage-error.ts";

export interface OptionSpec {
  type: "string" | "boolean";
  multiple?: true;
  /** What the value looks like, for the help (string options). */
  value?: string;
  help: string;
}

export interface CommandSpec {
  /** The command line after `pglens`, positionals included. */
  usage: string;
  summary: string;
  options: Record<string, OptionSpec>;
  env: readonly string[];
}

/** Where a command that opens the datastore looks for it (docs/configuration.md has every setting). */
const DATASTORE_ENV = ["PGLENS_CONFIG", "PGLENS_DATASTORE_URL", "PGLENS_DATA_DIR", "PGLENS_SECRET", "PGLENS_LOG_LEVEL"] as const;
const REMOTE_ENV = ["PGLENS_URL", "PGLENS_TOKEN", "PORT"] as const;

const REMOTE_OPTIONS = {
  url: { type: "string", value: "URL", help: "the running pglens (default PGLENS_URL, else http://127.0.0.1:$PORT)" },
  token: { type: "string", value: "TOKEN", help: "an API token (default PGLENS_TOKEN)" },
  json: { type: "boolean", help: "print JSON instead of a table" },
} as const;
const ONCE = { once: { type: "boolean", help: "run one round, then exit" } } as const;

export const COMMANDS = {
  serve: {
    usage: "serve",
    summary: "run the HTTP service, with the collector and the alerter",
    options: {},
    env: [
      ...DATASTORE_ENV,
      "PORT",
      "PGLENS_HOST",
      "PGLENS_PUBLIC_URL",
      "PGLENS_COLLECTOR",
      "PGLENS_ALERTER",
      "PGLENS_DEMO",
      "PGLENS_ADMIN_USERNAME",
      "PGLENS_ADMIN_PASSWORD",
    ],
  },
  migrate: { usage: "migrate", summary: "apply pending datastore migrations and exit", options: {}, env: DATASTORE_ENV },
  collect: { usage: "collect", summary: "run only the collector (every second)", options: ONCE, env: DATASTORE_ENV },
  alerter: { usage: "alerter", summary: "run only the alerter and notification delivery", options: ONCE, env: [...DATASTORE_ENV, "PGLENS_ALERTER_INTERVAL"] },
  openapi: {
    usage: "openapi",
    summary: "print the OpenAPI document",
    options: { out: { type: "string", value: "FILE", help: "write it to FILE instead" } },
    env: [],
  },
  "user create": {
    usage: "user create NAME",
    summary: "create a user; the password is prompted for unless given by file or standard input",
    options: {
      superuser: { type: "boolean", help: "may do everything" },
      "service-account": { type: "boolean", help: "a program's account: no password, API tokens only" },
      "password-file": { type: "string", value: "FILE|-", help: "read the password from FILE (- for standard input)" },
      password: { type: "string", value: "TEXT", help: "the password itself (warns: it lands in shell history)" },
      "display-name": { type: "string", value: "TEXT", help: "a name to show instead of the username" },
      email: { type: "string", value: "ADDRESS", help: "the user's email address" },
    },
    env: DATASTORE_ENV,
  },
  "user list": { usage: "user list", summary: "list users with their state", options: {}, env: DATASTORE_ENV },
  "token create": {
    usage: "token create",
    summary: "create an API token for a program; it is printed once",
    options: {
      user: { type: "string", value: "NAME", help: "the token's owner (required)" },
      expires: { type: "string", value: "90d|12h|2w|6m|1y|never", help: "when it expires (default 90d)" },
      note: { type: "string", value: "TEXT", help: "what it is for" },
      json: { type: "boolean", help: "print JSON" },
    },
    env: DATASTORE_ENV,
  },
  "token list": {
    usage: "token list",
    summary: "list API tokens (never the secrets)",
    options: { json: { type: "boolean", help: "print JSON" } },
    env: DATASTORE_ENV,
  },
  "token delete": { usage: "token delete ID", summary: "revoke a token", options: {}, env: DATASTORE_ENV },
  "group grant": {
    usage: "group grant NAME",
    summary: "give a group (created if missing) members, MCP tools and connection rights, added to what it has",
    options: {
      member: { type: "string", multiple: true, value: "USER", help: "add a member" },
      mcp: { type: "string", multiple: true, value: "TOOL,...", help: "grant MCP tools ('*': all)" },
      connections: { type: "string", multiple: true, value: "ID[:read|read_write],...", help: "grant connection rights (0: every connection)" },
    },
    env: DATASTORE_ENV,
  },
  demo: {
    usage: "demo",
    summary: "register a reachable local PostgreSQL for collection, or load a generated day of history as a demo connection",
    options: {
      server: { type: "string", value: "URL", help: "the server to register (default postgres://postgres@127.0.0.1:5432)" },
      "monitor-role": { type: "boolean", help: "monitor as a pg_monitor role pglens creates, so the live tools work" },
      role: { type: "string", value: "NAME", help: "that role's name (default pglens_monitor)" },
      "reset-password": { type: "boolean", help: "give an existing role a new password (anything else using it will need it)" },
      "history-only": { type: "boolean", help: "load the generated history even if a server answers" },
    },
    env: DATASTORE_ENV,
  },
  "samples import": {
    usage: "samples import [FILE|-]",
    summary: "load NDJSON sample rows (collected_at + columns, one per line) through the sample writer; all or nothing",
    options: {
      "connection-id": { type: "string", value: "N", help: "the connection the samples belong to (required)" },
      probe: { type: "string", value: "NAME", help: "the probe, e.g. pg_stat_database (required)" },
      "batch-size": { type: "string", value: "N", help: "rows written per batch" },
    },
    env: DATASTORE_ENV,
  },
  "connection list": { usage: "connection list", summary: "list the connections of a running pglens", options: REMOTE_OPTIONS, env: REMOTE_ENV },
  "connection add": {
    usage: "connection add",
    summary: "add a connection to a running pglens; its collector samples it from the next round",
    options: {
      ...REMOTE_OPTIONS,
      name: { type: "string", value: "NAME", help: "a unique name (required)" },
      host: { type: "string", value: "HOST", help: "the server's address (required)" },
      port: { type: "string", value: "PORT", help: "default 5432" },
      database: { type: "string", value: "NAME", help: "default postgres" },
      user: { type: "string", value: "USER", help: "the login to monitor as, ideally a pg_monitor role (required)" },
      "password-file": { type: "string", value: "FILE|-", help: "read its password from FILE (- for standard input; else prompted)" },
      "no-password": { type: "boolean", help: "the login needs no password" },
      sslmode: { type: "string", value: "MODE", help: "disable, prefer, require, verify-ca or verify-full" },
      shared: { type: "boolean", help: "readable by every user, not only its owner" },
    },
    env: REMOTE_ENV,
  },
  "connection remove": { usage: "connection remove ID", summary: "remove a connection and its history", options: REMOTE_OPTIONS, env: REMOTE_ENV },
  alerts: { usage: "alerts", summary: "list the open alerts of a running pglens", options: REMOTE_OPTIONS, env: REMOTE_ENV },
} as const satisfies Record<string, CommandSpec>;

type Commands = typeof COMMANDS;
/** parseArgs's view of a command's options, literal types kept so its `values` are typed. */
type ParserOptions<O> = { [K in keyof O]: { type: O[K] extends { type: infer T } ? T : never; multiple: O[K] extends { multiple: true } ? true : false } };

/** The options as node:util parseArgs takes them. */
export function parserOptions<C extends keyof Commands>(command: C): ParserOptions<Commands[C]["options"]> {
  const options: Record<string, OptionSpec> = COMMANDS[command].options;
  return Object.fromEntries(Object.entries(options).map(([name, o]) => [name, { type: o.type, multiple: o.multiple === true }])) as ParserOptions<
    Commands[C]["options"]
  >;
}

/** A mistake on a command line, followed by that command's help. */
export function usageError(command: string, problem: string): UsageError {
  return new UsageError(`${problem}\n\n${commandHelp(command)}`);
}

/** The subcommands of a command that has them (`user` -> create, list), else none. */
export const subcommandsOf = (command: string): string[] =>
  Object.keys(COMMANDS)
    .filter((key) => key.startsWith(`${command} `))
    .map((key) => key.slice(command.length + 1));

/** `pglens <command> --help`: every form of the command, its options and the environment it reads. */
export function commandHelp(command: string): string | undefined {
  const forms = Object.entries(COMMANDS as Record<string, CommandSpec>).filter(([key]) => key === command || key.startsWith(`${command} `));
  if (!forms.length) return undefined;
  return forms
    .map(([, spec]) => {
      const options = Object.entries(spec.options).map(([name, o]) => {
        const flag = `--${name}${o.value ? ` ${o.value}` : ""}`;
        return `  ${flag.padEnd(34)} ${o.help}${o.multiple ? " (repeatable)" : ""}`;
      });
      return [
        `Usage: pglens ${spec.usage}${options.length ? " [options]" : ""}`,
        `  ${spec.summary}`,
        ...(options.length ? ["Options:", ...options] : []),
        ...(spec.env.length ? [`Environment: ${spec.env.join(", ")}`] : []),
      ].join("\n");
    })
    .join("\n\n");
}
