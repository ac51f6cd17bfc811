import { afterAll, beforeAll, expect, inject, it } from "vitest";
import { openPg } from "../../drivers/pg.ts";
import type { Driver } from "../../drivers/types.ts";
import { migrate } from "../../src/datastore/migrate.ts";
import { TEST_SECRET, collectEvery, registerServer } from "../support/monitored.ts";
import { createTestDatabase } from "../support/postgres.ts";
import { startWorker, type TestWorker } from "../support/worker.ts";

let database: { url: string; drop(): Promise<void> };
let db: Driver;
let worker: TestWorker;
let conn: number;

beforeAll(async () => {
  database = await createTestDatabase(inject("pg17Url"));
  db = openPg(database.url);
  await migrate(db);
  conn = await registerServer(db, "from-workers", inject("pg17Url"));
  await collectEvery(db, 1);
  worker = await startWorker({ PGLENS_DATASTORE_URL: database.url, PGLENS_SECRET: TEST_SECRET });
});
afterAll(async () => {
  await worker.dispose();
  await db.close();
  await database.drop();
});

// Two scheduled handlers, each collecting every probe through workerd: 4 s alone, over 30 s on a loaded machine.
it("collects due probes from a real server in the scheduled handler", async () => {
  const samples = async () =>
    (await db.query<{ n: number }>("SELECT count(DISTINCT collected_at)::int AS n FROM metrics.pg_stat_database WHERE connection_id = $1", [conn]))[0].n;
  await worker.scheduled();
  for (let i = 0; i < 50 && (await samples()) < 1; i++) await new Promise((r) => setTimeout(r, 200));
  expect(await samples()).toBe(1);
  await new Promise((r) => setTimeout(r, 1100));
  await worker.scheduled();
  for (let i = 0; i < 50 && (await samples()) < 2; i++) await new Promise((r) => setTimeout(r, 200));
  expect(await samples()).toBe(2);
  const statuses = await db.query<{ last_status: string; n: number }>(
    "SELECT last_status, count(*)::int AS n FROM probe_schedule WHERE connection_id = $1 GROUP BY 1 ORDER BY 1",
    [conn],
  );
  expect(statuses.find((s) => s.last_status === "error")).toBeUndefined();
  expect(worker.logs.some((l) => l.includes('"msg":"collection tick"'))).toBe(true);
}, 120_000);

it("runs the alerter after the collector in the same scheduled handler", async () => {
  // An unreachable server: the collector records its error, then the alerter turns it into an alert.
  const [dead] = await db.query<{ id: number }>(
    "INSERT INTO connections (name, host, port, username, is_monitored) VALUES ('unreachable-from-workers', '127.0.0.1', 1, 'x', true) RETURNING id",
  );
  const alert = async () =>
    (await db.query<{ title: string }>("SELECT title FROM alerts WHERE connection_id = $1 AND alert_type = 'connection' AND cleared_at IS NULL", [dead.id]))[0];
  await db.query("UPDATE maintenance_runs SET last_run_at = NULL, claimed_until = NULL WHERE task = 'alerter'");
  await worker.scheduled();
  for (let i = 0; i < 50 && !(await alert()); i++) await new Promise((r) => setTimeout(r, 200));
  expect(await alert()).toEqual({ title: "Connection error: unreachable-from-workers" });
  expect(worker.logs.some((l) => l.includes('"msg":"alerter round"'))).toBe(true);
});
