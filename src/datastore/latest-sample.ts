/** The most recent sample of a probe for one connection: all its rows and its time. */
import type { Queryable } from "../../drivers/types.ts";
import { probeTable } from "../probes/ddl.ts";

export interface LatestSample<R> {
  collected_at: string | null;
  rows: R[];
}

export async function latestSample<R extends object>(db: Queryable, probe: string, connectionId: number, where = "TRUE"): Promise<LatestSample<R>> {
  const table = probeTable(probe);
  const rows = await db.query<R & { collected_at: Date }>(
    `SELECT * FROM ${table} WHERE connection_id = $1 AND ${where}
        AND collected_at = (SELECT max(collected_at) FROM ${table} WHERE connection_id = $1 AND ${where})`,
    [connectionId],
  );
  return { collected_at: rows[0]?.collected_at.toISOString() ?? null, rows };
}
