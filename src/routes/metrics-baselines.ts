import { createRoute, z } from "@hono/zod-openapi";
import { LOOKBACK_MS, defaultBaselineMetrics, loadHistories } from "../alerts/baseline-store.ts";
import { summarize } from "../alerts/baselines.ts";
import { assertConnectionsPermitted } from "../auth/connection-access.ts";
import { InputError } from "../errors.ts";
import { USER, authority, guarded } from "../http/access.ts";
import { PathId, json } from "../http/params.ts";
import { newRouter } from "../http/router.ts";
import { errorResponses } from "../http/schemas.ts";
import { parseMetricList } from "../metrics/metric-names.ts";
import { requireProbe } from "../metrics/metrics-plan.ts";
import { readDb } from "../http/read-db.ts";

const Stats = z
  .object({
    metric: z.string(),
    mean: z.number().nullable(),
    stddev: z.number().nullable(),
    min: z.number().nullable(),
    max: z.number().nullable(),
    p50: z.number().nullable(),
    p95: z.number().nullable(),
    p99: z.number().nullable(),
    sample_count: z.number().int(),
  })
  .openapi("MetricBaseline");

const route = guarded(
  USER,
  createRoute({
    method: "get",
    path: "/api/v1/metrics/baselines",
    tags: ["Metrics"],
    summary: "What is normal for a metric: statistics of its last 7 days",
    description:
      "Exact statistics over the metric's values in the last 7 days: one value per sample for a level (a gauge), one per interval for `_per_sec`, `_delta`, " +
      "`_pct` and `_sessions` (reset- and gap-aware, as the metrics query computes them). stddev is the sample standard deviation; p50/p95/p99 are " +
      "nearest-rank percentiles of all values. Without `database_name`, a per-database probe's values are summed over the server's databases.",
    request: {
      query: z.object({
        connection_id: PathId,
        probe_name: z.string().min(1).openapi({ example: "pg_stat_database" }),
        metrics: z
          .string()
          .min(1)
          .optional()
          .openapi({
            description:
              "Comma-separated metric names, e.g. xact_commit_per_sec,numbackends. Without it: the metrics the alerter keeps baselines of for this probe, " +
              "or, for a probe it does not watch, every numeric column of the probe",
            example: "xact_commit_per_sec",
          }),
        database_name: z.string().min(1).max(63).optional(),
      }),
    },
    responses: { 200: json(z.array(Stats), "One entry per requested metric, in request order"), ...errorResponses(400, 401, 403, 404) },
  }),
);

export const metricsBaselineRoutes = newRouter().openapi(route, async (c) => {
  const q = c.req.valid("query");
  const db = c.get("db");
  await assertConnectionsPermitted(db, [q.connection_id], await authority(c));
  const probe = requireProbe(q.probe_name);
  if (q.database_name !== undefined && !probe.keys.includes("database_name"))
    throw new InputError(`database_name: probe \`${probe.name}\` is not per database`);
  const metrics = parseMetricList(q.metrics ?? defaultBaselineMetrics(probe).join(","), probe);
  const now = Date.now();
  const histories = (
    await loadHistories(
      readDb(c),
      probe.name,
      metrics.map((m) => m.name),
      [q.connection_id],
      now - LOOKBACK_MS,
      now,
      q.database_name !== undefined,
    )
  ).filter((h) => q.database_name === undefined || h.database_name === q.database_name);
  return c.json(
    metrics.map((m) => {
      const stats = summarize(histories.find((h) => h.metric.name === m.name)?.points.map((p) => p.value) ?? []);
      return stats
        ? { metric: m.name, ...stats }
        : { metric: m.name, mean: null, stddev: null, min: null, max: null, p50: null, p95: null, p99: null, sample_count: 0 };
    }),
    200,
  );
});
