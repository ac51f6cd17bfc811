/**
 * One vocabulary for assistants, through the official MCP SDK client over /mcp/v1: every tool's input schema
 * spells connections and time the same way and states its bounds (so a new tool cannot drift), and the tools
 * behind the vocabulary: connection_id wherever connection_ids is taken, relative and RFC 3339 times
 * everywhere, get_metric_series for derived metrics, get_metric_baselines and count_rows (with its WHERE
 * fencing), and top queries without pglens's own statements.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { openPg } from "../../drivers/pg.ts";
import type { Driver } from "../../drivers/types.ts";
import { refreshBaselines } from "../../src/alerts/baseline-store.ts";
import { addMember, createGroup, setMcpGrants } from "../../src/datastore/groups.ts";
import { migrate } from "../../src/datastore/migrate.ts";
import { COLLECTOR_MARK } from "../../src/probes/statement-mark.ts";
import { writeSamples } from "../../src/samples/sample-writer.ts";
import { testApp } from "../support/app.ts";
import { userWithToken } from "../support/auth.ts";
import { dataOf, mcpClient, textOf } from "../support/mcp-client.ts";
import { MONITOR_ROLE, monitorRoleUrl, registerServer } from "../support/monitored.ts";
import { serveOnFreePort } from "../support/node-server.ts";
import { createTestDatabase } from "../support/postgres.ts";

let store: { url: string; drop(): Promise<void> };
let shop: { url: string; name: string; drop(): Promise<void> };
let db: Driver;
let node: { url: string; close(): Promise<void> };
let root: Client;
let stranger: Client;
let conn: number;
let hidden: number;
const STEP = 60_000;
const now = Date.now();
const at = (minutesAgo: number) => new Date(now - minutesAgo * STEP).toISOString();

type JsonSchema = {
  type?: string;
  description?: string;
  minimum?: number;
  maximum?: number;
  maxLength?: number;
  maxItems?: number;
  enum?: unknown[];
  items?: JsonSchema;
};

beforeAll(async () => {
  store = await createTestDatabase(inject("pg17Url"));
  shop = await createTestDatabase(inject("pg17Url"));
  db = openPg(store.url);
  await migrate(db);
  const monitor = await monitorRoleUrl(inject("pg17Url"));
  conn = await registerServer(db, "main", monitor);
  hidden = await registerServer(db, "private", monitor);
  await db.query("UPDATE connections SET is_shared = false WHERE id = $1", [hidden]);
  // 11 samples a minute apart: 120 commits per minute (2/s) in `app`, and two statements, one pglens's own.
  const rows = Array.from({ length: 11 }, (_, i) => ({
    collected_at: at(10 - i),
    database_name: "app",
    datname: "app",
    xact_commit: 1000 + 120 * i,
    numbackends: 3,
  }));
  await writeSamples(db, { connectionId: conn, probe: "pg_stat_database", rows });
  const statement = (query: string, queryid: string, calls: number) => ({
    collected_at: at(1),
    database_name: "app",
    queryid,
    userid: 10,
    dbid: 1,
    toplevel: true,
    query,
    calls,
    total_exec_time: calls * 10,
  });
  await writeSamples(db, {
    connectionId: conn,
    probe: "pg_stat_statements",
    rows: [statement(`SELECT ${COLLECTOR_MARK} * FROM pg_stat_database`, "1", 900), statement("SELECT * FROM orders", "2", 50)],
  });
  await refreshBaselines(db);
  const admin = new pg.Client({ connectionString: shop.url });
  await admin.connect();
  await admin.query("CREATE TABLE orders (id serial PRIMARY KEY, status text NOT NULL)");
  await admin.query("INSERT INTO orders (status) SELECT CASE WHEN g % 4 = 0 THEN 'open' ELSE 'done' END FROM generate_series(1, 20) g");
  await admin.query(`GRANT SELECT ON orders TO ${MONITOR_ROLE}`);
  await admin.query(`GRANT USAGE ON SEQUENCE orders_id_seq TO ${MONITOR_ROLE}`); // so only read-only stops nextval()
  await admin.end();
  node = await serveOnFreePort(testApp(db).app.fetch);
  root = await mcpClient(node.url, (await userWithToken(db, "root", { superuser: true })).token);
  const plain = await userWithToken(db, "plain");
  const group = await createGroup(db, "tool users", "");
  await addMember(db, group.id, { type: "user", id: plain.id });
  await setMcpGrants(db, group.id, ["*"]);
  stranger = await mcpClient(node.url, plain.token);
}, 120_000);
afterAll(async () => {
  await root?.close();
  await stranger?.close();
  await node?.close();
  await db?.close();
  await shop?.drop();
  await store?.drop();
});

const call = (client: Client, name: string, args: Record<string, unknown>) => client.callTool({ name, arguments: args });

describe("the tools' input schemas share one vocabulary", () => {
  it("spell connections and times alike, describe every parameter, and state every bound", async () => {
    const { tools } = await root.listTools();
    expect(tools.length).toBeGreaterThanOrEqual(20);
    for (const tool of tools) {
      const properties = (tool.inputSchema.properties ?? {}) as Record<string, JsonSchema>;
      for (const [name, schema] of Object.entries(properties)) {
        const where = `${tool.name}.${name}`;
        expect(schema.description?.length, `${where} has a description`).toBeGreaterThan(10);
        const leaves = schema.type === "array" ? [schema, schema.items!] : [schema];
        if (schema.type === "array") expect(schema.maxItems, `${where} states its most items`).toBeLessThanOrEqual(1000);
        for (const leaf of leaves) {
          if (leaf.type === "integer" || leaf.type === "number") {
            expect(leaf.minimum, `${where} states its minimum`).toBeTypeOf("number");
            expect(leaf.maximum, `${where} states its maximum`).toBeTypeOf("number");
            expect(Math.abs(leaf.minimum!), `${where}: not JavaScript's safe-integer limit`).toBeLessThan(Number.MAX_SAFE_INTEGER);
            expect(Math.abs(leaf.maximum!), `${where}: not JavaScript's safe-integer limit`).toBeLessThan(Number.MAX_SAFE_INTEGER);
          }
          if (leaf.type === "string" && !leaf.enum) expect(leaf.maxLength, `${where} states its longest value`).toBeTypeOf("number");
        }
        if (name === "connection_id") expect(schema).toMatchObject({ type: "integer", minimum: 1, maximum: 2_147_483_647 });
        if (name === "connection_ids") expect(schema.items).toMatchObject({ type: "integer", minimum: 1, maximum: 2_147_483_647 });
        if (name === "time_start" || name === "time_end") expect(schema.description).toMatch(/relative \(30m, 1h, 24h, 7d\) or RFC 3339/);
        // The other spellings an assistant would have to learn per tool.
        expect(["start_time", "end_time", "connection", "connections", "server_id", "conn_id"], where).not.toContain(name);
      }
      if ("connection_ids" in properties) expect(properties, `${tool.name} takes connection_id beside connection_ids`).toHaveProperty("connection_id");
      if ("time_start" in properties) expect(properties, `${tool.name} takes time_end beside time_start`).toHaveProperty("time_end");
    }
  });
});

describe("connections and times, the same everywhere", () => {
  it("list_alerts, get_timeline, get_overview and get_performance_summary take connection_id as well as connection_ids", async () => {
    for (const [tool, extra] of [
      ["list_alerts", {}],
      ["get_timeline", {}],
      ["get_overview", {}],
      ["get_performance_summary", {}],
    ] as const) {
      const one = await call(root, tool, { connection_id: conn, ...extra });
      expect(one.isError, `${tool}: ${textOf(one)}`).toBeFalsy();
      const several = await call(root, tool, { connection_ids: [conn, hidden], ...extra });
      expect(several.isError, `${tool}: ${textOf(several)}`).toBeFalsy();
    }
    expect(textOf(await call(root, "get_performance_summary", { connection_id: conn }))).toContain(`connection ${conn} (main)`);
    expect(textOf(await call(root, "get_performance_summary", {}))).toBe("give connection_id (one server) or connection_ids (several)");
  });

  it("refuses a connection the caller may not read as such, and one that does not exist as missing", async () => {
    for (const tool of ["list_alerts", "get_timeline", "get_overview", "get_performance_summary", "get_metric_series", "get_metric_baselines"]) {
      const extra = tool === "get_metric_series" ? { probe_name: "pg_stat_database" } : {};
      const refused = await call(stranger, tool, { connection_id: hidden, ...extra });
      expect(refused, tool).toMatchObject({ isError: true, content: [{ text: expect.stringContaining(`you may not read connection ${hidden}`) }] });
      const missing = await call(stranger, tool, { connection_ids: [424242], ...(tool === "get_metric_baselines" ? {} : extra) });
      if (tool !== "get_metric_baselines") expect(missing, tool).toMatchObject({ isError: true, content: [{ text: "connection 424242 not found" }] });
    }
    const count = await call(stranger, "count_rows", { connection_id: hidden, table: "orders", database_name: shop.name });
    expect(count).toMatchObject({ isError: true, content: [{ text: expect.stringContaining(`you may not read connection ${hidden}`) }] });
  });

  it("get_timeline takes relative times (it refused 1h before) and defaults to the last 24 hours", async () => {
    for (const args of [{ time_start: "1h" }, { time_start: "2d", time_end: "1h" }, { time_start: at(60), time_end: "now" }, {}]) {
      const res = await call(root, "get_timeline", { connection_id: conn, ...args });
      expect(res.isError, `${JSON.stringify(args)}: ${textOf(res)}`).toBeFalsy();
      expect(dataOf(res)).toMatch(/^occurred_at\tevent_type/);
    }
    expect(textOf(await call(root, "get_timeline", { time_start: "yesterday" }))).toContain("relative duration such as 30m, 1h, 24h, 7d");
  });

  it("list_alerts filters on triggered_at with relative times too", async () => {
    await db.query(
      "INSERT INTO alerts (alert_type, connection_id, severity, title, status, metric_name, triggered_at) VALUES ('threshold', $1, 'warning', 'old one', 'active', 'x', now() - interval '3 hours')",
      [conn],
    );
    expect(dataOf(await call(root, "list_alerts", { connection_id: conn, time_start: "4h" }))).toContain("old one");
    expect(dataOf(await call(root, "list_alerts", { connection_id: conn, time_start: "2h" }))).not.toContain("old one");
    expect(dataOf(await call(root, "list_alerts", { connection_id: conn, time_end: "2h" }))).toContain("old one");
  });

  it("refuses out-of-bounds numbers by their schema", async () => {
    const res = await call(root, "query_metrics", { probe_name: "pg_stat_database", connection_id: conn, buckets: 501 });
    expect(res).toMatchObject({ isError: true, content: [{ text: expect.stringMatching(/500.*buckets|buckets.*500/) }] });
  });
});

describe("get_metric_series: derived metrics for assistants", () => {
  it("answers rates per second under the metrics query's names, which query_metrics refuses and points to", async () => {
    const args = {
      probe_name: "pg_stat_database",
      connection_id: conn,
      metrics: "xact_commit_per_sec,numbackends",
      time_start: at(10),
      time_end: at(0),
      buckets: 5,
    };
    const res = await call(root, "get_metric_series", args);
    expect(res.isError, textOf(res)).toBeFalsy();
    const [header, ...lines] = dataOf(res).split("\n");
    expect(header).toBe("bucket_time\txact_commit_per_sec\tnumbackends");
    const rates = lines.map((l) => l.split("\t")[1]).filter((v) => v !== "");
    expect(rates.length).toBeGreaterThanOrEqual(2); // buckets never narrower than the 5-minute default interval
    for (const r of rates) expect(Number(r)).toBeCloseTo(2, 9); // 120 commits a minute
    const refused = await call(root, "query_metrics", { ...args, metrics: "xact_commit_per_sec" });
    expect(refused).toMatchObject({ isError: true, content: [{ text: expect.stringContaining("ask get_metric_series for it") }] });
  });

  it("takes a preset time_range, labels several connections, and refuses a preset beside explicit times", async () => {
    const preset = await call(root, "get_metric_series", {
      probe_name: "pg_stat_database",
      connection_ids: [conn, hidden],
      metrics: "xact_commit_per_sec",
      time_range: "1h",
    });
    expect(dataOf(preset).split("\n")[0]).toBe(`bucket_time\txact_commit_per_sec{connection_id=${conn}}\txact_commit_per_sec{connection_id=${hidden}}`);
    const both = await call(root, "get_metric_series", { probe_name: "pg_stat_database", connection_id: conn, time_range: "24h", time_start: "1h" });
    expect(textOf(both)).toBe("give either time_range 24h or time_start/time_end, not both");
  });
});

describe("get_metric_baselines and count_rows", () => {
  it("lists the alerter's stored baselines, narrowed by metric", async () => {
    const all = dataOf(await call(root, "get_metric_baselines", { connection_id: conn }));
    expect(all.split("\n")[0]).toBe(
      "connection_id\tconnection_name\tmetric_name\tdatabase_name\tperiod_type\tday_of_week\thour_of_day\tmean\tstddev\tmin\tmax\tsample_count",
    );
    const commits = dataOf(await call(root, "get_metric_baselines", { connection_id: conn, metric_name: "xact_commit_per_sec" }))
      .split("\n")
      .slice(1);
    expect(commits.length).toBeGreaterThan(0);
    for (const line of commits) expect(line).toMatch(new RegExp(`^${conn}\tmain\tpg_stat_database\\.xact_commit_per_sec\t`));
    const overall = commits.map((l) => l.split("\t")).find((c) => c[3] === "app" && c[4] === "all")!;
    expect(Number(overall[7])).toBeCloseTo(2, 9); // mean commits per second
    expect(textOf(await call(root, "get_metric_baselines", { metric_name: "nope" }))).toContain("No metric baselines match");
  });

  it("count_rows counts on the monitored database, with a WHERE condition", async () => {
    const all = await call(root, "count_rows", { connection_id: conn, database_name: shop.name, table: "orders" });
    expect(dataOf(all)).toBe('SQL: SELECT count(*) AS count FROM "public"."orders"\nCount: 20');
    const open = await call(root, "count_rows", { connection_id: conn, database_name: shop.name, table: "orders", schema: "public", where: "status = 'open'" });
    expect(dataOf(open)).toMatch(/Count: 5$/);
    const missing = await call(root, "count_rows", { connection_id: conn, database_name: shop.name, table: "nope" });
    expect(missing).toMatchObject({ isError: true, content: [{ text: expect.stringContaining('relation "public.nope" does not exist') }] });
  });

  it.each([
    ["status = 'open'; DELETE FROM orders", "may not contain `;`"],
    ["true) UNION ALL (SELECT 99", "closes a parenthesis it did not open"],
    ["true -- the rest", "may not contain a comment"],
    ["true /* hidden */", "may not contain a comment"],
    ["(true", "leaves a parenthesis open"],
    ["status = E'\\') UNION SELECT 1 --'", "may not contain a backslash"],
    ["status = $$x$$", "dollar quoting"],
    ["status = 'open", "unterminated string literal"],
  ])("count_rows refuses the WHERE condition %j before connecting", async (where, message) => {
    const res = await call(root, "count_rows", { connection_id: conn, database_name: shop.name, table: "orders", where });
    expect(res).toMatchObject({ isError: true, content: [{ text: expect.stringContaining(message) }] });
  });

  it("count_rows cannot write through its condition: the transaction is read-only", async () => {
    const res = await call(root, "count_rows", { connection_id: conn, database_name: shop.name, table: "orders", where: "nextval('orders_id_seq') > 0" });
    expect(res).toMatchObject({ isError: true, content: [{ text: expect.stringContaining("read-only transaction") }] });
    const admin = new pg.Client({ connectionString: shop.url });
    await admin.connect();
    const [{ last_value }] = (await admin.query("SELECT last_value::int FROM orders_id_seq")).rows;
    await admin.end();
    expect(last_value).toBe(20);
  });
});

describe("get_top_queries", () => {
  it("leaves pglens's own statements out unless exclude_collector is false", async () => {
    const top = dataOf(await call(root, "get_top_queries", { connection_id: conn }));
    expect(top).toContain("SELECT * FROM orders");
    expect(top).not.toContain(COLLECTOR_MARK);
    expect(dataOf(await call(root, "get_top_queries", { connection_id: conn, exclude_collector: false }))).toContain(COLLECTOR_MARK);
  });
});
