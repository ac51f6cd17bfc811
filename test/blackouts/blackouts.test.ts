/**
 * Maintenance windows through the API on a real PostgreSQL datastore: validation (each rule, nothing
 * written), who may place a window where, visibility, stop, schedules, the alerter's suppression, and
 * schedules materialised once by racing alerters (and late, within their duration).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPg } from "../../drivers/pg.ts";
import { evaluateAndApply } from "../../src/alerts/alerter.ts";
import { materialiseSchedules } from "../../src/datastore/blackouts.ts";
import { addMember, createGroup, setAdminGrants, setConnectionGrants } from "../../src/datastore/groups.ts";
import { testApp } from "../support/app.ts";
import { userWithToken } from "../support/auth.ts";
import { addConnection, migratedDatastore, type TestDatastore } from "../support/datastore.ts";
import { client } from "../support/http.ts";

let store: TestDatastore;
let api: ReturnType<typeof client>;
let root: string;
let planner: string;
let wide: string;
const ids: Record<string, number> = {};
const hour = 3_600_000;
const at = (offsetMs: number) => new Date(Date.now() + offsetMs).toISOString();

async function userWith(name: string, connections: Array<{ connection_id: number; access_level: "read" | "read_write" }>) {
  const u = await userWithToken(store.db, name);
  const g = await createGroup(store.db, `${name}-group`, "");
  await setAdminGrants(store.db, g.id, ["manage_blackouts"]);
  await setConnectionGrants(store.db, g.id, connections);
  await addMember(store.db, g.id, { type: "user", id: u.id });
  return u.token;
}

const count = async (table: string) => (await store.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`))[0].n;

beforeAll(async () => {
  store = await migratedDatastore("pg");
  api = client(testApp(store.db).app);
  root = (await userWithToken(store.db, "root", { superuser: true })).token;
  const [g] = await store.db.query<{ id: number }>("INSERT INTO cluster_groups (name) VALUES ('g1') RETURNING id");
  const [cl] = await store.db.query<{ id: number }>("INSERT INTO clusters (name, group_id) VALUES ('c1', $1) RETURNING id", [g.id]);
  ids.group = g.id;
  ids.cluster = cl.id;
  for (const name of ["a", "b", "solo"]) ids[name] = await addConnection(store.db, name);
  await store.db.query("UPDATE connections SET cluster_id = $1 WHERE id = ANY($2::int[])", [cl.id, [ids.a, ids.b]]);
  await store.db.query("UPDATE connections SET is_monitored = true");
  planner = await userWith("planner", [{ connection_id: ids.a, access_level: "read" }]);
  wide = await userWith("wide", [{ connection_id: 0, access_level: "read" }]);
});
afterAll(() => store.close());

const window = (fields: Record<string, unknown>) => ({ reason: "upgrade", start_time: at(-hour), end_time: at(hour), ...fields });

describe("blackouts: validation", () => {
  it.each([
    [{ scope: "estate", connection_id: 1 }, "estate scope takes no connection_id"],
    [{ scope: "group" }, "group scope needs group_id"],
    [{ scope: "cluster", cluster_id: 1, group_id: 1 }, "cluster scope takes only cluster_id, not group_id"],
    [{ scope: "cluster", cluster_id: 1, database_name: "app" }, "only a server-scope window can name a database"],
    [{ scope: "galaxy" }, "body field `scope`"],
    [{ scope: "estate", start_time: "tomorrow" }, "`start_time` is not an RFC 3339 timestamp"],
    [{ scope: "estate", end_time: at(-2 * hour) }, "end_time must be after start_time"],
    [{ scope: "estate", is_active: true }, "unknown body field `is_active`"],
  ])("%j -> 400", async (fields, message) => {
    const res = await api("POST", "/api/v1/blackouts", { token: root, body: window(fields) });
    expect(res.status).toBe(400);
    expect(res.body.error).toContain(message);
    expect(await count("blackouts")).toBe(0);
  });

  it.each([
    [{ cron_expression: "61 * * * *" }, "Invalid value for minute: 61"],
    [{ cron_expression: "@daily" }, "not a shorthand like @daily"],
    [{ timezone: "Europe/Atlantis" }, "is not an IANA timezone"],
    [{ duration_minutes: 0 }, "body field `duration_minutes`"],
    [{ name: " " }, "body field `name`"],
    [{ scope: "server" }, "server scope needs connection_id"],
  ])("schedule %j -> 400", async (fields, message) => {
    const res = await api("POST", "/api/v1/blackout-schedules", {
      token: root,
      body: { scope: "estate", name: "nightly", cron_expression: "0 2 * * *", duration_minutes: 60, ...fields },
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toContain(message);
    expect(await count("blackout_schedules")).toBe(0);
  });
});

describe("blackouts: who may place them, and who sees them", () => {
  it("keeps a planner to the servers it can read", async () => {
    expect((await api("POST", "/api/v1/blackouts", { token: planner, body: window({ scope: "server", connection_id: ids.a }) })).status).toBe(201);
    expect((await api("POST", "/api/v1/blackouts", { token: planner, body: window({ scope: "server", connection_id: ids.b }) })).status).toBe(404);
    const cluster = await api("POST", "/api/v1/blackouts", { token: planner, body: window({ scope: "cluster", cluster_id: ids.cluster }) });
    expect(cluster).toMatchObject({ status: 403, body: { error: `a window on cluster ${ids.cluster} would silence servers you cannot read` } });
    expect((await api("POST", "/api/v1/blackouts", { token: planner, body: window({ scope: "group", group_id: ids.group }) })).status).toBe(403);
    expect((await api("POST", "/api/v1/blackouts", { token: planner, body: window({ scope: "estate" }) })).body.error).toContain(
      "needs read on all connections",
    );
    expect((await api("POST", "/api/v1/blackouts", { token: wide, body: window({ scope: "estate" }) })).status).toBe(201);
    expect((await api("POST", "/api/v1/blackouts", { token: wide, body: window({ scope: "cluster", cluster_id: ids.cluster }) })).status).toBe(201);
  });

  it("keeps a planner's schedules to the servers it can read too", async () => {
    const schedule = (body: Record<string, unknown>) =>
      api("POST", "/api/v1/blackout-schedules", { token: planner, body: { name: "nightly", cron_expression: "0 2 * * *", duration_minutes: 30, ...body } });
    expect((await schedule({ scope: "estate" })).status).toBe(403);
    expect((await schedule({ scope: "cluster", cluster_id: ids.cluster })).status).toBe(403);
    expect((await schedule({ scope: "server", connection_id: ids.b })).status).toBe(404);
    const own = await schedule({ scope: "server", connection_id: ids.a });
    expect(own.status).toBe(201);
    // Nor can it widen its own schedule to the estate by replacing it.
    const widened = await api("PUT", `/api/v1/blackout-schedules/${own.body.id}`, {
      token: planner,
      body: { scope: "estate", name: "nightly", cron_expression: "0 2 * * *", duration_minutes: 30 },
    });
    expect(widened.status).toBe(403);
    expect((await api("DELETE", `/api/v1/blackout-schedules/${own.body.id}`, { token: planner })).status).toBe(204);
  });

  it("shows each caller only windows on what it can see", async () => {
    const onB = (
      await api("POST", "/api/v1/blackouts", {
        token: root,
        body: window({ scope: "server", connection_id: ids.b, start_time: at(2 * hour), end_time: at(3 * hour) }),
      })
    ).body;
    const mine = (await api("GET", "/api/v1/blackouts", { token: planner })).body;
    expect(mine.blackouts.map((b: { scope: string }) => b.scope).sort()).toEqual(["cluster", "estate", "server"]);
    expect(mine.total_count).toBe(3);
    expect((await api("GET", `/api/v1/blackouts/${onB.id}`, { token: planner })).status).toBe(404);
    expect((await api("DELETE", `/api/v1/blackouts/${onB.id}`, { token: planner })).status).toBe(404);
    expect((await api("GET", "/api/v1/blackouts", { token: root })).body.total_count).toBe(4);
    expect((await api("GET", "/api/v1/blackouts?active=false", { token: root })).body.blackouts.map((b: { id: number }) => b.id)).toEqual([onB.id]);
    expect((await api("GET", `/api/v1/blackouts?scope=server&connection_id=${ids.a}`, { token: root })).body.total_count).toBe(1);
  });

  it("edits only the reason and end, stops an active window, and refuses to stop one that is not", async () => {
    const planned = (await api("POST", "/api/v1/blackouts", { token: root, body: window({ scope: "server", connection_id: ids.solo }) })).body;
    expect(planned.is_active).toBe(true);
    expect((await api("PUT", `/api/v1/blackouts/${planned.id}`, { token: root, body: { start_time: at(0) } })).status).toBe(400);
    expect((await api("PUT", `/api/v1/blackouts/${planned.id}`, { token: root, body: { end_time: at(-2 * hour) } })).body.error).toBe(
      "end_time must be after start_time",
    );
    expect((await api("PUT", `/api/v1/blackouts/${planned.id}`, { token: root, body: { reason: "kernel patch" } })).body).toMatchObject({
      reason: "kernel patch",
      is_active: true,
    });
    const stopped = await api("POST", `/api/v1/blackouts/${planned.id}/stop`, { token: root });
    expect(stopped.body).toMatchObject({ id: planned.id, is_active: false });
    expect(Date.parse(stopped.body.end_time)).toBeLessThanOrEqual(Date.now());
    expect((await api("POST", `/api/v1/blackouts/${planned.id}/stop`, { token: root })).body.error).toBe(`blackout ${planned.id} is not active`);
  });
});

describe("blackout schedules", () => {
  it("returns the next runs, replaces whole, and refuses a bad replacement without writing", async () => {
    const created = await api("POST", "/api/v1/blackout-schedules", {
      token: root,
      body: {
        scope: "server",
        connection_id: ids.solo,
        name: "sunday patching",
        cron_expression: "0 3 * * 0",
        duration_minutes: 120,
        timezone: "Europe/Berlin",
      },
    });
    expect(created.status).toBe(201);
    expect(created.body.next_runs).toHaveLength(3);
    for (const run of created.body.next_runs) {
      const local = new Intl.DateTimeFormat("en-GB", { timeZone: "Europe/Berlin", weekday: "short", hour: "2-digit", minute: "2-digit" }).format(new Date(run));
      expect(local).toBe("Sun 03:00");
    }
    const bad = await api("PUT", `/api/v1/blackout-schedules/${created.body.id}`, {
      token: root,
      body: { scope: "server", connection_id: ids.solo, name: "x", cron_expression: "0 3 * *", duration_minutes: 120 },
    });
    expect(bad.status).toBe(400);
    expect((await api("GET", `/api/v1/blackout-schedules/${created.body.id}`, { token: root })).body).toMatchObject({
      name: "sunday patching",
      cron_expression: "0 3 * * 0",
      timezone: "Europe/Berlin",
    });
    const replaced = await api("PUT", `/api/v1/blackout-schedules/${created.body.id}`, {
      token: root,
      body: { scope: "estate", name: "nightly", cron_expression: "30 1 * * *", duration_minutes: 30 },
    });
    expect(replaced.body).toMatchObject({ scope: "estate", connection_id: null, timezone: "UTC", reason: "", enabled: true });
    expect((await api("GET", "/api/v1/blackout-schedules", { token: planner })).body.total_count).toBe(1);
    expect((await api("DELETE", `/api/v1/blackout-schedules/${created.body.id}`, { token: root })).status).toBe(204);
  });

  it("filters schedules by scope, connection_id, cluster_id and group_id, within what the caller sees", async () => {
    const made: number[] = [];
    for (const place of [
      { scope: "server", connection_id: ids.a },
      { scope: "server", connection_id: ids.solo },
      { scope: "cluster", cluster_id: ids.cluster },
      { scope: "group", group_id: ids.group },
    ]) {
      const res = await api("POST", "/api/v1/blackout-schedules", {
        token: root,
        body: { ...place, name: `filter ${place.scope} ${made.length}`, cron_expression: "0 4 * * *", duration_minutes: 10 },
      });
      made.push(res.body.id);
    }
    const names = async (q: string, token = root) =>
      (await api("GET", `/api/v1/blackout-schedules?${q}`, { token })).body.schedules.map((s: { id: number }) => s.id);
    try {
      expect(await names(`connection_id=${ids.a}`)).toEqual([made[0]]);
      expect(await names(`connection_id=${ids.solo}`, planner)).toEqual([]); // planner cannot see solo
      expect(await names(`cluster_id=${ids.cluster}`)).toEqual([made[2]]);
      expect(await names(`group_id=${ids.group}`)).toEqual([made[3]]);
      expect(await names(`scope=server&connection_id=${ids.solo}`)).toEqual([made[1]]);
      expect((await api("GET", "/api/v1/blackout-schedules?connection_id=abc", { token: root })).status).toBe(400);
    } finally {
      await store.db.query("DELETE FROM blackout_schedules WHERE id = ANY($1::int[])", [made]);
    }
  });

  it("opens each scheduled window once, however many alerters race, and late within its duration", async () => {
    await store.db.query("DELETE FROM blackouts");
    const schedule = (
      await api("POST", "/api/v1/blackout-schedules", {
        token: root,
        body: { scope: "server", connection_id: ids.solo, name: "every minute", cron_expression: "* * * * *", duration_minutes: 5 },
      })
    ).body;
    const drivers = Array.from({ length: 4 }, () => openPg(store.url!));
    try {
      const opened = (await Promise.all(drivers.map((d) => materialiseSchedules(d)))).flat();
      expect(opened).toHaveLength(1);
    } finally {
      await Promise.all(drivers.map((d) => d.close()));
    }
    const [made] = (await api("GET", "/api/v1/blackouts", { token: root })).body.blackouts;
    expect(made).toMatchObject({
      scope: "server",
      connection_id: ids.solo,
      reason: "Scheduled: every minute",
      created_by: "scheduler",
      schedule_id: schedule.id,
      is_active: true,
    });
    expect(Date.parse(made.end_time) - Date.parse(made.start_time)).toBe(5 * 60_000);
    // An alerter down at 02:00 opens the 02:00 window at 02:40, and none at 03:01.
    await api("PUT", `/api/v1/blackout-schedules/${schedule.id}`, {
      token: root,
      body: { scope: "server", connection_id: ids.solo, name: "nightly", cron_expression: "0 2 * * *", duration_minutes: 60 },
    });
    expect(await materialiseSchedules(store.db, new Date("2026-11-20T03:01:00Z"))).toEqual([]);
    const late = await materialiseSchedules(store.db, new Date("2026-11-20T02:40:00Z"));
    expect(late).toHaveLength(1);
    const [row] = await store.db.query<{ start_time: Date; end_time: Date }>("SELECT start_time, end_time FROM blackouts WHERE id = $1", [late[0]]);
    expect([row.start_time.toISOString(), row.end_time.toISOString()]).toEqual(["2026-11-20T02:00:00.000Z", "2026-11-20T03:00:00.000Z"]);
  });
});

describe("suppression", () => {
  it("an alert that would fire does not while a window covers the server, and fires once it is stopped", async () => {
    await store.db.query("DELETE FROM blackouts");
    await store.db.query("UPDATE connections SET connection_error = CASE WHEN id = $1 THEN 'refused' END", [ids.a]);
    const covering = (await api("POST", "/api/v1/blackouts", { token: root, body: window({ scope: "group", group_id: ids.group }) })).body;
    expect((await evaluateAndApply(store.db)).raised).toEqual([]);
    await api("POST", `/api/v1/blackouts/${covering.id}/stop`, { token: root });
    const after = await evaluateAndApply(store.db);
    expect(after.raised).toHaveLength(1);
    const [alert] = (await api("GET", `/api/v1/alerts?connection_id=${ids.a}`, { token: root })).body.alerts;
    expect(alert).toMatchObject({ alert_type: "connection", title: "Connection error: a" });
  });
});
