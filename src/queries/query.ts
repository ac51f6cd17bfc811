/** A metrics query end to end: validate, resolve the interval, read the rows, run the pipeline. */
import type { Queryable } from "../../drivers/types.ts";
import type { Authority } from "../auth/rbac.ts";
import { type MetricsContextCache, readableContext } from "./metrics-context.ts";
import { fetchStoredChanges } from "../samples/read-changes.ts";
import { fetchLevelPoints, reducibleInDatastore } from "../samples/read-levels.ts";
import { fetchSampleRows } from "../samples/read-raw-rows.ts";
import { InputError } from "../errors.ts";
import { findColumn, findProbe } from "../probes/index.ts";
import type { ProbeDefinition } from "../probes/types.ts";
import { AGGREGATIONS, type Aggregation } from "../metrics/aggregate.ts";
import { type Buckets, layoutBuckets, pointTimes } from "../metrics/buckets.ts";
import { differencedAt, seriesOfSteadyEntity } from "../samples/series-by-difference.ts";
import { type MetricRequest, parseMetricList } from "../metrics/metric-names.ts";
import { seriesFromChangeCells } from "../samples/series-from-change-cells.ts";
import { seriesOfOneEntity } from "../samples/series-from-entity-cells.ts";
import { seriesFromLevelCells } from "../samples/series-from-level-cells.ts";
import { groupSamples } from "../metrics/samples.ts";
import { borrowLimitMs, computeSeries, judgedIntervalMs, seriesFromIntervals, seriesFromLevels } from "../metrics/series.ts";
import type { Window } from "../metrics/window.ts";

export interface MetricsQuery {
  /** The caller's rights; connections it cannot read answer "not found". Absent for trusted internal use. */
  access?: Authority;
  /** This instance's recently read connection facts (REST requests); absent: always read. */
  contextCache?: MetricsContextCache;
  probeName: string;
  connectionIds: readonly number[];
  window: Window;
  buckets?: number;
  /** A given bucket layout instead of a requested count (the summary endpoints). */
  layout?: Buckets;
  aggregation?: string;
  metrics?: string;
  filters?: { database_name?: string; schema_name?: string; table_name?: string };
}

export interface MetricSeries {
  name: string;
  metric: string;
  unit: MetricRequest["unit"];
  connection_id: number;
  data: Array<{ time: string; value: number | null }>;
}

export interface MetricsResult {
  probe: ProbeDefinition;
  metrics: MetricRequest[];
  buckets: Buckets;
  intervalSeconds: number;
  series: MetricSeries[];
}

/** Which stored column each filter parameter narrows, per probe. */
const FILTER_COLUMNS: Record<string, readonly string[]> = {
  database_name: ["database_name", "datname"],
  schema_name: ["schemaname"],
  table_name: ["relname"],
};
const FILTER_WHAT: Record<string, string> = { database_name: "database", schema_name: "schema", table_name: "table" };

export function resolveFilters(probe: ProbeDefinition, filters: MetricsQuery["filters"] = {}): Record<string, string> {
  const resolved: Record<string, string> = {};
  for (const [param, value] of Object.entries(filters)) {
    if (value === undefined || value === "") continue;
    const column = FILTER_COLUMNS[param].find((c) => findColumn(probe, c));
    if (!column) throw new InputError(`\`${param}\` does not apply to probe \`${probe.name}\`: it has no ${FILTER_WHAT[param]} column`);
    resolved[column] = value;
  }
  return resolved;
}

export function requireProbe(name: string): ProbeDefinition {
  const probe = findProbe(name);
  if (!probe) throw new InputError(`unknown probe \`${name}\`; list_probes (or GET /api/v1/mcp/tools) shows the probes`);
  return probe;
}

export function parseAggregation(value: string | undefined): Aggregation {
  const how = (value ?? "avg").toLowerCase();
  if (!(AGGREGATIONS as readonly string[]).includes(how))
    throw new InputError(`\`aggregation\` must be one of ${AGGREGATIONS.join(", ")}; got ${JSON.stringify(value)}`);
  return how as Aggregation;
}

/** Stored columns the requested metrics read: bases, their reset markers, dead_tuple_ratio's inputs. */
export function neededColumns(probe: ProbeDefinition, metrics: readonly MetricRequest[]): string[] {
  const columns = new Set<string>();
  for (const m of metrics) {
    if (m.form === "dead_tuple_ratio") {
      columns.add("n_live_tup").add("n_dead_tup");
      continue;
    }
    columns.add(m.metric);
    const marker = findColumn(probe, m.metric)?.resetBy;
    if (m.form !== "raw" && marker) columns.add(marker);
  }
  return [...columns];
}

/**
 * Tuning, not correctness: up to this many samples a bucket, a filtered entity's counter metrics are read by
 * difference before the entity cells are tried, and beyond it only over evenly spaced samples (whose sequence is
 * not read). Reading the sequence costs about a record per sample, the cells about a raw range per bucket; in
 * the lab they broke even near 130 samples a bucket (a fortnight of minutes).
 */
const DIFFERENCE_FIRST_SAMPLES = 100;

/** Forms computed from changes between samples; the sample writer records those changes per sample. */
const CHANGE_FORMS = new Set<MetricRequest["form"]>(["per_sec", "delta", "pct", "sessions"]);

/** What every metrics query checks and resolves first: the probe, the metrics, the rights, the buckets. */
export async function prepareMetricsQuery(db: Queryable, q: MetricsQuery) {
  const probe = requireProbe(q.probeName);
  const metrics = parseMetricList(q.metrics, probe);
  if (metrics.length === 0) throw new InputError(`probe \`${probe.name}\` has no numeric metrics; describe_probe lists its columns`);
  const aggregation = parseAggregation(q.aggregation);
  const filters = resolveFilters(probe, q.filters);
  const { intervals, levelsFrom } = await readableContext(db, probe.name, q.connectionIds, q.access, q.contextCache);
  const intervalSeconds = Math.max(...intervals.values());
  const buckets = q.layout ?? layoutBuckets(q.window.start, q.window.end, intervalSeconds, q.buckets);
  return { probe, metrics, aggregation, filters, intervalSeconds, buckets, borrowFrom: q.window.start - borrowLimitMs(buckets), levelsFrom };
}

export async function runMetricsQuery(db: Queryable, q: MetricsQuery): Promise<MetricsResult> {
  const { probe, metrics, aggregation, filters, intervalSeconds, buckets, borrowFrom, levelsFrom } = await prepareMetricsQuery(db, q);
  const unfiltered = Object.keys(filters).length === 0;

  // Time rollups answer unfiltered raw columns and counter metrics over long windows where exact, and counter
  // metrics of one entity named by filters; averaged counter metrics (and deltas at any aggregation) of such an
  // entity in every sample are read by difference (before the rollups where buckets are narrow enough); recorded changes answer other unfiltered
  // derived metrics; the datastore reduces other level metrics of multi-entity probes per sample (an integer gauge's
  // average or sum over every entity is recorded so with each sample's changes); the rest reads
  // raw rows. Every path gives the pure pipeline's numbers (rates from rollups up to floating-point rounding:
  // they are summed in another order).
  const rollupQuery = { probe, metrics, connectionIds: q.connectionIds, buckets, intervalSeconds, aggregation, levelsFrom };
  const rollups = new Map<MetricRequest, Map<number, Array<number | null>>>();
  const answer = (found: typeof rollups) => found.forEach((perConnection, m) => rollups.set(m, perConnection));
  const rest = () => metrics.filter((m) => !rollups.has(m));
  const fromCells = async () => answer(await seriesOfOneEntity(db, { ...rollupQuery, metrics: rest(), filters, borrowFrom }));
  const byDifference = async (onlyEven: boolean) => {
    answer(
      await seriesOfSteadyEntity(db, {
        probe,
        metrics: rest().filter(differencedAt(aggregation)),
        filters,
        connectionIds: q.connectionIds,
        buckets,
        intervalSeconds,
        cellsFrom: levelsFrom,
        onlyEven,
      }),
    );
  };
  if (unfiltered) {
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
  const pending = metrics.filter((m) => !rollups.has(m));
  const fromChanges = unfiltered ? pending.filter((m) => CHANGE_FORMS.has(m.form)) : [];
  const fromLevels = pending.filter((m) => !fromChanges.includes(m) && reducibleInDatastore(probe, m, aggregation));
  const fromRows = pending.filter((m) => !fromChanges.includes(m) && !fromLevels.includes(m));
  const rows = fromRows.length
    ? await fetchSampleRows(db, { probe, connectionIds: q.connectionIds, from: borrowFrom, to: q.window.end, columns: neededColumns(probe, fromRows), filters })
    : [];
  const changes = fromChanges.length
    ? await fetchStoredChanges(db, {
        probe,
        connectionIds: q.connectionIds,
        columns: fromChanges.map((m) => m.metric),
        from: q.window.start,
        to: q.window.end,
        earliestPrevious: borrowFrom,
      })
    : [];

  const levels = fromLevels.length
    ? await fetchLevelPoints(db, { probe, metrics: fromLevels, aggregation, connectionIds: q.connectionIds, from: borrowFrom, to: q.window.end, filters })
    : undefined;

  const values = new Map<string, Array<number | null>>(); // `${connection}:${metric index}` -> points
  for (const id of q.connectionIds) {
    for (const [m, perConnection] of rollups) values.set(`${id}:${metrics.indexOf(m)}`, perConnection.get(id)!);
    fromLevels.forEach((m, i) => {
      const points = levels!.get(id)![i];
      const inWindow = points.filter((p) => p.t >= q.window.start);
      const before = points.filter((p) => p.t < q.window.start);
      const judged = judgedIntervalMs(
        intervalSeconds,
        inWindow.slice(1).map((p, j) => p.t - inWindow[j].t),
      );
      values.set(`${id}:${metrics.indexOf(m)}`, seriesFromLevels({ inWindow, prior: before[before.length - 1], buckets, judgedInterval: judged, aggregation }));
    });
    const own = rows.filter((r) => r.connection_id === id);
    const rowSeries = computeSeries({ probe, metrics: fromRows, samples: groupSamples(probe, own), buckets, intervalSeconds, aggregation });
    fromRows.forEach((m, i) => values.set(`${id}:${metrics.indexOf(m)}`, rowSeries[i]));
    const stored = changes.filter((c) => c.connection_id === id);
    const judged = judgedIntervalMs(
      intervalSeconds,
      stored.filter((c) => c.prev_collected_at >= q.window.start).map((c) => c.collected_at - c.prev_collected_at),
    );
    for (const m of fromChanges) {
      const ivs = stored.map((c) => ({ from: c.prev_collected_at, to: c.collected_at, change: c[m.metric] }));
      values.set(`${id}:${metrics.indexOf(m)}`, seriesFromIntervals({ form: m.form, intervals: ivs, buckets, judgedInterval: judged, aggregation }));
    }
  }

  const times = pointTimes(buckets);
  // Metrics in request order, then connections in request order.
  const series = metrics.flatMap((m, i) =>
    q.connectionIds.map((id) => ({
      name: m.name,
      metric: m.metric,
      unit: m.unit,
      connection_id: id,
      data: times.map((time, k) => ({ time, value: values.get(`${id}:${i}`)![k] })),
    })),
  );
  return { probe, metrics, buckets, intervalSeconds, series };
}
