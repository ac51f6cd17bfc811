/**
 * The Prometheus exporter end to end: pglens monitors a real PostgreSQL, a real Prometheus scrapes
 * GET /api/v1/metrics/prometheus every second with a token, and its HTTP API answers the exported series with
 * the right labels and pglens's sample times, `rate()` included; every panel query of the committed Grafana
 * dashboard returns data; a token that may read one connection sees only that one; promtool accepts the text.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { collectOnce } from "../../src/collector/collect.ts";
import { addMember, createGroup, setConnectionGrants } from "../../src/datastore/groups.ts";
import { effectiveProbeConfigs } from "../../src/datastore/probe-configs.ts";
import { findProbe } from "../../src/probes/index.ts";
import { currentSamples } from "../../src/queries/prometheus-families.ts";
import { testApp } from "../support/app.ts";
import { userWithToken } from "../support/auth.ts";
import { migratedDatastore, type TestDatastore } from "../support/datastore.ts";
import { collectEvery, monitorRoleUrl, monitoringConfig, quietLog, registerServer } from "../support/monitored.ts";
import { serveOnFreePort } from "../support/node-server.ts";
import { type TestPrometheus, promtoolCheck, startPrometheus } from "../support/prometheus.ts";

let store: TestDatastore;
let node: { url: string; close(): Promise<void> };
let prometheus: TestPrometheus;
let root: string;
let narrow: string;
let main: number;
let other: number;
let collecting: ReturnType<typeof setInterval>;
let busy = false;

const exposition = (token: string | null, query = "", accept?: string) =>
  fetch(`${node.url}/api/v1/metrics/prometheus${query}`, {
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(accept ? { accept } : {}) },
  });

/** The exposition's text once it holds current pg_stat_database samples (a loaded machine may be between rounds). */
async function currentText(query = "", accept?: string): Promise<{ res: Response; text: string }> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const res = await exposition(root, query, accept);
    const text = await res.text();
    if (text.includes("pg_stat_database_xact_commit") || Date.now() > deadline) return { res, text };
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** Polls an instant query until it returns series (Prometheus needs a scrape or two, rate() two samples). */
async function eventually(expr: string, timeoutMs = 90_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const result = await prometheus.query(expr);
    if (result.length > 0) return result;
    if (Date.now() > deadline) {
      // Say why: the scrape's health and last error, as Prometheus reports them.
      const targets = await (await fetch(`${prometheus.url}/api/v1/targets`)).json();
      console.error(`no data for ${expr}; targets: ${JSON.stringify(targets.data.activeTargets.map((t: Record<string, unknown>) => [t.health, t.lastError]))}`);
      return result;
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}

beforeAll(async () => {
  store = await migratedDatastore("pg");
  const monitor = await monitorRoleUrl(inject("pg17Url"));
  main = await registerServer(store.db, "main", monitor);
  other = await registerServer(store.db, "other", monitor);
  await collectEvery(store.db, 10);
  root = (await userWithToken(store.db, "root", { superuser: true })).token;
  const reader = await userWithToken(store.db, "reader");
  const group = await createGroup(store.db, "main readers", "");
  await setConnectionGrants(store.db, group.id, [{ connection_id: main, access_level: "read" }]);
  await addMember(store.db, group.id, { type: "user", id: reader.id });
  await store.db.query("UPDATE connections SET is_shared = false");
  narrow = reader.token;
  await collectOnce(store.db, monitoringConfig, quietLog);
  // Samples older than 3 intervals (30 s here) are not exported: keep collecting while Prometheus scrapes
  // (a round every second takes only the probes that are due, every 10 s; a loaded machine has 30 s of slack).
  collecting = setInterval(() => {
    if (busy) return;
    busy = true;
    void collectOnce(store.db, monitoringConfig, quietLog).finally(() => (busy = false));
  }, 1000);
  node = await serveOnFreePort(testApp(store.db).app.fetch);
  prometheus = await startPrometheus({ host: new URL(node.url).host, path: "/api/v1/metrics/prometheus", token: root });
}, 120_000);
afterAll(async () => {
  clearInterval(collecting);
  while (busy) await new Promise((r) => setTimeout(r, 100));
  await prometheus?.stop();
  await node?.close();
  await store?.close();
});

describe("Prometheus scraping pglens", () => {
  it("stores pg_stat_database_xact_commit_total with pglens's labels and sample times, and rate() works", async () => {
    const series = await eventually(`pg_stat_database_xact_commit_total{connection="main",database_name="postgres"}`);
    expect(series).toHaveLength(1);
    expect(series[0].metric).toMatchObject({ connection_id: String(main), connection: "main", database_name: "postgres", job: "pglens" });
    // The time Prometheus stored is one pglens sampled at, not the scrape's.
    const [stamp] = await prometheus.query(`timestamp(pg_stat_database_xact_commit_total{connection="main",database_name="postgres"})`);
    const [{ n }] = await store.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM metrics.pg_stat_database WHERE connection_id = $1 AND database_name = 'postgres' AND abs(extract(epoch FROM collected_at) - $2::float8) < 0.0015",
      [main, Number(stamp.value[1])],
    );
    expect(n).toBe(1);
    // Two minutes: on a loaded machine rounds can come 30 s or more apart, and rate() needs two samples.
    const rates = await eventually(`rate(pg_stat_database_xact_commit_total{connection="main"}[2m])`);
    expect(rates.length).toBeGreaterThan(0);
    expect(await eventually(`pglens_connection_up{connection="main"}`)).toMatchObject([{ value: [expect.any(Number), "1"] }]);
  }, 300_000);

  it("has data for every panel query of the Grafana dashboard", async () => {
    const dashboard = JSON.parse(readFileSync(new URL("../../docs/grafana/pglens-estate.json", import.meta.url), "utf8"));
    const targets = dashboard.panels.flatMap((p: { title: string; targets?: Array<{ expr: string }> }) => (p.targets ?? []).map((t) => [p.title, t.expr]));
    expect(targets.length).toBeGreaterThanOrEqual(10);
    const variable = dashboard.templating.list.find((v: { name: string }) => v.name === "connection");
    expect(await prometheus.query(variable.definition.replace(/^label_values\((.*), connection\)$/, "$1"))).not.toEqual([]);
    for (const [title, expr] of targets) {
      const query = expr.replaceAll("$connection", "main").replaceAll("$__rate_interval", "2m");
      expect((await eventually(query, 60_000)).length, `${title}: ${query}`).toBeGreaterThan(0);
    }
  }, 300_000);
});

// currentText() waits up to 60 s for a current sample on a loaded machine: more than the default test timeout.
describe("the exposition", { timeout: 120_000 }, () => {
  it("shows a token that may read one connection only that connection's series; no token is a 401", async () => {
    await currentText();
    const text = await (await exposition(narrow)).text();
    expect(text).toContain(`connection="main"`);
    expect(text).not.toContain(`connection="other"`);
    expect((await exposition(null)).status).toBe(401);
    expect((await exposition(narrow, `?connection_id=${other}`)).status).toBe(403);
    const only = await (await exposition(root, `?connection_id=${other}&probe_name=pg_stat_database`)).text();
    expect(only).toContain(`connection="other"`);
    expect(only).not.toContain(`connection="main"`);
    expect(only).not.toContain("pg_stat_wal_");
    expect((await exposition(root, "?probe_name=pg_nope")).status).toBe(400);
  });

  it("is valid for promtool, typed and described, and speaks OpenMetrics when asked", async () => {
    const { res, text } = await currentText();
    expect(res.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
    expect(text).toMatch(/^# HELP pg_stat_database_xact_commit_total Transactions committed/m);
    expect(text).toMatch(/^# TYPE pg_stat_database_xact_commit_total counter$/m);
    expect(text).toMatch(/^# TYPE pg_stat_database_numbackends gauge$/m);
    const check = promtoolCheck(text);
    // A parse error is exit 1; exit 3 lists style problems: the only one allowed is postgres_exporter's own name.
    expect([0, 3], check.output).toContain(check.status);
    expect(check.output.trim().split("\n").filter(Boolean)).toEqual(
      check.status === 0 ? [] : ['pg_stat_activity_count non-histogram and non-summary metrics should not have "_count" suffix'],
    );
    const { res: om, text: omText } = await currentText("?probe_name=pg_stat_database", "application/openmetrics-text; version=1.0.0");
    expect(om.headers.get("content-type")).toBe("application/openmetrics-text; version=1.0.0; charset=utf-8");
    expect(omText).toMatch(/^# TYPE pg_stat_database_xact_commit counter$/m);
    expect(omText).toMatch(/^pg_stat_database_xact_commit_total\{.*\} \d+ \d{10}(\.\d{1,3})?$/m); // OpenMetrics timestamps are seconds
    expect(omText.endsWith("# EOF\n")).toBe(true);
  });

  it("leaves out samples older than 3 collection intervals", { timeout: 90_000 }, async () => {
    const probe = findProbe("pg_stat_database")!;
    const configs = await effectiveProbeConfigs(store.db, [main]);
    const connection = [{ id: main, name: "main" }];
    // A current sample of main's (the exposition's text may show the other server's alone, on a loaded machine).
    await expect.poll(async () => (await currentSamples(store.db, probe, connection, configs, Date.now())).length, { timeout: 60_000, interval: 500 }).toBe(1);
    expect(await currentSamples(store.db, probe, connection, configs, Date.now() + 60_000)).toEqual([]);
  });
});
