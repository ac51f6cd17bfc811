import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testApp } from "../support/app.ts";
import { userWithToken } from "../support/auth.ts";
import { addConnection, migratedDatastore, type TestDatastore } from "../support/datastore.ts";
import { client } from "../support/http.ts";

let store: TestDatastore;
let api: ReturnType<typeof client>;
let root: string;
let viewer: { id: number; token: string };
let primary: number;
let standby: number;
let loner: number;

beforeAll(async () => {
  store = await migratedDatastore("pg");
  api = client(testApp(store.db).app);
  root = (await userWithToken(store.db, "root", { superuser: true })).token;
  viewer = await userWithToken(store.db, "viewer");
  primary = await addConnection(store.db, "primary");
  standby = await addConnection(store.db, "standby");
  loner = await addConnection(store.db, "loner");
  await store.db.query("UPDATE connections SET is_shared = true WHERE id = ANY($1::int[])", [[primary, standby]]);
});
afterAll(() => store.close());

describe("clusters and groups", () => {
  it("shows servers in no cluster in the hierarchy, then groups of clusters of servers", async () => {
    const before = await api("GET", "/api/v1/clusters", { token: root });
    expect(before.body).toEqual([
      {
        id: "standalone",
        group_id: null,
        name: "Standalone servers",
        clusters: expect.arrayContaining([
          expect.objectContaining({ id: `server-${primary}`, servers: [expect.objectContaining({ id: primary, name: "primary" })] }),
        ]),
      },
    ]);
    const group = await api("POST", "/api/v1/cluster-groups", { token: root, body: { name: "production" } });
    expect(group.status).toBe(201);
    expect((await api("POST", "/api/v1/cluster-groups", { token: root, body: { name: "production" } })).status).toBe(409);
    const cluster = await api("POST", `/api/v1/cluster-groups/${group.body.id}/clusters`, {
      token: root,
      body: { name: "orders", replication_type: "physical" },
    });
    expect(cluster).toMatchObject({ status: 201, body: { group_id: group.body.id, name: "orders", replication_type: "physical" } });
    expect((await api("POST", "/api/v1/clusters", { token: root, body: { name: "orders", group_id: group.body.id } })).status).toBe(409);
    expect((await api("POST", "/api/v1/clusters", { token: root, body: { name: "x", group_id: 424242 } })).status).toBe(404);
    expect((await api("POST", "/api/v1/clusters", { token: root, body: { name: "x", replication_type: "magic" } })).body.error).toMatch(
      /body field `replication_type`/,
    );

    for (const [id, role] of [
      [primary, "primary"],
      [standby, "standby"],
    ] as const)
      expect((await api("POST", `/api/v1/clusters/${cluster.body.id}/servers`, { token: root, body: { connection_id: id, role } })).body).toMatchObject({
        id,
        role,
      });
    const after = (await api("GET", "/api/v1/clusters", { token: root })).body;
    expect(after[0]).toMatchObject({
      id: `group-${group.body.id}`,
      name: "production",
      clusters: [{ id: `cluster-${cluster.body.id}`, name: "orders", servers: [{ id: primary }, { id: standby }] }],
    });
    expect(after.find((g: { id: string }) => g.id === "standalone").clusters.map((c: { id: string }) => c.id)).toEqual([`server-${loner}`]);

    expect((await api("GET", "/api/v1/clusters/list", { token: root })).body).toEqual([expect.objectContaining({ id: cluster.body.id, server_count: 2 })]);
    expect((await api("GET", `/api/v1/cluster-groups/${group.body.id}/clusters`, { token: root })).body.map((c: { name: string }) => c.name)).toEqual([
      "orders",
    ]);
    expect((await api("PUT", `/api/v1/clusters/${cluster.body.id}`, { token: root, body: { description: "order processing" } })).body.description).toBe(
      "order processing",
    );
  });

  it("records relationships between members only", async () => {
    const [cluster] = (await api("GET", "/api/v1/clusters/list", { token: root })).body;
    const rel = await api("POST", `/api/v1/clusters/${cluster.id}/relationships`, {
      token: root,
      body: { source_connection_id: standby, target_connection_id: primary, relationship_type: "streams_from" },
    });
    expect(rel).toMatchObject({
      status: 201,
      body: { source_name: "standby", target_name: "primary", relationship_type: "streams_from", is_auto_detected: false },
    });
    expect(
      (
        await api("POST", `/api/v1/clusters/${cluster.id}/relationships`, {
          token: root,
          body: { source_connection_id: loner, target_connection_id: primary, relationship_type: "streams_from" },
        })
      ).body.error,
    ).toMatch(`connection ${loner} is not a member of cluster ${cluster.id}`);
    expect((await api("GET", `/api/v1/clusters/${cluster.id}/relationships`, { token: viewer.token })).body).toHaveLength(1);
    expect((await api("DELETE", `/api/v1/clusters/${cluster.id}/relationships/${rel.body.id}`, { token: root })).status).toBe(204);
    expect((await api("DELETE", `/api/v1/clusters/${cluster.id}/relationships/${rel.body.id}`, { token: root })).status).toBe(404);
  });

  it("shows other users only clusters and groups holding a server they can see", async () => {
    const hidden = await api("POST", "/api/v1/clusters", { token: root, body: { name: "secret cluster" } });
    await api("POST", `/api/v1/clusters/${hidden.body.id}/servers`, { token: root, body: { connection_id: loner } });
    const list = (await api("GET", "/api/v1/clusters/list", { token: viewer.token })).body.map((c: { name: string }) => c.name);
    expect(list).toEqual(["orders"]);
    expect((await api("GET", `/api/v1/clusters/${hidden.body.id}`, { token: viewer.token })).status).toBe(404);
    expect((await api("GET", `/api/v1/clusters/${hidden.body.id}`, { token: root })).status).toBe(200);
    const topology = (await api("GET", "/api/v1/clusters", { token: viewer.token })).body;
    expect(JSON.stringify(topology)).not.toContain("secret cluster");
    expect(JSON.stringify(topology)).not.toContain("loner");
  });

  it("deletes a cluster by number, hides a standalone server-<id>, and refuses unknown forms", async () => {
    const temp = await api("POST", "/api/v1/clusters", { token: root, body: { name: "temporary" } });
    const extra = await addConnection(store.db, "extra");
    await api("POST", `/api/v1/clusters/${temp.body.id}/servers`, { token: root, body: { connection_id: extra } });
    expect((await api("DELETE", `/api/v1/clusters/${temp.body.id}/servers/${extra}`, { token: root })).status).toBe(204);
    expect((await api("DELETE", `/api/v1/clusters/${temp.body.id}/servers/${extra}`, { token: root })).status).toBe(404);
    expect((await api("DELETE", `/api/v1/clusters/${temp.body.id}`, { token: root })).status).toBe(204);
    expect((await api("GET", `/api/v1/clusters/${temp.body.id}`, { token: root })).status).toBe(404);

    const standaloneIds = async () =>
      ((await api("GET", "/api/v1/clusters", { token: root })).body.find((g: { id: string }) => g.id === "standalone")?.clusters ?? []).map(
        (c: { id: string }) => c.id,
      );
    expect(await standaloneIds()).toContain(`server-${extra}`);
    expect((await api("DELETE", `/api/v1/clusters/server-${extra}`, { token: root })).status).toBe(204);
    expect(await standaloneIds()).not.toContain(`server-${extra}`);
    expect((await api("DELETE", `/api/v1/clusters/server-${extra}`, { token: root })).status).toBe(404);
    expect((await api("DELETE", "/api/v1/clusters/cluster-replication-pg17", { token: root })).status).toBe(404);
    expect((await api("DELETE", "/api/v1/clusters/nonsense", { token: root })).body.error).toMatch(/path parameter `id`: a cluster id/);
    expect((await api("DELETE", `/api/v1/clusters/server-${primary}`, { token: viewer.token })).status).toBe(403);
  });

  it("keeps clusters when their group is deleted", async () => {
    const group = (await api("GET", "/api/v1/cluster-groups", { token: root })).body[0];
    expect((await api("DELETE", `/api/v1/cluster-groups/${group.id}`, { token: root })).status).toBe(204);
    const topology = (await api("GET", "/api/v1/clusters", { token: root })).body;
    expect(topology.find((g: { id: string }) => g.id === "ungrouped").clusters.map((c: { name: string }) => c.name)).toContain("orders");
    expect((await api("GET", `/api/v1/cluster-groups/${group.id}`, { token: root })).status).toBe(404);
  });

  it("refuses (409, nothing changed) to delete a group whose cluster would clash with an ungrouped cluster's name", async () => {
    const group = (await api("POST", "/api/v1/cluster-groups", { token: root, body: { name: "clashing" } })).body;
    await api("POST", `/api/v1/cluster-groups/${group.id}/clusters`, { token: root, body: { name: "Billing", replication_type: "physical" } });
    expect((await api("POST", "/api/v1/clusters", { token: root, body: { name: "billing", replication_type: "physical" } })).status).toBe(201);
    await api("PUT", `/api/v1/probe-overrides/group/${group.id}/pg_stat_wal`, { token: root, body: { collection_interval_seconds: 120 } });
    const res = await api("DELETE", `/api/v1/cluster-groups/${group.id}`, { token: root });
    expect(res.status).toBe(409);
    expect(res.body.error).toBe(
      `cluster group ${group.id} cannot be deleted: its clusters would become ungrouped beside ungrouped clusters of the same name (\`Billing\`); rename or move one of each pair first`,
    );
    expect((await api("GET", `/api/v1/cluster-groups/${group.id}`, { token: root })).status).toBe(200);
    expect((await api("GET", `/api/v1/probe-overrides/group/${group.id}`, { token: root })).body).toHaveLength(1);
  });
});
