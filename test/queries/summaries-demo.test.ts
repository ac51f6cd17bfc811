/**
 * The summary, statement and snapshot endpoints on the demo history: a day of samples with a statistics reset
 * (pg_stat_database and pg_stat_statements on `shop` at hour 15) and a 25-minute collector outage at hour 9.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadDemoHistory } from "../../src/collector/demo-history.ts";
import { addConnection, DATASTORE_KINDS, migratedDatastore, type TestDatastore } from "../support/datastore.ts";
import { testApp } from "../support/app.ts";
import { userWithToken } from "../support/auth.ts";
import { client } from "../support/http.ts";
import { fencedData } from "../support/fenced.ts";
import { findProbe } from "../../src/probes/index.ts";
import { compressChunk } from "../../src/samples/compress-history.ts";
import { writeSamples } from "../../src/samples/sample-writer.ts";

const ORDERS_QUERYID = "-4617127464133208123"; // beyond 2^53: must survive exactly
const HIT_SHARE = 100 / 1.05; // the demo reads 5 % as many blocks as it hits, in every interval

describe.each(DATASTORE_KINDS)("metrics summaries on the demo history (%s)", (kind) => {
  let store: TestDatastore;
  let api: ReturnType<typeof client>;
  let token: string;
  let demo: number;
  let other: number;
  let start: number;
  const get = async (path: string) => api("GET", path, { token });
  const iso = (hours: number) => new Date(start + hours * 3_600_000).toISOString();

  beforeAll(async () => {
    store = await migratedDatastore(kind);
    demo = await addConnection(store.db, "demo");
    other = await addConnection(store.db, "other");
    const now = Date.now();
    start = Math.floor(now / 60_000) * 60_000 - 24 * 3_600_000;
    await loadDemoHistory(store.db, demo, now);
    await loadDemoHistory(store.db, other, now);
    api = client(testApp(store.db).app);
    token = (await userWithToken(store.db, "admin", { superuser: true })).token;
  }, 120_000);
  afterAll(() => store.close());

  describe("performance-summary", () => {
    it("gives per-interval cache hit ratios and reset-proof transaction rates in sixtieths of the window", async () => {
      const { status, body } = await get(`/api/v1/metrics/performance-summary?connection_id=${demo}&time_range=24h`);
      expect(status).toBe(200);
      expect(body).toMatchObject({ time_range: "24h", bucket_seconds: 1440 });
      expect(body.aggregate).toBeUndefined();
      const [c] = body.connections;
      expect(c).toMatchObject({ connection_id: demo, connection_name: "demo" });
      // A lifetime ratio would start near 99.4 % (the demo's initial totals) and drift down; each interval's is 95.24 %.
      const ratios = c.cache_hit_ratio.time_series.map((p: { value: number }) => p.value);
      expect(ratios.length).toBeGreaterThanOrEqual(58);
      for (const r of ratios) expect(r).toBeCloseTo(HIT_SHARE, 0);
      expect(c.cache_hit_ratio.current).toBe(ratios[ratios.length - 1]);
      for (const p of c.transactions.time_series) {
        expect(p.commits_per_sec).toBeGreaterThan(0);
        expect(p.commits_per_sec).toBeLessThanOrEqual(45.2 * 1.01); // the three databases' peak
        expect(p.rollback_percent).toBeCloseTo(0.99, 0);
      }
      expect(c.checkpoints.time_series.length).toBeGreaterThan(50);
      for (const p of c.checkpoints.time_series) expect(p.write_time_ms).toBeGreaterThan(0);
      expect(c.xid_age.map((x: { database_name: string }) => x.database_name).sort()).toEqual(["analytics", "postgres", "shop"]);
      expect(c.xid_age[0].percent).toBeCloseTo((100 * c.xid_age[0].age) / 2_147_483_647, 2);
    });

    it("adds an aggregate over several connections", async () => {
      const { body } = await get(`/api/v1/metrics/performance-summary?connection_ids=${demo},${other}&time_range=6h`);
      expect(body.connections.map((c: { connection_id: number }) => c.connection_id)).toEqual([demo, other]);
      expect(body.bucket_seconds).toBe(360);
      const current = body.connections.map((c: { transactions: { commits_per_sec: number } }) => c.transactions.commits_per_sec);
      expect(body.aggregate.commits_per_sec).toBeCloseTo(current[0] + current[1], 1);
      expect(body.aggregate.cache_hit_ratio).toBeCloseTo(HIT_SHARE, 0);
    });

    it("takes a custom window, with buckets of at least 10 s", async () => {
      const { body } = await get(
        `/api/v1/metrics/performance-summary?connection_id=${demo}&time_range=custom&time_start=${iso(12)}&time_end=${iso(12 + 1 / 12)}`,
      );
      expect(body.bucket_seconds).toBe(10);
    });
  });

  it("metrics query: per-database series sum to the ungrouped series across the reset and the outage", async () => {
    const q = `/api/v1/metrics/query?probe_name=pg_stat_database&connection_id=${demo}&metrics=xact_commit_delta&time_range=custom&time_start=${iso(6)}&time_end=${iso(18)}`;
    const whole = (await get(q)).body[0].data as Array<{ value: number | null }>;
    const grouped = (await get(`${q}&group_by=database_name`)).body as Array<{ entity: { database_name: string }; data: Array<{ value: number | null }> }>;
    expect(grouped.map((s) => s.entity.database_name)).toEqual(["analytics", "postgres", "shop"]);
    expect(whole.some((p) => p.value === null)).toBe(true); // the outage
    whole.forEach((p, k) => {
      const parts = grouped.map((s) => s.data[k].value);
      if (p.value === null)
        expect(
          parts.every((v) => v === null),
          `point ${k}`,
        ).toBe(true);
      else
        expect(
          parts.reduce<number>((a, v) => a + (v ?? 0), 0),
          `point ${k}`,
        ).toBeCloseTo(p.value, 6);
    });
  });

  describe("database-summaries", () => {
    it("lists the databases largest first with per-database rates", async () => {
      const { status, body } = await get(`/api/v1/metrics/database-summaries?connection_id=${demo}`);
      expect(status).toBe(200);
      expect(body.databases.map((d: { database_name: string }) => d.database_name)).toEqual(["shop", "analytics", "postgres"]);
      const [shop, analytics, postgres] = body.databases;
      expect(shop.size_pretty).toMatch(/^\d+\.\d MB$/);
      expect(shop.cache_hit_ratio.current).toBeCloseTo(HIT_SHARE, 0);
      for (const p of shop.cache_hit_ratio.time_series) expect(p.value).toBeCloseTo(HIT_SHARE, 0); // the reset leaves no trace
      expect(shop.transaction_rate).toBeGreaterThan(7);
      expect(shop.transaction_rate).toBeLessThanOrEqual(40.5);
      expect(analytics.transaction_rate).toBeLessThan(shop.transaction_rate);
      expect(shop.dead_tuple_ratio).toBeGreaterThan(0);
      expect(analytics.dead_tuple_ratio).toBeNull(); // no table samples there
      expect(postgres.active_connections).toBeGreaterThanOrEqual(2);
    });

    it("takes each database's dead tuple ratio from its latest table sample, in a compressed hour or not", async () => {
      const id = await addConnection(store.db, "tables");
      const hour = Math.floor(Date.now() / 3_600_000) * 3_600_000 - 5 * 3_600_000;
      const table = (at: number, database_name: string, relname: string, dead: number) => ({
        collected_at: new Date(at).toISOString(),
        database_name,
        schemaname: "public",
        relname,
        n_live_tup: 100 - dead,
        n_dead_tup: dead,
      });
      // `old` was last sampled at minute 40 of a closed hour (then 10 % dead), `new` a minute ago (then 25 %).
      const rows = [
        ...[10, 40].flatMap((m) => ["t1", "t2"].map((t) => table(hour + m * 60_000, "old", t, m === 40 ? 10 : 50))),
        ...[5, 1].flatMap((m) => ["t1", "t2"].map((t) => table(Date.now() - m * 60_000, "new", t, m === 1 ? 25 : 50))),
      ];
      await writeSamples(store.db, { connectionId: id, probe: "pg_stat_all_tables", rows });
      await compressChunk(store.db, findProbe("pg_stat_all_tables")!, id, hour);
      const { body } = await get(`/api/v1/metrics/database-summaries?connection_id=${id}&time_range=24h`);
      expect(body.databases.map((d: { database_name: string; dead_tuple_ratio: number }) => [d.database_name, d.dead_tuple_ratio])).toEqual([
        ["new", 25],
        ["old", 10],
      ]);
    });

    it("takes presets only and exactly one connection", async () => {
      expect((await get(`/api/v1/metrics/database-summaries?connection_id=${demo}&time_range=custom`)).body.error).toMatch(/presets only/);
      expect((await get(`/api/v1/metrics/database-summaries?connection_id=${demo},${other}`)).body.error).toMatch(/exactly one/);
      expect((await get(`/api/v1/metrics/database-summaries`)).status).toBe(400);
      // A parameter it does not take (a filter of the metrics query) is refused, not ignored.
      expect(await get(`/api/v1/metrics/database-summaries?connection_id=${demo}&database_name=shop`)).toMatchObject({
        status: 400,
        body: { error: "unknown query parameter `database_name`" },
      });
    });
  });

  describe("connection-groups", () => {
    it("counts client backends per application, largest first", async () => {
      const { status, body } = await get(`/api/v1/metrics/connection-groups?connection_id=${demo}&group_by=application_name&time_range=24h`);
      expect(status).toBe(200);
      const byKey = Object.fromEntries(body.groups.map((g: { key: string }) => [g.key, g]));
      expect(Object.keys(byKey).sort()).toEqual(["metabase", "psql", "shop-web", "shop-worker"]); // the checkpointer is no client
      expect(byKey["shop-worker"]).toMatchObject({ current: 3, max: 3, avg: 3 });
      expect(byKey.psql).toMatchObject({ current: 1, max: 1 });
      expect(byKey["shop-web"].max).toBeLessThanOrEqual(16);
      expect(body.groups[0].current).toBeGreaterThanOrEqual(body.groups[1].current);
      expect(byKey["shop-worker"].time_series.filter((p: { value: number | null }) => p.value !== null).every((p: { value: number }) => p.value === 3)).toBe(
        true,
      );
    });

    it("groups local connections under a null client address", async () => {
      const { body } = await get(`/api/v1/metrics/connection-groups?connection_id=${demo}&group_by=client_addr`);
      expect(body.groups.find((g: { key: string | null }) => g.key === null)).toMatchObject({ current: 1 });
    });

    it("names the groupings it takes", async () => {
      const { status, body } = await get(`/api/v1/metrics/connection-groups?connection_id=${demo}&group_by=pid`);
      expect(status).toBe(400);
      expect(body.error).toMatch(/usename, client_addr, datname, application_name, state/);
    });
  });

  describe("top-queries", () => {
    /** A pg_stat_statements row of the database `app`. */
    const statementRow = (collected_at: string, queryid: string, query: string, calls: number) => ({
      collected_at,
      database_name: "app",
      queryid,
      userid: 10,
      dbid: 1,
      toplevel: true,
      query,
      calls,
      total_exec_time: calls,
      stats_reset: null,
    });

    it("reports lifetime totals of the latest sample with exact queryids", async () => {
      const { status, body } = await get(`/api/v1/metrics/top-queries?connection_id=${demo}&order_by=calls&exclude_collector=false&limit=100`);
      expect(status).toBe(200);
      expect(body[0]).toMatchObject({ queryid: ORDERS_QUERYID, database_name: "shop", query: "SELECT * FROM orders WHERE customer_id = $1" });
      expect(body[0].mean_exec_time).toBeCloseTo(0.4, 1);
      expect(body.some((q: { query: string }) => q.query.includes("pglens collector"))).toBe(true);
      // pglens's own statements are left out by default, as with exclude_collector=true.
      for (const flag of ["", "&exclude_collector=true"]) {
        const others = await get(`/api/v1/metrics/top-queries?connection_id=${demo}&order_by=calls&limit=100${flag}`);
        expect(others.body.some((q: { query: string }) => q.query.includes("pglens collector"))).toBe(false);
        expect(others.body).toHaveLength(body.length - 1);
      }
    });

    it("reports each statement's change over a window, across the statistics reset", async () => {
      const lifetime = (await get(`/api/v1/metrics/top-queries?connection_id=${demo}&queryid=${ORDERS_QUERYID}`)).body[0];
      const day = (await get(`/api/v1/metrics/top-queries?connection_id=${demo}&queryid=${ORDERS_QUERYID}&time_range=24h`)).body[0];
      const hour = (await get(`/api/v1/metrics/top-queries?connection_id=${demo}&queryid=${ORDERS_QUERYID}&time_range=1h`)).body[0];
      // The day spans the reset at hour 15: its change includes the calls before it, the lifetime total does not.
      expect(day.calls).toBeGreaterThan(lifetime.calls);
      expect(hour.calls).toBeGreaterThan(0);
      expect(hour.calls).toBeLessThan(lifetime.calls);
      expect(day.mean_exec_time).toBeCloseTo(0.4, 1);
    });

    it("names a statement that left pg_stat_statements during the window by its last text", async () => {
      const id = await addConnection(store.db, "evicted");
      // One clock reading: rows of one sample must share its collected_at, or they read as separate samples.
      const now = Date.now();
      const at = (minutesAgo: number) => new Date(now - minutesAgo * 60_000).toISOString();
      const statement = (minutesAgo: number, queryid: string, query: string, calls: number) => statementRow(at(minutesAgo), queryid, query, calls);
      const rows = [50, 40, 30, 20, 10].flatMap((m, i) => [
        statement(m, "7", "SELECT stays", 10 * i),
        ...(i < 3 ? [statement(m, "8", i < 2 ? "SELECT old spelling" : "SELECT gone", 100 * i)] : []),
      ]);
      await writeSamples(store.db, { connectionId: id, probe: "pg_stat_statements", rows });
      const { body } = await get(`/api/v1/metrics/top-queries?connection_id=${id}&order_by=calls&time_range=1h`);
      expect(body.map((q: { queryid: string; query: string; calls: number }) => [q.queryid, q.query, q.calls])).toEqual([
        ["8", "SELECT gone", 200],
        ["7", "SELECT stays", 40],
      ]);
    });

    it("names the statements of a window in compressed hours by their last texts there", async () => {
      const id = await addConnection(store.db, "compressed");
      const hour = Math.floor(Date.now() / 3_600_000) * 3_600_000 - 5 * 3_600_000;
      const at = (minute: number) => new Date(hour + minute * 60_000).toISOString();
      const statement = (minute: number, queryid: string, query: string, calls: number) => statementRow(at(minute), queryid, query, calls);
      // Samples at minutes 10..50 of a closed hour; the window ends at minute 45, so its last sample is minute 40's.
      const rows = [10, 20, 30, 40, 50].flatMap((m, i) => [
        statement(m, "7", i < 3 ? "SELECT stays" : i < 4 ? "SELECT stays, respelt" : "SELECT after the window", 10 * i),
        ...(i < 3 ? [statement(m, "8", i < 2 ? "SELECT old spelling" : "SELECT gone", 100 * i)] : []),
      ]);
      await writeSamples(store.db, { connectionId: id, probe: "pg_stat_statements", rows });
      await compressChunk(store.db, findProbe("pg_stat_statements")!, id, hour);
      const [{ raw }] = await store.db.query<{ raw: number }>("SELECT count(*)::int AS raw FROM metrics.pg_stat_statements__raw WHERE connection_id = $1", [
        id,
      ]);
      expect(raw).toBe(0);
      const { body } = await get(`/api/v1/metrics/top-queries?connection_id=${id}&order_by=calls&time_range=custom&time_start=${at(0)}&time_end=${at(45)}`);
      expect(body.map((q: { queryid: string; query: string; calls: number }) => [q.queryid, q.query, q.calls])).toEqual([
        ["8", "SELECT gone", 200],
        ["7", "SELECT stays, respelt", 30],
      ]);
    });

    it("validates order_by, order, limit and queryid", async () => {
      const bad = async (q: string) => (await get(`/api/v1/metrics/top-queries?connection_id=${demo}&${q}`)).body.error;
      expect(await bad("order_by=query")).toMatch(/total_exec_time, calls, mean_exec_time, rows, shared_blks_hit, shared_blks_read/);
      expect(await bad("order=up")).toMatch(/asc or desc/);
      expect(await bad("limit=0")).toMatch(/1 to 100/);
      expect(await bad("limit=ten")).toMatch(/1 to 100/);
      expect(await bad("queryid=12abc")).toMatch(/queryid/);
      expect(await bad("queryid=9223372036854775808")).toMatch(/signed 64-bit/); // one past the largest bigint
    });
  });

  describe("query-stats", () => {
    it("totals one statement over a window and agrees with top-queries", async () => {
      const window = `time_range=custom&time_start=${iso(10)}&time_end=${iso(20)}`;
      const { status, body } = await get(`/api/v1/metrics/query-stats?connection_id=${demo}&queryid=${ORDERS_QUERYID}&${window}`);
      expect(status).toBe(200);
      expect(body).toMatchObject({ queryid: ORDERS_QUERYID, databases: ["shop"], query: "SELECT * FROM orders WHERE customer_id = $1" });
      const top = (await get(`/api/v1/metrics/top-queries?connection_id=${demo}&queryid=${ORDERS_QUERYID}&${window}`)).body[0];
      expect(body.totals.calls).toBe(top.calls);
      expect(body.totals.wal_bytes).toBeNull(); // the demo's statements carry no WAL figures
      expect(body.totals.total_exec_time).toBeCloseTo(top.total_exec_time, 6);
      const points = body.time_series.filter((p: { calls_per_sec: number | null }) => p.calls_per_sec !== null);
      expect(points.length).toBeGreaterThan(50);
      for (const p of points) {
        expect(p.calls_per_sec).toBeGreaterThan(0);
        expect(p.mean_exec_time).toBeCloseTo(0.4, 1);
      }
    });

    it("answers 404 for a statement never seen and 400 without a queryid", async () => {
      expect((await get(`/api/v1/metrics/query-stats?connection_id=${demo}&queryid=42`)).status).toBe(404);
      expect((await get(`/api/v1/metrics/query-stats?connection_id=${demo}`)).status).toBe(400);
    });
  });

  describe("latest", () => {
    it("returns the latest sample's rows typed by the catalogue", async () => {
      const { status, body } = await get(`/api/v1/metrics/latest?connection_id=${demo}&probe_name=pg_stat_all_tables&order_by=n_dead_tup`);
      expect(status).toBe(200);
      expect(body.total_count).toBe(3);
      expect(body.rows[0]).toMatchObject({ database_name: "shop", schemaname: "public", relname: "orders" });
      expect(typeof body.rows[0].n_live_tup).toBe("number");
      expect(body.collected_at).toMatch(/^\d{4}-\d{2}-\d{2}T/);
      const asc = await get(`/api/v1/metrics/latest?connection_id=${demo}&probe_name=pg_stat_all_tables&order_by=n_dead_tup&order=ASC&limit=1`);
      expect(asc.body).toMatchObject({ total_count: 3, rows: [{ relname: "customers" }] });
    });

    it("serves probes without text keys and keeps queryids exact", async () => {
      const checkpointer = await get(`/api/v1/metrics/latest?connection_id=${demo}&probe_name=pg_stat_checkpointer`);
      expect(checkpointer.body.rows).toHaveLength(1);
      expect(typeof checkpointer.body.rows[0].write_time).toBe("number");
      const statements = await get(`/api/v1/metrics/latest?connection_id=${demo}&probe_name=pg_stat_statements&database_name=shop&order_by=calls`);
      expect(statements.body.rows[0].queryid).toBe(ORDERS_QUERYID);
      expect(statements.body.total_count).toBe(3);
    });

    it("filters schemas and validates its parameters", async () => {
      expect((await get(`/api/v1/metrics/latest?connection_id=${demo}&probe_name=pg_stat_all_tables&exclude_schemas=public`)).body.total_count).toBe(0);
      const bad = async (q: string) => (await get(`/api/v1/metrics/latest?connection_id=${demo}&${q}`)).body.error;
      expect(await bad("probe_name=pg_stat_all_tables&order_by=nope")).toMatch(/no column "nope"/);
      expect(await bad("probe_name=pg_stat_all_tables&limit=101")).toMatch(/1 to 100/);
      expect(await bad("probe_name=nope")).toMatch(/unknown probe/);
      expect(await bad("probe_name=pg_stat_checkpointer&database_name=shop")).toMatch(/does not apply/);
    });
  });

  describe("access", () => {
    const paths = (id: number) => [
      `performance-summary?connection_id=${id}`,
      `database-summaries?connection_id=${id}`,
      `connection-groups?connection_id=${id}&group_by=state`,
      `top-queries?connection_id=${id}`,
      `query-stats?connection_id=${id}&queryid=${ORDERS_QUERYID}`,
      `latest?connection_id=${id}&probe_name=pg_stat_activity`,
    ];

    it("refuses a caller without a privilege on the connection (403) and names a missing one (404)", async () => {
      const outsider = (await userWithToken(store.db, `outsider-${kind}`)).token;
      for (const path of paths(demo)) {
        const res = await api("GET", `/api/v1/metrics/${path}`, { token: outsider });
        expect([path, res.status]).toEqual([path, 403]);
        expect(res.body.error).toMatch(/may not read connection/);
      }
      for (const path of paths(999_999)) expect([path, (await get(`/api/v1/metrics/${path}`)).status]).toEqual([path, 404]);
      for (const path of paths(demo)) expect([path, (await api("GET", `/api/v1/metrics/${path}`)).status]).toEqual([path, 401]);
      const tool = await api("POST", "/api/v1/mcp/tools/call", { token: outsider, body: { name: "get_top_queries", arguments: { connection_id: demo } } });
      expect(tool.body).toMatchObject({ isError: true });
    });
  });

  describe("MCP tools", () => {
    const call = async (name: string, args: unknown) => {
      const { body } = await api("POST", "/api/v1/mcp/tools/call", { token, body: { name, arguments: args } });
      return body as { content: Array<{ text: string }>; isError: boolean };
    };

    it("get_performance_summary gives the current figures and one TSV row per bucket", async () => {
      const { content, isError } = await call("get_performance_summary", { connection_ids: [demo], time_start: "1h" });
      expect(isError).toBe(false);
      const [header, line, blank, columns, ...rows] = fencedData(content[0].text).split("\n");
      expect(header).toMatch(/buckets of 60 s$/);
      expect(line).toMatch(/^connection \d+ \(demo\): xid age shop 18\d{7} \(8\.\d\d%\)/);
      expect(blank).toBe("");
      expect(columns).toBe("connection_id\ttime\tcache_hit_ratio\tcommits_per_sec\trollback_percent\tcheckpoint_write_ms\tcheckpoint_sync_ms");
      expect(rows.length).toBeGreaterThanOrEqual(59);
      expect(Number(rows[0].split("\t")[2])).toBeCloseTo(HIT_SHARE, 0);
    });

    it("get_top_queries answers the REST endpoint's rows as TSV, with the period option", async () => {
      const lifetime = await call("get_top_queries", { connection_id: demo, order_by: "calls", limit: 1 });
      expect(fencedData(lifetime.content[0].text).split("\n")[1]).toMatch(new RegExp(`^${ORDERS_QUERYID}\tshop\t`));
      const rest = (await get(`/api/v1/metrics/top-queries?connection_id=${demo}&order_by=calls&limit=1&time_range=24h`)).body[0];
      const day = await call("get_top_queries", { connection_id: demo, order_by: "calls", limit: 1, time_start: "24h" });
      expect(Number(fencedData(day.content[0].text).split("\n")[1].split("\t")[2])).toBe(rest.calls);
    });

    it("get_latest_snapshot lists the latest rows", async () => {
      const { content } = await call("get_latest_snapshot", { connection_id: demo, probe_name: "pg_stat_all_tables", order_by: "relname", order: "asc" });
      const lines = fencedData(content[0].text).split("\n");
      expect(lines[0]).toMatch(/^pg_stat_all_tables collected at .*: 3 of 3 rows$/);
      expect(lines.slice(3).map((l) => l.split("\t")[2])).toEqual(["cart_items", "customers", "orders"]);
      const bad = await call("get_latest_snapshot", { connection_id: demo, probe_name: "pg_stat_all_tables", order_by: "nope" });
      expect(bad.isError).toBe(true);
    });
  });
});
