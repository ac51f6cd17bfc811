/**
 * Per-entity counter series (`group_by` over all of a probe's keys, or a filter naming one entity) of long
 * windows from the hourly entity cells: whole hours inside each bucket, raw rows for the rest, with the
 * connection's own intervals, in one statement (every entity's gauges alone, where no whole hour fits, and every
 * entity's raw counter values, from raw rows reduced per bucket in the datastore). Taken only where it is provably
 * the pipeline's answer:
 * - no interval ending in the window is longer than three collection intervals or than a bucket (as for
 *   rollup-changes.ts: the gap rule cannot matter);
 * - rates are averaged or summed per bucket (the cells keep no extremes), and each group is one entity;
 * - with filters, every entity read is in every sample of its connection in the window, so the filtered sample
 *   sequence the pipeline sees is the connection's own.
 * Otherwise undefined, and the other paths answer.
 */
import type { Queryable } from "../../drivers/types.ts";
import { type EntityBucket, fetchEntityBuckets, fetchRawEntityGauges } from "./read-entity-cells.ts";
import { cumulativeColumns, entityGaugeColumns } from "../probes/ddl.ts";
import type { ProbeDefinition } from "../probes/types.ts";
import type { Aggregation } from "../metrics/aggregate.ts";
import type { Buckets } from "../metrics/buckets.ts";
import { RATE_FACTOR, longestSafeIntervalMs } from "./series-from-change-cells.ts";
import {
  type Judge,
  type RollupQuery,
  type Spacing,
  bucketLevelPoints,
  connectionJudge,
  connectionSpacing,
  judgedLevelSeries,
} from "./series-from-level-cells.ts";
import { ENTITY_CELLS_MS, ENTITY_PART_CELLS_MS, type RollupPlan, hourParts, needsOnlySums, rollupPlanFor, withSpanBefore } from "../metrics/rollup-plan.ts";
import type { MetricRequest } from "../metrics/metric-names.ts";

/**
 * Tuning, not correctness: the samples a bucket spans from which every entity's gauges are reduced in the
 * datastore where no whole hour fits (with fewer, a bucket row per entity costs about what the raw rows do).
 */
const SAMPLES_TO_REDUCE = 5;

export interface EntityRollupQuery extends RollupQuery {
  /** Key column -> value: the entities to read (all when empty). */
  filters: Readonly<Record<string, string>>;
  /** Start of the span before the window whose entities the pipeline lists too (epoch ms). */
  borrowFrom: number;
}

/** One entity of one connection: its key values (probe key order) and one value array per metric. */
export interface EntitySeries {
  entity: Array<string | null>;
  values: Array<Array<number | null>>;
}

export async function entitySeriesFromCells(db: Queryable, q: EntityRollupQuery): Promise<Map<number, EntitySeries[]> | undefined> {
  const { probe, buckets: b } = q;
  if (probe.keys.length === 0 || q.metrics.length === 0 || !Object.keys(q.filters).every((c) => probe.keys.includes(c))) return undefined;
  const isGauge = gaugeMetric(probe);
  // A counter's raw value (xact_commit itself) is a level too, but the cells keep no level facts of counters.
  const counters = new Set(cumulativeColumns(probe).map((c) => c.name));
  const isRawCounter = (m: MetricRequest) => m.form === "raw" && counters.has(m.metric);
  const isLevel = (m: MetricRequest) => isGauge(m) || isRawCounter(m);
  const isCounter = (m: MetricRequest) => m.form === "delta" || (RATE_FACTOR[m.form] !== undefined && needsOnlySums(q.aggregation));
  if (!q.metrics.every((m) => isCounter(m) || isLevel(m))) return undefined;
  const columns = [...new Set(q.metrics.filter(isCounter).map((m) => m.metric))];
  const gauges = [...new Set(q.metrics.filter(isLevel).map((m) => m.metric))];
  // Every entity's gauges alone are reduced per bucket in the datastore even where few whole hours fit, and from
  // raw rows alone where none does but buckets hold several samples: that beats sending every raw row to the
  // pipeline (lab: a week in 67-minute buckets 0.43 s -> 0.19 s; a day in 10-minute buckets 70 -> 45 ms). Raw
  // counter values are reduced from raw rows alone (a month of xact_commit per database: 1.5 -> 0.3 s in the lab).
  const gaugesOfEvery = columns.length === 0 && Object.keys(q.filters).length === 0;
  const entityPlan = q.metrics.some(isRawCounter)
    ? undefined
    : entityPlanFor(q, { minCovered: gaugesOfEvery ? 0 : undefined, gaugesAlone: columns.length === 0 });
  const onlySums = needsOnlySums(q.aggregation);
  let facts: EntityBucket[];
  // Whether the connection's spacing, which the pipeline judges repeats by, was read with the facts.
  let spacingsRead = false;
  if (entityPlan) {
    // The span borrowed before the window is read only for the entities in it (k = -1).
    const plan = { ...entityPlan, raw: [{ from: q.borrowFrom, to: b.start, k: -1 }, ...entityPlan.raw] };
    // Gauges alone need no intervals: with filters, whether the entity was in every sample matters only when
    // repeats are judged, and is then counted (judgeWherePresent).
    facts = await fetchEntityBuckets(db, {
      probe,
      columns,
      gauges,
      connectionIds: q.connectionIds,
      plan,
      filters: q.filters,
      intervals: columns.length > 0,
      onlySums,
    });
  } else if (gaugesOfEvery && b.width >= SAMPLES_TO_REDUCE * q.intervalSeconds * 1000) {
    spacingsRead = counters.size > 0; // where its changes are recorded
    const spacings = spacingsRead ? ({ of: "connection", intervalMs: q.intervalSeconds * 1000 } as const) : undefined;
    facts = await fetchRawEntityGauges(db, { probe, gauges, connectionIds: q.connectionIds, from: q.borrowFrom, buckets: b, onlySums, spacings });
  } else return undefined;
  const own = facts.filter((f) => f.k >= 0 && f.entity.length === 0); // the connection's intervals (samples/entity-cells.ts)
  const longest = longestSafeIntervalMs(q.intervalSeconds, b);
  if (columns.length > 0 && own.some((f) => (f.maxSpanMs ?? 0) > longest)) return undefined;

  const filtered = Object.keys(q.filters).length > 0;
  const connection = connectionJudge(db, q);
  const judged: (id: number, values: number) => Judge = filtered
    ? judgeWherePresent(db, q)
    : spacingsRead
      ? (id) =>
          judgedBySpacingsRead(
            own.filter((f) => f.connectionId === id),
            q.intervalSeconds,
            connection(id),
          )
      : connection;
  const result = new Map<number, EntitySeries[]>();
  // An entity's buckets share its key array (samples/entity-cells.ts): spelled once, not once a bucket.
  const keys = new Map<Array<string | null>, string>();
  const keyOf = (entity: Array<string | null>) => {
    let key = keys.get(entity);
    if (key === undefined) keys.set(entity, (key = JSON.stringify(entity)));
    return key;
  };
  for (const id of q.connectionIds) {
    const connectionIntervals = new Map(own.filter((f) => f.connectionId === id).map((f) => [f.k, f.intervals]));
    const byEntity = new Map<string, typeof facts>();
    for (const f of facts.filter((x) => x.connectionId === id && x.entity.length > 0)) {
      const key = keyOf(f.entity);
      const list = byEntity.get(key);
      if (list) list.push(f);
      else byEntity.set(key, [f]);
    }
    if (filtered && byEntity.size === 0) return undefined;
    const series: EntitySeries[] = [];
    // In key order, as the grouped query lists groups (the datastore returns them unsorted).
    for (const list of [...byEntity.keys()].sort().map((key) => byEntity.get(key)!)) {
      const byBucket = new Map(list.filter((f) => f.k >= 0).map((f) => [f.k, f]));
      if (filtered && columns.length > 0 && !inEverySample(connectionIntervals, byBucket)) return undefined;
      const values = [];
      for (const m of q.metrics) {
        if (isLevel(m)) {
          const levels = await gaugeSeries(list, gauges.indexOf(m.metric), q, (count) => judged(id, count));
          if (!levels) return undefined;
          values.push(levels);
          continue;
        }
        const c = columns.indexOf(m.metric);
        values.push(
          Array.from({ length: b.n + 1 }, (_, k) => {
            if (!(connectionIntervals.get(k) ?? 0)) return null;
            const own = byBucket.get(k)?.columns[c];
            if (m.form === "delta") return own?.sum ?? 0;
            if (!own || own.n === 0) return null;
            const rateSum = RATE_FACTOR[m.form]! * own.ratioSum!;
            return q.aggregation === "avg" ? rateSum / own.n : rateSum;
          }),
        );
      }
      series.push({ entity: list[0].entity, values });
    }
    result.set(id, series);
  }
  return result;
}

/**
 * A filtered query naming one entity by all of the probe's keys: its counter metrics, and its gauges' raw
 * values, per connection from the entity cells; empty where they cannot answer (then the raw paths do).
 */
export async function seriesOfOneEntity(db: Queryable, q: EntityRollupQuery): Promise<Map<MetricRequest, Map<number, Array<number | null>>>> {
  const answered = new Map<MetricRequest, Map<number, Array<number | null>>>();
  const pinned = q.probe.keys.length > 0 && q.probe.keys.every((k) => q.filters[k] !== undefined) && Object.keys(q.filters).length === q.probe.keys.length;
  if (!pinned) return answered;
  const metrics = q.metrics.filter((m) => m.form === "delta" || RATE_FACTOR[m.form] !== undefined);
  const found = metrics.length ? await entitySeriesFromCells(db, { ...q, metrics }) : undefined;
  if (found) metrics.forEach((m, i) => answered.set(m, new Map(q.connectionIds.map((id) => [id, found.get(id)![0].values[i]]))));
  for (const [m, perConnection] of await gaugeSeriesOfOneEntity(db, q)) answered.set(m, perConnection);
  return answered;
}

/**
 * Raw gauge columns (numbackends, n_dead_tup) of the one entity the filters name, from the entity cells' level
 * facts: whole hours in each bucket, the entity's raw rows for the rest, merged into one point per bucket as
 * rollup-levels.ts does for a connection. Taken only where provably the pipeline's: every cell read has the
 * facts (cells from before migration 25 have none), the first bucket has a value (no sample before the window
 * matters) or the entity has none in the span borrowed from (read as bucket -1), and repeating values into empty buckets either gives the same series for any judged interval or
 * is judged by the connection's spacing, which is the entity's own when it is in every sample.
 */
async function gaugeSeriesOfOneEntity(db: Queryable, q: EntityRollupQuery): Promise<Map<MetricRequest, Map<number, Array<number | null>>>> {
  const answered = new Map<MetricRequest, Map<number, Array<number | null>>>();
  const candidates = q.metrics.filter(gaugeMetric(q.probe));
  if (candidates.length === 0) return answered;
  // The span the pipeline borrows a sample from is read too, for a first bucket without one.
  const plan = entityPlanFor(q, { gaugesAlone: true, spanFrom: q.borrowFrom });
  const gauges = [...new Set(candidates.map((m) => m.metric))];
  const onlySums = needsOnlySums(q.aggregation);
  let facts: EntityBucket[];
  if (plan)
    facts = await fetchEntityBuckets(db, {
      probe: q.probe,
      columns: [],
      gauges,
      connectionIds: q.connectionIds,
      plan,
      filters: q.filters,
      intervals: false,
      onlySums,
    });
  // Where no cell fits, its raw rows reduced per bucket in the datastore where buckets hold several samples (lab,
  // a day of one database in 10-minute buckets: a row a bucket, not a row a sample), with the entity's own
  // spacing, which the pipeline judges the filtered samples by.
  else if (q.buckets.width >= SAMPLES_TO_REDUCE * q.intervalSeconds * 1000) {
    facts = await fetchRawEntityGauges(db, {
      probe: q.probe,
      gauges,
      connectionIds: q.connectionIds,
      from: q.borrowFrom,
      buckets: q.buckets,
      onlySums,
      filters: q.filters,
      spacings: { of: "entity", intervalMs: q.intervalSeconds * 1000 },
    });
  } else return answered;
  const present = judgeWherePresent(db, q);
  const judged = plan
    ? present
    : (id: number, values: number) =>
        judgedBySpacingsRead(
          facts.filter((f) => f.connectionId === id),
          q.intervalSeconds,
          present(id, values),
        );
  for (const m of candidates) {
    const perConnection = new Map<number, Array<number | null>>();
    for (const id of q.connectionIds) {
      const entity = facts.filter((f) => f.connectionId === id);
      const series = await gaugeSeries(entity, gauges.indexOf(m.metric), q, (count) => judged(id, count));
      if (!series) break;
      perConnection.set(id, series);
    }
    if (perConnection.size === q.connectionIds.length) answered.set(m, perConnection);
  }
  return answered;
}

/**
 * The entity cells' reading plan: where only counts and sums are needed (counters, and gauges averaged or
 * summed), an hour cut by bucket edges is read whole less its smaller parts (read raw), which leaves about a
 * quarter of the raw rows at bucket edges; otherwise each part is read raw.
 */
function entityPlanFor(
  q: Pick<RollupQuery, "probe" | "buckets" | "levelsFrom" | "aggregation">,
  { minCovered, gaugesAlone = false, spanFrom }: { minCovered?: number; gaugesAlone?: boolean; spanFrom?: number } = {},
): RollupPlan | undefined {
  const subtract = needsOnlySums(q.aggregation);
  // Gauges alone read the hours' facts over 5-minute parts too, where the probe keeps them, which leaves at most
  // part of a 5-minute cell at each bucket edge to read raw.
  const sizes = gaugesAlone && q.probe.gaugeParts !== false ? ENTITY_PART_CELLS_MS : ENTITY_CELLS_MS;
  const plan = rollupPlanFor(q.buckets, q.levelsFrom, sizes, { subtract, minCovered });
  // `spanFrom`: the span before the window from then is read too, as bucket -1.
  const spanned = plan && spanFrom !== undefined ? withSpanBefore(plan, q.buckets, spanFrom, q.levelsFrom, { subtract, sizes }) : plan;
  return spanned && sizes === ENTITY_PART_CELLS_MS ? hourParts(spanned) : spanned;
}

/** The test for a metric that is a gauge's raw value (whose level facts the entity cells keep). */
function gaugeMetric(probe: ProbeDefinition): (m: MetricRequest) => boolean {
  const gauges = new Set(entityGaugeColumns(probe).map((c) => c.name));
  return (m) => m.form === "raw" && gauges.has(m.metric);
}

/**
 * Per connection, what the pipeline judges a filtered entity's repeats by: its own spacing, which is the
 * connection's (connectionJudge) where the entity has a value in every sample of the window, that is where its
 * count of values (`values`) is the connection's count of samples (an entity has one row a sample at most);
 * otherwise unknown (undefined). Read once per kind, when first asked.
 */
function judgeWherePresent(db: Queryable, q: EntityRollupQuery): (id: number, values: number) => Judge {
  const spacing = connectionSpacing(db, q);
  const present = (found: Spacing | undefined, values: number) => (found?.samples === values ? found.judged : undefined);
  return (id, values) => ({
    atMost: async () => present(await spacing(id).atMost(), values),
    exactly: async () => present(await spacing(id).exactly(), values),
  });
}

/**
 * What the pipeline judges repeats by (the larger of the collection interval and the median spacing of the samples
 * it judges: an entity's filtered ones, or its connection's), from their intervals in the window as read
 * (`buckets` with k >= 0; fetchRawEntityGauges' spacings): at most the longest, and exactly the collection interval
 * where fewer than half are longer (so is the median) or there is none (fewer than two samples); otherwise exactly
 * as `fallback` tells it.
 */
function judgedBySpacingsRead(buckets: readonly EntityBucket[], intervalSeconds: number, fallback: Judge): Judge {
  const own = buckets.filter((f) => f.k >= 0);
  const intervals = own.reduce((sum, f) => sum + f.intervals, 0);
  const longer = own.reduce((sum, f) => sum + (f.longer ?? Number.POSITIVE_INFINITY), 0);
  const intervalMs = intervalSeconds * 1000;
  const longest = Math.max(intervalMs, ...own.map((f) => f.maxSpanMs ?? 0));
  return { atMost: async () => longest, exactly: async () => (intervals > 2 * longer || intervals === 0 ? intervalMs : fallback.exactly()) };
}

/**
 * Whether one entity was in every sample of its connection: in each bucket, as many of the connection's
 * intervals (`own`: bucket -> count) had the entity in both samples.
 */
function inEverySample(own: ReadonlyMap<number, number>, entityByBucket: ReadonlyMap<number, EntityBucket>): boolean {
  return [...own].every(([k, n]) => n === 0 || entityByBucket.get(k)?.intervals === n);
}

/**
 * One entity's raw series of gauge `g` from its buckets' level facts (k >= 0 in the window), read as
 * rollup-levels.ts reads a connection's; undefined where a cell lacks the facts (before migration 25) or the
 * series may not be the pipeline's (judgedLevelSeries). `judged` is told the entity's count of values in the window.
 * The buckets hold the span borrowed from (k = -1): an entity without a value there has none the pipeline could
 * repeat into the window.
 */
async function gaugeSeries(
  buckets: readonly EntityBucket[],
  g: number,
  q: { buckets: Buckets; intervalSeconds: number; aggregation: Aggregation },
  judged: (values: number) => Judge,
): Promise<Array<number | null> | undefined> {
  if (buckets.some((f) => f.gauges[g].n === null)) return undefined;
  const withValues = buckets.filter((f) => f.k >= 0 && f.gauges[g].n! > 0);
  const inWindow = bucketLevelPoints(
    q.buckets,
    withValues.map(({ k, gauges }) => ({
      k,
      point: { t: gauges[g].lastAt, count: gauges[g].n!, sum: gauges[g].sum, min: gauges[g].min, max: gauges[g].max, last: gauges[g].last },
    })),
  );
  // The entity has one value a sample at most: the samples judged by (its connection's, or its own where
  // filtered) are at least as many as its values.
  const values = withValues.reduce((sum, f) => sum + f.gauges[g].n!, 0);
  const prior = withValues.length > 0 && !buckets.some((f) => f.k < 0 && f.gauges[g].n! > 0) ? null : undefined;
  return inWindow && judgedLevelSeries(inWindow, q, judged(values), { samples: values, prior });
}
