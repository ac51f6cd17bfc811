/**
 * Replication topology detected from real servers: a primary and its streaming standby (a
 * cluster-replication-<system identifier> cluster in GET /api/v1/clusters, pruned to what the caller may see,
 * dismissable by a connection manager only, never resurrected), and a publisher with a logical subscriber.
 */
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { collectOnce } from "../../src/collector/collect.ts";
import { testApp } from "../support/app.ts";
import { userWithToken } from "../support/auth.ts";
import { addConnection, migratedDatastore, type TestDatastore } from "../support/datastore.ts";
import { client } from "../support/http.ts";
import { collectEvery, registerServer, monitoringConfig as config, quietLog as log, pause } from "../support/monitored.ts";
import { startEmbeddedPostgres, type TestServer } from "../support/postgres.ts";
import { type Standby, startStandby } from "../support/standby.ts";

let primary: TestServer;
let standby: Standby;
let store: TestDatastore;
let api: ReturnType<typeof client>;
let root: string;
let ids: { primary: number; standby: number; loner: number; publisher: number; subscriber: number };
let systemId: string;
let publisher: TestServer;
let subscriber: TestServer;

beforeAll(async () => {
  [primary, publisher, subscriber] = await Promise.all([
    startEmbeddedPostgres({ persistent: true }),
    startEmbeddedPostgres({ flags: ["-c", "wal_level=logical"] }),
    startEmbeddedPostgres(),
  ]);
  standby = await startStandby(primary);
  for (const [url, statements] of [
    [publisher.url, ["CREATE TABLE orders (id int PRIMARY KEY)", "CREATE PUBLICATION orders_pub FOR TABLE orders"]],
    [
      subscriber.url,
      [
        "CREATE TABLE orders (id int PRIMARY KEY)",
        `CREATE SUBSCRIPTION orders_sub CONNECTION 'host=127.0.0.1 port=${publisher.port} user=postgres password=postgres dbname=postgres' PUBLICATION orders_pub`,
      ],
    ],
  ] as const) {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      for (const sql of statements) await c.query(sql);
    } finally {
      await c.end();
    }
  }
  const admin = new pg.Client({ connectionString: primary.url });
  await admin.connect();
  for (let i = 0; i < 100; i++) {
    const rows = (await admin.query("SELECT state FROM pg_stat_replication")).rows;
    if (rows[0]?.state === "streaming") break;
    await pause(200);
  }
  systemId = (await admin.query("SELECT system_identifier::text AS id FROM pg_control_system()")).rows[0].id;
  await admin.end();

  store = await migratedDatastore("pg");
  api = client(testApp(store.db).app);
  root = (await userWithToken(store.db, "root", { superuser: true })).token;
  ids = {
    primary: await registerServer(store.db, "orders-primary", primary.url),
    standby: await registerServer(store.db, "orders-standby", standby.url),
    loner: await addConnection(store.db, "loner"),
    publisher: await registerServer(store.db, "shop-publisher", publisher.url),
    subscriber: await registerServer(store.db, "shop-subscriber", subscriber.url),
  };
  await store.db.query("UPDATE connections SET is_shared = (id <> $1)", [ids.primary]);
  await collectEvery(store.db, 1);
  await store.db.query("UPDATE probe_configs SET is_enabled = (probe_name IN ('pg_node_role', 'pg_subscription_upstream')) WHERE scope = 'global'");
  await collectOnce(store.db, config, log);
}, 120_000);

afterAll(async () => {
  await store?.close();
  await standby?.stop();
  await Promise.all([primary?.stop(), subscriber?.stop()]);
  await publisher?.stop();
});

const topology = async (token = root) =>
  (await api("GET", "/api/v1/clusters", { token })).body as Array<{ id: string; clusters: Array<Record<string, unknown>> }>;

it("shows the primary and its standby as one replication cluster, the standby streaming from the primary", async () => {
  const groups = await topology();
  const replication = groups.find((g) => g.id === "replication")!;
  expect(replication.clusters).toEqual([
    expect.objectContaining({
      id: `cluster-replication-${systemId}`,
      name: "orders-primary replication",
      replication_type: "physical",
      servers: [expect.objectContaining({ id: ids.primary, role: "primary" }), expect.objectContaining({ id: ids.standby, role: "standby" })],
      relationships: [{ source_connection_id: ids.standby, target_connection_id: ids.primary, relationship_type: "streams_from", is_auto_detected: true }],
    }),
    expect.objectContaining({
      id: `cluster-replication-logical-${ids.publisher}`,
      name: "shop-publisher replication",
      replication_type: "logical",
      servers: [expect.objectContaining({ id: ids.publisher, role: "publisher" }), expect.objectContaining({ id: ids.subscriber, role: "subscriber" })],
      relationships: [
        { source_connection_id: ids.subscriber, target_connection_id: ids.publisher, relationship_type: "subscribes_to", is_auto_detected: true },
      ],
    }),
  ]);
  expect(groups.find((g) => g.id === "standalone")!.clusters.map((c) => c.id)).toEqual([`server-${ids.loner}`]);
});

it("shows a caller only the members it may see, without edges to hidden ones", async () => {
  const viewer = (await userWithToken(store.db, "viewer")).token;
  const replication = (await topology(viewer)).find((g) => g.id === "replication")!;
  expect(replication.clusters.find((c) => c.id === `cluster-replication-${systemId}`)).toEqual(
    expect.objectContaining({ servers: [expect.objectContaining({ id: ids.standby })], relationships: [] }),
  );
});

it("is dismissed by a connection manager only, for good", async () => {
  const viewer = (await userWithToken(store.db, "viewer2")).token;
  const path = `/api/v1/clusters/cluster-replication-${systemId}`;
  expect((await api("DELETE", path, { token: viewer })).status).toBe(403);
  expect((await api("DELETE", "/api/v1/clusters/cluster-replication-12345", { token: root })).status).toBe(404);
  expect((await api("DELETE", path, { token: root })).status).toBe(204);
  await pause(1100);
  await collectOnce(store.db, config, log); // fresh samples detect it again; it stays dismissed
  const groups = await topology();
  expect(groups.find((g) => g.id === "replication")!.clusters.map((c) => c.id)).toEqual([`cluster-replication-logical-${ids.publisher}`]);
  expect(
    groups
      .find((g) => g.id === "standalone")!
      .clusters.map((c) => c.id)
      .sort(),
  ).toEqual([`server-${ids.loner}`, `server-${ids.primary}`, `server-${ids.standby}`].sort());
  expect((await api("DELETE", path, { token: root })).status).toBe(404);
});
