/** The monitored database a live tool acts on: an explicit connection, or the credential's current one. */
import { z } from "zod";
import type { ConnectionRow } from "../../datastore/connections.ts";
import { assertConnectionsPermitted, readableConnection } from "../../auth/connection-access.ts";
import type pg from "pg";
import { liveLimits, withLiveSlot } from "../../monitored/live-slots.ts";
import { withReadOnlyTransaction } from "../../monitored/read-only.ts";
import type { ToolContext } from "../tool.ts";
import { ToolError } from "../tool.ts";
import { oneConnection } from "../vocabulary.ts";

export const targetArgs = {
  connection_id: oneConnection(
    "Id of the monitored connection (list_connections lists them); default: the connection selected with POST /api/v1/connections/current",
  ).optional(),
  database_name: z
    .string()
    .min(1)
    .max(63)
    .optional()
    .describe("Database on that server; default: the selected database, else the connection's maintenance database"),
};

export async function liveTarget(
  ctx: ToolContext,
  args: { connection_id?: number; database_name?: string },
): Promise<{ conn: ConnectionRow; database: string }> {
  let id = args.connection_id;
  let database = args.database_name;
  if (id === undefined) {
    const [current] = await ctx.db.query<{ connection_id: number; database_name: string | null }>(
      "SELECT connection_id, database_name FROM current_connections WHERE token_hash = $1",
      [ctx.access.principal.tokenHash],
    );
    if (!current)
      throw new ToolError("no connection_id given and no connection selected; pass connection_id, or select one with POST /api/v1/connections/current");
    id = current.connection_id;
    database ??= current.database_name ?? undefined;
  }
  await assertConnectionsPermitted(ctx.db, [id], ctx.access);
  const conn = await readableConnection(ctx.db, id);
  return { conn, database: database ?? conn.database_name };
}

/** Runs `work` in a read-only transaction on `database`, within the live-session limits. */
export function runLive<T>(ctx: ToolContext, conn: ConnectionRow, database: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const options = { database, statementTimeoutMs: ctx.config.live_tools.statement_timeout_ms, role: ctx.config.live_tools.role };
  return withLiveSlot(ctx.db, conn.id, ctx.access.principal.userId, liveLimits(ctx.config), () =>
    withReadOnlyTransaction(conn, ctx.config.secret, options, work),
  );
}

/** How a live tool reports a failure: the database's own words (and SQLSTATE), or why we refused. */
export function refusal(what: string) {
  return (err: Error & { code?: string }): never => {
    if (err.name === "LiveBusyError") throw err; // the REST bridge answers 429, MCP an error result
    if (["MonitoredServerError", "LockRefusedError", "PowerfulRoleError"].includes(err.name)) throw new ToolError(err.message);
    throw new ToolError(`the database refused the ${what}: ${err.message}${err.code ? ` (SQLSTATE ${err.code})` : ""}`);
  };
}
