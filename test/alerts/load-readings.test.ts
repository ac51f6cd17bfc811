/**
 * What the alerter loads of a probe (columnsRead): a metric that lists its columns (AlertMetric.columns) must
 * measure the same on rows narrowed to them as on whole rows, and one that reads only the latest sample
 * (latestOnly) the same without the sample before, or a rule would silently never fire. Random
 * samples, many seeds; every such metric must also yield readings on them, so the comparison is not of nothing.
 */
import { describe, expect, it } from "vitest";
import { columnsRead } from "../../src/alerts/load-readings.ts";
import type { Row, Sample } from "../../src/metrics/samples.ts";
import { findProbe } from "../../src/probes/index.ts";
import type { ProbeColumn } from "../../src/probes/types.ts";
import { ALERT_METRICS, type MetricInput } from "../../src/vocabulary/alert-metrics.ts";

function random(seed: number) {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

/** Words the metrics compare text columns with, beside others they must ignore. */
const WORDS = ["client backend", "autovacuum worker", "active", "idle", "idle in transaction", "Lock", "IO", "max_connections", "work_mem", "db1", "db2"];
const NOW = Date.parse("2026-11-29T12:00:00Z");

function value(column: ProbeColumn, next: () => number): unknown {
  if (next() < 0.05) return null;
  if (column.type.startsWith("timestamp")) return new Date(NOW - Math.floor(next() * 48 * 3_600_000));
  if (column.type === "boolean") return next() < 0.5;
  // Text: a word, or a number as settings spell theirs.
  if (column.type === "text" || column.type === "name") return next() < 0.7 ? WORDS[Math.floor(next() * WORDS.length)] : String(Math.floor(next() * 500));
  return Math.floor(next() * 5000);
}

function sample(probe: string, t: number, next: () => number): Sample {
  const definition = findProbe(probe)!;
  const rows = Array.from({ length: 30 }, () => Object.fromEntries(definition.columns.map((c) => [c.name, value(c, next)])) as Row);
  return { t, rows };
}

/** The rows as the alerter loads them: the columns read. */
function narrowed(s: Sample, columns: readonly string[]): Sample {
  const kept = new Set(columns);
  return { t: s.t, rows: s.rows.map((r) => Object.fromEntries(Object.entries(r).filter(([k]) => kept.has(k)))) };
}

function input(samples: Map<string, Sample[]>): MetricInput {
  return { now: NOW, latest: (p) => samples.get(p)?.[1], previous: (p) => samples.get(p)?.[0], schedule: [] };
}

describe("alert metrics that list their columns", () => {
  const listing = ALERT_METRICS.filter((m) => m.columns);

  it("are the metrics on the large probes", () => {
    const probes = new Set(listing.flatMap((m) => m.probes));
    for (const large of ["pg_stat_statements", "pg_stat_all_tables", "pg_settings", "pg_stat_activity"]) expect(probes).toContain(large);
  });

  it("name columns their probes have", () => {
    for (const m of listing) {
      const known = new Set(m.probes.flatMap((p) => findProbe(p)!.columns.map((c) => c.name)));
      for (const c of m.columns!) expect(known.has(c), `${m.name}: ${c}`).toBe(true);
    }
  });

  for (const metric of listing) {
    it(`${metric.name} measures the same on the columns the alerter loads`, () => {
      let readings = 0;
      for (let seed = 1; seed <= 40; seed++) {
        const next = random(seed);
        const whole = new Map(metric.probes.map((p) => [p, [sample(p, NOW - 120_000, next), sample(p, NOW - 60_000, next)]]));
        const loaded = new Map(
          metric.probes.map((p) => {
            const columns = columnsRead(findProbe(p)!, [metric])!;
            return [p, whole.get(p)!.map((s) => narrowed(s, columns))];
          }),
        );
        const expected = metric.measure(input(whole));
        // A metric that reads only the latest sample is given no previous one, as the alerter loads none.
        const given = metric.latestOnly ? { ...input(loaded), previous: () => undefined } : input(loaded);
        expect(metric.measure(given), `seed ${seed}`).toEqual(expected);
        readings += expected.length;
      }
      expect(readings).toBeGreaterThan(0);
    });
  }

  it("loads every column of a probe when one metric reading it does not list them", () => {
    const probe = findProbe("pg_stat_activity")!;
    const unlisted = { name: "x", probes: ["pg_stat_activity"], measure: () => [] };
    expect(
      columnsRead(
        probe,
        ALERT_METRICS.filter((m) => m.columns),
      ),
    ).toBeDefined();
    expect(columnsRead(probe, [...ALERT_METRICS.filter((m) => m.columns), unlisted])).toBeUndefined();
  });
});
