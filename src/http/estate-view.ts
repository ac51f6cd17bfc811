/** What of the estate a caller can see: connections it may read, and clusters and groups holding one. */
import type { Context } from "hono";
import type { Queryable } from "../../drivers/types.ts";
import { type ConnectionOwnership, connectionAccess } from "../auth/rbac.ts";
import { estateOf } from "../auth/visible-estate.ts";
import { listClusters } from "../datastore/clusters.ts";
import type { OverrideScope } from "../datastore/probe-configs.ts";
import { NotFoundError } from "../errors.ts";
import { authority } from "./access.ts";
import type { AppEnv } from "./context.ts";
import { ApiError } from "./errors.ts";

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

/** The connections a cluster or group holds (a group: through its clusters). */
export function connectionsIn(db: Queryable, scope: "cluster" | "group", id: number) {
  return db.query<ConnectionOwnership>(
    scope === "group"
      ? "SELECT c.id, c.owner_user_id, c.is_shared FROM connections c JOIN clusters cl ON cl.id = c.cluster_id WHERE cl.group_id = $1"
      : "SELECT c.id, c.owner_user_id, c.is_shared FROM connections c WHERE c.cluster_id = $1",
    [id],
  );
}

/**
 * For a change at `scope` that applies to every server there (an override): 404 when the caller cannot see the
 * scope, 403 when it holds a server the caller cannot read, as a blackout there would.
 */
export async function assertScopeWholeReadable(c: Context<AppEnv>, scope: OverrideScope, id: number, what: string): Promise<void> {
  await assertScopeVisible(c, scope, id);
  if (scope === "server") return;
  const a = await authority(c);
  if ((await connectionsIn(c.get("db"), scope, id)).some((row) => connectionAccess(a, row) === null)) {
    throw new ApiError(403, `${what} on ${scope} ${id} would also apply to servers you cannot read`);
  }
}
