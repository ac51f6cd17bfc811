/**
 * bench:storage's second part: what pglens keeps of pg_stat_statements, the probe that grows with the estate
 * (5,000 statements per server at 5-minute samples is most of a server's rows). BENCH_STATEMENTS statements
 * (default 1,000) of one database every 5 minutes for BENCH_STATEMENT_HOURS hours (default 24), counters rising
 * by random amounts, loaded an hour at a time and compressed and vacuumed after each, as a running pglens keeps
 * them. Prints each table's bytes and bytes per stored value (the numeric values of a row).
 */
import type { Driver } from "../drivers/types.ts";
import { compressedTableName, writtenTables } from "../src/probes/ddl.ts";
import { compressClosedChunks } from "../src/samples/compress-history.ts";
import { writeSamples } from "../src/samples/sample-writer.ts";
import { seededRandom } from "../test/support/seeded-random.ts";

const STATEMENTS = Number(process.env.BENCH_STATEMENTS ?? 1000);
const HOURS = Number(process.env.BENCH_STATEMENT_HOURS ?? 24);
const HOUR = 3_600_000;

export async function statementStorage(db: Driver, connectionId: number, bytesOf: (table: string) => Promise<number>): Promise<void> {
  const random = seededRandom(7);
  const end = Math.floor(Date.now() / HOUR) * HOUR;
  const start = end - HOURS * HOUR;
  const statements = Array.from({ length: STATEMENTS }, (_, q) => ({
    q,
    rate: Math.floor(random() * 50),
    calls: Math.floor(random() * 1e6),
    time: random() * 1e7,
    rows: Math.floor(random() * 1e7),
    hit: Math.floor(random() * 1e8),
    read: Math.floor(random() * 1e6),
    wal: Math.floor(random() * 1e6),
  }));
  let values = 0;
  for (let h = 0; h < HOURS; h++) {
    for (let m = 0; m < 12; m++) {
      const collected_at = new Date(start + h * HOUR + m * 300_000 + Math.floor(random() * 400)).toISOString();
      const rows = statements.map((s) => {
        const calls = Math.floor(random() * s.rate * 2);
        s.calls += calls;
        s.time += calls * random() * 3;
        s.rows += calls * 5;
        s.hit += calls * Math.floor(random() * 40);
        s.read += Math.floor(random() * calls);
        s.wal += calls;
        const numbers = {
          calls: s.calls,
          total_exec_time: s.time,
          min_exec_time: 0.01,
          max_exec_time: 50 + s.q,
          mean_exec_time: s.time / Math.max(1, s.calls),
          stddev_exec_time: 1.5,
          rows: s.rows,
          shared_blks_hit: s.hit,
          shared_blks_read: s.read,
          wal_records: s.wal,
          wal_bytes: s.wal * 100,
          ...Object.fromEntries(
            ["shared_blks_dirtied", "shared_blks_written", "local_blks_hit", "local_blks_read", "local_blks_dirtied", "local_blks_written"]
              .concat([
                "temp_blks_read",
                "temp_blks_written",
                "shared_blk_read_time",
                "shared_blk_write_time",
                "local_blk_read_time",
                "local_blk_write_time",
                "wal_fpi",
              ])
              .map((c) => [c, 0]),
          ),
        };
        values += Object.keys(numbers).length;
        return {
          collected_at,
          database_name: "app",
          queryid: String(1e12 + s.q * 7919),
          userid: 10,
          dbid: 5,
          toplevel: true,
          query: `SELECT * FROM t${s.q % 50} WHERE id = $1 AND k${s.q} = $2`,
          ...numbers,
        };
      });
      await writeSamples(db, { connectionId, probe: "pg_stat_statements", rows: rows as never });
    }
    while ((await compressClosedChunks(db, start + (h + 1) * HOUR, 600_000)).unfinished);
    await db.query(
      `VACUUM ${writtenTables("pg_stat_statements")
        .map((t) => `metrics."${t}"`)
        .join(", ")}`,
    );
    if ((h + 1) % 6 === 0) process.stderr.write(`pg_stat_statements: loaded and compressed hour ${h + 1} of ${HOURS}\n`);
  }
  await db.query("VACUUM ANALYZE");
  console.log(
    `\n## Storage: pg_stat_statements, ${STATEMENTS.toLocaleString("en-US")} statements, 300 s, ${HOURS} hours, as it runs (${values.toLocaleString("en-US")} values)\n`,
  );
  console.log("| table | bytes | bytes per stored value |");
  console.log("|---|---:|---:|");
  let total = 0;
  for (const table of [...writtenTables("pg_stat_statements"), compressedTableName("pg_stat_statements")]) {
    const bytes = await bytesOf(table);
    total += bytes;
    console.log(`| ${table} | ${(bytes / 1024).toFixed(0)} KiB | ${(bytes / values).toFixed(1)} |`);
  }
  console.log(`| total | ${(total / 1024).toFixed(0)} KiB | ${(total / values).toFixed(1)} |`);
  console.log(`\nper server and day at ${STATEMENTS.toLocaleString("en-US")} statements: ${(((total / HOURS) * 24) / 1024 / 1024).toFixed(0)} MiB`);
}
