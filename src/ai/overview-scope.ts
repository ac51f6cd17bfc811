/** Which servers an overview covers: those the caller can see, narrowed to ids, a server, a cluster or a cluster group. */
import type { Payer } from "../llm/usage.ts";
import type { Queryable } from "../../drivers/types.ts";
import type { Authority } from "../auth/rbac.ts";
import { estateOf } from "../auth/visible-estate.ts";
import type { Visible } from "../datastore/blackouts.ts";
import { type Cluster, listClusters } from "../datastore/clusters.ts";
import type { ConnectionRow } from "../datastore/connections.ts";
import { NotFoundError } from "../errors.ts";
import type { LlmConfig } from "../llm-config.ts";
import type { Logger } from "../log.ts";
import { estateSnapshot } from "./estate-snapshot.ts";
import { type Overview, overview } from "./overview.ts";

export const SCOPE_TYPES = ["server", "cluster", "group"] as const;

export interface OverviewScope {
  connectionIds?: number[];
  scopeType?: (typeof SCOPE_TYPES)[number];
  scopeId?: number;
}

/** The maintenance windows that concern exactly these servers: theirs, their clusters', their groups', the estate's. */
function windowsOf(servers: readonly ConnectionRow[], clusters: readonly Cluster[]): Visible {
  const theirs = clusters.filter((cl) => servers.some((s) => s.cluster_id === cl.id));
  const groups = [...new Set(theirs.map((cl) => cl.group_id).filter((g): g is number => g !== null))];
  return { connections: servers.map((s) => s.id), clusters: theirs.map((cl) => cl.id), groups };
}

export async function overviewFor(db: Queryable, a: Authority, llm: LlmConfig, log: Logger, scope: OverviewScope, refreshBy?: Payer): Promise<Overview> {
  let chosen = (await estateOf(db, a)).connections;
  if (scope.connectionIds) chosen = chosen.filter((row) => scope.connectionIds!.includes(row.id));
  if (scope.scopeType === "server") chosen = chosen.filter((row) => row.id === scope.scopeId);
  if (scope.scopeType === "cluster") chosen = chosen.filter((row) => row.cluster_id === scope.scopeId);
  const clusters = await listClusters(db);
  if (scope.scopeType === "group") {
    const inGroup = new Set(clusters.filter((cl) => cl.group_id === scope.scopeId).map((cl) => cl.id));
    chosen = chosen.filter((row) => row.cluster_id !== null && inGroup.has(row.cluster_id));
  }
  if ((scope.connectionIds || scope.scopeType) && chosen.length === 0) throw new NotFoundError("none of the servers asked for is visible to you");
  // One summary per set of servers, whoever asks: it says nothing about the asker.
  const scopeKey = `connections:${chosen
    .map((row) => row.id)
    .sort((x, y) => x - y)
    .join(",")}`;
  return overview(db, llm, log, scopeKey, await estateSnapshot(db, chosen, windowsOf(chosen, clusters)), refreshBy);
}
