import { z } from "zod";
import { visibleTo } from "../../http/blackout-access.ts";
import { listConnections } from "../../datastore/connections.ts";
import { toolWindow } from "../../metrics/window.ts";
import { EVENT_TYPES, parseEventTypes, timelineEvents } from "../../timeline/events.ts";
import { defineTool } from "../tool.ts";
import { connectionArgs, permittedConnections, timeArgs } from "../vocabulary.ts";
import { toTsv } from "../tsv.ts";
import { RECORDED_BY_PGLENS } from "../fence.ts";

const COLUMNS = ["occurred_at", "event_type", "severity", "server_name", "connection_id", "title", "summary", "id"] as const;

export const getTimeline = defineTool({
  name: "get_timeline",
  title: "Get the timeline",
  description:
    "What happened on the servers you can see between time_start and time_end (default the last 24 h; at most 366 days): configuration changes, pg_hba.conf " +
    "and pg_ident.conf changes, restarts, extension changes, alerts fired/cleared/acknowledged, blackouts started/ended. Newest first, as TSV (" +
    COLUMNS.join(", ") +
    `). event_types narrows to some of: ${EVENT_TYPES.join(", ")}.`,
  inputSchema: z.object({
    ...connectionArgs,
    ...timeArgs("default 24h"),
    event_types: z.array(z.enum(EVENT_TYPES)).min(1).max(EVENT_TYPES.length).optional().describe("Only events of these types (default all)"),
    limit: z.number().int().min(1).max(1000).optional().describe("Most events to return, 1 to 1000 (default 500)"),
  }),
  dataFrom: RECORDED_BY_PGLENS,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  async run(args, { readDb: db, access, now }) {
    const window = toolWindow(args.time_start, args.time_end, now, "24h");
    const visible = await visibleTo(db, access);
    const ids = (await permittedConnections(db, access, args)) ?? visible.connections;
    const names = new Map((await listConnections(db)).filter((r) => ids.includes(r.id)).map((r) => [r.id, r.name]));
    const events = await timelineEvents(db, {
      connectionIds: ids,
      names,
      visible,
      from: new Date(window.start),
      to: new Date(window.end),
      types: parseEventTypes(args.event_types?.join(",")),
    });
    return toTsv(
      COLUMNS,
      events.slice(0, args.limit ?? 500).map((e) => COLUMNS.map((c) => e[c])),
    );
  },
});
