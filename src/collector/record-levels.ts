/**
 * Ingest-time time rollups of level columns: after a batch is written, every 5-minute cell it touched is
 * computed again from its raw rows, then every hour it touched from its 5-minute cells. Recomputing whole
 * cells (rather than adding the new rows) keeps them exact whatever order samples arrive in.
 */
import type { Queryable } from "../../drivers/types.ts";
import { factColumns, mergedFacts, samplePartials } from "../datastore/level-rollups.ts";
import { excludedRowsSql } from "../datastore/samples-repository.ts";
import { levelColumns, levelsTableName, probeTable } from "../probes/ddl.ts";
import type { ProbeDefinition } from "../probes/types.ts";
import { ensurePartition, weekOf } from "./partitions.ts";

const FIVE_MINUTES = 300_000;
const HOUR = 3_600_000;

/** `minT`..`maxT`: the span of the batch just written (epoch ms); `weeks`: the starts of the weeks it wrote in. */
export async function recordLevels(tx: Queryable, probe: ProbeDefinition, connectionId: number, minT: number, maxT: number, weeks: readonly Date[]): Promise<void> {
  const columns = levelColumns(probe).map((c) => c.name);
  if (columns.length === 0) return;
  const table = levelsTableName(probe.name);
  const iso = (t: number) => new Date(t).toISOString();
  const hourFrom = Math.floor(minT / HOUR) * HOUR;
  const hourTo = Math.floor(maxT / HOUR) * HOUR + HOUR;
  // Weeks start on an hour, so a sample's cells lie in its own week.
  for (const week of weeks) await ensurePartition(tx, table, weekOf(table, week));
  const facts = factColumns(columns);
  const upsert = `(connection_id, level_seconds, cell_start, samples, ${facts.join(", ")})`;
  const onConflict = `ON CONFLICT (connection_id, level_seconds, cell_start) DO UPDATE SET samples = excluded.samples, ${facts.map((f) => `${f} = excluded.${f}`).join(", ")}`;
  await tx.query(
    `INSERT INTO ${probeTable(table)} ${upsert}
     SELECT $1, 300, to_timestamp(floor(extract(epoch FROM collected_at) / 300) * 300) AS cell, count(*)::int, ${mergedFacts(columns).join(", ")}
       FROM (SELECT collected_at, ${samplePartials(probe, columns).join(", ")}
               FROM ${probeTable(probe.name)}
              WHERE ${["connection_id = $1", "collected_at >= $2::timestamptz", "collected_at < $3::timestamptz", ...excludedRowsSql(probe)].join(" AND ")}
              GROUP BY collected_at) samples
      GROUP BY cell
     ${onConflict}`,
    [connectionId, iso(Math.floor(minT / FIVE_MINUTES) * FIVE_MINUTES), iso(Math.floor(maxT / FIVE_MINUTES) * FIVE_MINUTES + FIVE_MINUTES)],
  );
  await tx.query(
    `INSERT INTO ${probeTable(table)} ${upsert}
     SELECT $1, 3600, to_timestamp(floor(extract(epoch FROM cell_start) / 3600) * 3600) AS hour, sum(samples)::int, ${mergedFacts(columns).join(", ")}
       FROM ${probeTable(table)}
      WHERE connection_id = $1 AND level_seconds = 300 AND cell_start >= $2::timestamptz AND cell_start < $3::timestamptz
      GROUP BY hour
     ${onConflict}`,
    [connectionId, iso(hourFrom), iso(hourTo)],
  );
}
