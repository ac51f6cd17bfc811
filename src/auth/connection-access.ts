/**
 * Whether a caller may read connections, asked of the datastore. A connection addressed as an object (its own
 * path, or reached through an alert or blackout id) that the caller may not read answers like one that does not
 * exist (NotFoundError), so existence does not leak; a connection named as a parameter of a read answers 403
 * when it exists, as the specification's error table asks.
 */
import type { Queryable } from "../../drivers/types.ts";
import { type ConnectionRow, findConnection } from "../datastore/connections.ts";
import { ForbiddenError, NotFoundError } from "../errors.ts";
import { type Authority, type ConnectionOwnership, connectionAccess } from "./rbac.ts";

/**
 * The connection if the caller may read it; otherwise NotFoundError, the same as for an id that does not
 * exist, so existence does not leak.
 */
export async function readableConnection(db: Queryable, id: number, access?: Authority): Promise<ConnectionRow> {
  const row = await findConnection(db, id);
  if (!row || (access && connectionAccess(access, row) === null)) throw new NotFoundError(`connection ${id} not found`);
  return row;
}

/**
 * For reads that name connections in their parameters (metrics, baselines, alerts, timeline and their tools; the
 * specification's error table): NotFoundError naming the first id that does not exist,
 * else ForbiddenError naming the first the caller may not read.
 */
export async function assertConnectionsPermitted(db: Queryable, ids: readonly number[], access: Authority): Promise<void> {
  const rows = await db.query<ConnectionOwnership>("SELECT id, owner_user_id, is_shared FROM connections WHERE id = ANY($1::int[])", [ids]);
  const missing = ids.find((id) => !rows.some((r) => r.id === id));
  if (missing !== undefined) throw new NotFoundError(`connection ${missing} not found`);
  const refused = rows.find((r) => connectionAccess(access, r) === null);
  if (refused) throw new ForbiddenError(`you may not read connection ${refused.id}: ask an administrator for a connection privilege on it`);
}
