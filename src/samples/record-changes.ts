/**
 * Ingest-time derivation: after a batch is written, record for every affected sample the sum of valid entity
 * changes of each cumulative column since the previous sample. The query fast path reads these instead of
 * raw rows; the pure pipeline (metrics/series.ts) computes the same numbers from raw rows and is the reference.
 * For multi-entity probes it also records each entity's irregular intervals (metrics/irregular-intervals.ts).
 */
import type { Queryable } from "../../drivers/types.ts";
import { valuesLiteral } from "../datastore/array-literal.ts";
import { excludedRowsSql, fetchSampleRows } from "./read-raw-rows.ts";
import { intervalsForColumns } from "../metrics/intervals.ts";
import { entityCellFacts } from "../metrics/entity-cell-facts.ts";
import { groupSamples } from "../metrics/samples.ts";
import { irregularIntervals } from "../metrics/irregular-intervals.ts";
import {
  changesTableName,
  cumulativeColumns,
  entityGaugeColumns,
  factColumn,
  irregularTableName,
  probeTable,
  quoteIdent,
  recordedGaugeColumns,
} from "../probes/ddl.ts";
import type { ProbeDefinition } from "../probes/types.ts";
import { nextSampleTimeSql, previousSampleTimeSql } from "../probes/history-ddl.ts";
import { ensurePartitions, weeksOf } from "./partitions.ts";
import { recordChangeCells } from "./record-change-cells.ts";
import { addEntityCells, recordEntityCells } from "./record-entity-cells.ts";
import { appendedFrom, recordSampleChanges } from "./record-sample-changes.ts";

/** `times`: the sample times of the batch just written (epoch ms); `known`: partitions known to exist (partitions.ts). */
export async function recordChanges(tx: Queryable, probe: ProbeDefinition, connectionId: number, times: readonly number[], known?: Set<string>): Promise<void> {
  // One sample, as a collector writes: the datastore derives it without the rows travelling back here.
  if (times.length === 1) return recordSampleChanges(tx, probe, connectionId, times, known);
  const columns = cumulativeColumns(probe);
  const minT = times.reduce((a, b) => Math.min(a, b));
  const maxT = times.reduce((a, b) => Math.max(a, b));
  if (columns.length === 0) return;
  const excluded = excludedRowsSql(probe);
  // The neighbours of the batch: the sample before it (for its first interval) and the one after (whose interval it changes).
  const [bounds] = await tx.query<{ prev: Date | null; next: Date | null }>(
    `SELECT ${previousSampleTimeSql(probe, "$1", "$2::timestamptz", excluded)} AS prev, ${nextSampleTimeSql(probe, "$1", "$3::timestamptz", excluded)} AS next`,
    [connectionId, new Date(minT).toISOString(), new Date(maxT).toISOString()],
  );
  const markers = [...new Set(columns.map((c) => c.resetBy).filter((m): m is string => Boolean(m)))];
  const gauges = probe.keys.length > 0 ? entityGaugeColumns(probe) : []; // for the entity cells and the recorded gauges
  const rows = await fetchSampleRows(tx, {
    probe,
    connectionIds: [connectionId],
    from: bounds.prev?.getTime() ?? minT,
    to: bounds.next?.getTime() ?? maxT,
    columns: [...columns.map((c) => c.name), ...markers, ...gauges.map((c) => c.name)],
    filters: {},
  });
  const samples = groupSamples(probe, rows);
  // Entity cells: a batch that only appends adds its intervals' facts; any other recomputes the hours it touched (below).
  const first = appendedFrom(
    samples.map((s) => s.t),
    times,
  );
  const added = first === undefined ? undefined : entityCellFacts(probe, columns, gauges, samples, first);
  if (added) await addEntityCells(tx, probe, connectionId, added, known);
  const perColumn = intervalsForColumns(
    probe,
    columns.map((c) => c.name),
    samples,
  );
  if (perColumn[0].length === 0) return;
  const iso = (t: number) => new Date(t).toISOString();
  const names = columns.map((c) => quoteIdent(c.name));
  // Multi-entity probes: each sample says its irregular intervals are recorded (samples from before were not).
  const checked = probe.keys.length > 0 ? ["entities_checked"] : [];
  // And the count and sum of its integer gauges' values, for summed gauges (recordedGaugeColumns).
  const recorded = recordedGaugeColumns(probe);
  const gaugeNames = recorded.flatMap((c) => [factColumn(c.name, "n"), factColumn(c.name, "sum")]);
  const bySample = new Map(samples.map((s) => [s.t, s.rows]));
  const gaugeFacts = (t: number) =>
    recorded.flatMap((c) => {
      const values = bySample
        .get(t)!
        .map((r) => r[c.name])
        .filter((v) => v !== null && v !== undefined);
      return [values.length, values.reduce<number>((sum, v) => sum + Number(v), 0)];
    });

  await insertRows(tx, changesTableName(probe.name), known, {
    columns: ["connection_id", "collected_at", "prev_collected_at", ...names, ...checked, ...gaugeNames],
    types: [
      "integer",
      "timestamptz",
      "timestamptz",
      ...names.map(() => "double precision"),
      ...checked.map(() => "boolean"),
      ...recorded.flatMap(() => ["integer", "double precision"]),
    ],
    rows: perColumn[0].map((iv, i) => [
      connectionId,
      iso(iv.to),
      iso(iv.from),
      ...perColumn.map((col) => col[i].change),
      ...checked.map(() => true),
      ...gaugeFacts(iv.to),
    ]),
    onConflict: `(connection_id, collected_at) DO UPDATE SET prev_collected_at = excluded.prev_collected_at, ${[...names, ...checked, ...gaugeNames].map((n) => `${n} = excluded.${n}`).join(", ")}`,
  });
  const ends = perColumn[0].map((iv) => iv.to);
  await recordChangeCells(tx, probe, connectionId, ends, known);
  // The batch's own hours too: an hour holding only a history's first sample ends no interval but has its cells.
  if (!added) await recordEntityCells(tx, probe, connectionId, [...ends, ...times], known);
  if (checked.length === 0) return;

  // The intervals ending after the first sample read were all recomputed: their irregular rows are replaced.
  const irregular = irregularTableName(probe.name);
  await tx.query(`DELETE FROM ${probeTable(irregular)} WHERE connection_id = $1 AND collected_at > $2::timestamptz AND collected_at <= $3::timestamptz`, [
    connectionId,
    iso(samples[0].t),
    iso(samples[samples.length - 1].t),
  ]);
  const types = new Map(probe.columns.map((c) => [c.name, c.type]));
  await insertRows(tx, irregular, known, {
    columns: ["connection_id", "collected_at", ...probe.keys.map(quoteIdent), ...names],
    types: ["integer", "timestamptz", ...probe.keys.map((k) => types.get(k)!), ...names.map(() => "double precision")],
    rows: irregularIntervals(probe, columns, samples).map((x) => [connectionId, iso(x.to), ...probe.keys.map((k) => x.entity[k]), ...x.changes]),
  });
}

/** Inserts rows into a partitioned metrics table (ensuring their weekly partitions) in one statement, a column's values as one array literal. */
async function insertRows(
  tx: Queryable,
  table: string,
  known: Set<string> | undefined,
  q: { columns: string[]; types: string[]; rows: unknown[][]; onConflict?: string },
): Promise<void> {
  if (q.rows.length === 0) return;
  await ensurePartitions(
    tx,
    table,
    weeksOf(
      table,
      q.rows.map((r) => Date.parse(r[1] as string)),
    ),
    known,
  );
  await tx.query(
    `INSERT INTO ${probeTable(table)} (${q.columns.join(", ")}) SELECT * FROM unnest(${q.types.map((type, c) => `$${c + 1}::${type}[]`).join(", ")})${q.onConflict ? ` ON CONFLICT ${q.onConflict}` : ""}`,
    q.types.map((_, c) => valuesLiteral(q.rows.map((row) => row[c]))),
  );
}
