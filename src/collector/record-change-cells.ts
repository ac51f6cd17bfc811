/**
 * Ingest-time time rollups of the per-sample changes: after the writer records the changes of a batch's
 * intervals, every 5-minute cell their ends fall in is computed again from `__changes`, then every hour from
 * its 5-minute cells (whole cells recomputed, so they stay exact whatever order samples arrive in).
 */
import type { Queryable } from "../../drivers/types.ts";
import { changeFactColumns, intervalFacts, mergedChangeFacts } from "../datastore/change-cells.ts";
import { changeCellsTableName, changesTableName, cumulativeColumns, probeTable } from "../probes/ddl.ts";
import type { ProbeDefinition } from "../probes/types.ts";
import { ensurePartition, weekOf } from "./partitions.ts";

const FIVE_MINUTES = 300_000;
const HOUR = 3_600_000;

/** `ends`: the end times (epoch ms) of the intervals whose changes were just recorded. */
export async function recordChangeCells(tx: Queryable, probe: ProbeDefinition, connectionId: number, ends: readonly number[]): Promise<void> {
  const columns = cumulativeColumns(probe).map((c) => c.name);
  if (columns.length === 0 || ends.length === 0) return;
  const table = changeCellsTableName(probe.name);
  const weeks = new Map(ends.map((t) => weekOf(table, new Date(t))).map((w) => [w.name, w]));
  for (const week of weeks.values()) await ensurePartition(tx, table, week);
  const [first, last] = [Math.min(...ends), Math.max(...ends)];
  const iso = (t: number) => new Date(t).toISOString();
  const facts = changeFactColumns(columns);
  const upsert = `(connection_id, level_seconds, cell_start, ${facts.join(", ")})`;
  const onConflict = `ON CONFLICT (connection_id, level_seconds, cell_start) DO UPDATE SET ${facts.map((f) => `${f} = excluded.${f}`).join(", ")}`;
  await tx.query(
    `INSERT INTO ${probeTable(table)} ${upsert}
     SELECT $1, 300, to_timestamp(floor(extract(epoch FROM collected_at) / 300) * 300) AS cell, ${mergedChangeFacts(columns).join(", ")}
       FROM (SELECT collected_at, ${intervalFacts(columns).join(", ")}
               FROM ${probeTable(changesTableName(probe.name))}
              WHERE connection_id = $1 AND collected_at >= $2::timestamptz AND collected_at < $3::timestamptz) intervals
      GROUP BY cell
     ${onConflict}`,
    [connectionId, iso(Math.floor(first / FIVE_MINUTES) * FIVE_MINUTES), iso(Math.floor(last / FIVE_MINUTES) * FIVE_MINUTES + FIVE_MINUTES)],
  );
  await tx.query(
    `INSERT INTO ${probeTable(table)} ${upsert}
     SELECT $1, 3600, to_timestamp(floor(extract(epoch FROM cell_start) / 3600) * 3600) AS hour, ${mergedChangeFacts(columns).join(", ")}
       FROM ${probeTable(table)}
      WHERE connection_id = $1 AND level_seconds = 300 AND cell_start >= $2::timestamptz AND cell_start < $3::timestamptz
      GROUP BY hour
     ${onConflict}`,
    [connectionId, iso(Math.floor(first / HOUR) * HOUR), iso(Math.floor(last / HOUR) * HOUR + HOUR)],
  );
}
