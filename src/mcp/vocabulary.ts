/**
 * The parameters every tool spells the same way, so an assistant that learnt one tool knows the others:
 * connections (`connection_id` for one, `connection_ids` for several) and time (`time_start`/`time_end`, each
 * relative or RFC 3339). test/mcp/vocabulary.test.ts checks every tool's schema against them.
 */
import { z } from "zod";
import type { Queryable } from "../../drivers/types.ts";
import { assertConnectionsPermitted } from "../auth/connection-access.ts";
import { type Authority, connectionAccess } from "../auth/rbac.ts";
import { listConnections } from "../datastore/connections.ts";

/** PostgreSQL's integer: the largest id a connection can have. */
export const MAX_ID = 2_147_483_647;
export const MAX_CONNECTION_IDS = 1000;

const connectionId = () => z.number().int().min(1).max(MAX_ID);

/** A tool about exactly one server. */
export const oneConnection = (description = "Id of the monitored connection (list_connections lists them)") => connectionId().describe(description);

/** A tool that can look at several servers: either parameter or both; without them, every server the caller can read. */
export const connectionArgs = {
  connection_id: connectionId().optional().describe("Id of one monitored connection (list_connections lists them)"),
  connection_ids: z
    .array(connectionId())
    .min(1)
    .max(MAX_CONNECTION_IDS)
    .optional()
    .describe(`Ids of several monitored connections (1 to ${MAX_CONNECTION_IDS}); with connection_id, all of them`),
};

/** The connections a call names, duplicates dropped; undefined when it names none. */
export function namedConnections(args: { connection_id?: number; connection_ids?: number[] }): number[] | undefined {
  const ids = [...(args.connection_id === undefined ? [] : [args.connection_id]), ...(args.connection_ids ?? [])];
  return ids.length ? [...new Set(ids)] : undefined;
}

/** The named connections, each checked (an error names one that does not exist or that the caller may not read). */
export async function permittedConnections(db: Queryable, access: Authority, args: { connection_id?: number; connection_ids?: number[] }) {
  const ids = namedConnections(args);
  if (ids) await assertConnectionsPermitted(db, ids, access);
  return ids;
}

/** The named connections (each checked), else every connection the caller may read, read only then. */
export async function askedConnections(db: Queryable, access: Authority, args: { connection_id?: number; connection_ids?: number[] }): Promise<number[]> {
  return (await permittedConnections(db, access, args)) ?? (await listConnections(db)).filter((c) => connectionAccess(access, c) !== null).map((c) => c.id);
}

export const TIME_FORMS = "relative (30m, 1h, 24h, 7d) or RFC 3339 (2026-01-31T12:00:00Z)";

/** `time_start`/`time_end` as every tool takes them; `start` says what an absent time_start means. */
export const timeArgs = (start: string) => ({
  time_start: z.string().max(64).optional().describe(`Window start: ${TIME_FORMS}; a relative start counts back from time_end; ${start}`),
  time_end: z.string().max(64).optional().describe(`Window end: ${TIME_FORMS} (relative: that long before now), or now (default); a future end counts as now`),
});
