/** Which servers an overview covers: those the caller can see, narrowed to ids, a server, a cluster or a cluster group. */
import type { Queryable } from "../../drivers/types.ts";
import type { Authority } from "../auth/rbac.ts";
import { estateOf } from "../auth/visible-estate.ts";
import type { Visible } from "../datastore/blackouts.ts";
import type { ConnectionRow } from "../datastore/connections.ts";
import { NotFoundError } from "../errors.ts";
import type { LlmConfig } from "../llm/llm-config.ts";
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
async function windowsOf(db: Queryable, servers: readonly ConnectionRow[]): Promise<Visible> {
  const clusters = [...new Set(servers.map((s) => s.cluster_id).filter((id): id is number => id !== null))];
  const groups = (await db.query<{ group_id: number }>("SELECT DISTINCT group_id FROM clusters WHERE id = ANY($1::int[]) AND group_id IS NOT NULL", [clusters])).map((g) => g.group_id);
  return { connections: servers.map((s) => s.id), clusters, groups };
}

export async function overviewFor(db: Queryable, a: Authority, llm: LlmConfig, log: Logger, scope: OverviewScope, refresh: boolean): Promise<Overview> {
  let chosen = (await estateOf(db, a)).connections;
  if (scope.connectionIds) chosen = chosen.filter((row) => scope.connectionIds!.includes(row.id));
  if (scope.scopeType === "server") chosen = chosen.filter((row) => row.id === scope.scopeId);
  if (scope.scopeType === "cluster") chosen = chosen.filter((row) => row.cluster_id === scope.scopeId);
  if (scope.scopeType === "group") {
    const clusters = new Set((await db.query<{ id: number }>("SELECT id FROM clusters WHERE group_id = $1", [scope.scopeId])).map((m) => m.id));
    chosen = chosen.filter((row) => row.cluster_id !== null && clusters.has(row.cluster_id));
  }
  if ((scope.connectionIds || scope.scopeType) && chosen.length === 0) throw new NotFoundError("none of the servers asked for is visible to you");
  // One summary per set of servers, whoever asks: it says nothing about the asker.
  const scopeKey = `connections:${chosen.map((row) => row.id).sort((x, y) => x - y).join(",")}`;
  return overview(db, llm, log, scopeKey, await estateSnapshot(db, chosen, await windowsOf(db, chosen)), refresh);
}
