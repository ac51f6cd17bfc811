/** The latest pg_node_role and pg_subscription_upstream samples of every connection: what replication clusters are detected from. */
import type { Queryable } from "../../drivers/types.ts";
import type { NodeRole, Subscription } from "../clusters/replication-topology.ts";
import { samplesSql } from "../probes/history-ddl.ts";
import { findProbe } from "../probes/index.ts";

/** Samples older than this describe a topology that may have changed since; they are not used. */
const FRESH_FOR = "1 day";

export async function latestNodeRoles(db: Queryable): Promise<NodeRole[]> {
  return db.query<NodeRole>(
    `SELECT DISTINCT ON (r.connection_id) r.connection_id, c.host, c.port, r.is_in_recovery, r.system_identifier, r.sender_host, r.sender_port
       FROM ${samplesSql(findProbe("pg_node_role")!, `now() - interval '${FRESH_FOR}'`, "now()")} r JOIN connections c ON c.id = r.connection_id
      WHERE r.collected_at > now() - interval '${FRESH_FOR}'
      ORDER BY r.connection_id, r.collected_at DESC`,
  );
}

export async function latestSubscriptions(db: Queryable): Promise<Subscription[]> {
  const table = samplesSql(findProbe("pg_subscription_upstream")!, `now() - interval '${FRESH_FOR}'`, "now()");
  return db.query<Subscription>(
    `SELECT s.connection_id, s.publisher_host, s.publisher_port FROM ${table} s
      WHERE s.collected_at = (SELECT max(collected_at) FROM ${table} l WHERE l.connection_id = s.connection_id)
        AND s.collected_at > now() - interval '${FRESH_FOR}'`,
  );
}

export async function dismissedReplicationPrefixes(db: Queryable): Promise<Set<string>> {
  return new Set((await db.query<{ prefix: string }>("SELECT prefix FROM dismissed_replication_clusters")).map((r) => r.prefix));
}

export async function dismissReplicationCluster(db: Queryable, prefix: string, userId: number): Promise<void> {
  await db.query("INSERT INTO dismissed_replication_clusters (prefix, dismissed_by) VALUES ($1, $2) ON CONFLICT DO NOTHING", [prefix, userId]);
}
