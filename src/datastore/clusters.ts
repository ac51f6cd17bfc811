/** Clusters of servers, the groups that hold them, and replication relationships between servers. */
import type { Queryable } from "../../drivers/types.ts";
import { ConflictError, InputError, NotFoundError } from "../errors.ts";

export interface ClusterGroup {
  id: number;
  name: string;
  description: string;
  owner_user_id: number | null;
  created_at: Date;
  updated_at: Date;
}

export interface Cluster {
  id: number;
  group_id: number | null;
  name: string;
  description: string;
  replication_type: string;
  created_at: Date;
  updated_at: Date;
}

export interface Relationship {
  id: number;
  cluster_id: number;
  source_connection_id: number;
  target_connection_id: number;
  relationship_type: string;
  is_auto_detected: boolean;
  source_name: string;
  target_name: string;
}

export const REPLICATION_TYPES = ["physical", "logical", "spock", "other"] as const;
export const RELATIONSHIP_TYPES = ["streams_from", "subscribes_to", "replicates_with"] as const;

async function unique<T>(work: () => Promise<T>, message: string): Promise<T> {
  try {
    return await work();
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === "23505") throw new ConflictError(message);
    if (code === "23503") throw new NotFoundError("cluster group not found");
    throw err;
  }
}

export const groupJson = (g: ClusterGroup) => ({
  id: g.id,
  name: g.name,
  description: g.description,
  created_at: g.created_at.toISOString(),
  updated_at: g.updated_at.toISOString(),
});
export const clusterJson = (c: Cluster) => ({
  id: c.id,
  group_id: c.group_id,
  name: c.name,
  description: c.description,
  replication_type: c.replication_type,
  created_at: c.created_at.toISOString(),
  updated_at: c.updated_at.toISOString(),
});

export const listClusterGroups = (db: Queryable) => db.query<ClusterGroup>("SELECT * FROM cluster_groups ORDER BY lower(name)");

export async function getClusterGroup(db: Queryable, id: number): Promise<ClusterGroup> {
  const [g] = await db.query<ClusterGroup>("SELECT * FROM cluster_groups WHERE id = $1", [id]);
  if (!g) throw new NotFoundError(`cluster group ${id} not found`);
  return g;
}

export async function createClusterGroup(db: Queryable, g: { name: string; description: string; ownerUserId: number }): Promise<ClusterGroup> {
  return unique(
    async () =>
      (
        await db.query<ClusterGroup>("INSERT INTO cluster_groups (name, description, owner_user_id) VALUES ($1, $2, $3) RETURNING *", [
          g.name,
          g.description,
          g.ownerUserId,
        ])
      )[0],
    `a cluster group named \`${g.name}\` already exists`,
  );
}

export async function updateClusterGroup(db: Queryable, id: number, changes: { name?: string; description?: string }): Promise<ClusterGroup> {
  const current = await getClusterGroup(db, id);
  return unique(
    async () =>
      (
        await db.query<ClusterGroup>("UPDATE cluster_groups SET name = $2, description = $3, updated_at = now() WHERE id = $1 RETURNING *", [
          id,
          changes.name ?? current.name,
          changes.description ?? current.description,
        ])
      )[0],
    `a cluster group named \`${changes.name}\` already exists`,
  );
}

/** Its clusters stay, ungrouped; its probe overrides go. */
/** Deletes a group (in a transaction): its clusters become ungrouped, which a name they share with an ungrouped cluster refuses (409). */
export async function deleteClusterGroup(db: Queryable, id: number): Promise<void> {
  const clashes = await db.query<{ name: string }>(
    "SELECT c.name FROM clusters c WHERE c.group_id = $1 AND EXISTS (SELECT 1 FROM clusters u WHERE u.group_id IS NULL AND lower(u.name) = lower(c.name)) ORDER BY c.name",
    [id],
  );
  const clash = `cluster group ${id} cannot be deleted: its clusters would become ungrouped beside ungrouped clusters of the same name (${clashes.map((c) => `\`${c.name}\``).join(", ")}); rename or move one of each pair first`;
  if (clashes.length) throw new ConflictError(clash);
  await db.query("DELETE FROM probe_configs WHERE scope = 'group' AND scope_id = $1", [id]);
  const deleted = await unique(
    () => db.query("DELETE FROM cluster_groups WHERE id = $1 RETURNING id", [id]),
    `cluster group ${id} cannot be deleted: a cluster of it would share its name with an ungrouped cluster; rename one first`,
  );
  if (deleted.length === 0) throw new NotFoundError(`cluster group ${id} not found`);
}

export const listClusters = (db: Queryable) => db.query<Cluster>("SELECT * FROM clusters ORDER BY lower(name)");

export async function getCluster(db: Queryable, id: number): Promise<Cluster> {
  const [c] = await db.query<Cluster>("SELECT * FROM clusters WHERE id = $1", [id]);
  if (!c) throw new NotFoundError(`cluster ${id} not found`);
  return c;
}

export async function createCluster(
  db: Queryable,
  c: { name: string; description: string; replication_type: string; group_id: number | null },
): Promise<Cluster> {
  if (c.group_id !== null) await getClusterGroup(db, c.group_id);
  return unique(
    async () =>
      (
        await db.query<Cluster>("INSERT INTO clusters (name, description, replication_type, group_id) VALUES ($1, $2, $3, $4) RETURNING *", [
          c.name,
          c.description,
          c.replication_type,
          c.group_id,
        ])
      )[0],
    `a cluster named \`${c.name}\` already exists in this group`,
  );
}

export async function updateCluster(
  db: Queryable,
  id: number,
  changes: Partial<Pick<Cluster, "name" | "description" | "replication_type" | "group_id">>,
): Promise<Cluster> {
  const current = await getCluster(db, id);
  const next = { ...current, ...Object.fromEntries(Object.entries(changes).filter(([, v]) => v !== undefined)) };
  if (next.group_id !== null && next.group_id !== current.group_id) await getClusterGroup(db, next.group_id);
  return unique(
    async () =>
      (
        await db.query<Cluster>(
          "UPDATE clusters SET name = $2, description = $3, replication_type = $4, group_id = $5, updated_at = now() WHERE id = $1 RETURNING *",
          [id, next.name, next.description, next.replication_type, next.group_id],
        )
      )[0],
    `a cluster named \`${next.name}\` already exists in this group`,
  );
}

/** Its servers stay, outside any cluster; its relationships and probe overrides go. */
export async function deleteCluster(db: Queryable, id: number): Promise<void> {
  await db.query("DELETE FROM probe_configs WHERE scope = 'cluster' AND scope_id = $1", [id]);
  if ((await db.query("DELETE FROM clusters WHERE id = $1 RETURNING id", [id])).length === 0) throw new NotFoundError(`cluster ${id} not found`);
}

export async function setConnectionCluster(db: Queryable, connectionId: number, clusterId: number | null, role?: string | null): Promise<void> {
  if (clusterId !== null) await getCluster(db, clusterId);
  await db.query("UPDATE connections SET cluster_id = $2, role = $3, hidden_from_topology = false, updated_at = now() WHERE id = $1", [
    connectionId,
    clusterId,
    role ?? null,
  ]);
  // Relationships only hold between members of a cluster.
  await db.query("DELETE FROM cluster_relationships WHERE cluster_id <> $2 AND (source_connection_id = $1 OR target_connection_id = $1)", [
    connectionId,
    clusterId ?? 0,
  ]);
}

export async function listRelationships(db: Queryable, clusterId: number): Promise<Relationship[]> {
  return db.query<Relationship>(
    `SELECT r.id, r.cluster_id, r.source_connection_id, r.target_connection_id, r.relationship_type, r.is_auto_detected, s.name AS source_name, t.name AS target_name
       FROM cluster_relationships r JOIN connections s ON s.id = r.source_connection_id JOIN connections t ON t.id = r.target_connection_id
      WHERE r.cluster_id = $1 ORDER BY r.id`,
    [clusterId],
  );
}

export async function createRelationship(
  db: Queryable,
  clusterId: number,
  r: { source_connection_id: number; target_connection_id: number; relationship_type: string },
): Promise<number> {
  if (r.source_connection_id === r.target_connection_id) throw new InputError("a server cannot have a relationship with itself");
  const members = await db.query<{ id: number }>("SELECT id FROM connections WHERE cluster_id = $1 AND id = ANY($2::int[])", [
    clusterId,
    [r.source_connection_id, r.target_connection_id],
  ]);
  const missing = [r.source_connection_id, r.target_connection_id].filter((id) => !members.some((m) => m.id === id));
  if (missing.length) throw new InputError(`connection ${missing.join(" and ")} is not a member of cluster ${clusterId}`);
  const [row] = await unique(
    () =>
      db.query<{ id: number }>(
        "INSERT INTO cluster_relationships (cluster_id, source_connection_id, target_connection_id, relationship_type) VALUES ($1, $2, $3, $4) RETURNING id",
        [clusterId, r.source_connection_id, r.target_connection_id, r.relationship_type],
      ),
    "this relationship already exists",
  );
  return row.id;
}

export async function deleteRelationship(db: Queryable, clusterId: number, id: number): Promise<void> {
  if ((await db.query("DELETE FROM cluster_relationships WHERE cluster_id = $1 AND id = $2 RETURNING id", [clusterId, id])).length === 0)
    throw new NotFoundError(`relationship ${id} not found in cluster ${clusterId}`);
}

/** A cluster's name and its group's id and name: where a server sits, for override contexts. */
export async function clusterPlace(
  db: Queryable,
  clusterId: number | null,
): Promise<{ cluster_name: string | null; group_id: number | null; group_name: string | null } | undefined> {
  if (clusterId === null) return undefined;
  const rows = await db.query<{ cluster_name: string | null; group_id: number | null; group_name: string | null }>(
    "SELECT cl.name AS cluster_name, g.id AS group_id, g.name AS group_name FROM clusters cl LEFT JOIN cluster_groups g ON g.id = cl.group_id WHERE cl.id = $1",
    [clusterId],
  );
  return rows[0];
}
