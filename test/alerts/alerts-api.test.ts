/**
 * The alerts API around stored alerts: visibility (an alert on a connection the caller cannot read does not
 * exist for it), filters and their validation, acknowledgment rules, analysis, override validation, and
 * retention of old alerts.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { alerterOnce } from "../../src/alerts/alerter.ts";
import { resolveConfig } from "../../src/config.ts";
import { addMember, createGroup, setAdminGrants, setConnectionGrants } from "../../src/datastore/groups.ts";
import { createLogger } from "../../src/log.ts";
import { testApp } from "../support/app.ts";
import { userWithToken } from "../support/auth.ts";
import { addConnection, migratedDatastore, type TestDatastore } from "../support/datastore.ts";
import { client } from "../support/http.ts";

let store: TestDatastore;
let api: ReturnType<typeof client>;
let root: string;
let reader: string;
let writer: string;
let writerScopedToRead: string;
let seen: number;
let hidden: number;
const ids: Record<string, number> = {};

async function insertAlert(connection: number, fields: Record<string, unknown> = {}): Promise<number> {
  const row = {
    alert_type: "threshold",
    metric_name: "m",
    severity: "warning",
    title: "t",
    status: "active",
    cleared_at: null,
    triggered_at: new Date(),
    object_name: String(Math.random()),
    ...fields,
  };
  const [{ id }] = await store.db.query<{ id: number }>(
    "INSERT INTO alerts (connection_id, alert_type, metric_name, severity, title, status, cleared_at, triggered_at, object_name) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id::int AS id",
    [connection, row.alert_type, row.metric_name, row.severity, row.title, row.status, row.cleared_at, row.triggered_at, row.object_name],
  );
  return id;
}

beforeAll(async () => {
  store = await migratedDatastore("pglite");
  api = client(testApp(store.db).app);
  root = (await userWithToken(store.db, "root", { superuser: true })).token;
  seen = await addConnection(store.db, "seen");
  hidden = await addConnection(store.db, "hidden");
  const user = await userWithToken(store.db, "reader");
  reader = user.token;
  const group = await createGroup(store.db, "readers", "");
  await setConnectionGrants(store.db, group.id, [{ connection_id: seen, access_level: "read" }]);
  await addMember(store.db, group.id, { type: "user", id: user.id });
  const w = await userWithToken(store.db, "writer");
  writer = w.token;
  const writers = await createGroup(store.db, "writers", "");
  await setConnectionGrants(store.db, writers.id, [{ connection_id: seen, access_level: "read_write" }]);
  await addMember(store.db, writers.id, { type: "user", id: w.id });
  const scoped = await api("POST", "/api/v1/rbac/tokens", { token: root, body: { owner_username: "writer", note: "read only" } });
  await api("PUT", `/api/v1/rbac/tokens/${scoped.body.id}/scope`, { token: root, body: { connections: [{ connection_id: seen, access_level: "read" }] } });
  writerScopedToRead = scoped.body.token;
  ids.seenActive = await insertAlert(seen, { severity: "critical" });
  ids.seenCleared = await insertAlert(seen, { status: "cleared", cleared_at: new Date(), triggered_at: new Date(Date.now() - 3600_000) });
  ids.hiddenActive = await insertAlert(hidden);
});
afterAll(() => store.close());

describe("alerts API", () => {
  it("shows a caller only the alerts of connections it may read", async () => {
    const mine = await api("GET", "/api/v1/alerts", { token: reader });
    expect(mine.body.total).toBe(2);
    expect(mine.body.alerts.map((a: { id: number }) => a.id)).toEqual([ids.seenActive, ids.seenCleared]);
    expect(await api("GET", `/api/v1/alerts?connection_id=${hidden}`, { token: reader })).toMatchObject({
      status: 403,
      body: { error: expect.stringContaining(`you may not read connection ${hidden}`) },
    });
    expect(await api("GET", "/api/v1/alerts?connection_id=999999", { token: reader })).toMatchObject({
      status: 404,
      body: { error: "connection 999999 not found" },
    });
    expect((await api("GET", "/api/v1/alerts/counts", { token: reader })).body).toEqual({ total: 1, by_server: { [seen]: 1 } });
    for (const [method, path, body] of [
      ["POST", "/api/v1/alerts/acknowledge", { alert_id: ids.hiddenActive }],
      ["DELETE", `/api/v1/alerts/acknowledge?alert_id=${ids.hiddenActive}`, undefined],
      ["PUT", "/api/v1/alerts/analysis", { alert_id: ids.hiddenActive, analysis: "mine now" }],
    ] as const) {
      const res = await api(method, path, { token: reader, body });
      expect(res, `${method} ${path}`).toMatchObject({ status: 404, body: { error: `alert ${ids.hiddenActive} not found` } });
    }
    expect((await store.db.query("SELECT status, ai_analysis FROM alerts WHERE id = $1", [ids.hiddenActive]))[0]).toEqual({
      status: "active",
      ai_analysis: null,
    });
  });

  it("filters, and refuses filters it cannot read", async () => {
    expect((await api("GET", "/api/v1/alerts?exclude_cleared=true", { token: root })).body.total).toBe(2);
    expect((await api("GET", "/api/v1/alerts?severity=critical", { token: root })).body.alerts.map((a: { id: number }) => a.id)).toEqual([ids.seenActive]);
    const since = new Date(Date.now() - 600_000).toISOString();
    expect((await api("GET", `/api/v1/alerts?start_time=${since}&connection_ids=${seen},${hidden}`, { token: root })).body.total).toBe(2);
    expect((await api("GET", "/api/v1/alerts?limit=1&offset=1", { token: root })).body.alerts).toHaveLength(1);
    for (const bad of ["status=open", "severity=high", "limit=0", "limit=1001", "start_time=yesterday", "connection_ids=1,x", "exclude_cleared=maybe"]) {
      const res = await api("GET", `/api/v1/alerts?${bad}`, { token: root });
      expect(res.status, bad).toBe(400);
      expect(res.body.error, bad).toBeTruthy();
    }
  });

  it("lets a viewer (read, or a token scoped to read) acknowledge, mark or analyse nothing: 403, nothing written", async () => {
    expect(writerScopedToRead).toMatch(/./);
    for (const token of [reader, writerScopedToRead]) {
      for (const [method, path, body] of [
        ["POST", "/api/v1/alerts/acknowledge", { alert_id: ids.seenActive, false_positive: true }],
        ["DELETE", `/api/v1/alerts/acknowledge?alert_id=${ids.seenActive}`, undefined],
        ["PUT", "/api/v1/alerts/analysis", { alert_id: ids.seenActive, analysis: "nothing to see here" }],
      ] as const) {
        const res = await api(method, path, { token, body });
        expect(res.status, `${method} ${path}`).toBe(403);
        expect(res.body.error).toContain(`changing alert ${ids.seenActive} needs read_write on its connection ${seen}`);
      }
    }
    expect((await store.db.query("SELECT status, ai_analysis FROM alerts WHERE id = $1", [ids.seenActive]))[0]).toEqual({
      status: "active",
      ai_analysis: null,
    });
    expect((await store.db.query("SELECT count(*)::int AS n FROM alert_acknowledgments"))[0]).toEqual({ n: 0 });
  });

  it("acknowledges only active alerts, and stores an analysis (read_write on the connection)", async () => {
    expect((await api("POST", "/api/v1/alerts/acknowledge", { token: writer, body: { alert_id: ids.seenCleared } })).status).toBe(409);
    expect((await api("POST", "/api/v1/alerts/acknowledge", { token: writer, body: { alert_id: ids.seenActive, false_positive: true } })).body).toEqual({
      status: "acknowledged",
    });
    const [acked] = (await api("GET", `/api/v1/alerts?status=acknowledged`, { token: reader })).body.alerts;
    expect(acked).toMatchObject({ id: ids.seenActive, acknowledged_by: "writer", false_positive: true });
    expect((await api("DELETE", `/api/v1/alerts/acknowledge?alert_id=${ids.seenActive}`, { token: writer })).body).toEqual({ status: "active" });
    expect((await api("DELETE", `/api/v1/alerts/acknowledge?alert_id=${ids.seenActive}`, { token: writer })).status).toBe(409);
    expect((await api("DELETE", "/api/v1/alerts/acknowledge?alert_id=abc", { token: writer })).status).toBe(400);
    expect(
      (await api("PUT", "/api/v1/alerts/analysis", { token: writer, body: { alert_id: ids.seenActive, analysis: "vacuum is behind", metric_value: 42 } })).body,
    ).toEqual({ status: "saved" });
    expect((await api("PUT", "/api/v1/alerts/analysis", { token: writer, body: { alert_id: ids.seenActive } })).status).toBe(400);
    const [analysed] = (await api("GET", `/api/v1/alerts?severity=critical`, { token: reader })).body.alerts;
    expect(analysed).toMatchObject({ ai_analysis: "vacuum is behind", ai_analysis_metric_value: 42 });
  });

  it("validates overrides and keeps them to what the caller may see", async () => {
    const [rule] = await store.db.query<{ id: number }>("SELECT id FROM alert_rules WHERE name = 'deadlocks_detected'");
    const put = (path: string, body: unknown, token = root) => api("PUT", `/api/v1/alert-overrides/${path}/${rule.id}`, { token, body });
    const good = { operator: ">", threshold: 5, severity: "critical", enabled: true };
    expect((await put(`server/${seen}`, { ...good, operator: "=>" })).status).toBe(400);
    expect((await put(`server/${seen}`, { ...good, severity: "urgent" })).status).toBe(400);
    expect((await put(`cluster/1`, { ...good, database_name: "app" })).body.error).toContain("only a server override can name a database");
    expect((await put(`server/999999`, good)).status).toBe(404);
    expect((await api("PUT", `/api/v1/alert-overrides/server/${seen}/999999`, { token: root, body: good })).status).toBe(404);
    expect((await put(`server/${seen}`, { ...good, database_name: "app" })).status).toBe(200);
    const entry = (await api("GET", `/api/v1/alert-overrides/server/${seen}`, { token: reader })).body.find((e: { rule_id: number }) => e.rule_id === rule.id);
    expect(entry).toMatchObject({
      has_override: false,
      database_overrides: [{ database_name: "app", operator: ">", threshold: 5, severity: "critical", enabled: true }],
    });
    expect((await api("GET", `/api/v1/alert-overrides/server/${hidden}`, { token: reader })).status).toBe(404);
    // Someone who may edit rules but not see the server cannot override rules there.
    const tuner = await userWithToken(store.db, "tuner");
    const tuners = await createGroup(store.db, "tuners", "");
    await setAdminGrants(store.db, tuners.id, ["manage_alert_rules"]);
    await setConnectionGrants(store.db, tuners.id, [{ connection_id: seen, access_level: "read" }]);
    await addMember(store.db, tuners.id, { type: "user", id: tuner.id });
    expect((await api("PUT", `/api/v1/alert-overrides/server/${hidden}/${rule.id}`, { token: tuner.token, body: good })).status).toBe(404);
    expect((await api("GET", `/api/v1/alert-overrides/context/${hidden}/${rule.id}`, { token: tuner.token })).status).toBe(404);
    expect((await store.db.query("SELECT count(*)::int AS n FROM alert_overrides WHERE scope_id = $1", [hidden]))[0]).toEqual({ n: 0 });
    const context = (await api("GET", `/api/v1/alert-overrides/context/${seen}/${rule.id}`, { token: root })).body;
    expect(context).toMatchObject({
      hierarchy: { connection_id: seen, cluster_id: null },
      overrides: { server: null },
      effective: { source: "default", threshold: 0 },
    });
    expect((await api("DELETE", `/api/v1/alert-overrides/server/${seen}/${rule.id}?database_name=app`, { token: root })).status).toBe(204);
    expect(
      (await api("GET", `/api/v1/alert-overrides/server/${seen}`, { token: reader })).body.find((e: { rule_id: number }) => e.rule_id === rule.id)
        .database_overrides,
    ).toEqual([]);
  });

  it("deletes cleared and acknowledged alerts older than the retention", async () => {
    const old = await insertAlert(seen, {
      status: "cleared",
      cleared_at: new Date(Date.now() - 91 * 86_400_000),
      triggered_at: new Date(Date.now() - 92 * 86_400_000),
    });
    const oldButOpen = await insertAlert(seen, { triggered_at: new Date(Date.now() - 92 * 86_400_000) });
    const round = await alerterOnce(store.db, resolveConfig({}, {}), createLogger("error"));
    expect(round).toMatchObject({ ran: true, deletedOld: 1 });
    const left = (await store.db.query<{ id: number }>("SELECT id::int AS id FROM alerts WHERE id = ANY($1::bigint[])", [[old, oldButOpen]])).map((r) => r.id);
    expect(left).toEqual([oldButOpen]);
  });
});
