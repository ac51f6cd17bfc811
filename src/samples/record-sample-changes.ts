/**
 * recordChanges of a one-sample batch, as a collector writes, computed by the datastore from the rows it holds:
 * the changes of the intervals the sample ends and begins, each entity's irregular intervals (as
 * metrics/irregular-intervals.ts finds them) and the entity cells, with no sample read back into the writer
 * (bench:fleet, 20 servers with 5,000 statements: the collector's CPU per server-round about halved). For batches of
 * many samples (an import) the writer's own derivation (record-changes.ts) is faster: a window over thousands of
 * rows and dozens of columns cost the datastore more than reading them back.
 */
import type { Queryable } from "../../drivers/types.ts";
import { excludedRowsSql } from "./read-raw-rows.ts";
import { msSql } from "./read-changes.ts";
import { changesTableName, cumulativeColumns, factColumn, irregularTableName, probeTable, quoteIdent, recordedGaugeColumns } from "../probes/ddl.ts";
import type { ProbeDefinition } from "../probes/types.ts";
import { nextSampleTimeSql, previousSampleTimeSql, samplesSql } from "../probes/history-ddl.ts";
import { entityPartitionSql } from "./entity-cells.ts";
import { ensurePartitions, weeksOf } from "./partitions.ts";
import { recordChangeCells } from "./record-change-cells.ts";
import { addEntityCellsOfRange, recordEntityCells } from "./record-entity-cells.ts";

/** `times`: the sample times of the batch just written (epoch ms); `known`: partitions known to exist (partitions.ts). */
export async function recordSampleChanges(
  tx: Queryable,
  probe: ProbeDefinition,
  connectionId: number,
  times: readonly number[],
  known?: Set<string>,
): Promise<void> {
  const columns = cumulativeColumns(probe);
  if (columns.length === 0) return;
  const minT = times.reduce((a, b) => Math.min(a, b));
  const maxT = times.reduce((a, b) => Math.max(a, b));
  const excluded = excludedRowsSql(probe);
  // The neighbours of the batch: the sample before it (for its first interval) and the one after (whose interval it changes).
  const [bounds] = await tx.query<{ prev: Date | null; next: Date | null }>(
    `SELECT ${previousSampleTimeSql(probe, "$1", "$2::timestamptz", excluded)} AS prev, ${nextSampleTimeSql(probe, "$1", "$3::timestamptz", excluded)} AS next`,
    [connectionId, new Date(minT).toISOString(), new Date(maxT).toISOString()],
  );
  const from = bounds.prev?.getTime() ?? minT;
  const to = bounds.next?.getTime() ?? maxT;
  const tables = [changesTableName(probe.name), ...(probe.keys.length > 0 ? [irregularTableName(probe.name)] : [])];
  // Intervals end at the batch's samples, at stored ones among them (whose weeks their own batches made) and at the next.
  for (const table of tables) await ensurePartitions(tx, table, weeksOf(table, [...times, to]), known);
  const params = [connectionId, new Date(from).toISOString(), new Date(to).toISOString()];
  // The intervals ending after `from` are all recomputed: their irregular rows are replaced.
  if (probe.keys.length > 0)
    await tx.query(
      `DELETE FROM ${probeTable(irregularTableName(probe.name))} WHERE connection_id = $1 AND collected_at > $2::timestamptz AND collected_at <= $3::timestamptz`,
      params,
    );
  const visible = await tx.query<{ t: number }>(intervalsStatement(probe), params);
  const sampleTimes = visible.map((v) => v.t);
  const ends = sampleTimes.slice(1);
  if (ends.length > 0) await recordChangeCells(tx, probe, connectionId, ends, known);
  // Entity cells: a batch that only appends adds the facts from its first visible sample on; any other
  // recomputes the hours it touched.
  const first = appendedFrom(sampleTimes, times);
  if (first !== undefined && first < sampleTimes.length) await addEntityCellsOfRange(tx, probe, connectionId, sampleTimes[first], maxT, known);
  else if (first === undefined) await recordEntityCells(tx, probe, connectionId, ends, known);
}

/**
 * One statement over connection $1's visible samples at $2..$3 (both included): each interval between two of them
 * recorded in the changes (ON CONFLICT: an interval the batch changed is replaced), each entity's irregular
 * intervals inserted (multi-entity probes), and the samples' times (epoch ms, in order) returned.
 */
function intervalsStatement(probe: ProbeDefinition): string {
  const q = quoteIdent;
  const columns = cumulativeColumns(probe);
  const markers = [...new Set(columns.map((c) => c.resetBy).filter((m): m is string => Boolean(m)))];
  const recorded = recordedGaugeColumns(probe).map((c) => c.name);
  const keys = probe.keys.map(q);
  const before = (name: string) => q(`before:${name}`);
  const change = (name: string) => q(`change:${name}`);
  // As intervals.ts judges an entity's change: its row in the connection's previous sample, both values present,
  // the same reset marker and no decrease. Values are read as the pipeline's numbers (float8), markers to the
  // millisecond as it reads them; whether a row is paired and its markers unchanged is worked out once per row.
  const same = (marker: string) => q(`same:${marker}`);
  const valid = (c: (typeof columns)[number]) =>
    `x.paired AND x.${q(c.name)} IS NOT NULL AND x.${before(c.name)} IS NOT NULL${c.resetBy ? ` AND x.${same(c.resetBy)}` : ""} AND x.${q(c.name)} >= x.${before(c.name)}`;
  const judged = columns.flatMap((c) => [
    `CASE WHEN ${valid(c)} THEN x.${q(c.name)} - x.${before(c.name)} END AS ${change(c.name)}`,
    // Plain growth, or no value on either side; anything else makes the entity's interval irregular.
    `(x.paired AND ((x.${q(c.name)} IS NULL AND x.${before(c.name)} IS NULL) OR (${valid(c)}))) AS ${q(`regular:${c.name}`)}`,
  ]);
  const perRow = ["coalesce(e.before_at = e.prev_at, false) AS paired", ...markers.map((m) => `e.${q(m)} IS NOT DISTINCT FROM e.${before(m)} AS ${same(m)}`)];
  const lagged = [
    "lag(r.collected_at) OVER w AS before_at",
    "lead(r.collected_at) OVER w AS after_at",
    ...[...columns.map((c) => c.name), ...markers].map((name) => `lag(r.${q(name)}) OVER w AS ${before(name)}`),
  ];
  const window = probe.keys.length > 0 ? `PARTITION BY ${entityPartitionSql(probe, "r").join(", ")} ORDER BY r.collected_at` : "ORDER BY r.collected_at";
  const read = [...columns.map((c) => c.name), ...markers, ...recorded];
  const changeColumns = columns.map((c) => q(c.name));
  const checked = probe.keys.length > 0 ? ["entities_checked"] : [];
  const gaugeColumns = recorded.flatMap((name) => [factColumn(name, "n"), factColumn(name, "sum")]);
  const changes = `INSERT INTO ${probeTable(changesTableName(probe.name))} (connection_id, collected_at, prev_collected_at, ${[...changeColumns, ...checked, ...gaugeColumns].join(", ")})
     SELECT $1, collected_at, prev_at, ${[
       ...columns.map((c) => `sum(${change(c.name)})`),
       ...checked.map(() => "true"),
       ...recorded.flatMap((name) => [`count(${q(name)})::int`, `coalesce(sum(${q(name)}::float8), 0)`]),
     ].join(", ")}
       FROM v WHERE prev_at IS NOT NULL GROUP BY collected_at, prev_at
     ON CONFLICT (connection_id, collected_at) DO UPDATE SET prev_collected_at = excluded.prev_collected_at, ${[...changeColumns, ...checked, ...gaugeColumns]
       .map((n) => `${n} = excluded.${n}`)
       .join(", ")}`;
  // An entity's interval is irregular where it appeared (no row in the previous sample), vanished (no row in the
  // next) or a column is not plain growth.
  const irregular = `INSERT INTO ${probeTable(irregularTableName(probe.name))} (connection_id, collected_at, ${[...keys, ...changeColumns].join(", ")})
     SELECT $1, collected_at, ${[...keys, ...columns.map((c) => change(c.name))].join(", ")} FROM v
      WHERE prev_at IS NOT NULL AND NOT (${columns.map((c) => q(`regular:${c.name}`)).join(" AND ")})
     UNION ALL
     SELECT $1, next_at, ${[...keys, ...columns.map(() => "NULL::float8")].join(", ")} FROM v
      WHERE next_at IS NOT NULL AND after_at IS DISTINCT FROM next_at`;
  const readAs = [
    ...probe.keys.map(q),
    ...columns.map((c) => `${q(c.name)}::float8 AS ${q(c.name)}`),
    ...markers.map((m) => `${msSql(q(m))} AS ${q(m)}`),
    ...recorded.filter((name) => !probe.keys.includes(name)).map(q),
  ];
  return `WITH r AS MATERIALIZED (
       SELECT collected_at, ${readAs.join(", ")}
         FROM ${samplesSql(probe, "$2::timestamptz", "$3::timestamptz", read)} s
        WHERE ${["connection_id = $1", "collected_at >= $2::timestamptz", "collected_at <= $3::timestamptz", ...excludedRowsSql(probe)].join(" AND ")}
     ), t AS (
       SELECT at, lag(at) OVER (ORDER BY at) AS prev_at, lead(at) OVER (ORDER BY at) AS next_at FROM (SELECT DISTINCT collected_at AS at FROM r) d
     ), e AS (
       SELECT r.*, t.prev_at, t.next_at, ${lagged.join(", ")}
         FROM r JOIN t ON t.at = r.collected_at
       WINDOW w AS (${window})
     ), v AS MATERIALIZED (
       SELECT x.*, ${judged.join(", ")} FROM (SELECT e.*, ${perRow.join(", ")} FROM e OFFSET 0) x
     ), changed AS (${changes})${probe.keys.length > 0 ? `, irregular AS (${irregular})` : ""}
     SELECT ${msSql("at")} AS t FROM t ORDER BY at`;
}

/**
 * The index in `sampleTimes` (the connection's visible sample times around the batch, in order) of the batch's
 * first visible sample when the batch (sample `times`) only appended to the history:
 * no sample stored before it lies after that one, so no interval the batch changed was counted before and its
 * own can be added to the rollups. Undefined otherwise.
 */
export function appendedFrom(sampleTimes: readonly number[], times: readonly number[]): number | undefined {
  const batch = new Set(times);
  const first = sampleTimes.findIndex((t) => batch.has(t));
  if (first < 0) return sampleTimes.length; // nothing visible was written: nothing to add
  return sampleTimes.slice(first).every((t) => batch.has(t)) ? first : undefined;
}
