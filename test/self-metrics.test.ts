/** GET /metrics: pglens's own metrics in the Prometheus text format, read back with a Prometheus parser. */
import parsePrometheusTextFormat from "parse-prometheus-text-format";
import { afterAll, beforeAll, expect, it } from "vitest";
import { resolveConfig } from "../src/config.ts";
import { createSelfMetrics, selfMetricsRoutes } from "../src/self-metrics.ts";
import { testApp } from "./support/app.ts";
import { bearer, userWithToken } from "./support/auth.ts";
import { addConnection, migratedDatastore, type TestDatastore } from "./support/datastore.ts";

let store: TestDatastore;
let token: string;
let narrowToken: string;
type Family = { name: string; metrics: Array<{ labels?: Record<string, string>; value?: string; count?: string }> };

beforeAll(async () => {
  store = await migratedDatastore("pg");
  token = (await userWithToken(store.db, "watcher", { superuser: true })).token;
  narrowToken = (await userWithToken(store.db, "narrow")).token;
  const conn = await addConnection(store.db, "watched");
  await store.db.query("UPDATE connections SET is_monitored = true WHERE id = $1", [conn]);
  await store.db.query(
    "INSERT INTO probe_schedule (connection_id, probe_name, last_success_at) VALUES ($1, 'pg_stat_database', now() - interval '30 seconds')",
    [conn],
  );
});
afterAll(() => store.close());

function appWith(publicMetrics: boolean) {
  const metrics = createSelfMetrics(store.db);
  const config = { ...resolveConfig({}, {}), metrics: { public: publicMetrics } };
  const { app } = testApp(store.db, { extraRoutes: [selfMetricsRoutes(metrics, config)], deps: { observeRequest: metrics.observeRequest } });
  return { app, metrics };
}

it("counts requests by route and status, times rounds, and reports collection lag and the pool", async () => {
  const { app, metrics } = appWith(false);
  for (let i = 0; i < 3; i++) expect((await app.request("/api/v1/connections", { headers: bearer(token) })).status).toBe(200);
  await app.request("/api/v1/connections/999999", { headers: bearer(token) });
  metrics.collectorRound(0.2);
  metrics.alerterRound(1.5);
  expect((await app.request("/metrics")).status).toBe(401);
  const res = await app.request("/metrics", { headers: bearer(token) });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toContain("text/plain");
  const families = parsePrometheusTextFormat(await res.text()) as Family[];
  const family = (name: string) => families.find((f) => f.name === name)!;
  const requests = family("pglens_http_requests_total").metrics;
  expect(requests.find((m) => m.labels?.route === "/api/v1/connections" && m.labels.status === "200")?.value).toBe("3");
  expect(requests.find((m) => m.labels?.route === "/api/v1/connections/:id" && m.labels.status === "404")?.value).toBe("1");
  expect(family("pglens_collector_round_duration_seconds").metrics[0].count).toBe("1");
  expect(family("pglens_alerter_round_duration_seconds").metrics[0].count).toBe("1");
  const lag = Number(family("pglens_connection_collection_lag_seconds").metrics.find((m) => m.labels?.connection === "watched")?.value);
  expect(lag).toBeGreaterThanOrEqual(30);
  expect(lag).toBeLessThan(120);
  expect(
    family("pglens_datastore_connections")
      .metrics.map((m) => m.labels?.state)
      .sort(),
  ).toEqual(["idle", "total", "waiting"]);
  expect(family("process_cpu_user_seconds_total")).toBeDefined();
});

it("answers without a token when metrics.public is set", async () => {
  const { app } = appWith(true);
  expect((await app.request("/metrics")).status).toBe(200);
});

// #46 item 13: /metrics must not name connections a caller cannot read.
it("labels collection lag by connection only for callers who may read every connection; others get the worst lag unlabelled", async () => {
  const hidden = await addConnection(store.db, "secret-payroll-db");
  await store.db.query("UPDATE connections SET is_monitored = true WHERE id = $1", [hidden]);
  await store.db.query(
    "INSERT INTO probe_schedule (connection_id, probe_name, last_success_at) VALUES ($1, 'pg_stat_database', now() - interval '90 seconds')",
    [hidden],
  );
  const lagOf = async (app: ReturnType<typeof appWith>["app"], headers: Record<string, string>) => {
    const text = await (await app.request("/metrics", { headers })).text();
    return { text, lag: (parsePrometheusTextFormat(text) as Family[]).find((f) => f.name === "pglens_connection_collection_lag_seconds")!.metrics };
  };
  const full = await lagOf(appWith(false).app, bearer(token));
  expect(full.lag.map((m) => m.labels?.connection).sort()).toEqual(["secret-payroll-db", "watched"]);
  for (const [app, headers] of [
    [appWith(false).app, bearer(narrowToken)],
    [appWith(true).app, {}],
  ] as const) {
    const narrow = await lagOf(app, headers);
    expect(narrow.text).not.toContain("secret-payroll-db");
    expect(narrow.text).not.toContain("watched");
    expect(narrow.lag).toHaveLength(1);
    expect(narrow.lag[0].labels ?? {}).toEqual({});
    expect(Number(narrow.lag[0].value)).toBeGreaterThanOrEqual(90);
  }
});
