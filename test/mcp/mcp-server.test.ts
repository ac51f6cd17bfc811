import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { openPg } from "../../drivers/pg.ts";
import type { Driver } from "../../drivers/types.ts";
import { writeSamples } from "../../src/samples/sample-writer.ts";
import { migrate } from "../../src/datastore/migrate.ts";
import { addMember, createGroup, setMcpGrants } from "../../src/datastore/groups.ts";
import { testApp } from "../support/app.ts";
import { bearer, userWithToken } from "../support/auth.ts";
import { dataOf, mcpClient, textOf } from "../support/mcp-client.ts";
import { TEST_SECRET, monitorRoleUrl, registerServer } from "../support/monitored.ts";
import { serveOnFreePort } from "../support/node-server.ts";
import { createTestDatabase } from "../support/postgres.ts";
import { startWorker, type TestWorker } from "../support/worker.ts";

let database: { url: string; drop(): Promise<void> };
let db: Driver;
let node: { url: string; close(): Promise<void> };
let worker: TestWorker;
let root: string;
let conn: number;
let other: number;

beforeAll(async () => {
  database = await createTestDatabase(inject("pg17Url"));
  db = openPg(database.url);
  await migrate(db);
  root = (await userWithToken(db, "root", { superuser: true })).token;
  const monitor = await monitorRoleUrl(inject("pg17Url"));
  conn = await registerServer(db, "live", monitor);
  other = await registerServer(db, "other", monitor);
  await writeSamples(db, { connectionId: conn, probe: "pg_stat_wal", rows: [{ collected_at: new Date(Date.now() - 60_000).toISOString(), wal_records: 5 }] });
  node = await serveOnFreePort(testApp(db).app.fetch);
  worker = await startWorker({ PGLENS_DATASTORE_URL: database.url, PGLENS_SECRET: TEST_SECRET });
});
afterAll(async () => {
  await worker.dispose();
  await node.close();
  await db.close();
  await database.drop();
});

const runtimes: Array<[string, () => [string, ((u: string, i?: RequestInit) => Promise<Response>) | undefined]]> = [
  ["Node", () => [node.url, undefined]],
  ["workerd", () => ["http://pglens.test", (u, i) => worker.fetch(new URL(u).pathname + new URL(u).search, i)]],
];

describe.each(runtimes)("MCP over Streamable HTTP on %s", (_name, target) => {
  it("lists the tools with their annotations and calls every one of them", async () => {
    const [base, fetchImpl] = target();
    const client = await mcpClient(base, root, fetchImpl);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual([
      "list_connections",
      "list_probes",
      "describe_probe",
      "query_metrics",
      "get_metric_series",
      "get_performance_summary",
      "get_top_queries",
      "get_latest_snapshot",
      "query_database",
      "count_rows",
      "get_schema_info",
      "execute_explain",
      "list_alerts",
      "get_alert_rules",
      "get_metric_baselines",
      "list_blackouts",
      "get_timeline",
      "store_memory",
      "recall_memories",
      "get_overview",
    ]);
    expect(tools.filter((t) => t.annotations?.readOnlyHint !== true).map((t) => t.name)).toEqual(["store_memory"]);
    expect(tools.find((t) => t.name === "query_database")?.inputSchema.required).toEqual(["query"]);

    expect(textOf(await client.callTool({ name: "list_probes", arguments: {} }))).toMatch(/^name\trow_count|^name\tdescription\trow_count\tscope/);
    expect(textOf(await client.callTool({ name: "describe_probe", arguments: { probe_name: "pg_stat_wal" } }))).toContain("wal_records\tbigint");
    expect(
      dataOf(
        await client.callTool({
          name: "query_metrics",
          arguments: { probe_name: "pg_stat_wal", connection_id: conn, metrics: "wal_records", time_start: "1h" },
        }),
      ),
    ).toMatch(/^bucket_time\twal_records\n/);
    const rows = await client.callTool({ name: "query_database", arguments: { connection_id: conn, query: "SELECT 41 + 1 AS answer, 'a\tb' AS tricky" } });
    expect(rows.isError).toBeFalsy();
    expect(textOf(rows)).toMatch(/<<<pglens-data-[0-9a-f]{24}\nanswer\ttricky\n42\ta\\tb\npglens-data-[0-9a-f]{24}>>>\n\(1 row\)$/);
    const schema = await client.callTool({ name: "get_schema_info", arguments: { connection_id: conn, schema_name: "pg_catalog", table_name: "pg_class" } });
    expect(textOf(schema)).toMatch(/pg_catalog\tpg_class\tcolumn\trelname\tname\tNOT NULL/);
    const plan = await client.callTool({
      name: "execute_explain",
      arguments: { connection_id: conn, statement: "SELECT count(*) FROM pg_class", analyze: true, format: "json" },
    });
    expect(textOf(plan)).toMatch(/"Actual Rows"/);
    expect(dataOf(await client.callTool({ name: "list_alerts", arguments: { connection_ids: [conn] } }))).toMatch(
      /^id\talert_type\tseverity\tstatus\tserver_name/,
    );
    expect(dataOf(await client.callTool({ name: "get_alert_rules", arguments: { category: "locks" } }))).toMatch(
      /\tdeadlocks_detected\tlocks\tpg_stat_database\.deadlocks_delta\t/,
    );
    expect(dataOf(await client.callTool({ name: "list_blackouts", arguments: { active: true } }))).toMatch(/^id\tscope\tgroup_id\tcluster_id\tconnection_id/);
    const hourAgo = new Date(Date.now() - 3_600_000).toISOString();
    expect(
      dataOf(await client.callTool({ name: "get_timeline", arguments: { time_start: hourAgo, time_end: new Date().toISOString(), connection_ids: [conn] } })),
    ).toMatch(/^occurred_at\tevent_type\tseverity\tserver_name/);
    const bad = await client.callTool({ name: "get_timeline", arguments: { time_start: "yesterday", time_end: new Date().toISOString() } });
    expect(bad.isError).toBe(true);
    // An argument the tool does not take is refused, as its schema says, not dropped (the filter would be lost).
    const typo = await client.callTool({ name: "query_metrics", arguments: { probe_name: "pg_stat_database", connection_id: conn, databse_name: "postgres" } });
    expect(typo).toMatchObject({ isError: true, content: [{ text: expect.stringMatching(/query_metrics.*databse_name/s) }] });
    const fact = `checkpoints on ${_name} run at 02:00`;
    expect(textOf(await client.callTool({ name: "store_memory", arguments: { content: fact, category: "schedule" } }))).toMatch(
      /^Stored memory \d+\nscope: user\ncategory: schedule/,
    );
    expect(dataOf(await client.callTool({ name: "recall_memories", arguments: { query: `${_name} checkpoints` } }))).toContain(`\tschedule\tfalse\t`);
    expect(dataOf(await client.callTool({ name: "get_overview", arguments: { connection_ids: [conn] } }))).toMatch(
      /^\(no LLM is configured: no summary\)\n\nSnapshot:\n\{"timestamp"/,
    );
    await client.close();
  });
});

describe("MCP access control", () => {
  it("needs a token", async () => {
    const res = await fetch(`${node.url}/mcp/v1`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(res.status).toBe(401);
  });

  it("shows a user only the tools it holds, refuses others, and keeps a scoped token to its connection", async () => {
    const { id, token } = await userWithToken(db, "analyst");
    const group = await createGroup(db, "analysts", "");
    await addMember(db, group.id, { type: "user", id });
    const nothing = await mcpClient(node.url, token);
    expect((await nothing.listTools()).tools).toEqual([]);
    const refused = await nothing.callTool({ name: "query_database", arguments: { connection_id: conn, query: "SELECT 1" } });
    expect(refused.isError).toBe(true);
    await nothing.close();

    await setMcpGrants(db, group.id, ["query_database"]);
    await db.query("INSERT INTO group_connection_privileges VALUES ($1, 0, 'read')", [group.id]);
    const granted = await mcpClient(node.url, token);
    expect((await granted.listTools()).tools.map((t) => t.name)).toEqual(["query_database"]);
    expect((await granted.callTool({ name: "query_database", arguments: { connection_id: other, query: "SELECT 1" } })).isError).toBeFalsy();
    await granted.close();

    const scoped = await fetch(`${node.url}/api/v1/rbac/tokens`, {
      method: "POST",
      headers: { ...bearer(root), "content-type": "application/json" },
      body: JSON.stringify({ owner_username: "analyst" }),
    }).then((r) => r.json());
    await fetch(`${node.url}/api/v1/rbac/tokens/${scoped.id}/scope`, {
      method: "PUT",
      headers: { ...bearer(root), "content-type": "application/json" },
      body: JSON.stringify({ connections: [{ connection_id: conn, access_level: "read" }], mcp_privileges: ["query_database"] }),
    });
    const narrow = await mcpClient(node.url, scoped.token);
    expect((await narrow.callTool({ name: "query_database", arguments: { connection_id: conn, query: "SELECT 1" } })).isError).toBeFalsy();
    const denied = await narrow.callTool({ name: "query_database", arguments: { connection_id: other, query: "SELECT 1" } });
    expect(denied).toMatchObject({ isError: true, content: [{ text: expect.stringContaining(`you may not read connection ${other}`) }] });
    await narrow.close();
  });

  it("uses the credential's current connection when none is named", async () => {
    await fetch(`${node.url}/api/v1/connections/current`, {
      method: "POST",
      headers: { ...bearer(root), "content-type": "application/json" },
      body: JSON.stringify({ connection_id: conn }),
    });
    const client = await mcpClient(node.url, root);
    expect(textOf(await client.callTool({ name: "query_database", arguments: { query: "SELECT current_database()" } }))).toContain("\npostgres\n");
    await client.close();
  });
});
