/**
 * Recomputes a connection's time-rollup cells over a span: every 5-minute cell from its source rows, then
 * every hour from its 5-minute cells. Whole cells are recomputed (rather than the new rows added), so they
 * stay exact whatever order samples arrive in. Shared by the level and the change cells.
 */
import type { Queryable } from "../../drivers/types.ts";
import { probeTable } from "../probes/ddl.ts";
import { ensurePartitions, weeksOf } from "./partitions.ts";

const FIVE_MINUTES = 300_000;
const HOUR = 3_600_000;

export interface CellRewrite {
  /** The cells table's name under `metrics`. */
  table: string;
  /** The cell columns besides connection_id, level_seconds and cell_start. */
  columns: readonly string[];
  /** Aggregates that merge rows of those columns into one cell: the same for source rows and 5-minute cells. */
  merged: readonly string[];
  /** A SELECT of `collected_at` and `columns`, one row per source row of connection $1 with $2 <= collected_at < $3. */
  rows: string;
  connectionId: number;
  /** The times (epoch ms) whose cells changed. */
  times: readonly number[];
  /** Partitions known to exist (partitions.ts). */
  known?: Set<string>;
}

export async function rewriteCells(tx: Queryable, c: CellRewrite): Promise<void> {
  if (c.times.length === 0) return;
  // Weeks start on an hour, so every cell of a time lies in the time's week.
  await ensurePartitions(tx, c.table, weeksOf(c.table, c.times), c.known);
  const first = c.times.reduce((a, b) => Math.min(a, b));
  const last = c.times.reduce((a, b) => Math.max(a, b));
  const iso = (t: number) => new Date(t).toISOString();
  const table = probeTable(c.table);
  const into = `INSERT INTO ${table} (connection_id, level_seconds, cell_start, ${c.columns.join(", ")})`;
  const onConflict = `ON CONFLICT (connection_id, level_seconds, cell_start) DO UPDATE SET ${c.columns.map((f) => `${f} = excluded.${f}`).join(", ")}`;
  const cell = (seconds: number, time: string) => `to_timestamp(floor(extract(epoch FROM ${time}) / ${seconds}) * ${seconds})`;
  await tx.query(`${into} SELECT $1, 300, ${cell(300, "collected_at")} AS cell, ${c.merged.join(", ")} FROM (${c.rows}) source GROUP BY cell ${onConflict}`, [
    c.connectionId,
    iso(Math.floor(first / FIVE_MINUTES) * FIVE_MINUTES),
    iso(Math.floor(last / FIVE_MINUTES) * FIVE_MINUTES + FIVE_MINUTES),
  ]);
  await tx.query(
    `${into} SELECT $1, 3600, ${cell(3600, "cell_start")} AS hour, ${c.merged.join(", ")}
       FROM ${table} WHERE connection_id = $1 AND level_seconds = 300 AND cell_start >= $2::timestamptz AND cell_start < $3::timestamptz
      GROUP BY hour ${onConflict}`,
    [c.connectionId, iso(Math.floor(first / HOUR) * HOUR), iso(Math.floor(last / HOUR) * HOUR + HOUR)],
  );
}
