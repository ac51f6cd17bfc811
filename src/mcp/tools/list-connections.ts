import { z } from "zod";
import { connectionAccess } from "../../auth/rbac.ts";
import { listConnections } from "../../datastore/connections.ts";
import { defineTool } from "../tool.ts";
import { toTsv } from "../tsv.ts";
import { FROM_USERS } from "../fence.ts";

const COLUMNS = ["id", "name", "host", "port", "database_name", "is_monitored", "access", "last_collected_at", "connection_error"] as const;

export const listConnectionsTool = defineTool({
  name: "list_connections",
  title: "List connections",
  description:
    "Lists the monitored PostgreSQL connections you may see, as TSV (" +
    COLUMNS.join(", ") +
    "). Use an `id` as connection_id in the other tools. " +
    "last_collected_at is the collector's last successful sample of the server; connection_error says why it cannot reach it, if it cannot.",
  inputSchema: z.object({}),
  dataFrom: FROM_USERS,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  async run(_args, { db, access }) {
    const visible = (await listConnections(db)).map((c) => ({ c, access: connectionAccess(access, c) })).filter((x) => x.access !== null);
    const last = new Map(
      (
        await db.query<{ connection_id: number; at: Date | null }>(
          "SELECT connection_id, max(last_success_at) AS at FROM probe_schedule GROUP BY connection_id",
        )
      ).map((r) => [r.connection_id, r.at]),
    );
    return toTsv(
      COLUMNS,
      visible.map(({ c, access: level }) => [c.id, c.name, c.host, c.port, c.database_name, c.is_monitored, level, last.get(c.id) ?? null, c.connection_error]),
    );
  },
});
