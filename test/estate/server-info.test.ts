import { afterAll, beforeAll, expect, it } from "vitest";
import { writeSamples } from "../../src/samples/sample-writer.ts";
import { testApp } from "../support/app.ts";
import { userWithToken } from "../support/auth.ts";
import { addConnection, migratedDatastore, type TestDatastore } from "../support/datastore.ts";
import { typedClient } from "../support/typed-client.ts";

let store: TestDatastore;
let app: ReturnType<typeof testApp>["app"];
let root: string;
let viewer: string;
let conn: number;
const T1 = "2026-02-01T10:00:00.000Z";
const T2 = "2026-02-01T11:00:00.000Z";

beforeAll(async () => {
  store = await migratedDatastore("pg");
  app = testApp(store.db).app;
  root = (await userWithToken(store.db, "root", { superuser: true })).token;
  viewer = (await userWithToken(store.db, "viewer")).token;
  conn = await addConnection(store.db, "described");
  const write = (probe: string, rows: Array<Record<string, unknown>>) => writeSamples(store.db, { connectionId: conn, probe, rows: rows as never });
  await write("pg_settings", [
    { collected_at: T1, name: "server_version", setting: "16.0" },
    { collected_at: T2, name: "server_version", setting: "17.10" },
    { collected_at: T2, name: "shared_buffers", setting: "16384", unit: "8kB" },
    { collected_at: T2, name: "in_hot_standby", setting: "off" },
    { collected_at: T2, name: "data_directory", setting: "/var/lib/postgresql/17/main" },
  ]);
  await write("pg_database", [
    { collected_at: T2, datname: "app", database_size_bytes: 123456789, age_datfrozenxid: 1000, datistemplate: false },
    { collected_at: T2, datname: "template1", database_size_bytes: 7000000, age_datfrozenxid: 10, datistemplate: true },
  ]);
  await write("pg_extension", [
    { collected_at: T1, database_name: "app", extname: "pg_stat_statements", extversion: "1.11" },
    { collected_at: T1, database_name: "app", extname: "plpgsql", extversion: "1.0" },
    { collected_at: T1, database_name: "postgres", extname: "plpgsql", extversion: "1.0" },
    { collected_at: T1, database_name: "shop", extname: "plpgsql", extversion: "1.0" },
    { collected_at: T1, database_name: "legacy", extname: "pg_stat_statements", extversion: "1.10" },
  ]);
  await write("pg_stat_activity", [
    { collected_at: T2, pid: 10, backend_type: "checkpointer", backend_start: "2026-02-01T08:00:00Z" },
    { collected_at: T2, pid: 11, backend_type: "client backend", backend_start: "2026-02-01T10:59:00Z" },
  ]);
  await write("pg_sys_memory_info", [{ collected_at: T1, total_memory: 8_000_000_000, used_memory: 2_000_000_000 }]);
});
afterAll(() => store.close());

const serverInfo = (token: string, connectionId: number) =>
  typedClient(app, token).GET("/api/v1/server-info/{connection_id}", { params: { path: { connection_id: connectionId } } });

it("summarises what the datastore knows, with the time of each figure", async () => {
  const { response, data: body } = await serverInfo(root, conn);
  expect(response.status).toBe(200);
  if (!body) throw new Error("no body");
  expect(body.postgresql).toEqual({
    collected_at: T2,
    data: { version: "17.10", cluster_name: null, data_directory: "/var/lib/postgresql/17/main", role: "primary", standby_count: 0 },
  });
  expect(body.uptime).toEqual({ collected_at: T2, data: { started_at: "2026-02-01T08:00:00.000Z", uptime_seconds: 3 * 3600 } });
  expect(body.databases).toEqual({ collected_at: T2, data: [{ name: "app", size_bytes: 123456789, xid_age: 1000 }] });
  // Each extension once (per version), with the databases it is installed in.
  expect(body.extensions).toEqual({
    collected_at: T1,
    data: [
      { name: "pg_stat_statements", version: "1.10", databases: ["legacy"] },
      { name: "pg_stat_statements", version: "1.11", databases: ["app"] },
      { name: "plpgsql", version: "1.0", databases: ["app", "postgres", "shop"] },
    ],
  });
  expect(body.key_settings.data).toEqual([{ name: "shared_buffers", setting: "16384", unit: "8kB" }]);
  expect(body.system.memory).toMatchObject({ collected_at: T1, data: { total_memory: 8_000_000_000, used_memory: 2_000_000_000 } });
  expect(body.system.cpu).toEqual({ collected_at: null, data: null });
});

it("answers 404 for a connection the caller cannot see or that does not exist", async () => {
  expect((await serverInfo(viewer, conn)).response.status).toBe(404);
  expect((await serverInfo(root, 424242)).error).toEqual({ error: "connection 424242 not found" });
  expect((await serverInfo(root, "abc" as never)).response.status).toBe(400);
});
