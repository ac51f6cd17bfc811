/**
 * Running callers' SQL on a monitored server: read-only is enforced by PostgreSQL, not by inspecting text.
 * The session defaults to read-only transactions, the work runs inside BEGIN READ ONLY with lock and
 * statement timeouts, statements go through the extended query protocol (one statement per message), and
 * the transaction is always rolled back.
 */
import type pg from "pg";
import { type ConnectionRow, liveLogin } from "../datastore/connections.ts";
import { withMonitoredClient } from "./client.ts";

export interface ReadOnlyOptions {
  database?: string;
  statementTimeoutMs: number;
  /** live_tools.role: what to SET LOCAL ROLE to when the login role is too powerful for callers' SQL. */
  role?: string;
}

/** The live tools refuse to run callers' SQL with powers a read-only transaction does not contain. */
export class PowerfulRoleError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PowerfulRoleError";
  }
}

// Superusers, replication roles and the server-file/program roles can act outside a read-only transaction
// (COPY TO PROGRAM, files, dblink_exec, replication slots, other sessions). Membership counts at any depth and
// whether or not it inherits: a NOINHERIT member can still `SET ROLE` to the powerful role.
const POWERS = `SELECT current_user AS login,
       coalesce(json_agg(json_build_object('name', r.rolname, 'super', r.rolsuper, 'replication', r.rolreplication)
                ORDER BY r.rolname) FILTER (WHERE r.oid IS NOT NULL), '[]') AS roles
  FROM pg_roles r
 WHERE (r.rolsuper OR r.rolreplication OR r.rolname IN ('pg_execute_server_program', 'pg_write_server_files', 'pg_read_server_files'))
   AND pg_has_role(current_user, r.oid, 'MEMBER')`;

interface PowerfulRole {
  name: string;
  super: boolean;
  replication: boolean;
}

/** How one powerful role reaches the login, in words for a refusal. */
function powerOf(login: string, role: PowerfulRole): string {
  if (role.name === login) return role.super ? "superuser" : "replication";
  if (role.name.startsWith("pg_") && !role.super && !role.replication) return role.name;
  return `member of ${role.name}, a ${role.super ? "superuser" : "replication"} role`;
}

/** The current role's name and the powers it holds, itself or through any membership, that a read-only transaction does not contain. */
export async function rolePowers(client: pg.Client): Promise<{ role: string; powers: string[] }> {
  const [{ login, roles }] = (await client.query<{ login: string; roles: PowerfulRole[] }>(POWERS)).rows;
  // A superuser counts as a member of every role: its own attribute says all.
  if (roles.some((r) => r.name === login && r.super)) return { role: login, powers: ["superuser"] };
  return { role: login, powers: roles.map((r) => powerOf(login, r)) };
}

const quoteIdent = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * Inside the transaction: a login with powers beyond a read-only transaction is refused, unless it is the main
 * login and live_tools.role is set (then SET LOCAL ROLE: a guard against mistakes, not against a caller
 * who means harm, as SQL in the session can switch back). A live_username login is never switched.
 */
async function restrictRole(client: pg.Client, conn: ConnectionRow, role: string | undefined): Promise<void> {
  const login = await rolePowers(client);
  if (!login.powers.length) return;
  if (conn.live_username) {
    throw new PowerfulRoleError(
      `refused: connection ${conn.id}'s live_username ${login.role} has ${login.powers.join(", ")}, which can act outside a read-only transaction; make it a pg_monitor role without those`,
    );
  }
  if (!role) {
    throw new PowerfulRoleError(
      `refused: connection ${conn.id} logs in as ${login.role} (${login.powers.join(", ")}), which can act outside a read-only transaction; set the connection's live_username to a pg_monitor login (or monitor with one)`,
    );
  }
  await client.query(`SET LOCAL ROLE ${quoteIdent(role)}`).catch((err: Error) => {
    throw new PowerfulRoleError(`refused: cannot switch to live_tools.role ${role} on connection ${conn.id}: ${err.message}`);
  });
  const restricted = await rolePowers(client);
  if (restricted.powers.length)
    throw new PowerfulRoleError(`refused: live_tools.role ${role} itself has ${restricted.powers.join(", ")}; name a role with pg_monitor and nothing more`);
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

export async function withReadOnlyTransaction<T>(
  conn: ConnectionRow,
  secret: string | undefined,
  options: ReadOnlyOptions,
  work: (client: pg.Client) => Promise<T>,
): Promise<T> {
  return withMonitoredClient(
    liveLogin(conn),
    secret,
    async (client) => {
      await client.query("BEGIN READ ONLY");
      try {
        await restrictRole(client, conn, options.role);
        await client.query("SET LOCAL lock_timeout = '2s'");
        await client.query(`SET LOCAL idle_in_transaction_session_timeout = '${Math.max(1000, options.statementTimeoutMs * 2)}ms'`);
        const result = await work(client);
        const held = (await client.query<{ mode: string; target: string }>(BLOCKING_LOCKS)).rows;
        if (held.length)
          throw new LockRefusedError(
            `refused: the statement took ${held.map((l) => `${l.mode} on ${l.target}`).join(", ")}, which would block other sessions; it was rolled back`,
          );
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
