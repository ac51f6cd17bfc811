import { createRoute, z } from "@hono/zod-openapi";
import { assertConnectionsPermitted } from "../auth/connection-access.ts";
import { effectiveProbeConfigs } from "../datastore/probe-configs.ts";
import { InputError } from "../errors.ts";
import { USER, guarded } from "../http/access.ts";
import { estateView } from "../http/estate-view.ts";
import { queryIds } from "../http/params.ts";
import { newRouter } from "../http/router.ts";
import { errorResponses } from "../http/schemas.ts";
import { CONTENT_TYPES, type Family, documentEnd, negotiate, renderFamily } from "../metrics/exposition.ts";
import { PROBES, findProbe } from "../probes/index.ts";
import { currentSamples, probeFamilies } from "../queries/prometheus-families.ts";
import { parseConnectionIds } from "./metrics.ts";
import { readDb } from "../http/read-db.ts";

const route = guarded(
  USER,
  createRoute({
    method: "get",
    path: "/api/v1/metrics/prometheus",
    tags: ["Metrics"],
    summary: "Everything pglens collected, for Prometheus to scrape",
    description:
      "The latest sample of every probe for every connection the caller may read, in the Prometheus text format (OpenMetrics 1.0 when `Accept` " +
      "asks for application/openmetrics-text). One family per numeric column, `<probe>_<column>`; cumulative columns are counters with `_total`. " +
      "Labels: `connection_id`, `connection` and the probe's entity keys. Each sample carries the time pglens took it (scrape with " +
      "honor_timestamps); samples older than 3 collection intervals are left out. `pglens_connection_up` says whether the last round " +
      "reached each monitored server. The response is streamed, probe by probe.",
    request: {
      query: z.object({
        connection_id: queryIds("Only these connections; repeat the parameter or separate ids with commas").optional(),
        probe_name: z
          .union([z.string(), z.array(z.string())])
          .optional()
          .openapi({ type: "array", items: { type: "string" }, description: "Only these probes; repeat the parameter or separate names with commas" }),
      }),
    },
    responses: {
      200: {
        description: "The exposition",
        content: {
          "text/plain": {
            schema: z
              .string()
              .openapi({ example: 'pg_stat_database_xact_commit_total{connection_id="1",connection="prod",database_name="shop"} 48213 1795408920000' }),
          },
          "application/openmetrics-text": { schema: z.string() },
        },
      },
      ...errorResponses(400, 401, 403, 404),
    },
  }),
);

/** Probes read from the datastore at once while the answer streams. */
const READ_AHEAD = 4;

function probesNamed(value: string | string[] | undefined) {
  if (value === undefined) return PROBES;
  const names = (Array.isArray(value) ? value : [value])
    .flatMap((v) => v.split(","))
    .map((s) => s.trim())
    .filter(Boolean);
  return [...new Set(names)].map((name) => {
    const probe = findProbe(name);
    if (!probe) throw new InputError(`query parameter \`probe_name\`: unknown probe ${JSON.stringify(name)} (the list_probes tool names them)`);
    return probe;
  });
}

export const metricsPrometheusRoutes = newRouter().openapi(route, async (c) => {
  const q = c.req.valid("query");
  const db = c.get("db");
  const view = await estateView(c);
  const probes = probesNamed(q.probe_name);
  let connections = view.connections;
  if (q.connection_id !== undefined) {
    const ids = parseConnectionIds(q.connection_id);
    await assertConnectionsPermitted(db, ids, view.a);
    connections = connections.filter((row) => ids.includes(row.id));
  }
  const exported = connections.map((row) => ({ id: row.id, name: row.name }));
  const format = negotiate(c.req.header("accept"));
  const configs = await effectiveProbeConfigs(
    db,
    exported.map((x) => x.id),
  );
  const now = Date.now();
  const up: Family = {
    name: "pglens_connection_up",
    type: "gauge",
    help: "1 when pglens's last collection round reached the monitored server, 0 when it could not",
    samples: connections
      .filter((row) => row.is_monitored)
      .map((row) => ({ labels: { connection_id: String(row.id), connection: row.name }, value: row.connection_error ? 0 : 1 })),
  };
  const encoder = new TextEncoder();
  const render = async (i: number) =>
    probeFamilies(probes[i], await currentSamples(readDb(c), probes[i], exported, configs, now))
      .map((f) => renderFamily(f, format))
      .join("");
  // A few probes are read ahead while earlier ones are sent; the text stays in catalogue order.
  const ahead: Array<Promise<string>> = [];
  const prefetch = (i: number) => {
    if (i < probes.length && !ahead[i]) {
      ahead[i] = render(i);
      ahead[i].catch(() => {}); // awaited in turn below; this only keeps an early failure from going unhandled
    }
  };
  let next = 0;
  // Probe by probe, so a large estate's answer never sits whole in memory.
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (let i = 0; i < READ_AHEAD; i++) prefetch(i);
      controller.enqueue(encoder.encode(renderFamily(up, format)));
    },
    async pull(controller) {
      try {
        if (next >= probes.length) {
          controller.enqueue(encoder.encode(documentEnd(format)));
          controller.close();
          return;
        }
        const text = await ahead[next];
        prefetch(next + READ_AHEAD);
        delete ahead[next++];
        controller.enqueue(encoder.encode(text));
      } catch (err) {
        c.get("log").error("prometheus export failed", { error: (err as Error).message });
        controller.error(err);
      }
    },
  });
  return c.body(body, 200, { "content-type": CONTENT_TYPES[format] });
});
