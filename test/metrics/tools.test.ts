import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeSamples } from "../../src/samples/sample-writer.ts";
import { PROBES } from "../../src/probes/index.ts";
import { testApp } from "../support/app.ts";
import { bearer, userWithToken } from "../support/auth.ts";
import { addConnection, DATASTORE_KINDS, migratedDatastore, type TestDatastore } from "../support/datastore.ts";
import { fencedData } from "../support/fenced.ts";

const T0 = Date.parse("2026-01-01T00:00:00Z");
const iso = (seconds: number) => new Date(T0 + seconds * 1000).toISOString();

describe.each(DATASTORE_KINDS)("datastore tools through the REST bridge on %s", (kind) => {
  let store: TestDatastore;
  let conn: number;
  let app: ReturnType<typeof testApp>["app"];
  let auth: Record<string, string>;
  const call = async (name: string, args?: unknown, a = app) => {
    const res = await a.request("/api/v1/mcp/tools/call", {
      method: "POST",
      body: JSON.stringify({ name, arguments: args }),
      headers: { "content-type": "application/json", ...auth },
    });
    expect(res.status).toBe(200);
    return (await res.json()) as { content: Array<{ text: string }>; isError: boolean };
  };

  beforeAll(async () => {
    store = await migratedDatastore(kind);
    conn = await addConnection(store.db, "primary");
    const rows = [0, 1, 2].flatMap((j) => [
      { collected_at: iso(30 + 300 * j), interface_name: "eth0", ip_address: "10.0.0.1", rx_bytes: 1000 * j },
      { collected_at: iso(30 + 300 * j), interface_name: "lo", ip_address: "127.0.0.1", rx_bytes: 99_999 },
    ]);
    await writeSamples(store.db, { connectionId: conn, probe: "pg_sys_network_info", rows });
    app = testApp(store.db).app;
    auth = bearer((await userWithToken(store.db, "admin", { superuser: true })).token);
  });
  afterAll(() => store.close());

  it("lists the tools with JSON Schemas and read-only annotations", async () => {
    const body = await (await app.request("/api/v1/mcp/tools", { headers: auth })).json();
    expect(body.tools.map((t: { name: string }) => t.name)).toEqual([
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
    const query = body.tools.find((t: { name: string }) => t.name === "query_metrics");
    expect(query.inputSchema.required).toEqual(["probe_name"]);
    expect(query.inputSchema.properties.aggregation.enum).toEqual(["avg", "sum", "min", "max", "last"]);
    expect(query.annotations.readOnlyHint).toBe(true);
  });

  it("list_probes answers a TSV table with row counts", async () => {
    const { content, isError } = await call("list_probes");
    expect(isError).toBe(false);
    const lines = content[0].text.split("\n");
    expect(lines[0]).toBe("name\tdescription\trow_count\tscope");
    const network = lines.find((l) => l.startsWith("pg_sys_network_info\t"))!.split("\t");
    expect(network[2]).toBe("6");
    expect(network[3]).toBe("server");
    expect(
      lines
        .find((l) => l.startsWith("pg_stat_database\t"))!
        .split("\t")
        .slice(2),
    ).toEqual(["0", "database"]);
    expect(lines).toHaveLength(PROBES.length + 1);
  });

  it("describe_probe lists every column with its type and role", async () => {
    const { content } = await call("describe_probe", { probe_name: "pg_stat_database" });
    const lines = content[0].text.split("\n");
    expect(lines[0]).toBe("column_name\tdata_type\tdescription\tcolumn_type");
    expect(lines[1]).toMatch(/^connection_id\tinteger\t.*\tdimension$/);
    expect(lines.find((l) => l.startsWith("xact_commit\t"))).toMatch(/^xact_commit\tbigint\tTransactions committed \(cumulative counter; .*\)\tmetric$/);
    expect(lines.find((l) => l.startsWith("stats_reset\t"))).toMatch(/\tdimension$/);
    expect((await call("describe_probe", { probe_name: "nope" })).content[0].text).toBe("probe `nope` not found; list_probes shows the probes");
  });

  it("query_metrics answers buckets without loopback interfaces, never narrower than the interval", async () => {
    const args = {
      probe_name: "pg_sys_network_info",
      connection_id: conn,
      time_start: iso(0),
      time_end: iso(900),
      buckets: 3,
      metrics: "rx_bytes",
      aggregation: "max",
    };
    // The default interval of pg_sys_network_info is 600 s: a 900 s window holds one bucket.
    expect(fencedData((await call("query_metrics", args)).content[0].text)).toBe(["bucket_time\trx_bytes", `${iso(0)}\t2000`, `${iso(900)}\t2000`].join("\n"));
    await store.db.query("UPDATE probe_configs SET collection_interval_seconds = 300 WHERE probe_name = 'pg_sys_network_info'");
    const { content, isError } = await call("query_metrics", args);
    expect(isError).toBe(false);
    expect(fencedData(content[0].text)).toBe(
      ["bucket_time\trx_bytes", `${iso(0)}\t0`, `${iso(300)}\t1000`, `${iso(600)}\t2000`, `${iso(900)}\t2000`].join("\n"),
    );
  });

  it("query_metrics with group_by names a column per entity (loopback still left out)", async () => {
    const args = {
      probe_name: "pg_sys_network_info",
      connection_id: conn,
      time_start: iso(0),
      time_end: iso(900),
      buckets: 3,
      metrics: "rx_bytes",
      aggregation: "max",
      group_by: "interface_name",
    };
    expect(fencedData((await call("query_metrics", args)).content[0].text)).toBe(
      ["bucket_time\trx_bytes{interface_name=eth0}", `${iso(0)}\t0`, `${iso(300)}\t1000`, `${iso(600)}\t2000`, `${iso(900)}\t2000`].join("\n"),
    );
    expect((await call("query_metrics", { ...args, group_by: undefined, top: 2 })).content[0].text).toMatch(/give `group_by`/);
  });

  it.each([
    [
      { probe_name: "pg_sys_network_info", connection_id: 1, metrics: "rx_bytes_per_sec" },
      /`rx_bytes_per_sec` is a derived metric: ask get_metric_series for it/,
    ],
    [{ probe_name: "pg_sys_network_info", connection_id: 1, buckets: 501 }, /argument `buckets`.*500/],
    [{ probe_name: "pg_sys_network_info", connection_id: 1, buckets: 0 }, /argument `buckets`.*1/],
    [{ probe_name: "pg_sys_network_info" }, /give connection_id \(one server\) or connection_ids \(several\)/],
    [{ probe_name: "pg_stat_database", connection_id: 1, databse_name: "app" }, /invalid arguments for query_metrics: unknown argument `databse_name`/],
    [{ probe_name: "pg_sys_network_info", connection_id: 4242 }, /connection 4242 not found/],
    [
      { probe_name: "pg_sys_network_info", connection_id: 1, time_start: "whenever" },
      /`time_start` must be an RFC 3339 \(ISO 8601\) timestamp or a relative duration/,
    ],
  ])("query_metrics refuses %o", async (args, message) => {
    const { content, isError } = await call("query_metrics", args);
    expect(isError).toBe(true);
    expect(content[0].text).toMatch(message);
  });

  it("hides a tool switched off in configuration and refuses calls to it", async () => {
    const { app: limited } = testApp(store.db, { config: { builtins: { tools: { query_metrics: false } } } });
    const body = await (await limited.request("/api/v1/mcp/tools", { headers: auth })).json();
    expect(body.tools.map((t: { name: string }) => t.name)).toEqual([
      "list_connections",
      "list_probes",
      "describe_probe",
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
    const refused = await call("query_metrics", { probe_name: "pg_sys_network_info", connection_id: conn }, limited);
    expect(refused).toEqual({
      isError: true,
      content: [{ type: "text", text: "tool `query_metrics` is disabled by configuration (builtins.tools.query_metrics)" }],
    });
    expect((await call("no_such_tool")).content[0].text).toMatch(/unknown tool `no_such_tool`/);
  });
});
