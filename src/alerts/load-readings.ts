/**
 * The alerter's input from the samples: for each connection, the latest sample of every probe the rules read
 * (current only when taken within 3 of its intervals) and the one before it (only when no gap separates
 * them, and only where a metric reads changes), then each alert metric measured on them. One query per probe for
 * all connections, of the columns and rows the metrics read.
 */
import type { Queryable } from "../../drivers/types.ts";
import { effectiveProbeConfigs } from "../datastore/probe-configs.ts";
import { type Sample, groupSamples } from "../metrics/samples.ts";
import { groupBy } from "../group-by.ts";
import { quoteIdent } from "../probes/ddl.ts";
import { latestSampleTimeSql, previousSampleTimeSql, sampleArmsSql, samplesSql } from "../probes/history-ddl.ts";
import { findProbe } from "../probes/index.ts";
import type { ProbeDefinition } from "../probes/types.ts";
import type { AlertMetric, MetricInput, Reading } from "../vocabulary/alert-metrics.ts";

/** A sample older than this many intervals is no current value; two samples further apart are a gap. */
const CURRENT_INTERVALS = 3;

/**
 * The columns of `probe` the metrics read, when each metric reading it lists its columns (AlertMetric.columns),
 * with their reset markers (its entity keys only where listed); undefined (every column) otherwise.
 */
export function columnsRead(probe: ProbeDefinition, metrics: readonly AlertMetric[]): string[] | undefined {
  const readers = metrics.filter((m) => m.probes.includes(probe.name));
  if (readers.some((m) => !m.columns)) return undefined;
  const named = new Set(readers.flatMap((m) => m.columns!));
  const columns = probe.columns.filter((c) => named.has(c.name));
  return [...new Set([...columns.map((c) => c.name), ...columns.flatMap((c) => (c.resetBy ? [c.resetBy] : []))])];
}

/**
 * The rows of `probe` the metrics read (AlertMetric.rows), as the conditions any of which keeps a row and the
 * columns of which one row per value is kept; undefined (every row) unless every metric reading the probe has a
 * filter for it, lists its columns and reads only the latest sample.
 */
export function rowsRead(probe: ProbeDefinition, metrics: readonly AlertMetric[]): { where: string[]; onePer: string[] } | undefined {
  const readers = metrics.filter((m) => m.probes.includes(probe.name));
  const filters = readers.map((m) => (m.columns && m.latestOnly ? m.rows?.[probe.name] : undefined));
  if (!readers.length || filters.some((f) => !f)) return undefined;
  return {
    where: [...new Set(filters.map((f) => f!.where))],
    onePer: [...new Set(filters.flatMap((f) => (f!.onePer ? [f!.onePer] : [])))],
  };
}

/**
 * A recursive CTE `name(connection_id, collected_at, v)`: each value of `column` in each sample of `t`, found by
 * skipping through the index (the least value, then the least above it), plus a row with v null per sample.
 */
function valuesOfSql(definition: ProbeDefinition, column: string, name: string): string {
  const c = quoteIdent(column);
  // The least of the raw and of the compressed rows apart: behind a UNION the planner reads the whole sample to
  // find it. The time's equality lets it read the raw rows' least from the index.
  const first = (outer: string, above?: string) => {
    const arms = sampleArmsSql(definition, `${outer}.collected_at`, `${outer}.collected_at`, [column], false);
    const least = (arm: string) =>
      `(SELECT min(x.${c}) FROM (${arm}) x WHERE x.connection_id = ${outer}.connection_id AND x.collected_at = ${outer}.collected_at${above ? ` AND x.${c} > ${above}` : ""})`;
    return `least(${least(arms.raw)}, ${least(arms.compressed)})`;
  };
  return `${name}(connection_id, collected_at, v) AS (
    SELECT t.connection_id, t.collected_at, ${first("t")} FROM t
    UNION ALL
    SELECT ${name}.connection_id, ${name}.collected_at, ${first(name, `${name}.v`)} FROM ${name} WHERE ${name}.v IS NOT NULL)`;
}

/** The latest sample of each connection, and the one before it unless every metric reading the probe reads only the latest. */
async function latestSamples(
  db: Queryable,
  definition: ProbeDefinition,
  metrics: readonly AlertMetric[],
  connectionIds: readonly number[],
  since: Date,
): Promise<Map<number, Sample[]>> {
  const columns = columnsRead(definition, metrics);
  const count = metrics.every((m) => m.latestOnly || !m.probes.includes(definition.name)) ? 1 : 2;
  const filtered = columns && rowsRead(definition, metrics);
  const onePer = filtered ? filtered.onePer : [];
  // Entity keys only where a metric names them: the rows are counted and compared, never matched across samples by entity.
  const table = samplesSql(definition, "t.collected_at", "t.collected_at", columns, columns === undefined);
  // Each connection's latest sample times, found by index: listing the window's distinct times scanned every row
  // in it (at 1,000 servers, 2 million statement rows). Aliases unlike those of the SQL they wrap.
  const latest = latestSampleTimeSql(definition, "lc.id", "collected_at <= now()", []);
  const times =
    count === 1
      ? `SELECT lc.id AS connection_id, ln.at AS collected_at FROM unnest($1::int[]) AS lc(id)
           CROSS JOIN LATERAL (SELECT ${latest} AS at) ln WHERE ln.at >= $2`
      : `SELECT lc.id AS connection_id, lv.at AS collected_at FROM unnest($1::int[]) AS lc(id)
           CROSS JOIN LATERAL (SELECT ${latest} AS at) ln
           CROSS JOIN LATERAL (SELECT ${previousSampleTimeSql(definition, "lc.id", "ln.at")} AS at) lp
           CROSS JOIN LATERAL (VALUES (ln.at), (lp.at)) AS lv(at) WHERE lv.at >= $2`;
  // Each chosen sample's rows looked up by its connection and time (OFFSET 0 keeps the lookup a restriction the
  // planner takes into the raw and compressed arms), not joined to every row since `since`: on tables written
  // moments before (no statistics) that scanned and sorted every sample in the window. Only the rows a filter
  // keeps: a partial index for a filter (the slow statements') then reads those rows, not the whole sample.
  const kept = filtered ? ` AND (${filtered.where.map((w) => `(${w})`).join(" OR ")})` : "";
  const chosen = `SELECT p.* FROM t CROSS JOIN LATERAL (SELECT * FROM ${table} x WHERE x.connection_id = t.connection_id${kept} OFFSET 0) p`;
  const values = onePer.map((c, k) => `, ${valuesOfSql(definition, c, `v${k}`)}`);
  // A row per value with that column only: the zero counts (RowFilter.onePer).
  const onlyValue = (c: string) => columns!.map((name) => `${name === c ? "v" : "NULL"} AS ${quoteIdent(name)}`).join(", ");
  const valueRows = onePer.map((c, k) => `UNION ALL SELECT connection_id, collected_at, ${onlyValue(c)} FROM v${k} WHERE v IS NOT NULL`);
  const rows = await db.query<Record<string, unknown> & { connection_id: number }>(
    `WITH RECURSIVE t AS MATERIALIZED (${times})${values.join("")}
     SELECT connection_id, collected_at, ${(columns ?? definition.columns.map((c) => c.name)).map(quoteIdent).join(", ")} FROM (${chosen}) f
     ${valueRows.join("\n")}
     ORDER BY connection_id, collected_at`,
    [connectionIds, since.toISOString()],
  );
  const byConnection = new Map<number, Sample[]>();
  for (const [id, mine] of groupBy(rows, (r) => r.connection_id)) byConnection.set(id, groupSamples(definition, mine));
  return byConnection;
}

export async function loadReadings(
  db: Queryable,
  connectionIds: readonly number[],
  metrics: readonly AlertMetric[],
  now: Date,
): Promise<Map<number, Map<string, Reading[]>>> {
  const result = new Map<number, Map<string, Reading[]>>();
  if (connectionIds.length === 0) return result;
  const configs = await effectiveProbeConfigs(db, connectionIds);
  const interval = (id: number, probe: string) => configs.get(id)!.get(probe)!.collection_interval_seconds;
  const probes = [...new Set(metrics.flatMap((m) => m.probes))];
  const samples = new Map<string, Map<number, Sample[]>>();
  for (const probe of probes) {
    const longest = Math.max(...connectionIds.map((id) => interval(id, probe)));
    const definition = findProbe(probe)!;
    const since = new Date(now.getTime() - 2 * CURRENT_INTERVALS * longest * 1000);
    samples.set(probe, await latestSamples(db, definition, metrics, connectionIds, since));
  }
  const schedule = await db.query<{ connection_id: number; probe_name: string; last_success_at: Date | null }>(
    "SELECT connection_id, probe_name, last_success_at FROM probe_schedule WHERE connection_id = ANY($1::int[]) AND last_status IS DISTINCT FROM 'unavailable'",
    [connectionIds],
  );
  const scheduleOf = groupBy(schedule, (s) => s.connection_id);
  for (const id of connectionIds) {
    const window = (probe: string) => CURRENT_INTERVALS * interval(id, probe) * 1000;
    const pair = (probe: string) => samples.get(probe)?.get(id) ?? [];
    const latest = (probe: string) => {
      const last = pair(probe).at(-1);
      return last && now.getTime() - last.t <= window(probe) ? last : undefined;
    };
    const input: MetricInput = {
      now: now.getTime(),
      latest,
      previous(probe) {
        const [before, last] = pair(probe).slice(-2);
        return before && last && latest(probe) && last.t - before.t <= window(probe) ? before : undefined;
      },
      schedule: (scheduleOf.get(id) ?? [])
        .filter((s) => configs.get(id)?.get(s.probe_name)?.is_enabled)
        .map((s) => ({ probe: s.probe_name, intervalSeconds: interval(id, s.probe_name), lastSuccess: s.last_success_at?.getTime() ?? null })),
    };
    result.set(id, new Map(metrics.map((m) => [m.name, m.measure(input)])));
  }
  return result;
}
