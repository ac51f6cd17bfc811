/** Probe configuration as the metrics engine and the collector read it. */
import type { Queryable } from "../../drivers/types.ts";

export const FALLBACK_INTERVAL_SECONDS = 300;

/**
 * The collection interval of `probe` for one connection: its server-scoped row, else the global row,
 * else 300 s. (Cluster- and group-scoped rows join this resolution with the estate.)
 */
export async function collectionIntervals(db: Queryable, probe: string, connectionIds: readonly number[]): Promise<Map<number, number>> {
  const rows = await db.query<{ scope: string; scope_id: number | null; collection_interval_seconds: number }>(
    `SELECT scope, scope_id, collection_interval_seconds FROM probe_configs
      WHERE probe_name = $1 AND (scope = 'global' OR (scope = 'server' AND scope_id = ANY($2::int[])))`,
    [probe, connectionIds],
  );
  const global = rows.find((r) => r.scope === "global")?.collection_interval_seconds ?? FALLBACK_INTERVAL_SECONDS;
  const byServer = new Map(rows.filter((r) => r.scope === "server").map((r) => [r.scope_id!, r.collection_interval_seconds]));
  return new Map(connectionIds.map((id) => [id, byServer.get(id) ?? global]));
}
