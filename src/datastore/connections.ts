/** Connection lookups needed by the metrics engine (the full connections API comes with the estate). */
import type { Queryable } from "../../drivers/types.ts";
import { type Authority, type ConnectionOwnership, connectionAccess } from "../auth/rbac.ts";
import { NotFoundError } from "../errors.ts";

/**
 * Throws NotFoundError naming the first id that does not exist or that the caller may not read: the two
 * answer alike, so existence does not leak.
 */
export async function assertReadableConnections(db: Queryable, ids: readonly number[], access?: Authority): Promise<void> {
  const rows = await db.query<ConnectionOwnership>("SELECT id, owner_user_id, is_shared FROM connections WHERE id = ANY($1::int[])", [ids]);
  const readable = new Set(rows.filter((r) => !access || connectionAccess(access, r) !== null).map((r) => r.id));
  const refused = ids.find((id) => !readable.has(id));
  if (refused !== undefined) throw new NotFoundError(`connection ${refused} not found`);
}
