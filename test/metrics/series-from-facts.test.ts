/**
 * seriesFromFacts gives the reference pipeline's numbers whichever shape the facts of a metric come in: the
 * samples themselves, the intervals between them (as the recorded changes hold them) or one level point a sample
 * (as the datastore reduces them), over histories with gaps, resets, missing entities and samples to borrow.
 */
import { describe, expect, it } from "vitest";
import { intervalsFor } from "../../src/metrics/intervals.ts";
import { checkMetricsRequest, planMetrics } from "../../src/metrics/metrics-plan.ts";
import type { Sample } from "../../src/metrics/samples.ts";
import { type Facts, type MetricFacts, seriesFromFacts } from "../../src/metrics/series-from-facts.ts";
import { computeSeries, levelPointOf } from "../../src/metrics/series.ts";
import { seededRandom } from "../support/seeded-random.ts";

const MINUTE = 60_000;
const START = Date.UTC(2026, 0, 1, 12);

function history(seed: number): Sample[] {
  const rng = seededRandom(seed);
  const totals = new Map<string, number>();
  const samples: Sample[] = [];
  const spacing = seed % 2 === 0 ? 1 : 3; // odd seeds: samples sparser than the interval, so the gap rule's judge widens
  for (let t = START - 40 * MINUTE; t <= START + 120 * MINUTE; t += MINUTE * (rng() < 0.1 ? 5 + Math.floor(rng() * 10) : spacing)) {
    const rows = ["a", "b", "c"]
      .filter(() => rng() > 0.1)
      .map((db) => {
        const total = rng() < 0.03 ? 0 : (totals.get(db) ?? 0) + Math.floor(rng() * 50); // a reset now and then
        totals.set(db, total);
        return { database_name: db, stats_reset: null, xact_commit: total, numbackends: Math.floor(rng() * 20) };
      });
    samples.push({ t, rows });
  }
  return samples;
}

const request = {
  probeName: "pg_stat_database",
  connectionIds: [1],
  window: { start: START, end: START + 120 * MINUTE },
  buckets: 24,
  metrics: "xact_commit_per_sec,xact_commit_delta,numbackends,xact_commit",
};

const seedsWithNulls: number[] = [];

describe("series from facts of every shape", () => {
  it.each([1, 2, 3, 4, 5, 6])("seed %i: the pipeline's numbers from samples, intervals and level points", (seed) => {
    const plan = planMetrics(request, checkMetricsRequest(request), { intervals: new Map([[1, 60]]), levelsFrom: Number.NEGATIVE_INFINITY });
    const samples = history(seed).filter((s) => s.t >= plan.borrowFrom && s.t <= plan.window.end);
    const reference = computeSeries({ ...plan, samples });

    const shaped = plan.metrics.map((m): MetricFacts => {
      if (m.form === "raw") return { kind: "levels", points: samples.map((s) => levelPointOf(m, s)) };
      // As stored: one interval per sample in the window, from its previous sample (borrowed or not).
      return { kind: "changes", intervals: intervalsFor(plan.probe, m.metric, samples).filter((iv) => iv.to >= plan.window.start) };
    });
    const facts = (perMetric: MetricFacts[]): Facts => new Map([[1, new Map([["", perMetric]])]]);

    expect(seriesFromFacts(plan, facts(shaped)).get(1)!.get("")).toEqual(reference);
    expect(
      seriesFromFacts(plan, facts(plan.metrics.map(() => ({ kind: "samples", samples }))))
        .get(1)!
        .get(""),
    ).toEqual(reference);
    // Exact values pass through untouched, beside metrics computed from other shapes.
    const given = reference[0].map((v, k) => (v === null ? k : -v));
    expect(
      seriesFromFacts(plan, facts([{ kind: "values", values: given }, ...shaped.slice(1)]))
        .get(1)!
        .get(""),
    ).toEqual([given, ...reference.slice(1)]);
    expect(reference[0].some((v) => (v ?? 0) > 0)).toBe(true);
    if (reference.flat().some((v) => v === null)) seedsWithNulls.push(seed);
  });

  it("ran over histories with gaps the judging is about", () => expect(seedsWithNulls.length).toBeGreaterThan(2));
});

describe("a metrics request checked before anything is read", () => {
  it("names what is wrong and what to do", () => {
    const check = (over: object) => () => checkMetricsRequest({ ...request, ...over });
    expect(check({ probeName: "pg_nope" })).toThrow(/unknown probe `pg_nope`; list_probes/);
    expect(check({ aggregation: "median" })).toThrow(/`aggregation` must be one of avg, sum, min, max, last/);
    expect(check({ filters: { table_name: "t" } })).toThrow(/`table_name` does not apply to probe `pg_stat_database`: it has no table column/);
    expect(check({ groupBy: "relname" })).toThrow(/`relname` is not a key column of probe `pg_stat_database`; its keys are/);
    expect(checkMetricsRequest({ ...request, groupBy: "database_name", filters: { database_name: "a" } })).toMatchObject({
      groupBy: ["database_name"],
      filters: { database_name: "a" },
    });
  });
});
