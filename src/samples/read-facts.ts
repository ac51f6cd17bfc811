/**
 * The sample store's one read: a metrics plan in, the facts the pipeline needs out (metrics/series-from-facts.ts),
 * whichever way they are stored. Time rollups answer unfiltered raw columns and counter metrics over long windows
 * where exact, and counter metrics of one entity named by filters; averaged counter metrics (and deltas at any
 * aggregation) of such an entity in every sample are read by difference (before the rollups where buckets are
 * narrow enough); recorded changes answer other unfiltered derived metrics; the datastore reduces other level
 * metrics of multi-entity probes per sample; the rest is raw rows. Every path gives the pure pipeline's numbers
 * (rates from rollups up to floating-point rounding: they are summed in another order).
 */
import type { Queryable } from "../../drivers/types.ts";
import type { MetricRequest } from "../metrics/metric-names.ts";
import { type MetricsPlan, neededColumns } from "../metrics/metrics-plan.ts";
import { groupSamples } from "../metrics/samples.ts";
import type { Facts, MetricFacts } from "../metrics/series-from-facts.ts";
import { fetchStoredChanges } from "./read-changes.ts";
import { readGroupedFacts } from "./read-grouped-facts.ts";
import { fetchLevelPoints, reducibleInDatastore } from "./read-levels.ts";
import { fetchSampleRows } from "./read-raw-rows.ts";
import { differencedAt, seriesOfSteadyEntity } from "./series-by-difference.ts";
import { seriesFromChangeCells } from "./series-from-change-cells.ts";
import { seriesOfOneEntity } from "./series-from-entity-cells.ts";
import { seriesFromLevelCells } from "./series-from-level-cells.ts";

/**
 * Tuning, not correctness: up to this many samples a bucket, a filtered entity's counter metrics are read by
 * difference before the entity cells are tried, and beyond it only over evenly spaced samples (whose sequence is
 * not read). Reading the sequence costs about a record per sample, the cells about a raw range per bucket; in
 * the lab they broke even near 130 samples a bucket (a fortnight of minutes).
 */
const DIFFERENCE_FIRST_SAMPLES = 100;

/** Forms computed from changes between samples; the sample writer records those changes per sample. */
const CHANGE_FORMS = new Set<MetricRequest["form"]>(["per_sec", "delta", "pct", "sessions"]);

type Answered = Map<MetricRequest, Map<number, Array<number | null>>>;

export function readFacts(db: Queryable, plan: MetricsPlan): Promise<Facts> {
  return plan.groupBy ? readGroupedFacts(db, plan, plan.groupBy) : readConnectionFacts(db, plan);
}

async function readConnectionFacts(db: Queryable, plan: MetricsPlan): Promise<Facts> {
  const { probe, metrics, aggregation, filters, connectionIds, borrowFrom, window } = plan;
  const answered = await valuesFromRollups(db, plan);
  const pending = metrics.filter((m) => !answered.has(m));
  const unfiltered = Object.keys(filters).length === 0;
  const fromChanges = unfiltered ? pending.filter((m) => CHANGE_FORMS.has(m.form)) : [];
  const fromLevels = pending.filter((m) => !fromChanges.includes(m) && reducibleInDatastore(probe, m, aggregation));
  const fromRows = pending.filter((m) => !fromChanges.includes(m) && !fromLevels.includes(m));
  const rows = fromRows.length
    ? await fetchSampleRows(db, { probe, connectionIds, from: borrowFrom, to: window.end, columns: neededColumns(probe, fromRows), filters })
    : [];
  const changes = fromChanges.length
    ? await fetchStoredChanges(db, {
        probe,
        connectionIds,
        columns: fromChanges.map((m) => m.metric),
        from: window.start,
        to: window.end,
        earliestPrevious: borrowFrom,
      })
    : [];
  const levels = fromLevels.length
    ? await fetchLevelPoints(db, { probe, metrics: fromLevels, aggregation, connectionIds, from: borrowFrom, to: window.end, filters })
    : undefined;

  const facts: Facts = new Map();
  for (const id of connectionIds) {
    const samples = groupSamples(
      probe,
      rows.filter((r) => r.connection_id === id),
    );
    const stored = changes.filter((c) => c.connection_id === id);
    const perMetric = metrics.map((m): MetricFacts => {
      const values = answered.get(m)?.get(id);
      if (values) return { kind: "values", values };
      if (fromLevels.includes(m)) return { kind: "levels", points: levels!.get(id)![fromLevels.indexOf(m)] };
      if (fromChanges.includes(m))
        return { kind: "changes", intervals: stored.map((c) => ({ from: c.prev_collected_at, to: c.collected_at, change: c[m.metric] })) };
      return { kind: "samples", samples };
    });
    facts.set(id, new Map([["", perMetric]]));
  }
  return facts;
}

/** Metrics answered whole (every connection, every point) by rollup cells or by difference, tried in turn. */
async function valuesFromRollups(db: Queryable, plan: MetricsPlan): Promise<Answered> {
  const { probe, metrics, aggregation, filters, connectionIds, buckets, intervalSeconds, borrowFrom, levelsFrom } = plan;
  const rollupQuery = { probe, metrics, connectionIds, buckets, intervalSeconds, aggregation, levelsFrom };
  const answered: Answered = new Map();
  const answer = (found: Answered) => found.forEach((perConnection, m) => answered.set(m, perConnection));
  const rest = () => metrics.filter((m) => !answered.has(m));
  const fromCells = async () => answer(await seriesOfOneEntity(db, { ...rollupQuery, metrics: rest(), filters, borrowFrom }));
  const byDifference = async (onlyEven: boolean) => {
    const differenced = rest().filter(differencedAt(aggregation));
    answer(await seriesOfSteadyEntity(db, { probe, metrics: differenced, filters, connectionIds, buckets, intervalSeconds, cellsFrom: levelsFrom, onlyEven }));
  };
  if (Object.keys(filters).length === 0) {
    answer(await seriesFromLevelCells(db, rollupQuery));
    answer(await seriesFromChangeCells(db, rollupQuery));
  } else if (buckets.width <= DIFFERENCE_FIRST_SAMPLES * intervalSeconds * 1000) {
    await byDifference(false);
    await fromCells();
  } else {
    // Evenly spaced samples are read by difference without reading their sequence, which beats the cells.
    await byDifference(true);
    await fromCells();
    await byDifference(false);
  }
  return answered;
}
