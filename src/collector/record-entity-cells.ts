/** Ingest-time hourly rollups of each entity's changes: the hours whose intervals were just recorded, recomputed. */
import type { Queryable } from "../../drivers/types.ts";
import { entityFactColumns, entityIntervalFacts, mergedEntityFacts } from "../datastore/entity-cells.ts";
import { cumulativeColumns, entityCellsTableName, probeTable } from "../probes/ddl.ts";
import type { ProbeDefinition } from "../probes/types.ts";
import { ensurePartition, weekOf } from "./partitions.ts";

const HOUR = 3_600_000;

/**
 * `ends`: the end times (epoch ms) of the intervals whose changes were just recorded. Whole hours are
 * recomputed from raw rows, so cells stay exact whatever order samples arrive in; every entity with a row in
 * an hour has a cell there, so a recomputed hour overwrites each of its cells.
 */
export async function recordEntityCells(tx: Queryable, probe: ProbeDefinition, connectionId: number, ends: readonly number[]): Promise<void> {
  const columns = cumulativeColumns(probe).map((c) => c.name);
  if (columns.length === 0 || probe.keys.length === 0 || ends.length === 0) return;
  const table = entityCellsTableName(probe.name);
  const from = Math.floor(ends.reduce((a, b) => Math.min(a, b)) / HOUR) * HOUR;
  const to = Math.floor(ends.reduce((a, b) => Math.max(a, b)) / HOUR) * HOUR + HOUR;
  // Weeks start on an hour, so every hour lies in the week of its start.
  const weeks = new Map<string, ReturnType<typeof weekOf>>();
  for (let t = from; t < to; t += HOUR) {
    const week = weekOf(table, new Date(t));
    weeks.set(week.name, week);
  }
  for (const week of weeks.values()) await ensurePartition(tx, table, week);
  const factColumns = entityFactColumns(columns);
  await tx.query(
    `INSERT INTO ${probeTable(table)} (connection_id, level_seconds, cell_start, entity, ${factColumns.join(", ")})
     SELECT connection_id, 3600, to_timestamp(floor(extract(epoch FROM collected_at) / 3600) * 3600) AS hour, entity, ${mergedEntityFacts(columns).join(", ")}
       FROM (${entityIntervalFacts(probe, columns, { from: "$2::timestamptz", to: "$3::timestamptz" })}) facts
      GROUP BY connection_id, hour, entity
     ON CONFLICT (connection_id, level_seconds, cell_start, entity) DO UPDATE SET ${factColumns.map((f) => `${f} = excluded.${f}`).join(", ")}`,
    [[connectionId], new Date(from).toISOString(), new Date(to).toISOString()],
  );
}
