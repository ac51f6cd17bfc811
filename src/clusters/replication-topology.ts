/**
 * Replication clusters detected from the servers' samples (pure), shown as `cluster-replication-<prefix>`.
 * Physical (pg_node_role): servers sharing a system identifier are the primary (not in recovery) and its
 * standbys; each standby streams from the member whose host and port its WAL receiver names, else from the
 * primary; the prefix is the system identifier, stable across failovers. Logical (pg_subscription_upstream):
 * a publisher and the servers subscribing to its address, prefix `logical-<publisher connection id>`; servers
 * already in a physical cluster are left to it.
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

/** One subscription of a server: the publisher address it connects to. */
export interface Subscription {
  connection_id: number;
  publisher_host: string | null;
  publisher_port: number | null;
}

/** Where pglens reaches a server. */
export interface ServerAddress {
  connection_id: number;
  host: string;
  port: number;
}

export interface ReplicationCluster {
  prefix: string;
  kind: "physical" | "logical";
  /** The member not in recovery (physical, when there is exactly one), or the publisher (logical). */
  primary: number | null;
  /** Primary or publisher first, then the others by connection id. */
  members: Array<{ connection_id: number; role: "primary" | "standby" | "publisher" | "subscriber" }>;
  edges: Array<{ source: number; target: number; type: "streams_from" | "subscribes_to" }>;
}

const LOOPBACK = new Set(["localhost", "127.0.0.1", "::1"]);
const sameHost = (a: string, b: string) => a.toLowerCase() === b.toLowerCase() || (LOOPBACK.has(a.toLowerCase()) && LOOPBACK.has(b.toLowerCase()));

export function detectReplicationClusters(
  nodes: readonly NodeRole[],
  subscriptions: readonly Subscription[] = [],
  servers: readonly ServerAddress[] = nodes,
): ReplicationCluster[] {
  const bySystem = new Map<string, NodeRole[]>();
  for (const n of nodes) {
    if (!n.system_identifier) continue;
    bySystem.set(n.system_identifier, [...(bySystem.get(n.system_identifier) ?? []), n]);
  }
  const clusters: ReplicationCluster[] = [];
  for (const [prefix, group] of bySystem) {
    // Several connections to one server (other logins, other databases) are not replication.
    const address = (n: ServerAddress) => `${n.host.toLowerCase()}:${n.port}`;
    if (new Set(group.map(address)).size < 2) continue;
    const primaries = new Set(group.filter((n) => n.is_in_recovery === false).map(address));
    const primary = primaries.size === 1 ? Math.min(...group.filter((n) => primaries.has(address(n))).map((n) => n.connection_id)) : null;
    const ordered = [...group].sort((a, b) => Number(b.connection_id === primary) - Number(a.connection_id === primary) || a.connection_id - b.connection_id);
    const edges: ReplicationCluster["edges"] = [];
    for (const standby of group.filter((n) => n.is_in_recovery)) {
      const upstream = group.find(
        (m) => m !== standby && standby.sender_host !== null && sameHost(m.host, standby.sender_host) && m.port === standby.sender_port,
      );
      const target = upstream?.connection_id ?? primary;
      if (target !== null && target !== standby.connection_id) edges.push({ source: standby.connection_id, target, type: "streams_from" });
    }
    clusters.push({
      prefix,
      kind: "physical",
      primary,
      members: ordered.map((n) => ({ connection_id: n.connection_id, role: n.is_in_recovery ? "standby" : "primary" })),
      edges,
    });
  }
  return [
    ...clusters.sort((a, b) => a.prefix.localeCompare(b.prefix)),
    ...logicalClusters(subscriptions, servers, new Set(clusters.flatMap((c) => c.members.map((m) => m.connection_id)))),
  ];
}

function logicalClusters(subscriptions: readonly Subscription[], servers: readonly ServerAddress[], taken: ReadonlySet<number>): ReplicationCluster[] {
  const subscribers = new Map<number, Set<number>>(); // publisher -> subscribers
  for (const s of subscriptions) {
    if (s.publisher_host === null || taken.has(s.connection_id)) continue;
    const publisher = servers.find((p) => p.connection_id !== s.connection_id && sameHost(p.host, s.publisher_host!) && p.port === (s.publisher_port ?? 5432));
    if (!publisher || taken.has(publisher.connection_id)) continue;
    subscribers.set(publisher.connection_id, (subscribers.get(publisher.connection_id) ?? new Set()).add(s.connection_id));
  }
  return [...subscribers]
    .sort(([a], [b]) => a - b)
    .map(([publisher, subs]) => {
      const ordered = [...subs].sort((a, b) => a - b);
      return {
        prefix: `logical-${publisher}`,
        kind: "logical" as const,
        primary: publisher,
        members: [{ connection_id: publisher, role: "publisher" as const }, ...ordered.map((id) => ({ connection_id: id, role: "subscriber" as const }))],
        edges: ordered.map((id) => ({ source: id, target: publisher, type: "subscribes_to" as const })),
      };
    });
}

/** The clusters the topology shows: detected among servers in no cluster of their own, dismissed ones left out. */
export function shownReplicationClusters(
  samples: { nodes: readonly NodeRole[]; subscriptions: readonly Subscription[]; servers: readonly ServerAddress[] },
  inManualCluster: ReadonlySet<number>,
  dismissed: ReadonlySet<string>,
): ReplicationCluster[] {
  const free = <T extends { connection_id: number }>(xs: readonly T[]) => xs.filter((x) => !inManualCluster.has(x.connection_id));
  return detectReplicationClusters(free(samples.nodes), free(samples.subscriptions), free(samples.servers)).filter((rc) => !dismissed.has(rc.prefix));
}
