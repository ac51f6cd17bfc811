/**
 * Recovery is seen at the server's shortest probe interval, not after the collection back-off (#47 item 5): a real
 * PostgreSQL server is stopped long enough for the back-off to reach minutes, started again, and its connection
 * alert must clear within two probe intervals, with two collectors running at once.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { openPg } from "../../drivers/pg.ts";
import type { Driver } from "../../drivers/types.ts";
import { alerterOnce } from "../../src/alerts/alerter.ts";
import { collectOnce } from "../../src/collector/collect.ts";
import { migratedDatastore, type TestDatastore } from "../support/datastore.ts";
import { collectEvery, monitoringConfig, pause, quietLog as log, registerServer } from "../support/monitored.ts";
import { startEmbeddedPostgres, type TestServer } from "../support/postgres.ts";

const INTERVAL = 5;
const config = { ...monitoringConfig, alerter: { enabled: true, interval_seconds: 1 } };
let server: TestServer;
let store: TestDatastore;
let other: Driver;
let conn: number;

beforeAll(async () => {
  server = await startEmbeddedPostgres({ persistent: true });
  store = await migratedDatastore("pg");
  other = openPg(store.url!); // a second instance on the same datastore
  conn = await registerServer(store.db, "comes-back", server.url);
  await collectEvery(store.db, INTERVAL);
}, 60_000);
afterAll(async () => {
  await other?.close();
  await store?.close();
  await server?.stop();
});

const openConnectionAlerts = async () =>
  (await store.db.query<{ n: number }>("SELECT count(*)::int AS n FROM alerts WHERE alert_type = 'connection' AND cleared_at IS NULL"))[0].n;

it("clears the connection alert within two probe intervals of the server coming back, whatever the back-off", { timeout: 120_000 }, async () => {
  expect((await collectOnce(store.db, config, log)).unreachable).toEqual([]);
  await server.stop();
  await pause(INTERVAL * 1000);
  expect((await collectOnce(store.db, config, log)).unreachable.map((u) => u.connectionId)).toEqual([conn]);
  await alerterOnce(store.db, config, log);
  expect(await openConnectionAlerts()).toBe(1);
  // A long outage: the back-off has grown to its 10-minute ceiling.
  await store.db.query("UPDATE connection_health SET consecutive_failures = 8, retry_at = now() + interval '600 seconds' WHERE connection_id = $1", [conn]);

  await server.start();
  const back = Date.now();
  while ((await openConnectionAlerts()) > 0 && Date.now() - back < 60_000) {
    // Two collectors at once: the check is claimed, so one of them makes it.
    await Promise.all([collectOnce(store.db, config, log), collectOnce(other, config, log)]);
    await pause(1100);
    await alerterOnce(store.db, config, log);
  }
  expect(await openConnectionAlerts()).toBe(0);
  expect((Date.now() - back) / 1000).toBeLessThan(2 * INTERVAL + 2);
  const [row] = await store.db.query<{ connection_error: string | null }>("SELECT connection_error FROM connections WHERE id = $1", [conn]);
  expect(row.connection_error).toBeNull();
});
