/**
 * Running callers' SQL on a monitored server: read-only is enforced by PostgreSQL, not by inspecting text.
 * The session defaults to read-only transactions, the work runs inside BEGIN READ ONLY with lock and
 * statement timeouts, statements go through the extended query protocol (one statement per message), and
 * the transaction is always rolled back.
 */
import type pg from "pg";
import type { ConnectionRow } from "../datastore/connections.ts";
import { withMonitoredClient } from "./client.ts";

export interface ReadOnlyOptions {
  database?: string;
  statementTimeoutMs: number;
}

/** The statement grabbed a lock that would block other sessions; the work is rolled back. */
export class LockRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "LockRefusedError";
  }
}

// Read-only transactions may still take these (the transaction's own virtualxid lock is not one of them);
// relation locks at or above SHARE block other sessions' writers, advisory locks their owners' plans.
const BLOCKING_LOCKS = `SELECT l.mode, coalesce(c.relname, l.locktype) AS target
  FROM pg_locks l LEFT JOIN pg_class c ON c.oid = l.relation
 WHERE l.pid = pg_backend_pid() AND l.granted
   AND (l.locktype = 'advisory'
        OR (l.locktype IN ('relation', 'tuple', 'object', 'page')
            AND l.mode IN ('ShareLock', 'ShareRowExclusiveLock', 'ExclusiveLock', 'AccessExclusiveLock', 'ShareUpdateExclusiveLock')))`;

export async function withReadOnlyTransaction<T>(conn: ConnectionRow, secret: string | undefined, options: ReadOnlyOptions, work: (client: pg.Client) => Promise<T>): Promise<T> {
  return withMonitoredClient(
    conn,
    secret,
    async (client) => {
      await client.query("BEGIN READ ONLY");
      try {
        await client.query("SET LOCAL lock_timeout = '2s'");
        await client.query(`SET LOCAL idle_in_transaction_session_timeout = '${Math.max(1000, options.statementTimeoutMs * 2)}ms'`);
        const result = await work(client);
        const held = (await client.query<{ mode: string; target: string }>(BLOCKING_LOCKS)).rows;
        if (held.length) throw new LockRefusedError(`refused: the statement took ${held.map((l) => `${l.mode} on ${l.target}`).join(", ")}, which would block other sessions; it was rolled back`);
        return result;
      } finally {
        await client.query("ROLLBACK").catch(() => {});
      }
    },
    { database: options.database, statementTimeoutMs: options.statementTimeoutMs },
  );
}

/** One statement through the extended protocol: a string holding several statements is refused by the server. */
export function extended(text: string): pg.QueryConfig & { queryMode: "extended"; rowMode: "array" } {
  return { text, values: [], queryMode: "extended", rowMode: "array" } as never;
}
