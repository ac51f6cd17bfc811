/** What of the estate a caller can see: the connections it may read, and the clusters holding one (all for a connection manager). */
import type { Queryable } from "../../drivers/types.ts";
import { listConnections } from "../datastore/connections.ts";
import { type Authority, connectionAccess, hasAdminPermission } from "./rbac.ts";

export async function estateOf(db: Queryable, a: Authority) {
  const manager = hasAdminPermission(a, "manage_connections");
  const connections = (await listConnections(db)).filter((row) => connectionAccess(a, row) !== null);
  const clusterVisible = (id: number) => manager || connections.some((row) => row.cluster_id === id);
  return { manager, connections, clusterVisible };
}
