/**
 * A tick claims a bounded batch of servers (every due probe of each), those that waited longest first, so one
 * lease covers its work and instances share a large estate; a whole round (`collectDue`: `pglens collect
 * --once`, the Cron Trigger) ticks until every due server is collected.
 */
import { afterAll, beforeAll, expect, inject, it } from "vitest";
import { collectDue, collectOnce } from "../../src/collector/collect.ts";
import { migratedDatastore, type TestDatastore } from "../support/datastore.ts";
import { collectEvery, monitorRoleUrl, monitoringConfig as config, quietLog as log, registerServer } from "../support/monitored.ts";

let store: TestDatastore;
let ids: number[];

beforeAll(async () => {
  store = await migratedDatastore("pg");
  const monitor = await monitorRoleUrl(inject("pg17Url"));
  ids = [];
  for (let i = 0; i < 5; i++) ids.push(await registerServer(store.db, `server-${i}`, monitor));
  // Only two probes, an hour apart: nothing becomes due again while the test runs.
  await collectEvery(store.db, 3600);
  await store.db.query("UPDATE probe_configs SET is_enabled = probe_name IN ('pg_stat_database', 'pg_settings') WHERE scope = 'global'");
});
afterAll(() => store.close());

const serversOf = (tick: { outcomes: Array<{ connectionId: number }> }) => [...new Set(tick.outcomes.map((o) => o.connectionId))].sort((a, b) => a - b);

it("claims at most maxConnections servers a tick, with all their due probes; two instances take different servers", async () => {
  const [a, b] = await Promise.all([
    collectOnce(store.db, config, log, { maxConnections: 2, maintenance: false }),
    collectOnce(store.db, config, log, { maxConnections: 2, maintenance: false }),
  ]);
  expect(serversOf(a)).toHaveLength(2);
  expect(serversOf(b)).toHaveLength(2);
  expect(serversOf(a).filter((id) => serversOf(b).includes(id))).toEqual([]);
  for (const tick of [a, b]) expect(tick.outcomes.map((o) => o.probe).sort()).toEqual(["pg_settings", "pg_settings", "pg_stat_database", "pg_stat_database"]);
  // The one server left waited longest: the next tick takes it.
  const rest = await collectOnce(store.db, config, log, { maxConnections: 2, maintenance: false });
  expect(serversOf(rest)).toEqual(ids.filter((id) => !serversOf(a).includes(id) && !serversOf(b).includes(id)));
  expect((await collectOnce(store.db, config, log, { maxConnections: 2, maintenance: false })).claimed).toBe(0);
});

it("collects every due server in one round of bounded ticks, each once", async () => {
  await store.db.query("UPDATE probe_schedule SET last_run_at = NULL, last_slot_at = NULL");
  const round = await collectDue(store.db, config, log, { maxConnections: 2, maintenance: false });
  expect(serversOf(round)).toEqual(ids);
  expect(round.outcomes).toHaveLength(ids.length * 2);
  const [{ samples }] = await store.db.query<{ samples: number }>("SELECT count(DISTINCT connection_id)::int AS samples FROM metrics.pg_settings");
  expect(samples).toBe(ids.length);
});
