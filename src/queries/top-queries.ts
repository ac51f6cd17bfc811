/**
 * The costliest statements of one connection from pg_stat_statements samples: lifetime totals of the latest
 * sample, or (with a window) each statement's reset- and gap-aware change over the window, so "what was
 * expensive in the last hour" is answered and a pg_stat_statements_reset() is a reset, not a negative spike.
 * One row per statement and database (the users who ran it are summed). pglens's own probe statements carry
 * COLLECTOR_MARK, so exclude_collector can drop them.
 */
import type { Queryable } from "../../drivers/types.ts";
import type { Authority } from "../auth/rbac.ts";
import { COLLECTOR_MARK } from "../probes/statement-mark.ts";
import { fetchGroupedChanges } from "../samples/read-grouped-changes.ts";
import { readableIntervals } from "./metrics-context.ts";
import { InputError } from "../errors.ts";
import { findProbe } from "../probes/index.ts";
import type { Window } from "../metrics/window.ts";
import { latestSampleAtSql, previousSampleTimeSql, samplesSql } from "../probes/history-ddl.ts";

export const TOP_QUERY_ORDERS = ["total_exec_time", "calls", "mean_exec_time", "rows", "shared_blks_hit", "shared_blks_read"] as const;
export type TopQueryOrder = (typeof TOP_QUERY_ORDERS)[number];
const SUMMED = ["calls", "total_exec_time", "rows", "shared_blks_hit", "shared_blks_read"] as const;

export interface TopQuery {
  queryid: string;
  database_name: string;
  query: string;
  calls: number;
  total_exec_time: number;
  mean_exec_time: number | null;
  rows: number;
  shared_blks_hit: number;
  shared_blks_read: number;
}

export interface TopQueriesRequest {
  access: Authority;
  connectionId: number;
  limit: number;
  orderBy: TopQueryOrder;
  order: "asc" | "desc";
  queryid?: string;
  excludeCollector: boolean;
  /** Absent: lifetime totals of the latest sample. */
  window?: Window;
}

const PROBE = findProbe("pg_stat_statements")!;
const QUERYID = /^-?\d{1,19}$/;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

export function parseQueryid(value: string | undefined): string | undefined {
  if (value === undefined || value === "") return undefined;
  const n = QUERYID.test(value) ? BigInt(value) : undefined;
  if (n === undefined || n < INT64_MIN || n > INT64_MAX)
    throw new InputError(`\`queryid\` must be a pg_stat_statements queryid (a signed 64-bit integer); got ${JSON.stringify(value)}`);
  return n.toString();
}

type Totals = Omit<TopQuery, "mean_exec_time">;

/** Lifetime totals per statement and database from the latest sample. */
async function lifetimeTotals(db: Queryable, connectionId: number, queryid?: string): Promise<Totals[]> {
  return db.query<Totals>(
    `SELECT queryid::text AS queryid, database_name, min(query) AS query, ${SUMMED.map((c) => `coalesce(sum(${c}), 0)::float8 AS ${c}`).join(", ")}
       FROM ${latestSampleAtSql(PROBE, "$1")} l
       CROSS JOIN LATERAL ${samplesSql(PROBE, "l.at", "l.at", ["query", ...SUMMED])} s
      WHERE connection_id = $1 AND collected_at = l.at
        AND ($2::bigint IS NULL OR queryid = $2::bigint)
      GROUP BY queryid, database_name`,
    [connectionId, queryid ?? null],
  );
}

/** Each statement's valid change over the window (statements that did not run are left out). */
async function windowTotals(db: Queryable, connectionId: number, intervalSeconds: number, window: Window, queryid?: string): Promise<Totals[]> {
  const changes = await fetchGroupedChanges(db, {
    probe: findProbe("pg_stat_statements")!,
    connectionId,
    columns: SUMMED,
    groupBy: ["queryid", "database_name"],
    buckets: { start: window.start, end: window.end, n: 1, width: window.end - window.start },
    intervalSeconds,
    filters: queryid === undefined ? {} : { queryid },
  });
  const totals: Totals[] = [];
  for (const {
    group: [id, database],
    delta,
  } of changes) {
    const sums = delta.map((byBucket) => [...byBucket.values()].reduce<number>((s, v) => s + (v ?? 0), 0));
    if (sums[0] === 0) continue; // no executions in the window
    totals.push({ queryid: id, database_name: database, query: "", ...Object.fromEntries(SUMMED.map((c, i) => [c, sums[i]])) } as Totals);
  }
  const texts = await statementTexts(db, connectionId, window, totals);
  for (const t of totals) t.query = texts.get(JSON.stringify([t.queryid, t.database_name])) ?? "";
  return totals;
}

/**
 * The latest text of each statement sampled in the window, by JSON [queryid, database]: from the window's last
 * sample, and for statements no longer in it from their own latest row (read by the queryid index).
 */
async function statementTexts(db: Queryable, connectionId: number, window: Window, statements: readonly Totals[]): Promise<Map<string, string>> {
  const range = [new Date(window.start).toISOString(), new Date(window.end).toISOString()];
  const texts = new Map<string, string>();
  const take = (rows: Array<{ queryid: string; database_name: string; query: string }>) => {
    for (const r of rows) texts.set(JSON.stringify([r.queryid, r.database_name]), r.query);
  };
  take(
    await db.query(
      // The last sample found as a neighbour, then read at its instant: a read of the window's samples would unnest
      // every compressed hour of every statement (lab, 1,000 statements over 24 h: 302 ms against 17).
      `SELECT DISTINCT ON (queryid, database_name) queryid::text AS queryid, database_name, query
         FROM (SELECT ${previousSampleTimeSql(PROBE, "$1", "$3::timestamptz + interval '1 microsecond'")} AS at OFFSET 0) l
         CROSS JOIN LATERAL ${samplesSql(PROBE, "l.at", "l.at", ["query"])} s
        WHERE connection_id = $1 AND collected_at = l.at AND l.at >= $2::timestamptz
        ORDER BY queryid, database_name`,
      [connectionId, ...range],
    ),
  );
  const missing = [...new Set(statements.filter((s) => !texts.has(JSON.stringify([s.queryid, s.database_name]))).map((s) => s.queryid))];
  if (missing.length === 0) return texts;
  take(
    await db.query(
      `SELECT DISTINCT ON (queryid, database_name) queryid::text AS queryid, database_name, query FROM ${samplesSql(PROBE, "$2", "$3", ["query"])} s
        WHERE connection_id = $1 AND queryid = ANY($4::bigint[]) AND collected_at >= $2::timestamptz AND collected_at <= $3::timestamptz
        ORDER BY queryid, database_name, collected_at DESC`,
      [connectionId, ...range, missing],
    ),
  );
  return texts;
}

export async function topQueries(db: Queryable, q: TopQueriesRequest): Promise<TopQuery[]> {
  const intervalSeconds = (await readableIntervals(db, "pg_stat_statements", [q.connectionId], q.access)).get(q.connectionId)!;
  const totals = q.window ? await windowTotals(db, q.connectionId, intervalSeconds, q.window, q.queryid) : await lifetimeTotals(db, q.connectionId, q.queryid);
  const direction = q.order === "asc" ? 1 : -1;
  const value = (x: TopQuery) => x[q.orderBy] ?? Number.NEGATIVE_INFINITY;
  return totals
    .map((t): TopQuery => ({ ...t, mean_exec_time: t.calls > 0 ? t.total_exec_time / t.calls : null }))
    .filter((t) => !(q.excludeCollector && t.query.includes(COLLECTOR_MARK)))
    .sort((a, b) => direction * (value(a) - value(b)) || a.queryid.localeCompare(b.queryid))
    .slice(0, q.limit);
}
