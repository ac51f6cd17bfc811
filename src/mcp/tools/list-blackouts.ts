import { z } from "zod";
import { oneConnection } from "../vocabulary.ts";
import { visibleTo } from "../../http/blackout-access.ts";
import { BLACKOUT_SCOPES } from "../../blackouts/scope.ts";
import { listBlackouts } from "../../datastore/blackouts.ts";
import { defineTool } from "../tool.ts";
import { toTsv } from "../tsv.ts";
import { FROM_USERS } from "../fence.ts";

const COLUMNS = [
  "id",
  "scope",
  "group_id",
  "cluster_id",
  "connection_id",
  "database_name",
  "reason",
  "start_time",
  "end_time",
  "is_active",
  "created_by",
] as const;

export const listBlackoutsTool = defineTool({
  name: "list_blackouts",
  title: "List maintenance windows",
  description:
    "Lists maintenance windows (blackouts: alerts are silenced inside them) you can see, latest start first, as TSV (" +
    COLUMNS.join(", ") +
    "). " +
    "Filter by scope (estate, group, cluster, server), connection_id and active (true: in effect now). At most `limit` rows (default 100).",
  inputSchema: z.object({
    scope: z.enum(BLACKOUT_SCOPES).optional().describe("Only windows of this scope"),
    connection_id: oneConnection("Only windows placed on this server (list_connections lists them)").optional(),
    active: z.boolean().optional().describe("true: only windows in effect now; false: only the others"),
    limit: z.number().int().min(1).max(1000).optional().describe("Most rows to return, 1 to 1000 (default 100)"),
  }),
  dataFrom: FROM_USERS,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  async run(args, { db, access, now }) {
    const { blackouts } = await listBlackouts(db, { ...args, limit: args.limit ?? 100, offset: 0 }, await visibleTo(db, access));
    return toTsv(
      COLUMNS,
      blackouts.map((b) => [
        b.id,
        b.scope,
        b.group_id,
        b.cluster_id,
        b.connection_id,
        b.database_name,
        b.reason,
        b.start_time,
        b.end_time,
        b.start_time.getTime() <= now && now <= b.end_time.getTime(),
        b.created_by,
      ]),
    );
  },
});
