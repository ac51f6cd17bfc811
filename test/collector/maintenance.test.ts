/**
 * The collector's upkeep (collector/maintenance.ts): compression of closed hours among its tasks, each task run by
 * one instance a period, and in `pglens serve` on a timer of its own, apart from the collection ticks.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { collectorMaintenance, startMaintenance } from "../../src/collector/maintenance.ts";
import { createLogger } from "../../src/log.ts";
import { writeSamples } from "../../src/samples/sample-writer.ts";
import { addConnection, migratedDatastore, type TestDatastore } from "../support/datastore.ts";

const lines: string[] = [];
const log = createLogger("info", (line) => lines.push(line));

/** The whole hour `back` hours before the current one, of one database every minute: closed, and well within retention. */
const pastHour = (back: number) => {
  const start = (Math.floor(Date.now() / 3_600_000) - back) * 3_600_000;
  return Array.from({ length: 60 }, (_, i) => ({ collected_at: new Date(start + i * 60_000).toISOString(), database_name: "a", xact_commit: i }));
};

const rawRows = async (store: TestDatastore) => (await store.db.query<{ n: number }>("SELECT count(*)::int AS n FROM metrics.pg_stat_database__raw"))[0].n;

describe("collector maintenance", () => {
  let store: TestDatastore;
  let id: number;
  beforeAll(async () => {
    store = await migratedDatastore("pglite");
    id = await addConnection(store.db, "upkeep");
  });
  afterAll(() => store.close());

  it("compresses closed hours once a period, whichever instance asks, and says so in the log", async () => {
    await writeSamples(store.db, { connectionId: id, probe: "pg_stat_database", rows: pastHour(5) });
    const first = await collectorMaintenance(store.db, log);
    expect(first.compressed).toMatchObject({ chunks: 1, rows: 60, unfinished: false });
    expect(await rawRows(store)).toBe(0);
    expect(lines.some((l) => JSON.parse(l).msg === "compressed closed hours of samples")).toBe(true);
    // Within the minute, another round (this instance's or another's) leaves compression alone.
    await writeSamples(store.db, { connectionId: id, probe: "pg_stat_database", rows: pastHour(6) });
    expect((await collectorMaintenance(store.db, log)).compressed).toBeUndefined();
    expect(await rawRows(store)).toBe(60);
  });

  it("runs on its own timer until stopped", async () => {
    await store.db.query("UPDATE maintenance_runs SET last_run_at = NULL WHERE task = 'compression'"); // the period passed
    const timer = startMaintenance(store.db, log, 100);
    const deadline = Date.now() + 20_000;
    while ((await rawRows(store)) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    await timer.stop();
    expect(await rawRows(store)).toBe(0);
  });
});
