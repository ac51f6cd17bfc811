/** What of the estate a caller can see: connections it may read, and clusters and groups holding one. */
import type { Context } from "hono";
import { estateOf } from "../auth/visible-estate.ts";
import { listClusters } from "../datastore/clusters.ts";
import type { OverrideScope } from "../datastore/probe-configs.ts";
import { NotFoundError } from "../errors.ts";
import { authority } from "./access.ts";
import type { AppEnv } from "./context.ts";

export async function estateView(c: Context<AppEnv>) {
  const a = await authority(c);
  return { a, ...(await estateOf(c.get("db"), a)) };
}

/** A server, cluster or group the caller cannot see answers 404, like one that does not exist. */
export async function assertScopeVisible(c: Context<AppEnv>, scope: OverrideScope, id: number): Promise<void> {
  const view = await estateView(c);
  const db = c.get("db");
  let visible: boolean;
  if (scope === "server") visible = view.connections.some((row) => row.id === id);
  else {
    const clusters = await listClusters(db);
    if (scope === "cluster") visible = clusters.some((cl) => cl.id === id) && view.clusterVisible(id);
    else {
      const exists = (await db.query("SELECT 1 FROM cluster_groups WHERE id = $1", [id])).length > 0;
      visible = exists && (view.manager || clusters.some((cl) => cl.group_id === id && view.clusterVisible(cl.id)));
    }
  }
  if (!visible) throw new NotFoundError(`${scope} ${id} not found`);
}
