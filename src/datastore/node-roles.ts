/** The latest pg_node_role and pg_subscription_upstream samples of every connection: what replication clusters are detected from. */
import type { Queryable } from "../../drivers/types.ts";
import type { NodeRole, Subscription } from "../clusters/replication-topology.ts";
import { latestSampleTimeSql, samplesSql } from "../probes/history-ddl.ts";
import { findProbe } from "../probes/index.ts";
import type { ProbeDefinition } from "../probes/types.ts";

/** Samples older than this describe a topology that may have changed since; they are not used. */
const FRESH_FOR = "1 day";

/**
 * The rows (with `columns` and the keys) of each connection's latest sample of `probe`, where it is younger than
 * FRESH_FOR: each connection's latest time looked up by index, then the samples between the earliest and the
 * latest of those times read once and joined with them. With every connection collecting, that is a few minutes
 * of samples, not the day of every connection's samples sorted to keep each one's latest.
 */
function latestFreshRows(probe: ProbeDefinition, columns: readonly string[]): string {
  const fresh = `(SELECT c.id, ${latestSampleTimeSql(probe, "c.id", "collected_at <= now()", [])} AS at FROM connections c)`;
  return `(WITH l AS MATERIALIZED (SELECT * FROM ${fresh} f WHERE f.at > now() - interval '${FRESH_FOR}')
     SELECT s.* FROM l JOIN ${samplesSql(probe, "(SELECT min(at) FROM l)", "(SELECT max(at) FROM l)", columns)} s ON s.connection_id = l.id AND s.collected_at = l.at)`;
}

export async function latestNodeRoles(db: Queryable): Promise<NodeRole[]> {
  const columns = ["is_in_recovery", "system_identifier", "sender_host", "sender_port"];
  return db.query<NodeRole>(
    `SELECT DISTINCT ON (r.connection_id) r.connection_id, c.host, c.port, ${columns.map((name) => `r.${name}`).join(", ")}
       FROM ${latestFreshRows(findProbe("pg_node_role")!, columns)} r JOIN connections c ON c.id = r.connection_id
      ORDER BY r.connection_id`,
  );
}

export async function latestSubscriptions(db: Queryable): Promise<Subscription[]> {
  return db.query<Subscription>(
    `SELECT s.connection_id, s.publisher_host, s.publisher_port FROM ${latestFreshRows(findProbe("pg_subscription_upstream")!, ["publisher_host", "publisher_port"])} s`,
  );
}

export async function dismissedReplicationPrefixes(db: Queryable): Promise<Set<string>> {
  return new Set((await db.query<{ prefix: string }>("SELECT prefix FROM dismissed_replication_clusters")).map((r) => r.prefix));
}

export async function dismissReplicationCluster(db: Queryable, prefix: string, userId: number): Promise<void> {
  await db.query("INSERT INTO dismissed_replication_clusters (prefix, dismissed_by) VALUES ($1, $2) ON CONFLICT DO NOTHING", [prefix, userId]);
}
