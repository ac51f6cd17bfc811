/**
 * pg_table_bloat on a real PostgreSQL: a table made bloated on purpose (half its rows deleted, no VACUUM FULL)
 * is estimated within the bound the probe's description states of its real bloat, measured by comparing its
 * size with a fresh copy of its live rows; an unbloated table reads near zero. Then the collector stores the
 * estimate as the monitoring role sees it and the built-in table_bloat_ratio rule fires on it.
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { evaluateAndApply } from "../../src/alerts/alerter.ts";
import { collectOnce } from "../../src/collector/collect.ts";
import { pgTableBloat } from "../../src/probes/pg_table_bloat.ts";
import { testApp } from "../support/app.ts";
import { userWithToken } from "../support/auth.ts";
import { migratedDatastore, type TestDatastore } from "../support/datastore.ts";
import { client } from "../support/http.ts";
import { MONITOR_ROLE, monitorRoleUrl, monitoringConfig, quietLog, registerServer } from "../support/monitored.ts";
import { createTestDatabase } from "../support/postgres.ts";

/** The error bound the probe's description states, in percentage points. */
const BOUND = 15;
let shop: { url: string; name: string; drop(): Promise<void> };
let admin: pg.Client;
let store: TestDatastore;

const estimate = async (table: string) => {
  const rows = (await admin.query(pgTableBloat.collect.sql(17, {})![0])).rows;
  return rows.find((r) => r.schemaname === "public" && r.relname === table);
};

/** Real bloat: the share of the table's pages a fresh copy of its live rows (same fillfactor) does not need. */
async function measuredBloat(table: string, fillfactor = 100): Promise<number> {
  await admin.query(`CREATE TABLE fresh_copy (LIKE ${table}) WITH (fillfactor = ${fillfactor})`);
  await admin.query(`INSERT INTO fresh_copy SELECT * FROM ${table}`);
  const [{ bloated, fresh }] = (await admin.query(`SELECT pg_relation_size('${table}')::float8 AS bloated, pg_relation_size('fresh_copy')::float8 AS fresh`))
    .rows;
  await admin.query("DROP TABLE fresh_copy");
  return 100 * (1 - fresh / bloated);
}

let monitorUrl: string;

beforeAll(async () => {
  monitorUrl = await monitorRoleUrl(inject("pg17Url"));
  shop = await createTestDatabase(inject("pg17Url"));
  admin = new pg.Client({ connectionString: shop.url });
  await admin.connect();
  // About 20 MB of rows of mixed width, with some nulls; autovacuum off so nothing tidies up behind the test.
  for (const [table, fillfactor] of [
    ["orders", 100],
    ["tidy", 100],
    ["roomy", 70],
  ] as const) {
    await admin.query(
      `CREATE TABLE ${table} (id bigint PRIMARY KEY, customer int, status text, note text, amount numeric(12,2), created timestamptz)
        WITH (autovacuum_enabled = false, fillfactor = ${fillfactor})`,
    );
    await admin.query(
      `INSERT INTO ${table} SELECT g, g % 5000, CASE WHEN g % 3 = 0 THEN 'open' ELSE 'shipped' END,
              CASE WHEN g % 4 = 0 THEN NULL ELSE repeat('x', 20 + g % 60) END, (g % 10000) / 3.0, now() - g * interval '1 minute'
         FROM generate_series(1, 150000) g`,
    );
  }
  await admin.query("DELETE FROM orders WHERE id % 2 = 0");
  await admin.query("DELETE FROM roomy WHERE id % 10 < 3");
  await admin.query("VACUUM (ANALYZE) orders, tidy, roomy"); // frees dead rows for reuse, keeps the pages: the bloat stays
  await admin.query(`GRANT SELECT ON orders, tidy, roomy TO ${MONITOR_ROLE}`);
}, 120_000);
afterAll(async () => {
  await admin?.end();
  await store?.close();
  await shop?.drop();
});

describe("pg_table_bloat", () => {
  it("estimates a half-deleted table's bloat within the stated bound of its measured bloat", async () => {
    const real = await measuredBloat("orders");
    expect(real).toBeGreaterThan(40); // the test made it bloated
    const row = await estimate("orders");
    expect(Math.abs(row.bloat_ratio - real), `estimated ${row.bloat_ratio}%, measured ${real.toFixed(1)}%`).toBeLessThanOrEqual(BOUND);
    expect(Number(row.bloat_bytes)).toBeCloseTo((Number(row.table_bytes) * row.bloat_ratio) / 100, -5);
    expect(pgTableBloat.description).toContain(`within about ${BOUND} percentage points`);
  });

  it("reads an unbloated table near zero, and honours the fillfactor", async () => {
    const tidy = await estimate("tidy");
    expect(Math.abs(tidy.bloat_ratio - (await measuredBloat("tidy")))).toBeLessThanOrEqual(BOUND);
    expect(tidy.bloat_ratio).toBeLessThan(BOUND);
    const roomy = await estimate("roomy");
    const real = await measuredBloat("roomy", 70);
    expect(Math.abs(roomy.bloat_ratio - real), `estimated ${roomy.bloat_ratio}%, measured ${real.toFixed(1)}%`).toBeLessThanOrEqual(BOUND);
  });

  it("is collected through the monitoring role and raises the table_bloat_ratio rule for the bloated table only", async () => {
    store = await migratedDatastore("pg");
    const monitor = new URL(monitorUrl);
    monitor.pathname = `/${shop.name}`;
    const conn = await registerServer(store.db, "shop", monitor.toString());
    await store.db.query("UPDATE probe_configs SET is_enabled = (probe_name = 'pg_table_bloat') WHERE scope = 'global'");
    await collectOnce(store.db, monitoringConfig, quietLog);
    const stored = await store.db.query<{ relname: string; bloat_ratio: number }>(
      "SELECT relname, bloat_ratio FROM metrics.pg_table_bloat WHERE connection_id = $1 AND database_name = $2 ORDER BY relname",
      [conn, shop.name],
    );
    expect(stored.map((r) => r.relname)).toEqual(expect.arrayContaining(["orders", "roomy", "tidy"]));
    const root = (await userWithToken(store.db, "root", { superuser: true })).token;
    const series = await client(testApp(store.db).app)(
      "GET",
      `/api/v1/metrics/query?probe_name=pg_table_bloat&connection_id=${conn}&metrics=bloat_ratio&group_by=relname&database_name=${shop.name}&aggregation=last`,
      { token: root },
    );
    expect(series.status, series.text).toBe(200);
    const orders = series.body.find((x: { entity: { relname: string } }) => x.entity.relname === "orders");
    expect(orders.data.some((p: { value: number | null }) => p.value !== null && p.value > 30)).toBe(true);
    const [rule] = await store.db.query<{ id: number }>("UPDATE alert_rules SET default_threshold = 30 WHERE name = 'table_bloat_ratio' RETURNING id");
    await evaluateAndApply(store.db);
    const alerts = await store.db.query<{ object_name: string; probe_name: string; database_name: string }>(
      "SELECT object_name, probe_name, database_name FROM alerts WHERE rule_id = $1",
      [rule.id],
    );
    expect(alerts).toEqual([{ object_name: "public.orders", probe_name: "pg_table_bloat", database_name: shop.name }]);
  });
});
