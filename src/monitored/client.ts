/**
 * Sessions on monitored servers: always with a connect timeout, a statement timeout and an
 * application_name that says pglens, so they are recognisable in pg_stat_activity.
 */
import pg from "pg";
import { open as unseal } from "../auth/secret-box.ts";
import type { ConnectionRow } from "../datastore/connections.ts";

export const APPLICATION_NAME = "pglens";

/** The monitored server could not be reached or refused us; the message is safe to show. */
export class MonitoredServerError extends Error {
  constructor(
    message: string,
    /** SQLSTATE or system error code of the cause, when there is one. */
    readonly code?: string,
  ) {
    super(message);
    this.name = "MonitoredServerError";
  }
}

export interface MonitoredOptions {
  database?: string;
  statementTimeoutMs?: number;
  connectTimeoutMs?: number;
}

function sslOption(mode: string): pg.ClientConfig["ssl"] {
  if (mode === "disable" || mode === "allow" || mode === "prefer") return false;
  if (mode === "require") return { rejectUnauthorized: false };
  return { rejectUnauthorized: true }; // verify-ca, verify-full
}

export async function withMonitoredClient<T>(conn: ConnectionRow, secret: string | undefined, work: (client: pg.Client) => Promise<T>, options: MonitoredOptions = {}): Promise<T> {
  const password = conn.password_secret ? await unseal(conn.password_secret, secret) : undefined;
  const client = new pg.Client({
    host: conn.host,
    port: conn.port,
    user: conn.username,
    password,
    database: options.database ?? conn.database_name,
    ssl: sslOption(conn.sslmode),
    application_name: APPLICATION_NAME,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 5000,
    statement_timeout: options.statementTimeoutMs ?? 10_000,
    // pglens only ever reads monitored servers; the server refuses writes in this session.
    options: "-c default_transaction_read_only=on",
  });
  client.on("error", () => {}); // a dropped idle session must not crash the process
  try {
    await client.connect();
  } catch (err) {
    await client.end().catch(() => {});
    const code = (err as { code?: string }).code;
    throw new MonitoredServerError(`cannot reach connection ${conn.id} (${conn.host}:${conn.port}): ${(err as Error).message || code}`, code);
  }
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => {});
  }
}
