/**
 * The one shape every read of the sample store returns (samples/read-facts.ts), and the pure step that turns it
 * into series. Per connection and group (one group, "", without group_by), per metric in plan order, one of:
 * - `values`: one value per point, already exact (read from cells or by difference);
 * - `changes`: the intervals between consecutive samples with the column's change over each (recorded changes);
 * - `levels`: one level point per sample (reduced in the datastore);
 * - `samples`: the samples themselves (raw rows), for the reference pipeline.
 * The intervals' and points' buckets are laid out here, once.
 */
import type { Interval } from "./intervals.ts";
import type { MetricsPlan } from "./metrics-plan.ts";
import type { Sample } from "./samples.ts";
import { type LevelPoint, computeSeries, judgedIntervalMs, seriesFromIntervals, seriesFromLevels } from "./series.ts";

export type MetricFacts =
  | { kind: "values"; values: Array<number | null> }
  | { kind: "changes"; intervals: Interval[] }
  | { kind: "levels"; points: LevelPoint[] }
  | { kind: "samples"; samples: Sample[] };

/** Connection id -> group key (JSON of the group's key values; "" without group_by) -> facts per metric. */
export type Facts = Map<number, Map<string, MetricFacts[]>>;

/** Connection id -> group key -> one value per point (n + 1) per metric, in plan order. */
export type SeriesValues = Map<number, Map<string, Array<Array<number | null>>>>;

export function seriesFromFacts(plan: MetricsPlan, facts: Facts): SeriesValues {
  return new Map([...facts].map(([id, groups]) => [id, new Map([...groups].map(([key, perMetric]) => [key, valuesOfGroup(plan, perMetric)]))]));
}

function valuesOfGroup(plan: MetricsPlan, perMetric: readonly MetricFacts[]): Array<Array<number | null>> {
  const { buckets, intervalSeconds, aggregation, window } = plan;
  const values: Array<Array<number | null>> = new Array(perMetric.length);
  // Metrics read from the same samples are computed together (they share the samples' grouping and judging).
  const bySamples = new Map<Sample[], number[]>();
  perMetric.forEach((f, i) => {
    if (f.kind === "values") values[i] = f.values;
    else if (f.kind === "samples") bySamples.set(f.samples, [...(bySamples.get(f.samples) ?? []), i]);
    else if (f.kind === "changes") {
      const spacings = f.intervals.filter((iv) => iv.from >= window.start).map((iv) => iv.to - iv.from);
      const judgedInterval = judgedIntervalMs(intervalSeconds, spacings);
      values[i] = seriesFromIntervals({ form: plan.metrics[i].form, intervals: f.intervals, buckets, judgedInterval, aggregation });
    } else {
      const inWindow = f.points.filter((p) => p.t >= window.start);
      const before = f.points.filter((p) => p.t < window.start);
      const judgedInterval = judgedIntervalMs(
        intervalSeconds,
        inWindow.slice(1).map((p, j) => p.t - inWindow[j].t),
      );
      values[i] = seriesFromLevels({ inWindow, prior: before[before.length - 1], buckets, judgedInterval, aggregation });
    }
  });
  for (const [samples, indices] of bySamples) {
    const metrics = indices.map((i) => plan.metrics[i]);
    computeSeries({ probe: plan.probe, metrics, samples, buckets, intervalSeconds, aggregation }).forEach((v, j) => (values[indices[j]] = v));
  }
  return values;
}
