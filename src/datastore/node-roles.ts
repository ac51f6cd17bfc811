/** The latest pg_node_role and pg_subscription_upstream samples of every connection: what replication clusters are detected from. */
import type { Queryable } from "../../drivers/types.ts";
import type { NodeRole, Subscription } from "../clusters/replication-topology.ts";
import { latestSamples } from "../samples/read-latest-sample.ts";

/** Samples older than this describe a topology that may have changed since; they are not used. */
const FRESH = "collected_at <= now() AND collected_at > now() - interval '1 day'";

/** Every connection's latest sample of `probe` younger than a day: its rows, with `columns` and where it is reached. */
async function latestFreshRows<R extends object>(db: Queryable, probe: string, columns: readonly string[]) {
  const connections = await db.query<{ id: number; host: string; port: number }>("SELECT id, host, port FROM connections ORDER BY id");
  const samples = await latestSamples<R & { collected_at?: unknown }>(
    db,
    probe,
    connections.map((c) => c.id),
    FRESH,
    columns,
  );
  return connections.flatMap((c) =>
    samples.get(c.id)!.rows.map(({ collected_at: _, ...row }) => ({ ...row, connection_id: c.id, host: c.host, port: c.port })),
  );
}

export async function latestNodeRoles(db: Queryable): Promise<NodeRole[]> {
  // One row a sample: the probe has no keys.
  return latestFreshRows<NodeRole>(db, "pg_node_role", ["is_in_recovery", "system_identifier", "sender_host", "sender_port"]);
}

export async function latestSubscriptions(db: Queryable): Promise<Subscription[]> {
  const rows = await latestFreshRows<Subscription & { subname: string }>(db, "pg_subscription_upstream", ["publisher_host", "publisher_port"]);
  return rows.map(({ connection_id, publisher_host, publisher_port }) => ({ connection_id, publisher_host, publisher_port }));
}

export async function dismissedReplicationPrefixes(db: Queryable): Promise<Set<string>> {
  return new Set((await db.query<{ prefix: string }>("SELECT prefix FROM dismissed_replication_clusters")).map((r) => r.prefix));
}

export async function dismissReplicationCluster(db: Queryable, prefix: string, userId: number): Promise<void> {
  await db.query("INSERT INTO dismissed_replication_clusters (prefix, dismissed_by) VALUES ($1, $2) ON CONFLICT DO NOTHING", [prefix, userId]);
}
