/**
 * The long metrics reads are planned once per connection (the driver's `reusePlan`): a filter's read by difference,
 * a summed rate's change cells, a gauge's recorded facts. Over a node-postgres datastore they are kept prepared with
 * a generic plan, and answer exactly as the same reads planned on every call.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPg } from "../../drivers/pg.ts";
import type { Driver } from "../../drivers/types.ts";
import { writeSamples } from "../../src/samples/sample-writer.ts";
import { testApp } from "../support/app.ts";
import { userWithToken } from "../support/auth.ts";
import { addConnection, migratedDatastore, type TestDatastore } from "../support/datastore.ts";

const MINUTE = 60_000;
const SAMPLES = 2 * 24 * 60;

const SLOT = Math.floor(Date.now() / MINUTE) * MINUTE;
/** A window ending a few minutes before the last sample, so that both drivers are asked the same question. */
const last = (ms: number) =>
  `time_range=custom&time_start=${new Date(SLOT - 5 * MINUTE - ms).toISOString()}&time_end=${new Date(SLOT - 5 * MINUTE).toISOString()}`;
const REQUESTS = [
  `metrics=xact_commit_per_sec&database_name=app&${last(24 * 60 * MINUTE)}`, // read by difference
  `metrics=xact_commit_per_sec&buckets=10&${last(24 * 60 * MINUTE)}`, // the change cells
  `metrics=numbackends&${last(60 * MINUTE)}`, // the recorded gauge facts
  `metrics=numbackends&buckets=10&${last(24 * 60 * MINUTE)}`, // the level cells
  `metrics=numbackends&database_name=app&buckets=10&${last(24 * 60 * MINUTE)}`, // one entity's cells
];

describe("metrics reads planned once per connection", () => {
  let store: TestDatastore;
  let reusing: Driver;
  let planning: Driver;
  let token: string;
  let id: number;
  /** The statements kept prepared by the first case. */
  let kept: Array<{ statement: string; generic_plans: number; custom_plans: number }> = [];

  beforeAll(async () => {
    store = await migratedDatastore("pg");
    ({ token } = await userWithToken(store.db, "reader", { superuser: true }));
    id = await addConnection(store.db, "history");
    await store.db.query(
      "INSERT INTO probe_configs (probe_name, scope, scope_id, collection_interval_seconds, retention_days) VALUES ('pg_stat_database', 'server', $1, 60, 31)",
      [id],
    );
    const rows = [];
    for (let i = 0; i < SAMPLES; i++) {
      const collected_at = new Date(SLOT - (SAMPLES - 1 - i) * MINUTE).toISOString();
      for (const d of ["app", "shop"])
        rows.push({ collected_at, database_name: d, datname: d, xact_commit: 100 * i + (d === "app" ? 0 : (i * i) % 7), numbackends: i % 7 });
    }
    await writeSamples(store.db, { connectionId: id, probe: "pg_stat_database", rows });
    // One connection for the reads that reuse their plans, so that its prepared statements can be looked at.
    reusing = openPg(store.url!, { plans: { connections: 1, perConnection: 16 } });
    planning = openPg(store.url!, { plans: false });
  }, 120_000);
  afterAll(async () => {
    await reusing.close();
    await planning.close();
    await store.close();
  });

  const get = async (db: Driver, query: string) => {
    const res = await testApp(db).app.request(`/api/v1/metrics/query?probe_name=pg_stat_database&connection_id=${id}&${query}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const body = await res.json();
    expect(res.status, JSON.stringify(body)).toBe(200);
    return body;
  };

  it("keeps each read prepared with a generic plan, and answers as a read planned every time", async () => {
    for (const query of REQUESTS) {
      const expected = await get(planning, query);
      expect((expected as Array<{ data: Array<{ value: number | null }> }>)[0].data.some((p) => p.value !== null)).toBe(true);
      expect(await get(reusing, query)).toEqual(expected);
      expect(await get(reusing, query)).toEqual(expected);
    }
    // Each read once, planned generically for both of its runs; nothing planned per call.
    kept = await reusing.query<{ statement: string; generic_plans: number; custom_plans: number }>(
      "SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements WHERE statement NOT LIKE $1 ORDER BY prepare_time",
      ["%pg_prepared_statements%"],
      { reusePlan: true },
    );
    expect(kept.map((k) => [k.generic_plans, k.custom_plans])).toEqual([
      [2, 0],
      [2, 0],
      [2, 0],
      [2, 0],
      [2, 0],
    ]);
    expect(kept[0].statement).toMatch(/^WITH d AS MATERIALIZED/); // the read by difference
    expect(kept[1].statement).toContain('"xact_commit:ratio_sum"'); // the change cells
    expect(kept[2].statement).toContain("numbackends"); // the recorded gauge facts
    expect(kept[3].statement).toContain("m.samples"); // the level cells
    expect(kept[4].statement).toContain("m.entity"); // one entity's cells
  });

  it("reads rollup cells by an index range scan per planned run under a generic plan, never by joining every cell with every planned one", async () => {
    // A generic plan guesses ten planned cells and a handful of stored ones: a join of the two had become a nested
    // loop comparing each stored cell with each planned one (lab: a month's summed rate 17 ms -> 1.6 s).
    const cellReads = [kept[1], kept[3], kept[4]]; // the change cells, the level cells, one entity's cells
    for (const { statement } of cellReads) {
      const lines = await genericPlan(statement);
      const plan = lines.join("\n");
      const cellScans = lines.filter((line) => /Index Cond: .*cell_start < \(?to_timestamp\(\(\(u\.cell_end\)/.test(line));
      expect(cellScans.length, plan).toBeGreaterThan(0);
      expect(
        lines.filter((line) => /Join Filter: .*cell_start/.test(line)),
        plan,
      ).toEqual([]);
    }
  });

  it("reads the rows at the times a read by difference needs by an index lookup per time under a generic plan", async () => {
    // With the times as `= ANY(array)`, a generic plan had filtered a week's partition row by row against each of
    // them (lab, 11 connections: a week of one database 4 -> 9 ms).
    const lines = await genericPlan(kept[0].statement);
    expect(
      lines.filter((line) => /Index Cond: .*collected_at = t(_\d+)?\.x\)/.test(line)),
      lines.join("\n"),
    ).not.toEqual([]);
    expect(lines.filter((line) => /Filter: .*= ANY/.test(line))).toEqual([]);
  });

  const genericPlan = async (statement: string) =>
    (await planning.query<{ "QUERY PLAN": string }>(`EXPLAIN (GENERIC_PLAN) ${statement}`)).map((row) => row["QUERY PLAN"]);
});
