/**
 * The read of a per-entity counter query's buckets from the hourly entity cells (entity-cells.ts): whole hours
 * from the cells, and raw rows for the rest; and the raw read of every entity's gauges.
 */
import type { Queryable } from "../../drivers/types.ts";
import type { Buckets } from "../metrics/buckets.ts";
import { type RollupPlan, firstInstant } from "../metrics/rollup-plan.ts";
import { ENTITY_FACTS, type EntityFact, LEVEL_FACTS, type LevelFact, changesTableName, entityCellsTableName, probeTable, quoteIdent } from "../probes/ddl.ts";
import type { ProbeDefinition } from "../probes/types.ts";
import { spanMsSql } from "./read-changes.ts";
import { type BucketRow, FIRST_EXTRA_PARAM, readRollupBuckets, returnedFacts } from "./read-rollup-cells.ts";
import { excludedRowsSql } from "./read-raw-rows.ts";
import {
  CONNECTION_ENTITY,
  entityFactColumns,
  entityGaugeFacts,
  entityIntervalFacts,
  entityKeySql,
  entityPartitionSql,
  gaugeFactsOfRow,
  lastTimes,
  mergedEntityFacts,
  noGaugeFacts,
  partCellFacts,
  subtractedEntityFacts,
} from "./entity-cells.ts";
import { samplesSql } from "../probes/history-ddl.ts";

/** One entity's merged facts in one bucket. */
export interface EntityBucket {
  connectionId: number;
  entity: Array<string | null>;
  k: number;
  intervals: number;
  maxSpanMs: number | null;
  /** Of the intervals, those longer than the collection interval, where counted (fetchRawEntityGauges' spacings). */
  longer?: number;
  columns: Array<{ n: number; sum: number | null; ratioSum: number | null }>;
  /** Per gauge read: its level facts; `n` null when a cell in the bucket has none (incomplete). */
  gauges: Array<{ n: number | null; sum: number; min: number; max: number; last: number; lastAt: number }>;
}

/**
 * Per connection, entity and bucket (k), the merged facts, and where intervals are read the connection's own
 * under CONNECTION_ENTITY; a raw range with k = -1 only lists the entities in it. `filters`: key column -> value
 * (text), narrowing the entities read. One statement.
 */
export async function fetchEntityBuckets(
  db: Queryable,
  q: {
    probe: ProbeDefinition;
    columns: readonly string[];
    gauges?: readonly string[];
    connectionIds: readonly number[];
    plan: RollupPlan;
    filters: Readonly<Record<string, string>>;
    /** Whether to read intervals, the connection's own and each entity's: counters need them; gauges alone do not. */
    intervals: boolean;
    /** Gauges' counts, sums and latest times only (averaged or summed): their extremes and latest values come back NaN. */
    onlySums?: boolean;
  },
): Promise<EntityBucket[]> {
  const gauges = q.gauges ?? [];
  const filters = Object.entries(q.filters);
  // The shared read's parameters come first; the filter values follow, then the entity they name, if one.
  const named = filters.map(([key], i) => `l.entity[${q.probe.keys.indexOf(key) + 1}] = $${FIRST_EXTRA_PARAM + i}`).join(" AND ");
  const pinned = filters.length === q.probe.keys.length ? q.probe.keys.map((k) => q.filters[k]) : undefined;
  const one = `$${FIRST_EXTRA_PARAM + filters.length}::text[]`;
  // One entity is looked up by the cells' entity index (migration 28), with the connection's own cells where intervals are read.
  const cellWhere = pinned
    ? [q.intervals ? `l.entity IN ('${CONNECTION_ENTITY}'::text[], ${one})` : `l.entity = ${one}`]
    : q.intervals
      ? filters.length
        ? [`(l.entity = '${CONNECTION_ENTITY}' OR (${named}))`]
        : []
      : [filters.length ? `(${named})` : `l.entity <> '${CONNECTION_ENTITY}'`];
  const rawWhere = filters.map(([key], i) => `r.${quoteIdent(key)}::text = $${FIRST_EXTRA_PARAM + i}`);
  if (!q.intervals && q.columns.length > 0) throw new Error("counter facts need intervals");
  const byParts = q.plan.cells.some((c) => c.parts);
  if (byParts && q.columns.length > 0) throw new Error("cells are read by parts for gauges alone");
  const rows = await readRollupBuckets(db, {
    cellsTable: probeTable(entityCellsTableName(q.probe.name)),
    key: "entity",
    cellsWhere: cellWhere,
    params: [...filters.map(([, value]) => value), ...(pinned ? [pinned] : [])],
    facts: entityFactColumns(q.columns, gauges),
    cellFacts: byParts ? partCellFacts(gauges, q.onlySums ?? false) : undefined,
    times: lastTimes(gauges),
    merged: mergedEntityFacts(q.columns, gauges, q.onlySums),
    subtracted: subtractedEntityFacts(q.columns, gauges),
    // Without intervals, raw rows are read without looking back. Merged per range either way: sorting every
    // entity's raw rows for the final merge took half of a week's grouped counter read (lab: 460 -> 230 ms).
    rawFacts: q.intervals
      ? entityIntervalFacts(q.probe, q.columns, { from: "p.lo", to: "p.hi" }, rawWhere, gauges)
      : entityGaugeFacts(q.probe, { from: "p.lo", to: "p.hi" }, rawWhere, gauges, q.onlySums ?? false),
    mergePerRange: true,
    // One entity's cells keep a plan; every entity's do not: with some statistics a generic plan groups them by
    // sorting arrays of text (lab, a month of 20 databases' gauges: 40 -> 88 ms).
    reusePlan: pinned !== undefined,
    connectionIds: q.connectionIds,
    plan: q.plan,
  });
  return entityBuckets(rows, q.columns, gauges);
}

/**
 * Every entity's gauges per bucket from raw rows alone, as fetchEntityBuckets gives them (without intervals), or
 * those of the entities `filters` (key column -> value, as text) name: one scan from `from` (the span before the
 * window: k = -1) to the window's end, each row given its bucket by the buckets' first instants, grouped by the
 * key columns themselves (which the datastore hashes). With `spacings`, the intervals in the window the pipeline
 * judges repeats by, per bucket they end in: counted, the longest kept, and those longer than the collection
 * interval counted too (`longer`); of each entity its own (between its consecutive rows), or of the connection
 * (from its recorded changes, under CONNECTION_ENTITY; entities' rows then count none).
 */
export async function fetchRawEntityGauges(
  db: Queryable,
  q: {
    probe: ProbeDefinition;
    gauges: readonly string[];
    connectionIds: readonly number[];
    from: number;
    buckets: Buckets;
    onlySums: boolean;
    filters?: Readonly<Record<string, string>>;
    spacings?: { of: "entity" | "connection"; intervalMs: number };
  },
): Promise<EntityBucket[]> {
  const keys = q.probe.keys.map((k) => `x.${quoteIdent(k)}`);
  const filters = Object.entries(q.filters ?? {});
  // The window's bounds are samplesSql's own: repeated here, they were compared again with each compressed
  // element's time (a tenth of a day's read of every database).
  const conditions = [
    "r.connection_id = ANY($1::int[])",
    ...filters.map(([key], i) => `r.${quoteIdent(key)}::text = $${5 + i}`),
    ...excludedRowsSql(q.probe).map((w) => `r.${w}`),
  ];
  const firstInstants = Array.from({ length: q.buckets.n + 1 }, (_, k) => new Date(firstInstant(q.buckets, k)).toISOString());
  // An interval from the entity's previous row, where that lies in the window ($4's first instant is its start).
  const previous = "lag(r.collected_at) OVER w";
  const inWindow = `${previous} >= ($4::timestamptz[])[1]`;
  const span = spanMsSql("r.collected_at", previous);
  const longerThan = `$${5 + filters.length}::float8`;
  const ofEntity = q.spacings?.of === "entity";
  const spacings = ofEntity
    ? [
        `coalesce(${inWindow}, false)::int AS intervals`,
        `CASE WHEN ${inWindow} THEN ${span} END AS max_span_ms`,
        `coalesce(${inWindow} AND ${span} > ${longerThan}, false)::int AS longer`,
      ]
    : ["0 AS intervals", "NULL::float8 AS max_span_ms"];
  const longer = q.spacings ? { merged: ofEntity ? ", sum(x.longer)::int AS longer" : ", 0 AS longer", returned: ", m.longer" } : { merged: "", returned: "" };
  // The connection's intervals: its recorded changes whose previous sample is in the window.
  const changeSpan = spanMsSql("c.collected_at", "c.prev_collected_at");
  const connectionSpacings =
    q.spacings?.of === "connection"
      ? `
     UNION ALL
     SELECT c.connection_id, '${CONNECTION_ENTITY}'::text[], width_bucket(c.collected_at, $4::timestamptz[]) - 1, count(*)::int, max(${changeSpan}),
            ${noGaugeFacts(q.gauges).join(", ")}, count(*) FILTER (WHERE ${changeSpan} > ${longerThan})::int
       FROM ${probeTable(changesTableName(q.probe.name))} c
      WHERE c.connection_id = ANY($1::int[]) AND c.collected_at >= ($4::timestamptz[])[1] AND c.collected_at <= $3::timestamptz AND c.prev_collected_at >= ($4::timestamptz[])[1]
      GROUP BY 1, 3`
      : "";
  const rows = await db.query<BucketRow>(
    `SELECT m.connection_id, array_to_json(m.entity)::text AS entity, m.k, ${returnedFacts(entityFactColumns([], q.gauges), lastTimes(q.gauges), "m").join(", ")}${longer.returned} FROM (
     SELECT x.connection_id, ${entityKeySql(q.probe, "x")} AS entity, x.k, ${mergedEntityFacts([], q.gauges, q.onlySums).join(", ")}${longer.merged}
       FROM (SELECT r.connection_id, ${q.probe.keys.map((k) => `r.${quoteIdent(k)}`).join(", ")}, width_bucket(r.collected_at, $4::timestamptz[]) - 1 AS k,
                    ${spacings.join(", ")}, ${gaugeFactsOfRow(q.gauges, q.onlySums).join(", ")}
               FROM ${samplesSql(q.probe, "$2", "$3", [...q.gauges, ...filters.map(([key]) => key)])} r WHERE ${conditions.join(" AND ")}${ofEntity ? ` WINDOW w AS (PARTITION BY ${["r.connection_id", ...entityPartitionSql(q.probe, "r")].join(", ")} ORDER BY r.collected_at)` : ""}) x
      GROUP BY x.connection_id, ${keys.join(", ")}, x.k${connectionSpacings}) m`,
    [
      q.connectionIds,
      new Date(q.from).toISOString(),
      new Date(q.buckets.end).toISOString(),
      firstInstants,
      ...filters.map(([, value]) => value),
      ...(q.spacings ? [q.spacings.intervalMs] : []),
    ],
  );
  return entityBuckets(rows, [], q.gauges);
}

/**
 * Merged fact rows (times as epoch milliseconds; the entity as JSON text) as EntityBucket. Each distinct entity
 * is parsed once and its array shared by its buckets: a day of 20 databases is 3,000 rows of 20 entities.
 */
function entityBuckets(rows: readonly BucketRow[], columns: readonly string[], gauges: readonly string[]): EntityBucket[] {
  // The rows' keys, spelled once: thousands of rows, a dozen facts each.
  const counters = columns.map((name) => Object.fromEntries(ENTITY_FACTS.map((f) => [f, `${name}:${f}`])) as Record<EntityFact, string>);
  const levels = gauges.map((name) => Object.fromEntries(LEVEL_FACTS.map((f) => [f, `${name}:${f}`])) as Record<LevelFact, string>);
  const value = (v: number | null | undefined) => (v === null || v === undefined ? Number.NaN : Number(v));
  const entities = new Map<string, Array<string | null>>();
  const entityOf = (text: string) => {
    let entity = entities.get(text);
    if (!entity) entities.set(text, (entity = JSON.parse(text) as Array<string | null>));
    return entity;
  };
  return rows.map((row) => {
    const bucket: EntityBucket = {
      connectionId: row.connection_id,
      entity: entityOf(row.entity as unknown as string),
      k: row.k,
      intervals: row.intervals as number,
      maxSpanMs: row.max_span_ms,
      columns: counters.map((name) => ({ n: row[name.n] ?? 0, sum: row[name.sum], ratioSum: row[name.ratio_sum] })),
      gauges: levels.map((name) => ({
        n: row[name.n],
        sum: value(row[name.sum]),
        min: value(row[name.min]),
        max: value(row[name.max]),
        last: value(row[name.last]),
        lastAt: value(row[name.last_at]),
      })),
    };
    if (row.longer !== undefined) bucket.longer = row.longer as number;
    return bucket;
  });
}
