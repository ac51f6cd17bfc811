/**
 * bench:fleet's alerter at scale: collecting 1,000 servers takes about 20 minutes a round on this machine, so the
 * alerter's 1,000-connection round runs over copies. Each copy is a connection registered like a collected one,
 * with the collected server's schedule and the latest two samples of each of its probes (what the alerter reads), as
 * if it had collected them itself.
 */
import type { Queryable } from "../drivers/types.ts";
import { quoteIdent } from "../src/probes/ddl.ts";
import { rawTable } from "../src/probes/history-ddl.ts";
import { PROBES } from "../src/probes/index.ts";

/** Registers copies of the monitored connections up to `total` in all; returns how many it added. */
export async function copyConnections(db: Queryable, total: number): Promise<number> {
  const sources = (await db.query<{ id: number }>("SELECT id FROM connections WHERE is_monitored ORDER BY id")).map((r) => r.id);
  const count = total - sources.length;
  if (count <= 0 || sources.length === 0) return 0;
  const copies = await db.query<{ id: number; source: number }>(
    `INSERT INTO connections (name, host, port, database_name, username, password_secret, sslmode, is_monitored, is_shared)
     SELECT 'copy-' || g || '-of-' || c.id, c.host, c.port, c.database_name, c.username, c.password_secret, c.sslmode, true, true
       FROM generate_series(0, $2 - 1) g JOIN connections c ON c.id = ($1::int[])[1 + g % cardinality($1::int[])]
     RETURNING id, split_part(name, '-of-', 2)::int AS source`,
    [sources, count],
  );
  const copyIds = copies.map((c) => c.id);
  const sourceIds = copies.map((c) => c.source);
  await db.query(
    `INSERT INTO probe_schedule (connection_id, probe_name, last_run_at, last_status, last_success_at, last_rows)
     SELECT m.copy, s.probe_name, s.last_run_at, s.last_status, s.last_success_at, s.last_rows
       FROM probe_schedule s JOIN unnest($1::int[], $2::int[]) AS m(copy, source) ON s.connection_id = m.source`,
    [copyIds, sourceIds],
  );
  for (const probe of PROBES) {
    const columns = ["collected_at", ...probe.columns.map((c) => quoteIdent(c.name))].join(", ");
    await db.query(
      `INSERT INTO ${rawTable(probe.name)} (connection_id, ${columns})
       SELECT m.copy, ${columns.replace(/(^|, )/g, "$1s.")} FROM ${rawTable(probe.name)} s
         JOIN unnest($1::int[], $2::int[]) AS m(copy, source) ON s.connection_id = m.source
        WHERE (s.connection_id, s.collected_at) IN (
                SELECT connection_id, collected_at FROM (
                  SELECT connection_id, collected_at, row_number() OVER (PARTITION BY connection_id ORDER BY collected_at DESC) AS n
                    FROM (SELECT DISTINCT connection_id, collected_at FROM ${rawTable(probe.name)}) d) x
                 WHERE n <= 2)`,
      [copyIds, sourceIds],
    );
  }
  return count;
}
