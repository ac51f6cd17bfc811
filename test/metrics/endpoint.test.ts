import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeSamples } from "../../src/samples/sample-writer.ts";
import { addConnection, DATASTORE_KINDS, migratedDatastore, type TestDatastore } from "../support/datastore.ts";
import { testApp } from "../support/app.ts";
import { bearer, userWithToken } from "../support/auth.ts";

// Samples every 60 s from 2026-01-01T00:00:30Z for 10 minutes; the window is the first 10 minutes of 2026.
const T0 = Date.parse("2026-01-01T00:00:00Z");
const iso = (seconds: number) => new Date(T0 + seconds * 1000).toISOString();
const WINDOW = `time_range=custom&time_start=${iso(0)}&time_end=${iso(600)}`;

describe.each(DATASTORE_KINDS)("GET /api/v1/metrics/query on %s", (kind) => {
  let store: TestDatastore;
  let app: ReturnType<typeof testApp>["app"];
  let conn1: number;
  let conn2: number;
  let empty: number;
  let auth: Record<string, string>;
  const get = async (query: string) => {
    const res = await app.request(`/api/v1/metrics/query?${query}`, { headers: auth });
    return { status: res.status, body: await res.json() };
  };

  beforeAll(async () => {
    store = await migratedDatastore(kind);
    conn1 = await addConnection(store.db, "primary");
    conn2 = await addConnection(store.db, "replica");
    empty = await addConnection(store.db, "empty");
    await store.db.query("UPDATE probe_configs SET collection_interval_seconds = 60 WHERE probe_name = 'pg_stat_database'");
    for (const [id, rate] of [
      [conn1, 1],
      [conn2, 2],
    ]) {
      const rows = [];
      for (let j = 0; j < 10; j++) {
        for (const [d, share] of [
          ["app", 0.5],
          ["postgres", 0.25],
        ] as const)
          rows.push({
            collected_at: iso(30 + 60 * j),
            database_name: d,
            datname: d,
            numbackends: 3,
            xact_commit: 60 * rate * j,
            blk_read_time: 60_000 * share * j,
            stats_reset: null,
          });
      }
      await writeSamples(store.db, { connectionId: id, probe: "pg_stat_database", rows });
    }
    const table = (relname: string, live: number, dead: number) => ({
      collected_at: iso(30),
      database_name: "app",
      schemaname: "public",
      relname,
      n_live_tup: live,
      n_dead_tup: dead,
    });
    await writeSamples(store.db, { connectionId: conn1, probe: "pg_stat_all_tables", rows: [table("orders", 90, 10), table("users", 100, 0)] });
    app = testApp(store.db).app;
    auth = bearer((await userWithToken(store.db, "admin", { superuser: true })).token);
  });
  afterAll(() => store.close());

  it("answers derived and raw series per connection, metrics first then connections", async () => {
    const { status, body } = await get(
      `probe_name=pg_stat_database&connection_id=${conn1},${conn2}&metrics=xact_commit_per_sec,blk_read_time_pct,numbackends&${WINDOW}`,
    );
    expect(status).toBe(200);
    expect(body.map((s: { name: string; connection_id: number }) => [s.name, s.connection_id])).toEqual([
      ["xact_commit_per_sec", conn1],
      ["xact_commit_per_sec", conn2],
      ["blk_read_time_pct", conn1],
      ["blk_read_time_pct", conn2],
      ["numbackends", conn1],
      ["numbackends", conn2],
    ]);
    expect(body[0]).toMatchObject({ metric: "xact_commit", unit: "/s" });
    expect(body[0].data).toHaveLength(11);
    expect(body[0].data[0]).toEqual({ time: "2026-01-01T00:00:00.000Z", value: null });
    expect(body[0].data.slice(1, 10).map((p: { value: number }) => p.value)).toEqual(new Array(9).fill(2)); // two databases at 1/s each
    expect(body[1].data[5].value).toBe(4);
    expect(body[2].data[3].value).toBeCloseTo(75); // 50 % + 25 %
    expect(body[4].data[10]).toEqual({ time: "2026-01-01T00:10:00.000Z", value: 3 }); // raw repeats to the window end
  });

  it("narrows to one database with database_name", async () => {
    const { body } = await get(
      `probe_name=pg_stat_database&connection_id=${conn1}&connection_id=${conn2}&metrics=blk_read_time_pct&database_name=postgres&${WINDOW}`,
    );
    expect(body).toHaveLength(2);
    expect(body[0].data[4].value).toBeCloseTo(25);
  });

  it("gives a connection without samples a full series of nulls", async () => {
    const { body } = await get(`probe_name=pg_stat_database&connection_id=${empty}&metrics=xact_commit_per_sec,numbackends&${WINDOW}`);
    expect(body.map((s: { data: Array<{ value: unknown }> }) => s.data.map((p) => p.value))).toEqual([new Array(11).fill(null), new Array(11).fill(null)]);
  });

  it("answers one series per entity with group_by, in key order, and the groups with the largest totals with top", async () => {
    const { status, body } = await get(
      `probe_name=pg_stat_database&connection_id=${conn1},${conn2}&metrics=xact_commit_per_sec,blk_read_time_pct&group_by=database_name&${WINDOW}`,
    );
    expect(status).toBe(200);
    expect(body.map((s: { name: string; connection_id: number; entity: object }) => [s.name, s.connection_id, s.entity])).toEqual([
      ["xact_commit_per_sec", conn1, { database_name: "app" }],
      ["xact_commit_per_sec", conn1, { database_name: "postgres" }],
      ["xact_commit_per_sec", conn2, { database_name: "app" }],
      ["xact_commit_per_sec", conn2, { database_name: "postgres" }],
      ["blk_read_time_pct", conn1, { database_name: "app" }],
      ["blk_read_time_pct", conn1, { database_name: "postgres" }],
      ["blk_read_time_pct", conn2, { database_name: "app" }],
      ["blk_read_time_pct", conn2, { database_name: "postgres" }],
    ]);
    expect(body[0].data[5].value).toBe(1); // each database commits 1/s; together the ungrouped 2/s
    expect(body[4].data[3].value).toBeCloseTo(50);
    expect(body[5].data[3].value).toBeCloseTo(25);
    const top = await get(`probe_name=pg_stat_database&connection_id=${conn1}&metrics=blk_read_time_pct&group_by=database_name&top=1&${WINDOW}`);
    expect(top.body.map((s: { entity: object }) => s.entity)).toEqual([{ database_name: "app" }]); // 50 % beats 25 %
  });

  it("refuses group_by on columns that are not keys, and top without group_by", async () => {
    const bad = await get(`probe_name=pg_stat_database&connection_id=${conn1}&metrics=numbackends&group_by=numbackends&${WINDOW}`);
    expect(bad).toMatchObject({ status: 400, body: { error: expect.stringContaining("its keys are database_name") } });
    expect((await get(`probe_name=pg_stat_database&connection_id=${conn1}&metrics=numbackends&top=3&${WINDOW}`)).body.error).toMatch(/give `group_by`/);
    expect((await get(`probe_name=pg_stat_database&connection_id=${conn1}&metrics=numbackends&group_by=database_name&top=0&${WINDOW}`)).status).toBe(400);
  });

  it("refuses a query parameter it does not take rather than answer without it", async () => {
    // Ignored, the misspelt filter would answer with every database's sum.
    const typo = await get(`probe_name=pg_stat_database&connection_id=${conn1}&metrics=numbackends&databse_name=app&${WINDOW}`);
    expect(typo).toEqual({ status: 400, body: { error: "unknown query parameter `databse_name`" } });
  });

  it("computes dead_tuple_ratio", async () => {
    const { body } = await get(`probe_name=pg_stat_all_tables&connection_id=${conn1}&metrics=dead_tuple_ratio&schema_name=public&${WINDOW}`);
    expect(body[0]).toMatchObject({ name: "dead_tuple_ratio", unit: "%" });
    expect(body[0].data[0].value).toBe(5);
  });

  it.each([
    ["time_range=custom&time_end=2026-01-01T01:00:00Z", /needs `time_start`/],
    ["time_range=custom&time_start=2026-01-01&time_end=2026-01-02T00:00:00Z", /`time_start` is not an RFC 3339 timestamp/],
    ["time_range=custom&time_start=2026-01-02T00:00:00Z&time_end=2026-01-01T00:00:00Z", /`time_end` must be after `time_start`/],
    ["time_range=custom&time_start=2999-01-01T00:00:00Z&time_end=2999-01-02T00:00:00Z", /`time_start` must be before the present moment/],
    ["time_range=custom&time_start=2024-01-01T00:00:00Z&time_end=2025-06-01T00:00:00Z", /more than 366 days/],
    ["time_range=2h", /query parameter `time_range`/],
    [
      "metrics=numbackends_per_sec",
      /^metric `numbackends_per_sec` not supported for probe `pg_stat_database`: `numbackends` is a gauge, not a cumulative counter$/,
    ],
    ["metrics=blk_read_time_per_sec", /`blk_read_time` is a cumulative time counter \(milliseconds\), not a cumulative counter; use `blk_read_time_pct`/],
    ["metrics=nope_delta", /metric `nope_delta` not supported for probe `pg_stat_database`: the probe has no column `nope`/],
    ["metrics=xact_commit&schema_name=public", /^`schema_name` does not apply to probe `pg_stat_database`: it has no schema column$/],
    ["aggregation=median", /`aggregation` must be one of avg, sum, min, max, last; got "median"/],
    ["buckets=many", /query parameter `buckets`/],
  ])("answers 400 for %s", async (query, message) => {
    const { status, body } = await get(`probe_name=pg_stat_database&connection_id=${conn1}&${query}`);
    expect(status).toBe(400);
    expect(body.error).toMatch(message);
  });

  it("judges by the server's own interval, else the global one; cluster overrides drive only the collector", async () => {
    const points = async () =>
      (
        await get(
          `probe_name=pg_stat_database&connection_id=${conn1}&metrics=numbackends&buckets=500&time_range=custom&time_start=${iso(0)}&time_end=${iso(3600)}`,
        )
      ).body[0].data.length;
    const [cluster] = await store.db.query<{ id: number }>("INSERT INTO clusters (name) VALUES ('interval-test') RETURNING id");
    try {
      await store.db.query("UPDATE connections SET cluster_id = $1 WHERE id = $2", [cluster.id, conn1]);
      await store.db.query(
        "INSERT INTO probe_configs (probe_name, scope, scope_id, collection_interval_seconds, retention_days) VALUES ('pg_stat_database', 'cluster', $1, 10, 7)",
        [cluster.id],
      );
      expect(await points()).toBe(61); // the global 60 s: 60 buckets, not the cluster's 10 s (360)
      await store.db.query(
        "INSERT INTO probe_configs (probe_name, scope, scope_id, collection_interval_seconds, retention_days) VALUES ('pg_stat_database', 'server', $1, 600, 7)",
        [conn1],
      );
      expect(await points()).toBe(7); // the server's own 600 s
    } finally {
      await store.db.query("DELETE FROM probe_configs WHERE scope IN ('cluster', 'server')");
      await store.db.query("UPDATE connections SET cluster_id = NULL WHERE id = $1", [conn1]);
      await store.db.query("DELETE FROM clusters WHERE id = $1", [cluster.id]);
    }
  });

  it("accepts aggregation in any letter case", async () => {
    const window = `time_range=custom&time_start=${iso(0)}&time_end=${iso(3600)}`;
    const ask = (how: string) => get(`probe_name=pg_stat_database&connection_id=${conn1}&metrics=numbackends&aggregation=${how}&buckets=3&${window}`);
    const upper = await ask("SUM");
    expect(upper.status).toBe(200);
    expect(upper.body).toEqual((await ask("sum")).body);
    expect(upper.body).not.toEqual((await ask("avg")).body); // really summed, not the default
  });

  it("answers 400 for missing or malformed connection ids and unknown probes, 404 for unknown connections", async () => {
    expect(await get("probe_name=pg_stat_database")).toEqual({
      status: 400,
      body: { error: expect.stringMatching(/query parameter `connection_id`: required/) },
    });
    expect((await get("probe_name=pg_stat_database&connection_id=1,x")).body.error).toMatch(/"x" is not a connection id/);
    expect(await get(`probe_name=pg_stat_nothing&connection_id=${conn1}`)).toEqual({
      status: 400,
      body: { error: expect.stringMatching(/unknown probe `pg_stat_nothing`/) },
    });
    expect(await get("probe_name=pg_stat_database&connection_id=9999")).toEqual({ status: 404, body: { error: "connection 9999 not found" } });
  });
});
