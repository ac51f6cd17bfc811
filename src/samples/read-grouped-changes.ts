/**
 * The metrics pipeline's change rules evaluated inside the datastore, per group of entities (each database,
 * each statement), so a day of samples is reduced where it lies instead of shipped row by row. Per entity:
 * present in the connection's previous sample, the same reset marker, no negative change; intervals longer
 * than 3 x I' (the interval widened to the median spacing of the samples in the window) are gaps, as in the
 * unfiltered metrics query. A bucket's delta is the sum of its intervals' valid changes, its rate the mean of their change/second.
 * Equal to the pure pipeline per group for every bucket holding an interval (a property test holds it to that); buckets
 * without an interval ending in them are absent here.
 */
import type { Queryable } from "../../drivers/types.ts";
import type { Buckets } from "../metrics/buckets.ts";
import { borrowLimitMs } from "../metrics/series.ts";
import { changesTableName, probeTable, quoteIdent } from "../probes/ddl.ts";
import { differencedGroupChanges } from "./read-by-difference.ts";
import type { GroupedChangeQuery, GroupedChanges } from "./grouped-change-query.ts";
import { entityPartitionSql } from "./entity-cells.ts";
import { samplesSql } from "../probes/history-ddl.ts";

const SEPARATOR = "\u001f";
const GAP_INTERVALS = 3;

/** A column's bucket values as an array of n + 1 points (null where no interval ended). */
export function bucketValues(values: ReadonlyMap<number, number | null>, b: Buckets): Array<number | null> {
  return Array.from({ length: b.n + 1 }, (_, k) => values.get(k) ?? null);
}

/** Read by difference where the writer's records allow it (differenced-changes.ts), else from every raw row. */
export async function fetchGroupedChanges(db: Queryable, q: GroupedChangeQuery): Promise<GroupedChanges[]> {
  return (await differencedGroupChanges(db, q)) ?? scannedGroupChanges(db, q);
}

/** The reduction over every raw row in range, with window functions per entity. */
export async function scannedGroupChanges(db: Queryable, q: GroupedChangeQuery): Promise<GroupedChanges[]> {
  const { buckets: b } = q;
  const params: unknown[] = [q.connectionId, new Date(b.start - borrowLimitMs(b)).toISOString(), new Date(b.end).toISOString()];
  const p = (value: unknown) => {
    params.push(value);
    return `$${params.length}`;
  };
  // The connection's samples come from every row in range; the filters only choose whose changes are summed.
  const inRange = ["connection_id = $1", "collected_at >= $2::timestamptz", "collected_at <= $3::timestamptz"];
  const where = [...inRange, ...Object.entries(q.filters ?? {}).map(([column, value]) => `${quoteIdent(column)} = ${p(value)}`)];
  const group = q.groupBy.length ? `concat_ws(${p(SEPARATOR)}, ${q.groupBy.map((c) => `r.${quoteIdent(c)}::text`).join(", ")})` : "''";
  const entity = entityPartitionSql(q.probe, "r").join(", ") || "r.connection_id";
  const start = p(new Date(b.start).toISOString());
  const change = q.columns.map((c, i) => {
    const col = `r.${quoteIdent(c)}`;
    const marker = q.probe.columns.find((x) => x.name === c)?.resetBy;
    const sameMarker = marker ? ` AND r.${quoteIdent(marker)} IS NOT DISTINCT FROM lag(r.${quoteIdent(marker)}) OVER w` : "";
    return `CASE WHEN lag(r.collected_at) OVER w = s.prev_t${sameMarker} AND ${col} >= lag(${col}) OVER w THEN (${col} - lag(${col}) OVER w)::float8 END AS c${i}`;
  });
  const startMs = p(b.start);
  const width = p(b.width);
  const n = p(b.n);
  const bucket = `CASE WHEN t >= $3::timestamptz THEN ${n}::int ELSE least(${n}::int - 1, floor((extract(epoch FROM t) * 1000 - ${startMs}::float8) / ${width}::float8)::int) END`;
  const interval = p(q.intervalSeconds * 1000);
  const markers = q.columns.flatMap((c) => q.probe.columns.find((x) => x.name === c)?.resetBy ?? []);
  const table = samplesSql(q.probe, "$2", "$3", [...q.columns, ...markers, ...Object.keys(q.filters ?? {}), ...q.groupBy]);
  const rows = await db.query<Record<string, unknown> & { g: string; k: number }>(
    // The connection's samples and their predecessors, from the per-sample changes the writer records (one row per
    // sample, not one per entity); a predecessor before the range is left out, as if the range were all there is.
    `WITH s AS (SELECT collected_at, CASE WHEN prev_collected_at >= $2::timestamptz THEN prev_collected_at END AS prev_t
                  FROM ${probeTable(changesTableName(q.probe.name))} WHERE ${inRange.join(" AND ")}),
     judged AS (SELECT greatest(${interval}::float8, percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM collected_at - prev_t)::float8 * 1000)) AS ms
                  FROM s WHERE prev_t >= ${start}::timestamptz),
     e AS (SELECT ${group} AS g, r.collected_at AS t, s.prev_t, ${change.join(", ")}
             FROM ${table} r LEFT JOIN s ON s.collected_at = r.collected_at
            WHERE ${where.map((w) => `r.${w}`).join(" AND ")}
           WINDOW w AS (PARTITION BY ${entity} ORDER BY r.collected_at)),
     iv AS (${
       q.rates
         ? `SELECT g, t, extract(epoch FROM t - prev_t)::float8 AS span_s, ${q.columns.map((_, i) => `sum(c${i}) AS c${i}`).join(", ")}
              FROM e WHERE prev_t IS NOT NULL AND t >= ${start}::timestamptz GROUP BY g, t, prev_t`
         : // Sums need no per-interval step: every entity change lands in its interval's bucket either way.
           `SELECT g, t, extract(epoch FROM t - prev_t)::float8 AS span_s, ${q.columns.map((_, i) => `c${i}`).join(", ")}
              FROM e WHERE prev_t IS NOT NULL AND t >= ${start}::timestamptz`
     })
     SELECT iv.g, ${bucket} AS k, ${q.columns.map((_, i) => `sum(c${i}) AS d${i}, ${q.rates ? `avg(c${i} / span_s)` : "NULL"} AS r${i}`).join(", ")}
       FROM iv CROSS JOIN judged
      WHERE iv.span_s * 1000 <= ${GAP_INTERVALS} * coalesce(judged.ms, ${interval}::float8)
      GROUP BY iv.g, k`,
    params,
  );
  const groups = new Map<string, GroupedChanges>();
  for (const row of rows) {
    let entry = groups.get(row.g);
    if (!entry) {
      entry = { group: q.groupBy.length ? row.g.split(SEPARATOR) : [], delta: q.columns.map(() => new Map()), rate: q.columns.map(() => new Map()) };
      groups.set(row.g, entry);
    }
    q.columns.forEach((_, i) => {
      entry!.delta[i].set(Number(row.k), row[`d${i}`] === null ? null : Number(row[`d${i}`]));
      entry!.rate[i].set(Number(row.k), row[`r${i}`] === null ? null : Number(row[`r${i}`]));
    });
  }
  return [...groups.values()];
}
