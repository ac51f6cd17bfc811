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

/** TLS as libpq's sslmode means it; `require` with a CA bundle verifies the chain, like libpq with a root cert. */
export function sslOption(conn: Pick<ConnectionRow, "sslmode" | "ssl_root_cert">): pg.ClientConfig["ssl"] {
  const ca = conn.ssl_root_cert ?? undefined;
  switch (conn.sslmode) {
    case "require":
      return ca ? { ca, rejectUnauthorized: true, checkServerIdentity: () => undefined } : { rejectUnauthorized: false };
    case "verify-ca":
      return { ca, rejectUnauthorized: true, checkServerIdentity: () => undefined };
    case "verify-full":
      return { ca, rejectUnauthorized: true };
    default: // disable, allow, prefer: no TLS
      return false;
  }
}

/**
 * Refuses to send the password in clear text over a link without TLS unless the connection allows it: pg asks
 * for the password (a function here) only after the server chose the method, which this listener records.
 */
function guardCleartext(client: pg.Client, conn: ConnectionRow, password: string | undefined): () => Promise<string | undefined> {
  let cleartext = false;
  const connection = (client as unknown as { connection: import("node:events").EventEmitter & { stream?: { encrypted?: boolean } } }).connection;
  connection.on("authenticationCleartextPassword", () => (cleartext = true));
  return async () => {
    if (cleartext && !connection.stream?.encrypted && !conn.allow_cleartext_password) {
      throw new MonitoredServerError(
        `refused: ${conn.host}:${conn.port} asked for the password in clear text over a connection without TLS; use sslmode require or stronger, or set allow_cleartext_password on connection ${conn.id}`,
        "cleartext_refused",
      );
    }
    return password;
  };
}

export async function withMonitoredClient<T>(
  conn: ConnectionRow,
  secret: string | undefined,
  work: (client: pg.Client) => Promise<T>,
  options: MonitoredOptions = {},
): Promise<T> {
  const password = conn.password_secret ? await unseal(conn.password_secret, secret) : undefined;
  const client = new pg.Client({
    host: conn.host,
    port: conn.port,
    user: conn.username,
    database: options.database ?? conn.database_name,
    ssl: sslOption(conn),
    application_name: APPLICATION_NAME,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 5000,
    statement_timeout: options.statementTimeoutMs ?? 10_000,
    // pglens only ever reads monitored servers; the server refuses writes in this session.
    options: "-c default_transaction_read_only=on",
  });
  client.on("error", () => {}); // a dropped idle session must not crash the process
  (client as unknown as { password: unknown }).password = guardCleartext(client, conn, password);
  try {
    await client.connect();
  } catch (err) {
    await client.end().catch(() => {});
    if (err instanceof MonitoredServerError) throw err;
    const code = (err as { code?: string }).code;
    throw new MonitoredServerError(`cannot reach connection ${conn.id} (${conn.host}:${conn.port}): ${(err as Error).message || code}`, code);
  }
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => {});
  }
}
