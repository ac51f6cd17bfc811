import { openPg } from "../drivers/pg.ts";
import { migrate } from "../src/datastore/migrate.ts";
import { runGroupedMetricsQuery } from "../src/queries/grouped-query.ts";
import { compressClosedChunks } from "../src/samples/compress-history.ts";
import { writeSamples } from "../src/samples/sample-writer.ts";
import { startEmbeddedPostgres } from "../test/support/postgres.ts";
const server = await startEmbeddedPostgres();
const db = openPg(server.url);
await migrate(db);
const [{ id }] = await db.query<{ id: number }>("INSERT INTO connections (name, host, username) VALUES ('bench', 'localhost', 'bench') RETURNING id");
const DAYS = 4, samples = DAYS * 1440, end = Math.floor(Date.now() / 60_000) * 60_000, start = end - samples * 60_000;
for (let s = 0; s < samples; s += 500) {
  const rows = [];
  for (let j = s; j < Math.min(samples, s + 500); j++) for (let d = 0; d < 20; d++) rows.push({ collected_at: new Date(start + j * 60_000).toISOString(), database_name: `db${d}`, numbackends: (j + d) % 17, xact_commit: j * (d + 1) * 7 });
  await writeSamples(db, { connectionId: id, probe: "pg_stat_database", rows });
}
await compressClosedChunks(db, Date.now(), 600_000);
await db.query("VACUUM ANALYZE");
const timed = { query: async (sql: string, params?: unknown[], o?: unknown) => { const t = performance.now(); const r = await db.query(sql, params as never, o as never); const ms = performance.now() - t; if (ms > 5) console.log(ms.toFixed(0), "ms:", sql.replace(/\s+/g, " ").slice(0, 300)); return r; } } as never;
for (let i = 0; i < 2; i++) {
  const t = performance.now();
  await runGroupedMetricsQuery(timed, { probeName: "pg_stat_database", connectionIds: [id], window: { start: end - 24 * 3_600_000, end }, metrics: "xact_commit_per_sec", groupBy: "database_name" });
  console.log("total", (performance.now() - t).toFixed(0));
}
await db.close(); await server.stop();
