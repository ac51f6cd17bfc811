/**
 * The timeline on a real monitored server: a setting changed with ALTER SYSTEM and a reload, an extension
 * added, a pg_hba.conf rule added, and a restart of the server all appear after collection, with alerts and
 * blackouts beside them. A pg_monitor login reports the superuser-only views as not collected, without errors.
 */
import { appendFileSync } from "node:fs";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { collectOnce } from "../../src/collector/collect.ts";
import { testApp } from "../support/app.ts";
import { userWithToken } from "../support/auth.ts";
import { migratedDatastore, type TestDatastore } from "../support/datastore.ts";
import { client } from "../support/http.ts";
import { collectEvery, monitorRoleUrl, registerServer, monitoringConfig as config, quietLog as log, pause } from "../support/monitored.ts";
import { startEmbeddedPostgres, type TestServer } from "../support/postgres.ts";

let server: TestServer;
let store: TestDatastore;
let api: ReturnType<typeof client>;
let root: string;
let conn: number;
let monitor: number;
let started: string;

async function sql(text: string) {
  const c = new pg.Client({ connectionString: server.url });
  await c.connect();
  try {
    return (await c.query(text)).rows;
  } finally {
    await c.end();
  }
}

async function collect() {
  await pause(1100);
  await collectOnce(store.db, config, log);
}

beforeAll(async () => {
  server = await startEmbeddedPostgres({ persistent: true });
  store = await migratedDatastore("pg");
  api = client(testApp(store.db).app);
  root = (await userWithToken(store.db, "root", { superuser: true })).token;
  conn = await registerServer(store.db, "changing", server.url);
  monitor = await registerServer(store.db, "as-monitor", await monitorRoleUrl(server.url));
  await collectEvery(store.db, 1);
  started = new Date(Date.now() - 1000).toISOString();
  await collect();
  await collect();
  await sql("ALTER SYSTEM SET work_mem = '7MB'");
  await sql("SELECT pg_reload_conf()");
  await sql("CREATE EXTENSION IF NOT EXISTS pg_trgm");
  const [{ hba_file }] = await sql("SHOW hba_file");
  appendFileSync(hba_file, "\nhost all pglens_nobody 10.11.12.0/24 reject\n");
  await sql("SELECT pg_reload_conf()");
  await pause(300);
  await collect();
  await server.stop();
  await server.start();
  await store.db.query("DELETE FROM connection_health"); // in case a round met the server down
  await collect();
}, 120_000);
afterAll(async () => {
  await store?.close();
  await server?.stop();
});

const timeline = async (query: string, token = root) =>
  api("GET", `/api/v1/timeline/events?start_time=${started}&end_time=${new Date(Date.now() + 60_000).toISOString()}${query}`, { token });

describe("the timeline", () => {
  it("shows the setting change, the new extension, the hba rule and the restart", async () => {
    const res = await timeline(`&connection_id=${conn}`);
    expect(res.status).toBe(200);
    const byType = (t: string) => res.body.events.filter((e: { event_type: string }) => e.event_type === t);
    const [config] = byType("config_change");
    expect(config).toMatchObject({ connection_id: conn, server_name: "changing", severity: "info", title: "Configuration changed" });
    expect(config.details.changes).toContainEqual({ name: "work_mem", old_value: "4096", new_value: "7168", change_type: "modified" });
    const [ext] = byType("extension_change");
    expect(ext.details.changes).toContainEqual(expect.objectContaining({ name: "pg_trgm", change_type: "added", old_version: null }));
    const [hba] = byType("hba_change");
    expect(hba.details.changes).toContainEqual(
      expect.objectContaining({
        change_type: "added",
        after: expect.objectContaining({ user_name: "pglens_nobody", address: "10.11.12.0", auth_method: "reject" }),
      }),
    );
    const [restart] = byType("restart");
    expect(restart).toMatchObject({ severity: "warning", title: "Server restarted" });
    expect(Date.parse(restart.details.new_start_time)).toBeGreaterThan(Date.parse(restart.details.previous_start_time));
    // Newest first, and the same ids on a second call.
    const times = res.body.events.map((e: { occurred_at: string }) => Date.parse(e.occurred_at));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    expect((await timeline(`&connection_id=${conn}`)).body.events.map((e: { id: string }) => e.id)).toEqual(res.body.events.map((e: { id: string }) => e.id));
  });

  it("reports superuser-only views as not collected on a pg_monitor login", async () => {
    const rows = await store.db.query<{ probe_name: string; last_status: string; last_error: string }>(
      "SELECT probe_name, last_status, last_error FROM probe_schedule WHERE connection_id = $1 AND probe_name IN ('pg_hba_file_rules', 'pg_ident_file_mappings') ORDER BY 1",
      [monitor],
    );
    expect(rows).toEqual([
      { probe_name: "pg_hba_file_rules", last_status: "unavailable", last_error: expect.stringContaining("may not read it") },
      { probe_name: "pg_ident_file_mappings", last_status: "unavailable", last_error: expect.stringContaining("may not read it") },
    ]);
    const events = (await timeline(`&connection_id=${monitor}&event_types=hba_change,ident_change`)).body;
    expect(events).toEqual({ events: [], total_count: 0 });
  });

  it("merges alerts and blackouts, filters by type, and limits", async () => {
    const [{ id: alertId }] = await store.db.query<{ id: number }>(
      "INSERT INTO alerts (alert_type, connection_id, severity, title, status, metric_name) VALUES ('connection', $1, 'critical', 'Connection error: changing', 'active', '') RETURNING id::int AS id",
      [conn],
    );
    await api("POST", "/api/v1/alerts/acknowledge", { token: root, body: { alert_id: alertId, message: "known" } });
    await store.db.query("UPDATE alerts SET status = 'cleared', cleared_at = now() WHERE id = $1", [alertId]);
    const window = (
      await api("POST", "/api/v1/blackouts", {
        token: root,
        body: {
          scope: "estate",
          reason: "patching",
          start_time: new Date(Date.now() - 1000).toISOString(),
          end_time: new Date(Date.now() + 3_600_000).toISOString(),
        },
      })
    ).body;
    const res = await timeline(`&event_types=alert_fired,alert_acknowledged,alert_cleared,blackout_started,blackout_ended`);
    expect(res.body.events.map((e: { event_type: string; id: string }) => [e.event_type, e.id]).sort()).toEqual(
      [
        ["alert_acknowledged", expect.stringMatching(/^alert-ack-\d+$/)],
        ["alert_cleared", `alert-cleared-${alertId}`],
        ["alert_fired", `alert-fired-${alertId}`],
        ["blackout_started", `blackout-start-${window.id}`],
      ].sort(),
    );
    expect(res.body.events.find((e: { event_type: string }) => e.event_type === "blackout_started")).toMatchObject({
      connection_id: 0,
      server_name: "All servers",
      summary: "patching",
    });
    expect(res.body.events.find((e: { event_type: string }) => e.event_type === "alert_fired")).toMatchObject({
      severity: "critical",
      title: "Alert fired: Connection error: changing",
    });
    const limited = await timeline("&limit=2");
    expect(limited.body.events).toHaveLength(2);
    expect(limited.body.total_count).toBeGreaterThan(2);
  });

  it("answers 400 for bad windows and types, 403 for a server the caller cannot see and 404 for one that does not exist", async () => {
    const now = Date.now();
    const ask = (q: string, token = root) => api("GET", `/api/v1/timeline/events?${q}`, { token });
    expect((await ask(`end_time=${new Date(now).toISOString()}`)).body.error).toContain("start_time");
    expect((await ask(`start_time=yesterday&end_time=${new Date(now).toISOString()}`)).body.error).toContain("`start_time` is not an RFC 3339 timestamp");
    expect((await ask(`start_time=${new Date(now - 400 * 86_400_000).toISOString()}&end_time=${new Date(now).toISOString()}`)).body.error).toContain(
      "more than 366 days",
    );
    expect((await ask(`start_time=${new Date(now).toISOString()}&end_time=${new Date(now - 1000).toISOString()}`)).body.error).toContain("must be after");
    expect((await timeline("&event_types=config_change,reboot")).body.error).toContain('unknown event type "reboot"');
    await store.db.query("UPDATE connections SET is_shared = false"); // registered shared: now only the superuser sees them
    const stranger = (await userWithToken(store.db, "stranger")).token;
    expect((await timeline(`&connection_id=${conn}`, stranger)).status).toBe(403);
    expect((await timeline("&connection_id=999999", stranger)).status).toBe(404);
    expect((await timeline("", stranger)).body.events.map((e: { event_type: string }) => e.event_type)).toEqual(["blackout_started"]);
  });
});
