/** Reads the per-sample changes recorded by the sample writer (see collector/record-changes.ts). */
import type { Queryable } from "../../drivers/types.ts";
import { changesTableName, probeTable, quoteIdent } from "../probes/ddl.ts";
import type { ProbeDefinition } from "../probes/types.ts";

/**
 * A timestamp column as epoch milliseconds (as a Date holds them): numbers decode far faster than timestamps.
 * date_part is double precision arithmetic (extract's numeric took most of a long read's time); rounding makes
 * it exact for the whole milliseconds the sample writer stores, and one instant always maps to one number.
 */
export const epochMsSql = (column: string) => `round(date_part('epoch', ${column}) * 1000) AS ${column}`;

/** Milliseconds from one timestamp to another, in double precision as epochMsSql (exact for whole milliseconds). */
export const spanMsSql = (later: string, earlier: string) => `round(date_part('epoch', ${later} - ${earlier}) * 1000)`;

export interface StoredChange {
  connection_id: number;
  /** Epoch ms. */
  collected_at: number;
  prev_collected_at: number;
  [column: string]: number | null;
}

/** Changes of samples in [from, to] whose previous sample is not older than `earliestPrevious`. */
export async function fetchStoredChanges(
  db: Queryable,
  q: { probe: ProbeDefinition; connectionIds: readonly number[]; columns: readonly string[]; from: number; to: number; earliestPrevious: number },
): Promise<StoredChange[]> {
  const columns = [...new Set(q.columns)].map(quoteIdent).join(", ");
  return db.query<StoredChange>(
    `SELECT connection_id, ${epochMsSql("collected_at")}, ${epochMsSql("prev_collected_at")}, ${columns} FROM ${probeTable(changesTableName(q.probe.name))}
      WHERE connection_id = ANY($1::int[]) AND collected_at >= $2::timestamptz AND collected_at <= $3::timestamptz
        AND prev_collected_at >= $4::timestamptz
      ORDER BY connection_id, collected_at`,
    [q.connectionIds, new Date(q.from).toISOString(), new Date(q.to).toISOString(), new Date(q.earliestPrevious).toISOString()],
  );
}

/** Per connection, the median spacing (ms) of its samples in [from, to] (the gap rule's judge), from the recorded changes. */
export async function medianSpacings(db: Queryable, probe: ProbeDefinition, connectionIds: readonly number[], from: number, to: number): Promise<Map<number, number>> {
  const rows = await db.query<{ connection_id: number; median: number }>(
    `SELECT connection_id, percentile_cont(0.5) WITHIN GROUP (ORDER BY ${spanMsSql("collected_at", "prev_collected_at")}) AS median
       FROM ${probeTable(changesTableName(probe.name))}
      WHERE connection_id = ANY($1::int[]) AND prev_collected_at >= $2::timestamptz AND collected_at <= $3::timestamptz
        AND collected_at > $2::timestamptz -- implied, and lets the index and the partitions narrow the scan
      GROUP BY connection_id`,
    [connectionIds, new Date(from).toISOString(), new Date(to).toISOString()],
  );
  return new Map(rows.map((r) => [r.connection_id, Number(r.median)]));
}
