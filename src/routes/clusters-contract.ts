/**
 * The clusters API's contract: request and response schemas and the routes with their access (clusters.ts answers them).
 */
import { createRoute, z } from "@hono/zod-openapi";
import { RELATIONSHIP_TYPES, REPLICATION_TYPES } from "../datastore/clusters.ts";
import { USER, admin, guarded } from "../http/access.ts";
import { INT_MAX, Id, IdParam, PathId, json, jsonBody, noContent } from "../http/params.ts";
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

export const r = {
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
