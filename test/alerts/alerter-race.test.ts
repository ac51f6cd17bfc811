/**
 * Several alerters on one datastore never double-fire: `pglens alerter --once` processes racing over rounds
 * (the round claim), and rounds evaluated at the same moment without any claim (the datastore's unique index
 * on open alerts is then all that stands between them and duplicates).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPg } from "../../drivers/pg.ts";
import type { Driver } from "../../drivers/types.ts";
import { evaluateAndApply } from "../../src/alerts/alerter.ts";
import { runCli } from "../support/cli.ts";
import { migratedDatastore, type TestDatastore } from "../support/datastore.ts";
import { TEST_SECRET } from "../support/monitored.ts";

let store: TestDatastore;
const CONNECTIONS = 6;

beforeAll(async () => {
  store = await migratedDatastore("pg");
  for (let i = 0; i < CONNECTIONS; i++) {
    await store.db.query("INSERT INTO connections (name, host, port, username, is_monitored, connection_error) VALUES ($1, '127.0.0.1', 1, 'x', true, $2)", [
      `down${i}`,
      `refused ${i}`,
    ]);
  }
});
afterAll(() => store.close());

/** Alerts per key; every value must be 1. */
async function openPerKey() {
  return store.db.query<{ connection_id: number; n: number }>(
    "SELECT connection_id, count(*)::int AS n FROM alerts WHERE cleared_at IS NULL GROUP BY alert_type, rule_id, metric_name, connection_id, database_name, object_name ORDER BY connection_id",
  );
}

describe("racing alerters", () => {
  it("4 `pglens alerter --once` processes, 3 rounds: one alert per key", async () => {
    const env = { PGLENS_DATASTORE_URL: store.url!, PGLENS_SECRET: TEST_SECRET, PGLENS_ALERTER_INTERVAL: "1", PGLENS_LOG_LEVEL: "error" };
    const reports: string[] = [];
    for (let round = 0; round < 3; round++) {
      const results = await Promise.all(Array.from({ length: 4 }, () => runCli(["alerter", "--once"], env)));
      for (const r of results) {
        expect(r.code, r.stderr).toBe(0);
        reports.push(r.stderr.trim());
      }
      await new Promise((r) => setTimeout(r, 1200));
    }
    expect(reports.filter((r) => r.startsWith("alerter round over")).length).toBeGreaterThanOrEqual(3);
    expect(reports.some((r) => r.startsWith("another alerter ran this round"))).toBe(true);
    const perKey = await openPerKey();
    expect(perKey).toHaveLength(CONNECTIONS);
    expect(perKey.every((k) => k.n === 1)).toBe(true);
    expect((await store.db.query<{ n: number }>("SELECT count(*)::int AS n FROM alerts"))[0].n).toBe(CONNECTIONS);
  }, 120_000);

  it("4 rounds evaluated at once, without claims, over rounds that raise, clear and raise again", async () => {
    await store.db.query("UPDATE alerter_settings SET cooldown_seconds = 0");
    const drivers: Driver[] = Array.from({ length: 4 }, () => openPg(store.url!));
    try {
      for (let round = 0; round < 6; round++) {
        // Odd rounds: the errors are gone (everything clears); even rounds: they are back (everything fires).
        await store.db.query(round % 2 ? "UPDATE connections SET connection_error = NULL" : "UPDATE connections SET connection_error = 'refused ' || id");
        await Promise.all(drivers.map((d) => evaluateAndApply(d)));
        const perKey = await openPerKey();
        expect(perKey.every((k) => k.n === 1)).toBe(true);
        expect(perKey).toHaveLength(round % 2 ? 0 : CONNECTIONS);
      }
      // Each firing round raised each key once: 6 from the first test, then 3 firing rounds here.
      expect((await store.db.query<{ n: number }>("SELECT count(*)::int AS n FROM alerts"))[0].n).toBe(CONNECTIONS * 3);
    } finally {
      await Promise.all(drivers.map((d) => d.close()));
    }
  }, 60_000);
});
