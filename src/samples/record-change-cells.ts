/** Ingest-time time rollups of the per-sample changes: the cells whose intervals were just recorded, recomputed. */
import type { Queryable } from "../../drivers/types.ts";
import { SHORTEST, changeFactColumns, intervalFacts, mergedChangeFacts } from "./change-cells.ts";
import { changeCellsTableName, changesTableName, cumulativeColumns, probeTable } from "../probes/ddl.ts";
import type { ProbeDefinition } from "../probes/types.ts";
import { rewriteCells } from "./rewrite-cells.ts";

/** `ends`: the end times (epoch ms) of the intervals whose changes were just recorded; `known`: partitions known to exist (partitions.ts). */
export async function recordChangeCells(
  tx: Queryable,
  probe: ProbeDefinition,
  connectionId: number,
  ends: readonly number[],
  known?: Set<string>,
): Promise<void> {
  const columns = cumulativeColumns(probe).map((c) => c.name);
  if (columns.length === 0) return;
  await rewriteCells(tx, {
    table: changeCellsTableName(probe.name),
    columns: [...changeFactColumns(columns), SHORTEST.column],
    merged: [...mergedChangeFacts(columns), SHORTEST.merged],
    rows: `SELECT collected_at, ${intervalFacts(columns).join(", ")}, ${SHORTEST.fact}
             FROM ${probeTable(changesTableName(probe.name))}
            WHERE connection_id = $1 AND collected_at >= $2::timestamptz AND collected_at < $3::timestamptz`,
    connectionId,
    times: ends,
    known,
  });
}
