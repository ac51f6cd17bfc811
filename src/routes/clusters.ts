import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import {
  type Cluster,
  RELATIONSHIP_TYPES,
  REPLICATION_TYPES,
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
import { USER, admin, authority, guarded } from "../http/access.ts";
import type { AppEnv } from "../http/context.ts";
import { estateView } from "../http/estate-view.ts";
import { INT_MAX, Id, IdParam, PathId, json, jsonBody, noContent } from "../http/params.ts";
import { newRouter } from "../http/router.ts";
import { errorResponses } from "../http/schemas.ts";

const tags = ["Clusters"];
const MANAGE = admin("manage_connections");

const ClusterSchema = z
  .object({
    id: z.number().int(),
    group_id: z.number().int().nullable(),
    name: z.string(),
    description: z.string(),
    replication_type: z.string(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("Cluster");
const GroupSchema = z
  .object({ id: z.number().int(), name: z.string(), description: z.string(), created_at: z.string(), updated_at: z.string() })
  .openapi("ClusterGroup");
const Server = z
  .object({
    id: z.number().int(),
    name: z.string(),
    host: z.string(),
    port: z.number().int(),
    role: z.string().nullable(),
    is_monitored: z.boolean(),
    connection_error: z.string().nullable(),
  })
  .openapi("TopologyServer");
const TopologyCluster = z
  .object({
    id: z.string().openapi({
      description:
        "cluster-<id> for a cluster, server-<connection id> for a server in no cluster, cluster-replication-<system identifier> for a detected replication cluster",
    }),
    cluster_id: z.number().int().nullable(),
    name: z.string(),
    replication_type: z.string(),
    servers: z.array(Server),
    relationships: z
      .array(
        z.object({
          source_connection_id: z.number().int(),
          target_connection_id: z.number().int(),
          relationship_type: z.enum(RELATIONSHIP_TYPES),
          is_auto_detected: z.boolean(),
        }),
      )
      .optional()
      .openapi({ description: "Detected replication clusters: which server streams from which" }),
  })
  .openapi("TopologyCluster");
const TopologyGroup = z
  .object({
    id: z.string().openapi({ description: "group-<id>, or `ungrouped` / `standalone`" }),
    group_id: z.number().int().nullable(),
    name: z.string(),
    clusters: z.array(TopologyCluster),
  })
  .openapi("TopologyGroup", { description: "group-<id>, `ungrouped`, `replication` (clusters detected from the servers' replication state) or `standalone`" });
const RelationshipSchema = z
  .object({
    id: z.number().int(),
    cluster_id: z.number().int(),
    source_connection_id: z.number().int(),
    target_connection_id: z.number().int(),
    source_name: z.string(),
    target_name: z.string(),
    relationship_type: z.enum(RELATIONSHIP_TYPES),
    is_auto_detected: z.boolean(),
  })
  .openapi("ClusterRelationship");
const NewCluster = z
  .object({
    name: z.string().trim().min(1).max(200),
    description: z.string().max(2000).default(""),
    replication_type: z.enum(REPLICATION_TYPES).default("other"),
    group_id: Id.nullable().default(null),
  })
  .strict();
const ClusterChanges = z
  .object({ name: z.string().trim().min(1).max(200), description: z.string().max(2000), replication_type: z.enum(REPLICATION_TYPES), group_id: Id.nullable() })
  .partial()
  .strict();
const GroupBody = z.object({ name: z.string().trim().min(1).max(200), description: z.string().max(2000).optional() }).strict();
const DeletableId = z.object({
  id: z
    .string()
    .regex(
      /^((?!0)\d{1,10}|server-(?!0)\d{1,10}|cluster-replication-[\w.-]+)$/,
      "a cluster id (e.g. 3), server-<connection id>, or cluster-replication-<prefix>",
    )
    .refine((id) => !/^(server-)?\d+$/.test(id) || Number(id.replace("server-", "")) <= INT_MAX, "id out of range")
    .openapi({ param: { name: "id", in: "path" }, example: "3" }),
});
const ServerParams = z.object({ id: PathId, connectionId: PathId });
const RelationshipParams = z.object({ id: PathId, relationshipId: PathId });

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

const r = {
  topology: guarded(
    USER,
    createRoute({
      method: "get",
      path: "/api/v1/clusters",
      tags,
      summary: "The estate as groups of clusters of servers; servers in no cluster appear under `standalone`",
      responses: { 200: json(z.array(TopologyGroup), "Topology"), ...errorResponses(401) },
    }),
  ),
  create: guarded(
    MANAGE,
    createRoute({
      method: "post",
      path: "/api/v1/clusters",
      tags,
      summary: "Create a cluster",
      request: { body: jsonBody(NewCluster) },
      responses: { 201: json(ClusterSchema, "Created"), ...errorResponses(400, 401, 403, 404, 409) },
    }),
  ),
  list: guarded(
    USER,
    createRoute({
      method: "get",
      path: "/api/v1/clusters/list",
      tags,
      summary: "Clusters as a flat list",
      responses: { 200: json(z.array(ClusterSchema.extend({ server_count: z.number().int() })), "Clusters"), ...errorResponses(401) },
    }),
  ),
  get: guarded(
    USER,
    createRoute({
      method: "get",
      path: "/api/v1/clusters/{id}",
      tags,
      summary: "A cluster",
      request: { params: IdParam },
      responses: { 200: json(ClusterSchema, "Cluster"), ...errorResponses(400, 401, 404) },
    }),
  ),
  update: guarded(
    MANAGE,
    createRoute({
      method: "put",
      path: "/api/v1/clusters/{id}",
      tags,
      summary: "Rename, describe or move a cluster",
      request: { params: IdParam, body: jsonBody(ClusterChanges) },
      responses: { 200: json(ClusterSchema, "Updated"), ...errorResponses(400, 401, 403, 404, 409) },
    }),
  ),
  remove: guarded(
    MANAGE,
    createRoute({
      method: "delete",
      path: "/api/v1/clusters/{id}",
      tags,
      summary: "Delete a cluster (its servers stay, in no cluster), hide a standalone server-<id>, or dismiss a detected cluster-replication-<prefix> for good",
      request: { params: DeletableId },
      responses: { ...noContent, ...errorResponses(400, 401, 403, 404) },
    }),
  ),
  servers: guarded(
    USER,
    createRoute({
      method: "get",
      path: "/api/v1/clusters/{id}/servers",
      tags,
      summary: "Servers in a cluster",
      request: { params: IdParam },
      responses: { 200: json(z.array(Server), "Servers"), ...errorResponses(401, 404) },
    }),
  ),
  addServer: guarded(
    MANAGE,
    createRoute({
      method: "post",
      path: "/api/v1/clusters/{id}/servers",
      tags,
      summary: "Put a server in this cluster (it leaves any other)",
      request: { params: IdParam, body: jsonBody(z.object({ connection_id: Id, role: z.string().max(50).optional() }).strict()) },
      responses: { 200: json(Server, "The server"), ...errorResponses(400, 401, 403, 404) },
    }),
  ),
  removeServer: guarded(
    MANAGE,
    createRoute({
      method: "delete",
      path: "/api/v1/clusters/{id}/servers/{connectionId}",
      tags,
      summary: "Take a server out of this cluster",
      request: { params: ServerParams },
      responses: { ...noContent, ...errorResponses(401, 403, 404) },
    }),
  ),
  relationships: guarded(
    USER,
    createRoute({
      method: "get",
      path: "/api/v1/clusters/{id}/relationships",
      tags,
      summary: "Replication relationships between the cluster's servers",
      request: { params: IdParam },
      responses: { 200: json(z.array(RelationshipSchema), "Relationships"), ...errorResponses(401, 404) },
    }),
  ),
  addRelationship: guarded(
    MANAGE,
    createRoute({
      method: "post",
      path: "/api/v1/clusters/{id}/relationships",
      tags,
      summary: "Record a relationship between two servers of the cluster",
      request: {
        params: IdParam,
        body: jsonBody(z.object({ source_connection_id: Id, target_connection_id: Id, relationship_type: z.enum(RELATIONSHIP_TYPES) }).strict()),
      },
      responses: { 201: json(RelationshipSchema, "Created"), ...errorResponses(400, 401, 403, 404, 409) },
    }),
  ),
  removeRelationship: guarded(
    MANAGE,
    createRoute({
      method: "delete",
      path: "/api/v1/clusters/{id}/relationships/{relationshipId}",
      tags,
      summary: "Delete a relationship",
      request: { params: RelationshipParams },
      responses: { ...noContent, ...errorResponses(401, 403, 404) },
    }),
  ),
  groups: guarded(
    USER,
    createRoute({
      method: "get",
      path: "/api/v1/cluster-groups",
      tags,
      summary: "Cluster groups",
      responses: { 200: json(z.array(GroupSchema), "Groups"), ...errorResponses(401) },
    }),
  ),
  createGroup: guarded(
    MANAGE,
    createRoute({
      method: "post",
      path: "/api/v1/cluster-groups",
      tags,
      summary: "Create a cluster group",
      request: { body: jsonBody(GroupBody) },
      responses: { 201: json(GroupSchema, "Created"), ...errorResponses(400, 401, 403, 409) },
    }),
  ),
  getGroup: guarded(
    USER,
    createRoute({
      method: "get",
      path: "/api/v1/cluster-groups/{id}",
      tags,
      summary: "A cluster group",
      request: { params: IdParam },
      responses: { 200: json(GroupSchema, "Group"), ...errorResponses(401, 404) },
    }),
  ),
  updateGroup: guarded(
    MANAGE,
    createRoute({
      method: "put",
      path: "/api/v1/cluster-groups/{id}",
      tags,
      summary: "Rename or describe a group",
      request: { params: IdParam, body: jsonBody(GroupBody.partial().strict()) },
      responses: { 200: json(GroupSchema, "Updated"), ...errorResponses(400, 401, 403, 404, 409) },
    }),
  ),
  removeGroup: guarded(
    MANAGE,
    createRoute({
      method: "delete",
      path: "/api/v1/cluster-groups/{id}",
      tags,
      summary: "Delete a group (its clusters stay, ungrouped)",
      request: { params: IdParam },
      responses: { ...noContent, ...errorResponses(401, 403, 404, 409) },
    }),
  ),
  groupClusters: guarded(
    USER,
    createRoute({
      method: "get",
      path: "/api/v1/cluster-groups/{id}/clusters",
      tags,
      summary: "Clusters in a group",
      request: { params: IdParam },
      responses: { 200: json(z.array(ClusterSchema), "Clusters"), ...errorResponses(401, 404) },
    }),
  ),
  createInGroup: guarded(
    MANAGE,
    createRoute({
      method: "post",
      path: "/api/v1/cluster-groups/{id}/clusters",
      tags,
      summary: "Create a cluster in this group",
      request: { params: IdParam, body: jsonBody(NewCluster.omit({ group_id: true })) },
      responses: { 201: json(ClusterSchema, "Created"), ...errorResponses(400, 401, 403, 404, 409) },
    }),
  ),
};

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
