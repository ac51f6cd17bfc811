/**
 * What a metrics request needs before its data, in one statement: that each connection exists and the caller
 * may read it, and the interval the query judges gaps by per connection: the server's own probe_configs row, else
 * the global row, else 300 s. Cluster and group overrides drive the collector only; the query's median-spacing
 * rule absorbs their effect on gaps.
 */
import type { Queryable } from "../../drivers/types.ts";
import { type Authority, connectionAccess } from "../auth/rbac.ts";
import { ForbiddenError, NotFoundError } from "../errors.ts";
import type { ExpiringCache } from "../expiring-cache.ts";
import { FALLBACK_INTERVAL_SECONDS } from "../datastore/probe-configs.ts";

interface ConnectionFacts {
  id: number;
  owner_user_id: number | null;
  is_shared: boolean;
  interval_seconds: number | null;
  levels_from: Date | null;
}

/**
 * The facts of recently asked connections, kept per instance for auth.cache_seconds like resolved callers (and
 * emptied by the same writes): a dashboard's burst of queries then costs one statement each, its data. The
 * caller's rights are checked against them on every request.
 */
export type MetricsContextCache = ExpiringCache<ConnectionFacts[]>;

export interface MetricsContext {
  /** Collection interval (seconds) per connection. */
  intervals: Map<number, number>;
  /** From when (epoch ms) the time rollups of every connection asked for are complete (-Infinity: always). */
  levelsFrom: number;
}

/**
 * The context of a metrics request. NotFoundError names the first id that does not exist; with `access`,
 * ForbiddenError the first the caller may not read (SPEC: the metrics endpoints answer 403 there).
 */
export async function readableContext(
  db: Queryable,
  probe: string,
  ids: readonly number[],
  access?: Authority,
  cache?: MetricsContextCache,
): Promise<MetricsContext> {
  const key = `${probe}:${ids.join(",")}`;
  let rows = cache?.get(key);
  if (!rows) {
    rows = await db.query<ConnectionFacts>(
      `SELECT c.id, c.owner_user_id, c.is_shared, c.levels_from,
              coalesce((SELECT collection_interval_seconds FROM probe_configs WHERE probe_name = $2 AND scope = 'server' AND scope_id = c.id),
                       (SELECT collection_interval_seconds FROM probe_configs WHERE probe_name = $2 AND scope = 'global')) AS interval_seconds
         FROM connections c WHERE c.id = ANY($1::int[])`,
      [ids, probe],
    );
    cache?.set(key, rows);
  }
  const missing = ids.find((id) => !rows.some((r) => r.id === id));
  if (missing !== undefined) throw new NotFoundError(`connection ${missing} not found`);
  const refused = access && rows.find((r) => connectionAccess(access, r) === null);
  if (refused) throw new ForbiddenError(`you may not read connection ${refused.id}: ask an administrator for a connection privilege on it`);
  return {
    intervals: new Map(rows.map((r) => [r.id, r.interval_seconds ?? FALLBACK_INTERVAL_SECONDS])),
    levelsFrom: Math.max(Number.NEGATIVE_INFINITY, ...rows.map((r) => r.levels_from?.getTime() ?? Number.NEGATIVE_INFINITY)),
  };
}

/** Collection interval (seconds) per connection, checked like readableContext. */
export async function readableIntervals(db: Queryable, probe: string, ids: readonly number[], access?: Authority): Promise<Map<number, number>> {
  return (await readableContext(db, probe, ids, access)).intervals;
}
