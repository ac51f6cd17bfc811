/**
 * Configuration: one zod schema, filled from a document (Node: the YAML file named by PGLENS_CONFIG;
 * Workers: the PGLENS_CONFIG binding, an object or JSON) overlaid with environment variables or bindings of the same names.
 * Runtime-neutral: it never touches the file system or `process`.
 */
import { z } from "zod";
import { DRIVER_KINDS } from "../drivers/types.ts";
import { LLM_ENV_KEYS, llmConfigSchema } from "./llm-config.ts";

/** Tools that `builtins.tools.<name>: false` can switch off. */
export const BUILTIN_TOOLS = [
  "list_connections",
  "list_probes",
  "describe_probe",
  "query_metrics",
  "query_database",
  "get_schema_info",
  "execute_explain",
  "list_alerts",
  "get_alert_rules",
  "list_blackouts",
  "get_timeline",
  "get_performance_summary",
  "get_top_queries",
  "get_latest_snapshot",
  "store_memory",
  "recall_memories",
  "get_overview",
  "get_metric_series",
  "get_metric_baselines",
  "count_rows",
] as const;
export type BuiltinTool = (typeof BUILTIN_TOOLS)[number];

/** A list given as YAML sequence or as one comma-separated string (environment variables). */
const commaList = z.preprocess(
  (v) =>
    typeof v === "string"
      ? v
          .split(",")
          .map((x) => x.trim())
          .filter(Boolean)
      : v,
  z.array(z.string().min(1)),
);

const LOG_LEVELS = ["debug", "info", "warn", "error"] as const;

const toolSwitches = z.strictObject(
  Object.fromEntries(BUILTIN_TOOLS.map((t) => [t, z.boolean().optional()])) as Record<BuiltinTool, z.ZodOptional<z.ZodBoolean>>,
);

export const configSchema = z.strictObject({
  port: z.coerce.number().int().min(0).max(65535).default(8080),
  host: z.string().min(1).default("127.0.0.1"),
  log_level: z.enum(LOG_LEVELS).default("info"),
  /** Where people reach pglens (https://pglens.example.com): the origin browsers may use /mcp/v1 from, and links in messages. */
  public_url: z.url({ protocol: /^https?$/, error: "must be an http(s) URL, e.g. https://pglens.example.com" }).optional(),
  datastore: z
    .strictObject({
      url: z
        .string()
        .regex(/^postgres(ql)?:\/\//, "must be a postgres:// URL")
        .optional(),
      driver: z.enum(DRIVER_KINDS).optional(),
      data_dir: z.string().min(1).default("./.pglens"),
      /** Read replicas of `url` (streaming standbys, Neon read replicas): reads that may trail by seconds go there. */
      read_urls: z.preprocess(
        (v) =>
          typeof v === "string"
            ? v
                .split(",")
                .map((u) => u.trim())
                .filter(Boolean)
            : v,
        z.array(z.string().regex(/^postgres(ql)?:\/\//, "must be postgres:// URLs")).default([]),
      ),
      /** A replica further behind than this is skipped until it catches up. */
      max_replica_lag_seconds: z.coerce.number().positive().default(30),
      /** Workers: the Hyperdrive binding that reaches the datastore, when the Worker has one by this name. */
      hyperdrive_binding: z.string().min(1).default("HYPERDRIVE"),
      /** Workers: a Hyperdrive binding to a read replica, added to `read_urls` when the Worker has one by this name. */
      hyperdrive_read_binding: z.string().min(1).default("HYPERDRIVE_READ"),
      neon: z
        .strictObject({
          fetch_endpoint: z.url().optional(),
          ws_proxy: z.string().min(1).optional(),
          secure_websocket: z.stringbool().or(z.boolean()).optional(),
        })
        .default({}),
    })
    .default({
      data_dir: "./.pglens",
      neon: {},
      read_urls: [],
      max_replica_lag_seconds: 30,
      hyperdrive_binding: "HYPERDRIVE",
      hyperdrive_read_binding: "HYPERDRIVE_READ",
    }),
  secret: z.string().min(16, "must be at least 16 characters").optional(),
  admin: z.strictObject({ username: z.string().min(1).optional(), password: z.string().min(1).optional() }).default({}),
  auth: z
    .strictObject({
      session_hours: z.coerce.number().positive().default(24),
      max_failed_logins_per_address: z.coerce.number().int().min(1).default(10),
      max_failed_logins_per_account: z.coerce.number().int().min(1).default(5),
      failure_window_minutes: z.coerce.number().int().min(1).default(15),
      lockout_after_failures: z.coerce.number().int().min(0).default(0),
      /** How long a resolved token is trusted without asking the datastore again (0: always ask). */
      cache_seconds: z.coerce.number().min(0).max(60).default(5),
    })
    .default({
      session_hours: 24,
      max_failed_logins_per_address: 10,
      max_failed_logins_per_account: 5,
      failure_window_minutes: 15,
      lockout_after_failures: 0,
      cache_seconds: 5,
    }),
  live_tools: z
    .strictObject({
      statement_timeout_ms: z.coerce.number().int().min(100).max(600_000).default(15_000),
      max_rows: z.coerce.number().int().min(1).max(100_000).default(1000),
      /** Role the live tools SET LOCAL ROLE to when the monitored login is a superuser or similarly powerful. */
      role: z.string().min(1).max(63).optional(),
      max_result_bytes: z.coerce
        .number()
        .int()
        .min(1024)
        .max(256 * 1024 * 1024)
        .default(10 * 1024 * 1024),
      max_sessions_per_connection: z.coerce.number().int().min(1).max(100).default(4),
      max_sessions_per_user: z.coerce.number().int().min(1).max(100).default(4),
    })
    .default({ statement_timeout_ms: 15_000, max_rows: 1000, max_result_bytes: 10 * 1024 * 1024, max_sessions_per_connection: 4, max_sessions_per_user: 4 }),
  /** Peers (CIDRs or addresses) whose X-Forwarded-For / X-Forwarded-Proto headers are believed. */
  trusted_proxies: commaList.default([]),
  /** Largest request body accepted, in bytes (413 beyond). */
  max_body_bytes: z.coerce
    .number()
    .int()
    .min(1024)
    .max(100 * 1024 * 1024)
    .default(1024 * 1024),
  mcp: z.strictObject({ allowed_origins: commaList.default([]) }).default({ allowed_origins: [] }),
  collector: z.strictObject({ enabled: z.stringbool().or(z.boolean()).default(true) }).default({ enabled: true }),
  notifications: z
    .strictObject({
      /** Refuse loopback and private-network destinations too (link-local and metadata addresses always are). */
      deny_private_networks: z.stringbool().or(z.boolean()).default(false),
      /** Optional cap on attempts; without it a notice is retried until max_age_hours. */
      max_attempts: z.coerce.number().int().min(1).max(1000).optional(),
      retry_minutes: z.array(z.coerce.number().min(0).max(1440)).min(1).default([1, 5, 15]),
      /** How long a notice is retried before it ends `expired` (from when it was queued or redelivered). */
      max_age_hours: z.coerce
        .number()
        .positive()
        .max(24 * 30)
        .default(24),
    })
    .default({ deny_private_networks: false, retry_minutes: [1, 5, 15], max_age_hours: 24 }),
  metrics: z.strictObject({ public: z.stringbool().or(z.boolean()).default(false) }).default({ public: false }),
  alerter: z
    .strictObject({ enabled: z.stringbool().or(z.boolean()).default(true), interval_seconds: z.coerce.number().int().min(1).max(3600).default(60) })
    .default({ enabled: true, interval_seconds: 60 }),
  /** The embedded datastore's first start loads a demo connection. */
  demo: z.stringbool().or(z.boolean()).default(true),
  builtins: z.strictObject({ tools: toolSwitches.default({}) }).default({ tools: {} }),
  llm: llmConfigSchema,
});

export type Config = z.infer<typeof configSchema>;

/** Environment variables (or Workers bindings) and the configuration key each one sets. */
export const ENV_KEYS: Record<string, string[]> = {
  PORT: ["port"],
  PGLENS_HOST: ["host"],
  PGLENS_LOG_LEVEL: ["log_level"],
  PGLENS_PUBLIC_URL: ["public_url"],
  PGLENS_DATASTORE_URL: ["datastore", "url"],
  PGLENS_DATASTORE_DRIVER: ["datastore", "driver"],
  PGLENS_DATA_DIR: ["datastore", "data_dir"],
  PGLENS_DATASTORE_READ_URLS: ["datastore", "read_urls"],
  PGLENS_DATASTORE_MAX_REPLICA_LAG_SECONDS: ["datastore", "max_replica_lag_seconds"],
  PGLENS_HYPERDRIVE_BINDING: ["datastore", "hyperdrive_binding"],
  PGLENS_HYPERDRIVE_READ_BINDING: ["datastore", "hyperdrive_read_binding"],
  PGLENS_NEON_FETCH_ENDPOINT: ["datastore", "neon", "fetch_endpoint"],
  PGLENS_NEON_WS_PROXY: ["datastore", "neon", "ws_proxy"],
  PGLENS_NEON_SECURE_WEBSOCKET: ["datastore", "neon", "secure_websocket"],
  PGLENS_SECRET: ["secret"],
  PGLENS_ADMIN_USERNAME: ["admin", "username"],
  PGLENS_ADMIN_PASSWORD: ["admin", "password"],
  PGLENS_COLLECTOR: ["collector", "enabled"],
  PGLENS_ALERTER: ["alerter", "enabled"],
  PGLENS_NOTIFY_DENY_PRIVATE: ["notifications", "deny_private_networks"],
  PGLENS_NOTIFY_MAX_AGE_HOURS: ["notifications", "max_age_hours"],
  PGLENS_METRICS_PUBLIC: ["metrics", "public"],
  PGLENS_ALERTER_INTERVAL: ["alerter", "interval_seconds"],
  PGLENS_DEMO: ["demo"],
  PGLENS_LIVE_TOOLS_ROLE: ["live_tools", "role"],
  PGLENS_TRUSTED_PROXIES: ["trusted_proxies"],
  PGLENS_MCP_ALLOWED_ORIGINS: ["mcp", "allowed_origins"],
  PGLENS_MAX_BODY_BYTES: ["max_body_bytes"],
  ...LLM_ENV_KEYS,
};

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigError";
  }
}

type Env = Record<string, unknown>;

function setPath(target: Record<string, unknown>, path: string[], value: unknown): void {
  let node = target;
  for (const key of path.slice(0, -1)) {
    if (typeof node[key] !== "object" || node[key] === null) node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  node[path[path.length - 1]] = value;
}

/** Checks that a parsed config document is a mapping; `origin` names it in errors. */
export function asDocument(doc: unknown, origin: string): Record<string, unknown> {
  if (doc === null || doc === undefined) return {};
  if (typeof doc !== "object" || Array.isArray(doc)) throw new ConfigError(`invalid configuration in ${origin}: expected a mapping of keys`);
  return doc as Record<string, unknown>;
}

/** Validates `document` overlaid with `env`; the error names the offending key (and variable). */
export function resolveConfig(document: Record<string, unknown>, env: Env): Config {
  const merged = structuredClone(document);
  const fromEnv = new Map<string, string>();
  for (const [name, path] of Object.entries(ENV_KEYS)) {
    const value = env[name];
    if (value === undefined || value === "") continue;
    setPath(merged, path, value);
    fromEnv.set(path.join("."), name);
  }
  const result = configSchema.safeParse(merged);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => {
    const keys = issue.code === "unrecognized_keys" ? issue.keys.map((k) => [...issue.path, k].join(".")) : [issue.path.join(".")];
    return keys
      .map((key) => {
        const variable = fromEnv.get(key);
        const what = issue.code === "unrecognized_keys" ? "unknown key" : issue.message;
        return `\`${key || "(root)"}\`${variable ? ` (from ${variable})` : ""}: ${what}`;
      })
      .join("; ");
  });
  throw new ConfigError(`invalid configuration: ${problems.join("; ")}`);
}

/**
 * Workers: bindings hold the variables; PGLENS_CONFIG may be an object or a JSON string. A Hyperdrive binding
 * (datastore.hyperdrive_binding) gives the datastore's URL, reached through it with node-postgres; it wins over
 * PGLENS_DATASTORE_URL, since a Worker has one only when it was deployed to use it. A second binding
 * (datastore.hyperdrive_read_binding) reaches a read replica the same way: it joins `read_urls`.
 */
export function configFromBindings(bindings: Env): Config {
  let raw = bindings.PGLENS_CONFIG;
  if (typeof raw === "string") {
    try {
      raw = JSON.parse(raw);
    } catch (err) {
      throw new ConfigError(`invalid configuration in the PGLENS_CONFIG binding: ${(err as Error).message}`);
    }
  }
  const config = resolveConfig(asDocument(raw, "the PGLENS_CONFIG binding"), bindings);
  const { hyperdrive_binding: primaryName, hyperdrive_read_binding: replicaName } = config.datastore;
  const primary = hyperdriveUrl(bindings, primaryName);
  const replica = hyperdriveUrl(bindings, replicaName);
  if (replica && !primary)
    throw new ConfigError(
      `\`datastore.hyperdrive_read_binding\`: the Worker has a Hyperdrive binding to a read replica (${replicaName}) but none to the datastore (${primaryName}); bind the primary through Hyperdrive too, or name the replica in datastore.read_urls`,
    );
  if (!primary) return config;
  const read_urls = replica ? [...config.datastore.read_urls, replica] : config.datastore.read_urls;
  return { ...config, datastore: { ...config.datastore, url: primary, driver: "pg", read_urls } };
}

function hyperdriveUrl(bindings: Env, name: string): string | undefined {
  const binding = bindings[name] as { connectionString?: unknown } | undefined;
  return typeof binding?.connectionString === "string" ? binding.connectionString : undefined;
}

export function isToolEnabled(config: Config, tool: BuiltinTool): boolean {
  return config.builtins.tools[tool] !== false;
}
