/** Ingest-time time rollups of level columns: the cells a batch touched, recomputed from their raw rows. */
import type { Queryable } from "../../drivers/types.ts";
import { factColumns, mergedFacts, samplePartials } from "./level-cells.ts";
import { excludedRowsSql } from "./read-raw-rows.ts";
import { levelColumns, levelsTableName } from "../probes/ddl.ts";
import type { ProbeDefinition } from "../probes/types.ts";
import { rewriteCells } from "./rewrite-cells.ts";
import { samplesSql } from "../probes/history-ddl.ts";

/** `times`: the sample times of the batch just written (epoch ms); `known`: partitions known to exist (partitions.ts). */
export async function recordLevels(tx: Queryable, probe: ProbeDefinition, connectionId: number, times: readonly number[], known?: Set<string>): Promise<void> {
  const columns = levelColumns(probe).map((c) => c.name);
  if (columns.length === 0) return;
  await rewriteCells(tx, {
    table: levelsTableName(probe.name),
    columns: ["samples", ...factColumns(columns)],
    merged: ["sum(samples)::int AS samples", ...mergedFacts(columns)],
    rows: `SELECT collected_at, 1 AS samples, ${samplePartials(probe, columns).join(", ")}
             FROM ${samplesSql(probe, "$2", "$3", columns)} s
            WHERE ${["connection_id = $1", "collected_at >= $2::timestamptz", "collected_at < $3::timestamptz", ...excludedRowsSql(probe)].join(" AND ")}
            GROUP BY collected_at`,
    connectionId,
    times,
    known,
  });
}
