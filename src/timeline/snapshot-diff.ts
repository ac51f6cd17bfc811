/**
 * What changed between consecutive samples of a snapshot probe (settings, hba rules, extensions, start
 * time), computed by the datastore: for each sample in the window, its predecessor is found through the
 * (connection_id, collected_at) index, and only rows that differ come back. Nothing is read twice and no
 * table is scanned whole.
 */
import type { Queryable } from "../../drivers/types.ts";
import { quoteIdent } from "../probes/ddl.ts";
import { previousSampleTimeSql, samplesSql } from "../probes/history-ddl.ts";
import { findProbe } from "../probes/index.ts";

export interface RowChange {
  connection_id: number;
  collected_at: Date;
  change_type: "added" | "removed" | "modified";
  /** Key columns, then `old_<column>` and `new_<column>` for each compared column. */
  [column: string]: unknown;
}

export async function snapshotChanges(
  db: Queryable,
  probeName: string,
  compared: readonly string[],
  connectionIds: readonly number[],
  from: Date,
  to: Date,
): Promise<RowChange[]> {
  const probe = findProbe(probeName)!;
  const q = quoteIdent;
  const keys = probe.keys;
  const keyOut = keys.map((k) => `coalesce(cur.${q(k)}, old.${q(k)}) AS ${q(k)}`);
  const valuesOut = compared.flatMap((c) => [`old.${q(c)} AS ${q(`old_${c}`)}`, `cur.${q(c)} AS ${q(`new_${c}`)}`]);
  const tuple = (side: string) => `(${compared.map((c) => `${side}.${q(c)}`).join(", ")})`;
  // Keyed rows can appear and vanish (FULL JOIN on the keys); a single-row probe only changes.
  const join = keys.length ? `FULL JOIN old USING (${keys.map(q).join(", ")})` : "LEFT JOIN old ON true";
  const present = (side: string) => (keys.length ? `${side}.${q(keys[0])} IS NOT NULL` : `${side}.connection_id IS NOT NULL`);
  return db.query<RowChange>(
    `WITH samples AS (
       SELECT DISTINCT connection_id, collected_at FROM ${samplesSql(probe, "$2", "$3", [])} s WHERE connection_id = ANY($1::int[])
     ), pairs AS (
       SELECT s.connection_id, s.collected_at,
              ${previousSampleTimeSql(probe, "s.connection_id", "s.collected_at")} AS prev
         FROM samples s
     )
     SELECT p.connection_id, p.collected_at, d.* FROM pairs p
     CROSS JOIN LATERAL (
       WITH cur AS (SELECT * FROM ${samplesSql(probe, "p.collected_at", "p.collected_at", compared)} x WHERE connection_id = p.connection_id AND collected_at = p.collected_at),
            old AS (SELECT * FROM ${samplesSql(probe, "p.prev", "p.prev", compared)} x WHERE connection_id = p.connection_id AND collected_at = p.prev)
       SELECT ${[...keyOut, ...valuesOut].join(", ")},
              CASE WHEN NOT ${present("old")} THEN 'added' WHEN NOT ${present("cur")} THEN 'removed' ELSE 'modified' END AS change_type
         FROM cur ${join}
        WHERE ${keys.length ? `NOT ${present("old")} OR NOT ${present("cur")} OR ` : `${present("old")} AND `}${tuple("cur")} IS DISTINCT FROM ${tuple("old")}
     ) d
     WHERE p.prev IS NOT NULL
     ORDER BY p.connection_id, p.collected_at`,
    [connectionIds, from.toISOString(), to.toISOString()],
  );
}
