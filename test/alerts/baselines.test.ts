/** Baseline statistics, histories and tier-1 anomaly decisions (pure). */
import { describe, expect, it } from "vitest";
import { type Baseline, baselinesOf, detectAnomaly, metricHistory, pickBaseline, summarize } from "../../src/alerts/baselines.ts";
import { parseMetricName } from "../../src/metrics/metric-names.ts";
import { findProbe } from "../../src/probes/index.ts";

const probe = findProbe("pg_stat_database")!;
const HOUR = 3_600_000;

describe("summarize", () => {
  it("gives the mean, the sample standard deviation and nearest-rank percentiles", () => {
    const values = Array.from({ length: 100 }, (_, i) => i + 1); // 1..100
    expect(summarize(values)).toEqual({ mean: 50.5, stddev: Math.sqrt(841.6666666666666), min: 1, max: 100, p50: 50, p95: 95, p99: 99, sample_count: 100 });
    expect(summarize([2, 4, 4, 4, 5, 5, 7, 9])!.stddev).toBeCloseTo(2.138, 3);
    expect(summarize([7])).toMatchObject({ mean: 7, stddev: 0, p50: 7, p99: 7 });
    expect(summarize([])).toBeNull();
  });
});

describe("metricHistory", () => {
  const sample = (t: number, commits: number, reset = "2026-01-01T00:00:00Z") => ({
    t,
    rows: [{ database_name: "app", xact_commit: commits, numbackends: commits % 7, stats_reset: reset }],
  });
  const samples = [
    sample(0, 100),
    sample(60_000, 160),
    sample(120_000, 280),
    sample(180_000, 10, "2026-02-01T00:00:00Z"),
    sample(240_000, 70, "2026-02-01T00:00:00Z"),
    sample(3_600_000, 100, "2026-02-01T00:00:00Z"),
  ];

  it("turns a counter into one rate per interval, skipping resets and gaps", () => {
    const rate = metricHistory(probe, parseMetricName("xact_commit_per_sec", probe), samples, 60);
    expect(rate).toEqual([
      { t: 60_000, value: 1 },
      { t: 120_000, value: 2 },
      { t: 240_000, value: 1 },
    ]);
    expect(metricHistory(probe, parseMetricName("xact_commit_delta", probe), samples, 60).map((p) => p.value)).toEqual([60, 120, 60]);
  });

  it("keeps a gauge's value per sample", () => {
    expect(metricHistory(probe, parseMetricName("numbackends", probe), samples, 60).map((p) => p.value)).toEqual([2, 6, 0, 3, 0, 2]);
  });
});

describe("anomalies", () => {
  const at = (hour: number) => Date.UTC(2026, 10, 23, hour); // a Monday
  // A steady series with one busy hour: 10 +- 1 most hours, 100 +- 10 at 14:00.
  const points = Array.from({ length: 7 * 24 }, (_, i) => {
    const t = at(0) - 7 * 24 * HOUR + i * HOUR;
    const busy = new Date(t).getUTCHours() === 14;
    return { t, value: (busy ? 100 : 10) + (Math.floor(i / 24) % 2 ? 1 : -1) * (busy ? 10 : 1) };
  });
  const baselines = baselinesOf(points);

  it("computes all, hourly and daily baselines", () => {
    expect(baselines.filter((b) => b.period_type === "all")).toHaveLength(1);
    expect(baselines.filter((b) => b.period_type === "hourly")).toHaveLength(24);
    expect(baselines.filter((b) => b.period_type === "daily")).toHaveLength(7);
    expect(baselines.find((b) => b.period_type === "hourly" && b.period_value === 14)!.mean).toBeCloseTo(690 / 7, 6); // 4 days at 90, 3 at 110
  });

  it("judges against the hour of day first: 100 is normal at 14:00, an anomaly at 03:00", () => {
    expect(detectAnomaly(100, at(14), baselines, 3)).toBeNull();
    const night = detectAnomaly(100, at(3), baselines, 3)!;
    expect(night.baseline).toMatchObject({ period_type: "hourly", period_value: 3 });
    expect(night.severity).toBe("critical");
    expect(night.z).toBeGreaterThan(12);
  });

  it("grades severity by |z| against the sensitivity, in both directions", () => {
    const flat: Baseline[] = [{ period_type: "all", period_value: 0, mean: 0, stddev: 1, min: -3, max: 3, p50: 0, p95: 2, p99: 3, sample_count: 50 }];
    expect(detectAnomaly(2.9, at(1), flat, 3)).toBeNull();
    expect(detectAnomaly(3, at(1), flat, 3)!.severity).toBe("info");
    expect(detectAnomaly(-6, at(1), flat, 3)!.severity).toBe("warning");
    expect(detectAnomaly(12, at(1), flat, 3)!.severity).toBe("critical");
    expect(detectAnomaly(12, at(1), [{ ...flat[0], stddev: 0 }], 3)).toBeNull();
  });

  it("falls back from an hour with under 3 samples to the weekday, then to all", () => {
    const b = (period_type: Baseline["period_type"], period_value: number, sample_count: number): Baseline => ({
      period_type,
      period_value,
      mean: 1,
      stddev: 1,
      min: 0,
      max: 2,
      p50: 1,
      p95: 2,
      p99: 2,
      sample_count,
    });
    expect(pickBaseline([b("hourly", 3, 2), b("daily", 1, 3), b("all", 0, 9)], at(3))).toMatchObject({ period_type: "daily" });
    expect(pickBaseline([b("hourly", 3, 2), b("daily", 1, 2), b("all", 0, 9)], at(3))).toMatchObject({ period_type: "all" });
    expect(pickBaseline([b("all", 0, 2)], at(3))).toBeUndefined();
  });
});
