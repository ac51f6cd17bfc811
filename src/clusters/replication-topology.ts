/**
 * Replication clusters detected from the servers' pg_node_role samples (pure). Servers sharing a system
 * identifier are one physical replication cluster: the primary (not in recovery) and its standbys. Each
 * standby streams from the member whose host and port its WAL receiver names, else from the primary. A
 * cluster's prefix is its system identifier, stable across failovers: `cluster-replication-<prefix>`.
 */

export interface NodeRole {
  connection_id: number;
  host: string;
  port: number;
  is_in_recovery: boolean | null;
  system_identifier: string | null;
  sender_host: string | null;
  sender_port: number | null;
}

export interface ReplicationCluster {
  prefix: string;
  /** The member not in recovery, when there is exactly one. */
  primary: number | null;
  /** Primary first, then standbys by connection id. */
  members: Array<{ connection_id: number; role: "primary" | "standby" }>;
  edges: Array<{ source: number; target: number; type: "streams_from" }>;
}

const LOOPBACK = new Set(["localhost", "127.0.0.1", "::1"]);
const sameHost = (a: string, b: string) => a.toLowerCase() === b.toLowerCase() || (LOOPBACK.has(a.toLowerCase()) && LOOPBACK.has(b.toLowerCase()));

export function detectReplicationClusters(nodes: readonly NodeRole[]): ReplicationCluster[] {
  const bySystem = new Map<string, NodeRole[]>();
  for (const n of nodes) {
    if (!n.system_identifier) continue;
    bySystem.set(n.system_identifier, [...(bySystem.get(n.system_identifier) ?? []), n]);
  }
  const clusters: ReplicationCluster[] = [];
  for (const [prefix, group] of bySystem) {
    if (group.length < 2) continue;
    const primaries = group.filter((n) => n.is_in_recovery === false);
    const primary = primaries.length === 1 ? primaries[0].connection_id : null;
    const ordered = [...group].sort((a, b) => Number(b.connection_id === primary) - Number(a.connection_id === primary) || a.connection_id - b.connection_id);
    const edges: ReplicationCluster["edges"] = [];
    for (const standby of group.filter((n) => n.is_in_recovery)) {
      const upstream = group.find((m) => m !== standby && standby.sender_host !== null && sameHost(m.host, standby.sender_host) && m.port === standby.sender_port);
      const target = upstream?.connection_id ?? primary;
      if (target !== null && target !== standby.connection_id) edges.push({ source: standby.connection_id, target, type: "streams_from" });
    }
    clusters.push({ prefix, primary, members: ordered.map((n) => ({ connection_id: n.connection_id, role: n.is_in_recovery ? "standby" : "primary" })), edges });
  }
  return clusters.sort((a, b) => a.prefix.localeCompare(b.prefix));
}

/** The clusters the topology shows: detected among servers in no cluster of their own, dismissed ones left out. */
export function shownReplicationClusters(nodes: readonly NodeRole[], inManualCluster: ReadonlySet<number>, dismissed: ReadonlySet<string>): ReplicationCluster[] {
  return detectReplicationClusters(nodes.filter((n) => !inManualCluster.has(n.connection_id))).filter((rc) => !dismissed.has(rc.prefix));
}
