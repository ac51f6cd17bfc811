/**
 * Who sees and who may place a maintenance window. Anyone sees estate windows, and others on servers,
 * clusters and groups they can see. Placing one needs manage_blackouts (checked by the route) and the right
 * to read every server it would silence: an estate window needs read on all connections, a group or cluster
 * window read on each server in it, so nobody can quiet alerts on servers hidden from them.
 */
import type { Context } from "hono";
import type { Queryable } from "../../drivers/types.ts";
import { type Authority, connectionAccess, holdsAllConnections } from "../auth/rbac.ts";
import { estateOf } from "../auth/visible-estate.ts";
import { listClusters } from "../datastore/clusters.ts";
import { readableConnection } from "../auth/connection-access.ts";
import type { Visible } from "../datastore/blackouts.ts";
import { NotFoundError } from "../errors.ts";
import { authority } from "./access.ts";
import type { AppEnv } from "./context.ts";
import { connectionsIn } from "./estate-view.ts";
import { ApiError } from "./errors.ts";
import type { ScopeTarget } from "../blackouts/scope.ts";

export async function visibleEstate(c: Context<AppEnv>): Promise<Visible> {
  return visibleTo(c.get("db"), await authority(c));
}

/** The servers, clusters and groups `a` can see (the same rule as the estate endpoints). */
export async function visibleTo(db: Queryable, a: Authority): Promise<Visible> {
  const { manager, connections, clusterVisible } = await estateOf(db, a);
  const clusters = (await listClusters(db)).filter((cl) => clusterVisible(cl.id));
  const groups = manager
    ? (await db.query<{ id: number }>("SELECT id FROM cluster_groups")).map((g) => g.id)
    : [...new Set(clusters.map((cl) => cl.group_id).filter((g): g is number => g !== null))];
  return { connections: connections.map((row) => row.id), clusters: clusters.map((cl) => cl.id), groups };
}

/** 404 for a target the caller cannot see; 403 when the window would silence a server it cannot read. */
export async function assertMayPlace(c: Context<AppEnv>, t: ScopeTarget): Promise<void> {
  const db = c.get("db");
  const a = await authority(c);
  if (t.scope === "server") {
    await readableConnection(db, t.connection_id!, a);
    return;
  }
  if (t.scope === "estate") {
    if (!holdsAllConnections(a, "read"))
      throw new ApiError(403, "an estate-wide window silences every server: it needs read on all connections (connection 0)");
    return;
  }
  const visible = await visibleEstate(c);
  const id = t.scope === "group" ? t.group_id! : t.cluster_id!;
  if (!(t.scope === "group" ? visible.groups : visible.clusters).includes(id)) throw new NotFoundError(`${t.scope} ${id} not found`);
  const inside = await connectionsIn(db, t.scope, id);
  if (inside.some((row) => connectionAccess(a, row) === null)) throw new ApiError(403, `a window on ${t.scope} ${id} would silence servers you cannot read`);
}
