/** Monitored connections: the estate's servers. Passwords are stored sealed and never leave this module unsealed. */
import type { Queryable } from "../../drivers/types.ts";
import { ConflictError, NotFoundError } from "../errors.ts";

export interface ConnectionRow {
  id: number;
  name: string;
  host: string;
  port: number;
  database_name: string;
  username: string;
  password_secret: string | null;
  sslmode: string;
  ssl_root_cert: string | null;
  allow_cleartext_password: boolean;
  /** The live tools' own login (same server), when the main one is too powerful for callers' SQL. */
  live_username: string | null;
  live_password_secret: string | null;
  is_monitored: boolean;
  is_shared: boolean;
  description: string;
  connection_error: string | null;
  owner_user_id: number | null;
  owner_username: string | null;
  cluster_id: number | null;
  role: string | null;
  hidden_from_topology: boolean;
  created_at: Date;
  updated_at: Date;
}

/** A connection as the API shows it: `password_set` instead of any trace of the password. */
export function connectionJson(c: ConnectionRow) {
  return {
    id: c.id,
    name: c.name,
    description: c.description,
    host: c.host,
    port: c.port,
    database_name: c.database_name,
    username: c.username,
    sslmode: c.sslmode,
    ssl_root_cert: c.ssl_root_cert,
    allow_cleartext_password: c.allow_cleartext_password,
    password_set: c.password_secret !== null,
    live_username: c.live_username,
    live_password_set: c.live_password_secret !== null,
    is_monitored: c.is_monitored,
    is_shared: c.is_shared,
    owner_username: c.owner_username,
    cluster_id: c.cluster_id,
    role: c.role,
    connection_error: c.connection_error,
    created_at: c.created_at.toISOString(),
    updated_at: c.updated_at.toISOString(),
  };
}

/** The login the live tools use: the live one when set, else the main one. */
export function liveLogin(row: ConnectionRow): ConnectionRow {
  return row.live_username ? { ...row, username: row.live_username, password_secret: row.live_password_secret } : row;
}

const SELECT = `SELECT c.*, u.username AS owner_username FROM connections c LEFT JOIN users u ON u.id = c.owner_user_id`;

export const listConnections = (db: Queryable) => db.query<ConnectionRow>(`${SELECT} ORDER BY lower(c.name)`);

export async function findConnection(db: Queryable, id: number): Promise<ConnectionRow | undefined> {
  return (await db.query<ConnectionRow>(`${SELECT} WHERE c.id = $1`, [id]))[0];
}

/** What a caller stores on a connection; the rest is the datastore's. */
export type ConnectionFields = Pick<
  ConnectionRow,
  | "name"
  | "host"
  | "port"
  | "database_name"
  | "username"
  | "password_secret"
  | "sslmode"
  | "ssl_root_cert"
  | "allow_cleartext_password"
  | "live_username"
  | "live_password_secret"
  | "is_monitored"
  | "is_shared"
  | "description"
  | "cluster_id"
  | "owner_user_id"
>;

const FIELDS: ReadonlyArray<keyof ConnectionFields> = [
  "name",
  "host",
  "port",
  "database_name",
  "username",
  "password_secret",
  "sslmode",
  "ssl_root_cert",
  "allow_cleartext_password",
  "live_username",
  "live_password_secret",
  "is_monitored",
  "is_shared",
  "description",
  "cluster_id",
  "owner_user_id",
];

async function mapConflicts<T>(work: () => Promise<T>, name: string | undefined): Promise<T> {
  try {
    return await work();
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === "23505") throw new ConflictError(`a connection named \`${name}\` already exists`);
    if (code === "23503") throw new NotFoundError("cluster not found");
    throw err;
  }
}

export async function createConnection(db: Queryable, f: ConnectionFields): Promise<ConnectionRow> {
  const [{ id }] = await mapConflicts(
    () =>
      db.query<{ id: number }>(
        `INSERT INTO connections (${FIELDS.join(", ")}) VALUES (${FIELDS.map((_, i) => `$${i + 1}`).join(", ")}) RETURNING id`,
        FIELDS.map((k) => f[k]),
      ),
    f.name,
  );
  return (await findConnection(db, id))!;
}

export async function updateConnection(db: Queryable, id: number, changes: Partial<ConnectionFields>): Promise<ConnectionRow> {
  const keys = FIELDS.filter((k) => changes[k] !== undefined);
  if (keys.length) {
    // A changed address or credential starts from a clean slate: the collector reports anew.
    const resetsError = keys.some((k) =>
      ["host", "port", "database_name", "username", "password_secret", "sslmode", "ssl_root_cert", "allow_cleartext_password"].includes(k),
    );
    await mapConflicts(
      () =>
        db.query(
          `UPDATE connections SET ${keys.map((k, i) => `${k} = $${i + 2}`).join(", ")}, updated_at = now()${resetsError ? ", connection_error = NULL" : ""} WHERE id = $1`,
          [id, ...keys.map((k) => changes[k])],
        ),
      changes.name,
    );
  }
  const row = await findConnection(db, id);
  if (!row) throw new NotFoundError(`connection ${id} not found`);
  return row;
}

/**
 * Deletes a connection and what belongs to it: samples and changes, overrides, group grants, relationships,
 * current-connection choices. Token scopes naming it stay: removing the last entry of a scope would widen
 * the token to every connection, while an id that never returns (ids are not reused) grants nothing.
 */
export async function deleteConnection(db: Queryable, id: number): Promise<void> {
  await db.query("DELETE FROM probe_configs WHERE scope = 'server' AND scope_id = $1", [id]);
  await db.query("DELETE FROM group_connection_privileges WHERE connection_id = $1", [id]);
  const rows = await db.query("DELETE FROM connections WHERE id = $1 RETURNING id", [id]);
  if (rows.length === 0) throw new NotFoundError(`connection ${id} not found`);
}

/** A server listed on its own in the topology that a user dismissed from it (DELETE /api/v1/clusters/server-<id>). */
export async function hideFromTopology(db: Queryable, id: number): Promise<void> {
  await db.query("UPDATE connections SET hidden_from_topology = true WHERE id = $1", [id]);
}
