/** Everything the server page renders on the server (the charts load themselves from the API). */
import type { Queryable } from "../../drivers/types.ts";
import type { Authority } from "../auth/rbac.ts";
import { visibleTo } from "../http/blackout-access.ts";
import { listAlerts } from "../datastore/alerts.ts";
import type { ConnectionRow } from "../datastore/connections.ts";
import { latestSample } from "../samples/read-latest-sample.ts";
import { serverInfo } from "../queries/server-info.ts";
import { topQueries } from "../queries/top-queries.ts";
import { EVENT_TYPES, timelineEvents } from "../timeline/events.ts";
import { SERVER_CHARTS } from "./chart-catalogue.ts";
import { standings } from "./estate-rows.ts";
import type { ServerView } from "./server-page.tsx";
import { timeRange } from "./time-range.ts";

const TIMELINE_LIMIT = 50;

export async function serverView(
  db: Queryable,
  access: Authority,
  conn: ConnectionRow,
  rangeQuery: { range?: string; from?: string; to?: string },
  perDatabase: boolean,
  now = Date.now(),
): Promise<ServerView> {
  const range = timeRange(rangeQuery, now);
  const optional = SERVER_CHARTS.filter((c) => c.onlyWithSamples);
  const [stand, alerts, top, events, info, sampled] = await Promise.all([
    standings(db, [conn]),
    listAlerts(db, { connectionIds: [conn.id], excludeCleared: true, limit: 50, offset: 0 }),
    topQueries(db, { access, connectionId: conn.id, limit: 10, orderBy: "total_exec_time", order: "desc", excludeCollector: true, window: range.window }),
    visibleTo(db, access).then((visible) =>
      timelineEvents(db, {
        connectionIds: [conn.id],
        names: new Map([[conn.id, conn.name]]),
        visible,
        from: new Date(range.window.start),
        to: new Date(range.window.end),
        types: new Set(EVENT_TYPES),
      }),
    ),
    serverInfo(db, conn),
    Promise.all(optional.map(async (c) => [c.id, (await latestSample(db, c.probe, conn.id, "TRUE", [])).collected_at !== null] as const)),
  ]);
  const has = new Map(sampled);
  return {
    id: conn.id,
    name: conn.name,
    status: stand.get(conn.id)!.status,
    range,
    perDatabase,
    charts: SERVER_CHARTS.filter((c) => !c.onlyWithSamples || has.get(c.id)),
    alerts: alerts.alerts.filter((a) => a.status !== "pending"),
    topQueries: top,
    events: events.slice(0, TIMELINE_LIMIT),
    info,
  };
}
