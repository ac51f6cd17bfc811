import type { Context } from "hono";
import {
  type Cluster,
  clusterJson,
  createCluster,
  createClusterGroup,
  createRelationship,
  deleteCluster,
  deleteClusterGroup,
  deleteRelationship,
  getCluster,
  getClusterGroup,
  groupJson,
  listClusterGroups,
  listClusters,
  listRelationships,
  setConnectionCluster,
  updateCluster,
  updateClusterGroup,
} from "../datastore/clusters.ts";
import type { Queryable } from "../../drivers/types.ts";
import { shownReplicationClusters } from "../clusters/replication-topology.ts";
import { type ConnectionRow, hideFromTopology, listConnections } from "../datastore/connections.ts";
import { readableConnection } from "../auth/connection-access.ts";
import { dismissReplicationCluster, dismissedReplicationPrefixes, latestNodeRoles, latestSubscriptions } from "../datastore/node-roles.ts";
import { NotFoundError } from "../errors.ts";
import { authority } from "../http/access.ts";
import type { AppEnv } from "../http/context.ts";
import { estateView } from "../http/estate-view.ts";
import { newRouter } from "../http/router.ts";
import { r } from "./clusters-contract.ts";

async function visibleCluster(c: Context<AppEnv>, id: number): Promise<{ cluster: Cluster; view: Awaited<ReturnType<typeof estateView>> }> {
  const view = await estateView(c);
  const cluster = await getCluster(c.get("db"), id);
  if (!view.clusterVisible(id)) throw new NotFoundError(`cluster ${id} not found`);
  return { cluster, view };
}

const serverJson = (row: ConnectionRow) => ({
  id: row.id,
  name: row.name,
  host: row.host,
  port: row.port,
  role: row.role,
  is_monitored: row.is_monitored,
  connection_error: row.connection_error,
});

/** Replication clusters detected now, among all servers (the caller's view prunes them). */
async function replicationClusters(db: Queryable) {
  const connections = await listConnections(db);
  const inManualCluster = new Set(connections.filter((s) => s.cluster_id !== null).map((s) => s.id));
  const samples = {
    nodes: await latestNodeRoles(db),
    subscriptions: await latestSubscriptions(db),
    servers: connections.map((s) => ({ connection_id: s.id, host: s.host, port: s.port })),
  };
  return shownReplicationClusters(samples, inManualCluster, await dismissedReplicationPrefixes(db));
}

export const clusterRoutes = newRouter()
  .openapi(r.topology, async (c) => {
    const { manager, connections, clusterVisible } = await estateView(c);
    const db = c.get("db");
    const clusters = (await listClusters(db)).filter((cl) => clusterVisible(cl.id));
    const node = (cl: Cluster) => ({
      id: `cluster-${cl.id}`,
      cluster_id: cl.id,
      name: cl.name,
      replication_type: cl.replication_type,
      servers: connections.filter((s) => s.cluster_id === cl.id).map(serverJson),
    });
    const groups = (await listClusterGroups(db))
      .map((g) => ({ id: `group-${g.id}`, group_id: g.id, name: g.name, clusters: clusters.filter((cl) => cl.group_id === g.id).map(node) }))
      .filter((g) => manager || g.clusters.length > 0);
    const ungrouped = clusters.filter((cl) => cl.group_id === null).map(node);
    const replication = await replicationClusters(db);
    const detected = new Set(replication.flatMap((rc) => rc.members.map((m) => m.connection_id)));
    const replicationNodes = replication.flatMap((rc) => {
      const visible = new Map(connections.filter((s) => rc.members.some((m) => m.connection_id === s.id)).map((s) => [s.id, s]));
      if (visible.size === 0) return [];
      const primary = rc.primary === null ? undefined : visible.get(rc.primary);
      return [
        {
          id: `cluster-replication-${rc.prefix}`,
          cluster_id: null,
          name: `${(primary ?? [...visible.values()][0]).name} replication`,
          replication_type: rc.kind,
          servers: rc.members.filter((m) => visible.has(m.connection_id)).map((m) => ({ ...serverJson(visible.get(m.connection_id)!), role: m.role })),
          relationships: rc.edges
            .filter((e) => visible.has(e.source) && visible.has(e.target))
            .map((e) => ({ source_connection_id: e.source, target_connection_id: e.target, relationship_type: e.type, is_auto_detected: true })),
        },
      ];
    });
    const standalone = connections
      .filter((s) => s.cluster_id === null && !s.hidden_from_topology && !detected.has(s.id))
      .map((s) => ({ id: `server-${s.id}`, cluster_id: null, name: s.name, replication_type: "none", servers: [serverJson(s)] }));
    return c.json(
      [
        ...groups,
        ...(ungrouped.length ? [{ id: "ungrouped", group_id: null, name: "Ungrouped clusters", clusters: ungrouped }] : []),
        ...(replicationNodes.length ? [{ id: "replication", group_id: null, name: "Replication clusters (detected)", clusters: replicationNodes }] : []),
        ...(standalone.length ? [{ id: "standalone", group_id: null, name: "Standalone servers", clusters: standalone }] : []),
      ],
      200,
    );
  })
  .openapi(r.create, async (c) => c.json(clusterJson(await createCluster(c.get("db"), c.req.valid("json"))), 201))
  .openapi(r.list, async (c) => {
    const { connections, clusterVisible } = await estateView(c);
    const clusters = (await listClusters(c.get("db"))).filter((cl) => clusterVisible(cl.id));
    return c.json(
      clusters.map((cl) => ({ ...clusterJson(cl), server_count: connections.filter((s) => s.cluster_id === cl.id).length })),
      200,
    );
  })
  .openapi(r.get, async (c) => c.json(clusterJson((await visibleCluster(c, c.req.valid("param").id)).cluster), 200))
  .openapi(r.update, async (c) => c.json(clusterJson(await updateCluster(c.get("db"), c.req.valid("param").id, c.req.valid("json"))), 200))
  .openapi(r.remove, async (c) => {
    const { id } = c.req.valid("param");
    const db = c.get("db");
    if (/^\d+$/.test(id)) await db.transaction((tx) => deleteCluster(tx, Number(id)));
    else if (id.startsWith("server-")) {
      const row = await readableConnection(db, Number(id.slice("server-".length)), await authority(c));
      if (row.cluster_id !== null || row.hidden_from_topology) throw new NotFoundError(`cluster ${id} not found: the server is not listed on its own`);
      await hideFromTopology(db, row.id);
    } else {
      const prefix = id.slice("cluster-replication-".length);
      if (!(await replicationClusters(db)).some((rc) => rc.prefix === prefix))
        throw new NotFoundError(`cluster ${id} not found: no replication cluster with that prefix is detected`);
      await dismissReplicationCluster(db, prefix, c.get("principal")!.userId);
    }
    return c.body(null, 204);
  })
  .openapi(r.servers, async (c) => {
    const { cluster, view } = await visibleCluster(c, c.req.valid("param").id);
    return c.json(view.connections.filter((s) => s.cluster_id === cluster.id).map(serverJson), 200);
  })
  .openapi(r.addServer, async (c) => {
    const { id } = c.req.valid("param");
    const { connection_id, role } = c.req.valid("json");
    const db = c.get("db");
    await readableConnection(db, connection_id, await authority(c));
    await db.transaction((tx) => setConnectionCluster(tx, connection_id, id, role));
    return c.json(serverJson((await readableConnection(db, connection_id))!), 200);
  })
  .openapi(r.removeServer, async (c) => {
    const { id, connectionId } = c.req.valid("param");
    const db = c.get("db");
    const row = await readableConnection(db, connectionId, await authority(c));
    if (row.cluster_id !== id) throw new NotFoundError(`connection ${connectionId} is not in cluster ${id}`);
    await db.transaction((tx) => setConnectionCluster(tx, connectionId, null));
    return c.body(null, 204);
  })
  .openapi(r.relationships, async (c) => {
    const { cluster } = await visibleCluster(c, c.req.valid("param").id);
    return c.json((await listRelationships(c.get("db"), cluster.id)) as never, 200);
  })
  .openapi(r.addRelationship, async (c) => {
    const { id } = c.req.valid("param");
    const db = c.get("db");
    await getCluster(db, id);
    const created = await createRelationship(db, id, c.req.valid("json"));
    return c.json((await listRelationships(db, id)).find((rel) => rel.id === created) as never, 201);
  })
  .openapi(r.removeRelationship, async (c) => {
    const { id, relationshipId } = c.req.valid("param");
    await deleteRelationship(c.get("db"), id, relationshipId);
    return c.body(null, 204);
  })
  .openapi(r.groups, async (c) => {
    const { manager, clusterVisible } = await estateView(c);
    const clusters = await listClusters(c.get("db"));
    const groups = (await listClusterGroups(c.get("db"))).filter((g) => manager || clusters.some((cl) => cl.group_id === g.id && clusterVisible(cl.id)));
    return c.json(groups.map(groupJson), 200);
  })
  .openapi(r.createGroup, async (c) => {
    const { name, description } = c.req.valid("json");
    return c.json(groupJson(await createClusterGroup(c.get("db"), { name, description: description ?? "", ownerUserId: c.get("principal")!.userId })), 201);
  })
  .openapi(r.getGroup, async (c) => {
    const { id } = c.req.valid("param");
    const { manager, clusterVisible } = await estateView(c);
    const group = await getClusterGroup(c.get("db"), id);
    const clusters = await listClusters(c.get("db"));
    if (!manager && !clusters.some((cl) => cl.group_id === id && clusterVisible(cl.id))) throw new NotFoundError(`cluster group ${id} not found`);
    return c.json(groupJson(group), 200);
  })
  .openapi(r.updateGroup, async (c) => c.json(groupJson(await updateClusterGroup(c.get("db"), c.req.valid("param").id, c.req.valid("json"))), 200))
  .openapi(r.removeGroup, async (c) => {
    const { id } = c.req.valid("param");
    await c.get("db").transaction((tx) => deleteClusterGroup(tx, id));
    return c.body(null, 204);
  })
  .openapi(r.groupClusters, async (c) => {
    const { id } = c.req.valid("param");
    const { manager, clusterVisible } = await estateView(c);
    await getClusterGroup(c.get("db"), id);
    const clusters = (await listClusters(c.get("db"))).filter((cl) => cl.group_id === id && clusterVisible(cl.id));
    if (!manager && clusters.length === 0) throw new NotFoundError(`cluster group ${id} not found`);
    return c.json(clusters.map(clusterJson), 200);
  })
  .openapi(r.createInGroup, async (c) =>
    c.json(clusterJson(await createCluster(c.get("db"), { ...c.req.valid("json"), group_id: c.req.valid("param").id })), 201),
  );
