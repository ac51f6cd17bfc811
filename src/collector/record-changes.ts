/**
 * Ingest-time derivation: after a batch is written, record for every affected sample the sum of valid entity
 * changes of each cumulative column since the previous sample. The query fast path reads these instead of
 * raw rows; the pure pipeline (metrics/series.ts) computes the same numbers from raw rows and is the reference.
 */
import type { Queryable } from "../../drivers/types.ts";
import { excludedRowsSql, fetchSampleRows } from "../datastore/samples-repository.ts";
import { intervalsFor } from "../metrics/intervals.ts";
import { groupSamples } from "../metrics/samples.ts";
import { changesTableName, cumulativeColumns, probeTable, quoteIdent } from "../probes/ddl.ts";
import type { ProbeDefinition } from "../probes/types.ts";
import { ensurePartition, weekOf } from "./partitions.ts";

const MAX_PARAMS = 60_000;

/** `minT`..`maxT`: the span of the batch just written (epoch ms). */
export async function recordChanges(tx: Queryable, probe: ProbeDefinition, connectionId: number, minT: number, maxT: number): Promise<void> {
  const columns = cumulativeColumns(probe);
  if (columns.length === 0) return;
  const table = probeTable(probe.name);
  const visible = ["connection_id = $1", ...excludedRowsSql(probe)].join(" AND ");
  // The neighbours of the batch: the sample before it (for its first interval) and the one after (whose interval it changes).
  const [bounds] = await tx.query<{ prev: Date | null; next: Date | null }>(
    `SELECT (SELECT max(collected_at) FROM ${table} WHERE ${visible} AND collected_at < $2) AS prev,
            (SELECT min(collected_at) FROM ${table} WHERE ${visible} AND collected_at > $3) AS next`,
    [connectionId, new Date(minT).toISOString(), new Date(maxT).toISOString()],
  );
  const markers = [...new Set(columns.map((c) => c.resetBy).filter((m): m is string => Boolean(m)))];
  const rows = await fetchSampleRows(tx, {
    probe,
    connectionIds: [connectionId],
    from: bounds.prev?.getTime() ?? minT,
    to: bounds.next?.getTime() ?? maxT,
    columns: [...columns.map((c) => c.name), ...markers],
    filters: {},
  });
  const samples = groupSamples(probe, rows);
  const perColumn = columns.map((c) => intervalsFor(probe, c.name, samples));
  const intervals = perColumn[0].map((iv, i) => [connectionId, new Date(iv.to).toISOString(), new Date(iv.from).toISOString(), ...perColumn.map((col) => col[i].change)]);
  if (intervals.length === 0) return;

  const changes = changesTableName(probe.name);
  const weeks = new Map(intervals.map((r) => weekOf(changes, new Date(r[1] as string))).map((w) => [w.name, w]));
  for (const week of weeks.values()) await ensurePartition(tx, changes, week);
  const names = columns.map((c) => quoteIdent(c.name));
  const width = 3 + names.length;
  const perStatement = Math.max(1, Math.floor(MAX_PARAMS / width));
  for (let start = 0; start < intervals.length; start += perStatement) {
    const chunk = intervals.slice(start, start + perStatement);
    const tuples = chunk.map((_, r) => `(${Array.from({ length: width }, (_, c) => `$${r * width + c + 1}${c === 0 ? "::integer" : c < 3 ? "::timestamptz" : "::double precision"}`).join(", ")})`);
    await tx.query(
      `INSERT INTO ${probeTable(changes)} (connection_id, collected_at, prev_collected_at, ${names.join(", ")}) VALUES ${tuples.join(", ")}
       ON CONFLICT (connection_id, collected_at) DO UPDATE SET prev_collected_at = excluded.prev_collected_at, ${names.map((n) => `${n} = excluded.${n}`).join(", ")}`,
      chunk.flat(),
    );
  }
}
