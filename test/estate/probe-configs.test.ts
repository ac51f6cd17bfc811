import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testApp } from "../support/app.ts";
import { userWithToken } from "../support/auth.ts";
import { addConnection, migratedDatastore, type TestDatastore } from "../support/datastore.ts";
import { client } from "../support/http.ts";

let store: TestDatastore;
let api: ReturnType<typeof client>;
let root: string;
let viewer: string;

beforeAll(async () => {
  store = await migratedDatastore("pglite");
  api = client(testApp(store.db).app);
  root = (await userWithToken(store.db, "root", { superuser: true })).token;
  viewer = (await userWithToken(store.db, "viewer")).token;
});
afterAll(() => store.close());

describe("probe configuration", () => {
  it("lists the global rows and changes them with validation", async () => {
    const rows = (await api("GET", "/api/v1/probe-configs", { token: viewer })).body;
    const db = rows.find((r: { probe_name: string }) => r.probe_name === "pg_stat_database");
    expect(db).toMatchObject({ scope: "global", scope_id: null, is_enabled: true, collection_interval_seconds: 300, retention_days: 7 });
    expect((await api("PUT", `/api/v1/probe-configs/${db.id}`, { token: viewer, body: { retention_days: 14 } })).status).toBe(403);
    expect((await api("PUT", `/api/v1/probe-configs/${db.id}`, { token: root, body: { collection_interval_seconds: 0 } })).body.error).toMatch(
      /body field `collection_interval_seconds`/,
    );
    expect((await api("PUT", `/api/v1/probe-configs/${db.id}`, { token: root, body: { retention_days: -1 } })).status).toBe(400);
    expect((await api("PUT", `/api/v1/probe-configs/${db.id}`, { token: root, body: { retention_days: 14 } })).body).toMatchObject({
      retention_days: 14,
      collection_interval_seconds: 300,
    });
    expect((await api("GET", "/api/v1/probe-configs/999999", { token: root })).status).toBe(404);
  });

  it("resolves a connection's effective settings server > cluster > group > global, used by the metrics query", async () => {
    const conn = await addConnection(store.db, "resolved");
    await store.db.query("UPDATE connections SET is_shared = true WHERE id = $1", [conn]);
    const group = (await api("POST", "/api/v1/cluster-groups", { token: root, body: { name: "g" } })).body;
    const cluster = (await api("POST", "/api/v1/clusters", { token: root, body: { name: "c", group_id: group.id } })).body;
    await api("POST", `/api/v1/clusters/${cluster.id}/servers`, { token: root, body: { connection_id: conn } });
    const effective = async () =>
      (await api("GET", `/api/v1/probe-configs?connection_id=${conn}`, { token: viewer })).body.find(
        (r: { probe_name: string }) => r.probe_name === "pg_stat_wal",
      );
    expect(await effective()).toMatchObject({ source: "global", collection_interval_seconds: 600 });
    expect(
      (await api("PUT", `/api/v1/probe-overrides/group/${group.id}/pg_stat_wal`, { token: root, body: { collection_interval_seconds: 120 } })).body,
    ).toMatchObject({ scope: "group", collection_interval_seconds: 120, retention_days: 7 });
    expect(await effective()).toMatchObject({ source: "group", collection_interval_seconds: 120 });
    await api("PUT", `/api/v1/probe-overrides/cluster/${cluster.id}/pg_stat_wal`, { token: root, body: { collection_interval_seconds: 90 } });
    expect(await effective()).toMatchObject({ source: "cluster", collection_interval_seconds: 90 });
    await api("PUT", `/api/v1/probe-overrides/server/${conn}/pg_stat_wal`, { token: root, body: { collection_interval_seconds: 60, is_enabled: false } });
    expect(await effective()).toMatchObject({ source: "server", collection_interval_seconds: 60, is_enabled: false });

    // The metrics query lays out buckets at the effective interval: a 10-minute window at 60 s gives 10 buckets.
    const series = await api(
      "GET",
      `/api/v1/metrics/query?probe_name=pg_stat_wal&connection_id=${conn}&metrics=wal_records&time_range=custom&time_start=2026-01-01T00:00:00Z&time_end=2026-01-01T00:10:00Z`,
      { token: viewer },
    );
    expect(series.body[0].data).toHaveLength(11);

    expect((await api("GET", `/api/v1/probe-overrides/server/${conn}`, { token: viewer })).body.map((o: { probe_name: string }) => o.probe_name)).toEqual([
      "pg_stat_wal",
    ]);
    expect((await api("GET", `/api/v1/probe-overrides/server/${conn}/pg_stat_wal`, { token: viewer })).body.collection_interval_seconds).toBe(60);
    expect((await api("DELETE", `/api/v1/probe-overrides/server/${conn}/pg_stat_wal`, { token: root })).status).toBe(204);
    expect(await effective()).toMatchObject({ source: "cluster" });
    expect((await api("DELETE", `/api/v1/probe-overrides/server/${conn}/pg_stat_wal`, { token: root })).status).toBe(404);
  });

  it("refuses unknown scopes and probes, and hides scopes the caller cannot see", async () => {
    expect((await api("GET", "/api/v1/probe-overrides/planet/1", { token: root })).body.error).toMatch(/path parameter `scope`/);
    const conn = await addConnection(store.db, "private");
    expect((await api("PUT", `/api/v1/probe-overrides/server/${conn}/pg_stat_nothing`, { token: root, body: { is_enabled: false } })).body.error).toMatch(
      /path parameter `probeName`: unknown probe/,
    );
    expect((await api("GET", `/api/v1/probe-overrides/server/${conn}`, { token: viewer })).status).toBe(404);
    expect((await api("GET", `/api/v1/probe-configs?connection_id=${conn}`, { token: viewer })).status).toBe(404);
    expect((await api("GET", "/api/v1/probe-overrides/cluster/424242", { token: root })).status).toBe(404);
  });
});
