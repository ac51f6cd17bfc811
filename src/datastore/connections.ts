/** Connection lookups needed by the metrics engine (the full connections API comes with the estate). */
import type { Queryable } from "../../drivers/types.ts";
import { NotFoundError } from "../errors.ts";

/** Throws NotFoundError naming the first id that does not exist. */
export async function assertConnectionsExist(db: Queryable, ids: readonly number[]): Promise<void> {
  const rows = await db.query<{ id: number }>("SELECT id FROM connections WHERE id = ANY($1::int[])", [ids]);
  const found = new Set(rows.map((r) => r.id));
  const missing = ids.find((id) => !found.has(id));
  if (missing !== undefined) throw new NotFoundError(`connection ${missing} not found`);
}
