/**
 * Baselines and tier-1 anomalies, pure. A metric's history is the list of its values: one per sample for a
 * level (a gauge; the average over the selected rows), one per interval for a rate or change (the same
 * reset- and gap-aware differencing as the metrics query). Statistics are exact over those values: the mean,
 * the sample standard deviation, and nearest-rank percentiles of the sorted values. A value is anomalous when
 * its z-score against the most specific baseline with enough samples (hour of day, else day of week, else
 * all) reaches the sensitivity.
 */
import { intervalsFor } from "../metrics/intervals.ts";
import type { MetricRequest } from "../metrics/metric-names.ts";
import { type Sample, median } from "../metrics/samples.ts";
import { levelPointOf } from "../metrics/series.ts";
import type { ProbeDefinition } from "../probes/types.ts";
import type { Severity } from "../vocabulary/builtin-rules.ts";

export interface Point {
  t: number;
  value: number;
}

const GAP_INTERVALS = 3;

/** The history of one metric over `samples` (one connection, already narrowed to a database if wanted). */
export function metricHistory(probe: ProbeDefinition, metric: MetricRequest, samples: readonly Sample[], intervalSeconds: number): Point[] {
  if (metric.form === "raw" || metric.form === "dead_tuple_ratio") {
    return samples
      .map((s) => levelPointOf(metric, s))
      .filter((p) => p.count > 0)
      .map((p) => ({ t: p.t, value: p.sum / p.count }));
  }
  const spacing = samples.slice(1).map((s, i) => s.t - samples[i].t);
  const gap = GAP_INTERVALS * Math.max(intervalSeconds * 1000, median(spacing) ?? 0);
  const points: Point[] = [];
  for (const i of intervalsFor(probe, metric.metric, samples)) {
    const ms = i.to - i.from;
    if (i.change === null || ms <= 0 || ms > gap) continue;
    const value =
      metric.form === "per_sec"
        ? i.change / (ms / 1000)
        : metric.form === "pct"
          ? (100 * i.change) / ms
          : metric.form === "sessions"
            ? i.change / ms
            : i.change;
    points.push({ t: i.to, value });
  }
  return points;
}

export interface Stats {
  mean: number;
  stddev: number;
  min: number;
  max: number;
  p50: number;
  p95: number;
  p99: number;
  sample_count: number;
}

/** Nearest-rank percentile of sorted values. */
const percentile = (sorted: readonly number[], p: number) => sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)];

export function summarize(values: readonly number[]): Stats | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mean = values.reduce((s, v) => s + v, 0) / values.length;
  const variance = values.length > 1 ? values.reduce((s, v) => s + (v - mean) ** 2, 0) / (values.length - 1) : 0;
  return {
    mean,
    stddev: Math.sqrt(variance),
    min: sorted[0],
    max: sorted[sorted.length - 1],
    p50: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    p99: percentile(sorted, 99),
    sample_count: values.length,
  };
}

export type PeriodType = "all" | "hourly" | "daily";

export interface Baseline extends Stats {
  period_type: PeriodType;
  /** Hour of day (0-23, UTC) for hourly, day of week (0 = Sunday, UTC) for daily, 0 for all. */
  period_value: number;
}

const hourOf = (t: number) => new Date(t).getUTCHours();
const dayOf = (t: number) => new Date(t).getUTCDay();

/** Baselines of every period that has values: all, each hour of day, each day of week. */
export function baselinesOf(points: readonly Point[]): Baseline[] {
  const result: Baseline[] = [];
  const add = (period_type: PeriodType, period_value: number, values: number[]) => {
    const stats = summarize(values);
    if (stats) result.push({ period_type, period_value, ...stats });
  };
  add(
    "all",
    0,
    points.map((p) => p.value),
  );
  for (let h = 0; h < 24; h++)
    add(
      "hourly",
      h,
      points.filter((p) => hourOf(p.t) === h).map((p) => p.value),
    );
  for (let d = 0; d < 7; d++)
    add(
      "daily",
      d,
      points.filter((p) => dayOf(p.t) === d).map((p) => p.value),
    );
  return result;
}

export const MIN_BASELINE_SAMPLES = 3;

/** The most specific usable baseline for a value at `t`: its hour, else its weekday, else all. */
export function pickBaseline(baselines: readonly Baseline[], t: number): Baseline | undefined {
  const usable = (b: Baseline | undefined) => (b && b.sample_count >= MIN_BASELINE_SAMPLES ? b : undefined);
  return (
    usable(baselines.find((b) => b.period_type === "hourly" && b.period_value === hourOf(t))) ??
    usable(baselines.find((b) => b.period_type === "daily" && b.period_value === dayOf(t))) ??
    usable(baselines.find((b) => b.period_type === "all"))
  );
}

export interface Anomaly {
  z: number;
  severity: Severity;
  baseline: Baseline;
}

/** |z| >= sensitivity is an anomaly: critical from 4x the sensitivity, warning from 2x, else info. */
export function detectAnomaly(value: number, t: number, baselines: readonly Baseline[], sensitivity: number): Anomaly | null {
  const baseline = pickBaseline(baselines, t);
  if (!baseline || baseline.stddev === 0) return null;
  const z = (value - baseline.mean) / baseline.stddev;
  const size = Math.abs(z);
  if (size < sensitivity) return null;
  return { z, severity: size >= 4 * sensitivity ? "critical" : size >= 2 * sensitivity ? "warning" : "info", baseline };
}
