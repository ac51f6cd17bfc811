/** Who may see and change an alert, for the API and the console alike. */
import type { Context } from "hono";
import { connectionAccess } from "../auth/rbac.ts";
import { type AlertRow, getAlert } from "../datastore/alerts.ts";
import { readableConnection } from "../auth/connection-access.ts";
import { NotFoundError } from "../errors.ts";
import { authority } from "./access.ts";
import type { AppEnv } from "./context.ts";
import { ApiError } from "./errors.ts";
import { estateView } from "./estate-view.ts";

/** An alert on a connection the caller cannot read answers 404, like one that does not exist. */
export async function visibleAlert(c: Context<AppEnv>, id: number): Promise<AlertRow> {
  const alert = await getAlert(c.get("db"), id).catch(() => undefined);
  if (!alert || !(await estateView(c)).connections.some((row) => row.id === alert.connection_id)) throw new NotFoundError(`alert ${id} not found`);
  return alert;
}

/**
 * Acknowledging, marking a false positive (which mutes the anomaly and trains the review) and storing an analysis
 * change what others see and are told: they need read_write on the alert's connection, within the token's scope.
 */
export async function mayChangeAlert(c: Context<AppEnv>, alert: AlertRow): Promise<boolean> {
  const a = await authority(c);
  return connectionAccess(a, await readableConnection(c.get("db"), alert.connection_id, a)) === "read_write";
}

export async function writableAlert(c: Context<AppEnv>, id: number): Promise<AlertRow> {
  const alert = await visibleAlert(c, id);
  if (!(await mayChangeAlert(c, alert))) {
    throw new ApiError(
      403,
      `changing alert ${id} needs read_write on its connection ${alert.connection_id}: be its owner, hold manage_connections or a read_write grant (and a token scoped to read_write)`,
    );
  }
  return alert;
}
