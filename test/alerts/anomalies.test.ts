/**
 * Baselines and anomaly alerts on a real datastore: a week of pg_stat_database samples with known values,
 * the baselines endpoint checked against statistics the test computes itself, then a burst that the alerter
 * reports as an anomaly and clears when traffic is normal again.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { evaluateAndApply } from "../../src/alerts/alerter.ts";
import { BASELINE_METRICS, refreshBaselines } from "../../src/alerts/baseline-store.ts";
import { writeSamples } from "../../src/samples/sample-writer.ts";
import { openPg } from "../../drivers/pg.ts";
import { testApp } from "../support/app.ts";
import { userWithToken } from "../support/auth.ts";
import { addConnection, migratedDatastore, type TestDatastore } from "../support/datastore.ts";
import { client } from "../support/http.ts";

const STEP = 300_000;
const DAYS = 7;
let store: TestDatastore;
let api: ReturnType<typeof client>;
let root: string;
let conn: number;
let commits = 1_000_000;
let lastT = 0;
const rates: number[] = [];
const backends: number[] = [];

/** Commits in one 5-minute step: 300 +- up to 60, varying but bounded (1 +- 0.2 per second). */
const steady = (i: number) => 300 + ((i * 37) % 121) - 60;

/** The next sample's row: `added` commits since the one before. */
function sample(t: number, added: number, numbackends: number) {
  commits += added;
  lastT = t;
  return { collected_at: new Date(t), database_name: "app", datname: "app", numbackends, xact_commit: commits, stats_reset: "2026-01-01T00:00:00Z" };
}

async function write(...rows: Array<ReturnType<typeof sample>>) {
  await writeSamples(store.db, { connectionId: conn, probe: "pg_stat_database", rows });
}

beforeAll(async () => {
  store = await migratedDatastore("pg");
  api = client(testApp(store.db).app);
  root = (await userWithToken(store.db, "root", { superuser: true })).token;
  conn = await addConnection(store.db, "busy");
  await store.db.query("UPDATE connections SET is_monitored = true WHERE id = $1", [conn]);
  // Two steps short of now: the test writes two more samples (a burst, then normal traffic), none in the future.
  const end = Date.now() - 2 * STEP - 60_000;
  const steps = (DAYS * 24 * 3600_000) / STEP - 4; // all inside the 7-day lookback
  // A day's samples per batch: one batch per sample took most of two minutes on a slow machine.
  const day: Array<ReturnType<typeof sample>> = [];
  for (let i = 0; i <= steps; i++) {
    const t = end - (steps - i) * STEP;
    const added = i === 0 ? 0 : steady(i);
    const n = 5 + (i % 3);
    day.push(sample(t, added, n));
    if (day.length === 288 || i === steps) await write(...day.splice(0));
    backends.push(n);
    if (i > 0) rates.push(added / 300);
  }
}, 120_000);
afterAll(() => store.close());

describe("baselines and anomalies", () => {
  it("GET /api/v1/metrics/baselines gives exact statistics of the last 7 days", async () => {
    const res = await api(
      "GET",
      `/api/v1/metrics/baselines?connection_id=${conn}&probe_name=pg_stat_database&metrics=xact_commit_per_sec,numbackends&database_name=app`,
      { token: root },
    );
    expect(res.status).toBe(200);
    const sorted = [...rates].sort((a, b) => a - b);
    const mean = rates.reduce((s, v) => s + v, 0) / rates.length;
    const [commit, sessions] = res.body;
    expect(commit.metric).toBe("xact_commit_per_sec");
    expect(commit.sample_count).toBe(rates.length);
    expect(commit.mean).toBeCloseTo(mean, 9);
    expect(commit.min).toBeCloseTo(sorted[0], 9);
    expect(commit.max).toBeCloseTo(sorted[sorted.length - 1], 9);
    expect(commit.p95).toBeCloseTo(sorted[Math.ceil(0.95 * sorted.length) - 1], 9);
    expect(sessions).toMatchObject({ metric: "numbackends", min: 5, max: 7, p50: 6, sample_count: backends.length });
  });

  it("without `metrics` answers every metric the alerter keeps baselines of, and every numeric column of another probe", async () => {
    const all = await api("GET", `/api/v1/metrics/baselines?connection_id=${conn}&probe_name=pg_stat_database&database_name=app`, { token: root });
    expect(all.status).toBe(200);
    expect(all.body.map((b: { metric: string }) => b.metric)).toEqual(BASELINE_METRICS.find((b) => b.probe === "pg_stat_database")!.metrics);
    const commit = all.body.find((b: { metric: string }) => b.metric === "xact_commit_per_sec");
    expect(commit.sample_count).toBe(rates.length);
    const tables = await api("GET", `/api/v1/metrics/baselines?connection_id=${conn}&probe_name=pg_stat_user_tables`, { token: root });
    expect(tables.status).toBe(200);
    expect(tables.body.map((b: { metric: string }) => b.metric)).toContain("n_dead_tup");
  });

  it("answers 400 for a bad metric or database filter, 403 for a connection the caller cannot read, 404 for one that does not exist", async () => {
    const bad = await api("GET", `/api/v1/metrics/baselines?connection_id=${conn}&probe_name=pg_stat_database&metrics=nope`, { token: root });
    expect(bad).toMatchObject({ status: 400, body: { error: expect.stringContaining("`nope`") } });
    expect(
      (await api("GET", `/api/v1/metrics/baselines?connection_id=${conn}&probe_name=pg_stat_wal&metrics=wal_bytes_per_sec&database_name=app`, { token: root }))
        .status,
    ).toBe(400);
    const typo = await api("GET", `/api/v1/metrics/baselines?connection_id=${conn}&probe_name=pg_stat_database&metrics=numbackends&databse_name=app`, {
      token: root,
    });
    expect(typo).toMatchObject({ status: 400, body: { error: "unknown query parameter `databse_name`" } });
    const stranger = (await userWithToken(store.db, "stranger")).token;
    expect(
      (await api("GET", `/api/v1/metrics/baselines?connection_id=${conn}&probe_name=pg_stat_database&metrics=numbackends`, { token: stranger })).status,
    ).toBe(403);
    expect((await api("GET", `/api/v1/metrics/baselines?connection_id=999999&probe_name=pg_stat_database`, { token: root })).status).toBe(404);
  });

  it("refreshes baselines from several instances at once without errors or duplicates", async () => {
    const others = Array.from({ length: 3 }, () => openPg(store.url!));
    try {
      const counts = await Promise.all([store.db, ...others].map((d) => refreshBaselines(d)));
      expect(new Set(counts).size).toBe(1);
      const [{ n }] = await store.db.query<{ n: number }>("SELECT count(*)::int AS n FROM metric_baselines WHERE connection_id = $1", [conn]);
      expect(n).toBe(counts[0]);
    } finally {
      await Promise.all(others.map((d) => d.close()));
    }
  });

  it("raises an anomaly alert for a burst, with its z-score and baseline, and clears it when traffic is normal", async () => {
    expect(await refreshBaselines(store.db)).toBeGreaterThan(0);
    expect((await evaluateAndApply(store.db)).raised).toEqual([]);
    await write(sample(lastT + STEP, 30_000, 6)); // 100 commits a second instead of about 1
    const burst = await evaluateAndApply(store.db);
    expect(burst.raised).toHaveLength(1);
    const { alerts } = (await api("GET", `/api/v1/alerts?connection_id=${conn}&alert_type=anomaly`, { token: root })).body;
    expect(alerts[0]).toMatchObject({
      metric_name: "pg_stat_database.xact_commit_per_sec",
      database_name: "app",
      severity: "critical",
      status: "active",
      metric_value: 100,
      anomaly_details: { baseline: { period_type: "hourly" } },
    });
    expect(alerts[0].anomaly_score).toBeGreaterThan(12);
    await write(sample(lastT + STEP, 300, 6));
    expect((await evaluateAndApply(store.db)).cleared).toEqual([alerts[0].id]);
  });
});
