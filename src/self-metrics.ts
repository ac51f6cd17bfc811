/**
 * Node shell: pglens's own metrics in the Prometheus text format at GET /metrics: requests by route and
 * status with latency, collector and alerter round times, how far behind each connection's collection is,
 * and the datastore pool. A token is needed unless `metrics.public` is set.
 */
import client from "prom-client";
import type { Driver } from "../drivers/types.ts";
import type { Config } from "./config.ts";
import { holdsAllConnections } from "./auth/rbac.ts";
import { PUBLIC, USER, authority, declareAccess, requireAccess } from "./http/access.ts";
import { newRouter } from "./http/router.ts";
import { notificationCounts } from "./notify/queue.ts";

const LAG = "pglens_connection_collection_lag_seconds";
const SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export function createSelfMetrics(db: Driver) {
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry });
  const requests = new client.Counter({
    name: "pglens_http_requests_total",
    help: "HTTP requests by method, route and status",
    labelNames: ["method", "route", "status"],
    registers: [registry],
  });
  const latency = new client.Histogram({
    name: "pglens_http_request_duration_seconds",
    help: "HTTP request latency by method and route",
    labelNames: ["method", "route"],
    buckets: SECONDS,
    registers: [registry],
  });
  const collector = new client.Histogram({
    name: "pglens_collector_round_duration_seconds",
    help: "Time of one collector round",
    buckets: SECONDS,
    registers: [registry],
  });
  const alerter = new client.Histogram({
    name: "pglens_alerter_round_duration_seconds",
    help: "Time of one alerter round and delivery pass",
    buckets: SECONDS,
    registers: [registry],
  });
  // Per connection for callers who may read every connection; for the others only the worst lag, unlabelled, so
  // /metrics names no connection the caller cannot see.
  const lagRows = () =>
    db.query<{ id: number; name: string; lag: number | null }>(
      `SELECT c.id, c.name, extract(epoch FROM now() - max(s.last_success_at))::float8 AS lag
         FROM connections c LEFT JOIN probe_schedule s ON s.connection_id = c.id WHERE c.is_monitored GROUP BY c.id, c.name`,
    );
  const lagByConnection = new client.Registry();
  new client.Gauge({
    name: LAG,
    help: "Seconds since the last successful sample of each monitored connection",
    labelNames: ["connection_id", "connection"],
    registers: [lagByConnection],
    async collect() {
      this.reset();
      for (const r of await lagRows()) if (r.lag !== null) this.set({ connection_id: String(r.id), connection: r.name }, r.lag);
    },
  });
  const worstLag = new client.Registry();
  new client.Gauge({
    name: LAG,
    help: "Seconds since the last successful sample of the monitored connection furthest behind (per connection for callers who may read all connections)",
    registers: [worstLag],
    async collect() {
      this.reset();
      const lags = (await lagRows()).flatMap((r) => (r.lag === null ? [] : [r.lag]));
      if (lags.length) this.set(Math.max(...lags));
    },
  });
  new client.Gauge({
    name: "pglens_notifications",
    help: "Notices in the delivery queue and history by status (expired: never delivered within notifications.max_age_hours)",
    labelNames: ["status"],
    registers: [registry],
    async collect() {
      this.reset();
      for (const status of ["pending", "sending", "retrying", "sent", "failed", "suppressed", "expired"]) this.set({ status }, 0);
      for (const r of await notificationCounts(db)) this.set({ status: r.status }, r.n);
    },
  });
  new client.Gauge({
    name: "pglens_datastore_connections",
    help: "Datastore pool connections by state (pooled drivers only)",
    labelNames: ["state"],
    registers: [registry],
    collect() {
      const stats = db.poolStats?.();
      if (!stats) return;
      for (const [state, n] of Object.entries(stats)) this.set({ state }, n);
    },
  });
  return {
    registry,
    /** The text of every metric; per-connection series only when `perConnection`. */
    text: async (perConnection: boolean) => (await registry.metrics()) + (await (perConnection ? lagByConnection : worstLag).metrics()),
    observeRequest(method: string, route: string, status: number, seconds: number) {
      requests.inc({ method, route, status: String(status) });
      latency.observe({ method, route }, seconds);
    },
    collectorRound: (seconds: number) => collector.observe(seconds),
    alerterRound: (seconds: number) => alerter.observe(seconds),
  };
}

/** A plain route, not an API operation: Prometheus scrapes it, so it stays out of the OpenAPI document. */
export function selfMetricsRoutes(metrics: Pick<ReturnType<typeof createSelfMetrics>, "registry" | "text">, config: Config): ReturnType<typeof newRouter> {
  const access = config.metrics.public ? PUBLIC : USER;
  declareAccess("GET", "/metrics", access);
  const router = newRouter();
  router.get("/metrics", requireAccess(access), async (c) => {
    const perConnection = c.get("principal") !== undefined && holdsAllConnections(await authority(c), "read");
    return c.body(await metrics.text(perConnection), 200, { "content-type": metrics.registry.contentType });
  });
  return router;
}
