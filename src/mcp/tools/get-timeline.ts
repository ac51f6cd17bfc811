import { z } from "zod";
import { visibleTo } from "../../http/blackout-access.ts";
import { listConnections } from "../../datastore/connections.ts";
import { customWindow, parseRfc3339 } from "../../metrics/window.ts";
import { EVENT_TYPES, parseEventTypes, timelineEvents } from "../../timeline/events.ts";
import { ToolError, defineTool } from "../tool.ts";
import { toTsv } from "../tsv.ts";
import { RECORDED_BY_PGLENS } from "../fence.ts";

const COLUMNS = ["occurred_at", "event_type", "severity", "server_name", "connection_id", "title", "summary", "id"] as const;

export const getTimeline = defineTool({
  name: "get_timeline",
  title: "Get the timeline",
  description:
    "What happened on the servers you can see between time_start and time_end (RFC 3339; at most 366 days): configuration changes, pg_hba.conf " +
    "and pg_ident.conf changes, restarts, extension changes, alerts fired/cleared/acknowledged, blackouts started/ended. Newest first, as TSV (" +
    COLUMNS.join(", ") +
    `). event_types narrows to some of: ${EVENT_TYPES.join(", ")}.`,
  inputSchema: z.object({
    time_start: z.string(),
    time_end: z.string(),
    connection_ids: z.array(z.number().int().positive()).optional(),
    event_types: z.array(z.enum(EVENT_TYPES)).optional(),
    limit: z.number().int().min(1).max(1000).optional(),
  }),
  dataFrom: RECORDED_BY_PGLENS,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  async run(args, { db, access, now }) {
    const window = customWindow(parseRfc3339(args.time_start, "time_start"), parseRfc3339(args.time_end, "time_end"), now);
    const visible = await visibleTo(db, access);
    const hidden = args.connection_ids?.find((id) => !visible.connections.includes(id));
    if (hidden !== undefined) throw new ToolError(`connection ${hidden} not found`);
    const ids = args.connection_ids ?? visible.connections;
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
