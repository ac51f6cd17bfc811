/**
 * Hourly rollups of each entity's changes (metrics.<probe>__entity_cells): the SQL that turns raw rows into
 * per-entity interval facts (shared by the sample writer and the query), their merge, and the read of a
 * per-entity counter query's buckets: whole hours, and raw rows for the rest.
 *
 * An entity's interval is the connection's interval (its previous sample, from `__changes`) with the entity in
 * both samples; its change is valid when the reset marker is the same and the value did not go down, as in the
 * pipeline (metrics/series.ts) when each entity is charted alone.
 */
import type { Queryable } from "../../drivers/types.ts";
import type { Buckets } from "../metrics/buckets.ts";
import { type RollupPlan, firstInstant } from "../metrics/rollup-plan.ts";
import {
  ENTITY_FACTS,
  type EntityFact,
  HOUR_PARTS,
  LEVEL_FACTS,
  type LevelFact,
  PART_FACTS,
  changesTableName,
  entityCellsTableName,
  factColumn as fact,
  probeTable,
  quoteIdent,
} from "../probes/ddl.ts";
import type { ProbeDefinition } from "../probes/types.ts";
import { spanMsSql } from "./read-changes.ts";
import { subtractedLevelFacts } from "./level-cells.ts";
import { type BucketRow, FIRST_EXTRA_PARAM, readRollupBuckets, returnedFacts, subtractedFacts } from "./read-rollup-cells.ts";
import { excludedRowsSql } from "./read-raw-rows.ts";

/** The entity's key values as text, in the probe's key order. */
const entityKeySql = (probe: ProbeDefinition, alias: string) => `ARRAY[${probe.keys.map((k) => `${alias}.${quoteIdent(k)}::text`).join(", ")}]`;

/**
 * An entity's key columns for a window's PARTITION BY: text keys in byte order, since a partition needs only
 * equality and the locale's collation made the sort of a bucket edge's rows a third of a week's read.
 */
export const entityPartitionSql = (probe: ProbeDefinition, alias: string) =>
  probe.keys.map((k) => `${alias}.${quoteIdent(k)}${probe.columns.find((c) => c.name === k)?.type === "text" ? ' COLLATE "C"' : ""}`);

/** The entity of the rows that carry the connection's own intervals, beside its entities' (no probe key is empty). */
const CONNECTION_ENTITY = "{}";

/** Gauges' level facts of a row without values (the connection's own). */
const noGaugeFacts = (gauges: readonly string[]) =>
  gauges.flatMap((name) => [
    `0 AS ${fact(name, "n")}`,
    ...(["sum", "min", "max", "last"] as const).map((f) => `NULL::float8 AS ${fact(name, f)}`),
    `NULL::timestamptz AS ${fact(name, "last_at")}`,
  ]);

/** A gauge's level facts of one raw row `r` alone; with `onlySums`, no extremes or latest value (NULL). */
const gaugeFactsOfRow = (gauges: readonly string[], onlySums = false) =>
  gauges.flatMap((name) => {
    const g = `r.${quoteIdent(name)}`;
    const value = (f: string) => (onlySums && f !== "sum" ? "NULL::float8" : `${g}::float8`);
    return [
      `(${g} IS NOT NULL)::int AS ${fact(name, "n")}`,
      ...(["sum", "min", "max", "last"] as const).map((f) => `${value(f)} AS ${fact(name, f)}`),
      `CASE WHEN ${g} IS NOT NULL THEN r.collected_at END AS ${fact(name, "last_at")}`,
    ];
  });

/**
 * A SELECT of connection_id, collected_at, entity and the interval facts, for the connections `$1` (int[]) and
 * `from <= collected_at < to` (SQL expressions): one row per visible sample row `r` that satisfies `where`
 * (conditions on `r`; a row at a connection's first sample, or whose entity was not in the previous sample,
 * has no interval), and one per interval of the connection, with the entity CONNECTION_ENTITY and no changes.
 */
export function entityIntervalFacts(
  probe: ProbeDefinition,
  columns: readonly string[],
  range: { from: string; to: string },
  where: readonly string[] = [],
  gauges: readonly string[] = [],
): string {
  const raw = probeTable(probe.name);
  const changesTable = probeTable(changesTableName(probe.name));
  const spanOf = (alias: string) => spanMsSql(`${alias}.collected_at`, "c.prev_collected_at");
  const span = spanOf("r");
  // Each row beside its entity's previous row (read from the connection's sample before the range on): an
  // interval when that row is at the connection's previous sample.
  const paired = "r.prev_at = c.prev_collected_at";
  const before = (column: string) => quoteIdent(`prev:${column}`);
  const markers = [...new Set(columns.map((name) => probe.columns.find((x) => x.name === name)?.resetBy).filter((m): m is string => Boolean(m)))];
  const lagged = ["lag(r.collected_at) OVER w AS prev_at", ...[...columns, ...markers].map((name) => `lag(r.${quoteIdent(name)}) OVER w AS ${before(name)}`)];
  // Each column's change is computed once, then counted, summed and divided (OFFSET 0 keeps the planner from
  // inlining it three times over: its evaluation was most of the statement's time).
  const changeOf = (name: string) => quoteIdent(`change:${name}`);
  const changes = columns.map((name) => {
    const col = quoteIdent(name);
    const marker = probe.columns.find((x) => x.name === name)?.resetBy;
    const sameMarker = marker ? ` AND r.${quoteIdent(marker)} IS NOT DISTINCT FROM r.${before(marker)}` : "";
    return `CASE WHEN ${paired}${sameMarker} AND r.${col} >= r.${before(name)} THEN (r.${col} - r.${before(name)})::float8 END AS ${changeOf(name)}`;
  });
  const facts = columns.flatMap((name) => [
    `(${changeOf(name)} IS NOT NULL)::int AS ${fact(name, "n")}`,
    `${changeOf(name)} AS ${fact(name, "sum")}`,
    `${changeOf(name)} / span_ms AS ${fact(name, "ratio_sum")}`,
  ]);
  const noChanges = columns.flatMap((name) => [
    `0 AS ${fact(name, "n")}`,
    `NULL::float8 AS ${fact(name, "sum")}`,
    `NULL::float8 AS ${fact(name, "ratio_sum")}`,
  ]);
  // A gauge's level facts of the row alone; none on the connection's own rows.
  const gaugeFacts = gaugeFactsOfRow(gauges);
  const gaugeNames = gauges.flatMap((name) => LEVEL_FACTS.map((f) => fact(name, f)));
  const noGauges = noGaugeFacts(gauges);
  const inRange = (alias: string, from = range.from) => [
    `${alias}.connection_id = ANY($1::int[])`,
    `${alias}.collected_at >= ${from}`,
    `${alias}.collected_at < ${range.to}`,
  ];
  const previousSample = `coalesce((SELECT min(c0.prev_collected_at) FROM ${changesTable} c0 WHERE ${inRange("c0").join(" AND ")}), ${range.from})`;
  const entity = ["r.connection_id", ...entityPartitionSql(probe, "r")].join(", ");
  return `SELECT ${["connection_id", "collected_at", "entity", "intervals", "CASE WHEN intervals = 1 THEN span_ms END AS max_span_ms", ...facts, ...gaugeNames].join(", ")}
            FROM (SELECT ${[`r.connection_id, r.collected_at, ${entityKeySql(probe, "r")} AS entity, (coalesce(${paired}, false))::int AS intervals, ${span} AS span_ms`, ...changes, ...gaugeFacts].join(", ")}
                    FROM (SELECT r.*, ${lagged.join(", ")}
                            FROM ${raw} r
                           WHERE ${[...inRange("r", previousSample), ...where, ...excludedRowsSql(probe).map((w) => `r.${w}`)].join(" AND ")}
                          WINDOW w AS (PARTITION BY ${entity} ORDER BY r.collected_at)) r
                    LEFT JOIN ${changesTable} c ON c.connection_id = r.connection_id AND c.collected_at = r.collected_at AND ${inRange("c").join(" AND ")}
                   WHERE r.collected_at >= ${range.from}
                  OFFSET 0) x
          UNION ALL
          SELECT ${[`c.connection_id, c.collected_at, '${CONNECTION_ENTITY}'::text[], 1, ${spanOf("c")}`, ...noChanges, ...noGauges].join(", ")}
            FROM ${changesTable} c WHERE ${inRange("c").join(" AND ")}`;
}

/** entityIntervalFacts for gauges alone, without intervals: each visible row's level facts (no look-back, no join). */
function entityGaugeFacts(
  probe: ProbeDefinition,
  range: { from: string; to: string },
  where: readonly string[],
  gauges: readonly string[],
  onlySums: boolean,
): string {
  const conditions = [
    "r.connection_id = ANY($1::int[])",
    `r.collected_at >= ${range.from}`,
    `r.collected_at < ${range.to}`,
    ...where,
    ...excludedRowsSql(probe).map((w) => `r.${w}`),
  ];
  return `SELECT r.connection_id, r.collected_at, ${entityKeySql(probe, "r")} AS entity, 0 AS intervals, NULL::float8 AS max_span_ms, ${gaugeFactsOfRow(gauges, onlySums).join(", ")}
            FROM ${probeTable(probe.name)} r WHERE ${conditions.join(" AND ")}
          OFFSET 0`; // kept a subquery: one index range scan per range, not every row compared with every range
}

export const entityFactColumns = (columns: readonly string[], gauges: readonly string[] = []) => [
  "intervals",
  "max_span_ms",
  ...columns.flatMap((name) => ENTITY_FACTS.map((f) => fact(name, f))),
  ...gauges.flatMap((name) => LEVEL_FACTS.map((f) => fact(name, f))),
];

/** The entity cells' running facts of gauges over the hour's parts (ddl.ts PART_FACTS). */
export const partFactColumns = (gauges: readonly string[]) => gauges.flatMap((name) => PART_FACTS.map((f) => fact(name, f)));

/**
 * Aggregates of a cell's fact rows (each at its `collected_at`) into the running facts of its gauges: element i
 * counts and sums the values in the hour's parts 1..i, and holds the latest time of one (as entity-cell-facts.ts).
 */
export function runningPartFacts(gauges: readonly string[]): string[] {
  const part = `(floor(date_part('epoch', collected_at) / ${3600 / HOUR_PARTS})::bigint % ${HOUR_PARTS})`;
  const upTo = (i: number, aggregate: string) => `${aggregate} FILTER (WHERE ${part} < ${i})`;
  const parts = (each: (i: number) => string) => `ARRAY[${Array.from({ length: HOUR_PARTS }, (_, i) => each(i + 1)).join(", ")}]`;
  return gauges.flatMap((name) => [
    `${parts((i) => `coalesce(${upTo(i, `sum(${fact(name, "n")})`)}, 0)`)}::integer[] AS ${fact(name, "part_n")}`,
    `${parts((i) => `coalesce(${upTo(i, `sum(${fact(name, "sum")})`)}, 0)`)}::double precision[] AS ${fact(name, "part_sum")}`,
    `${parts((i) => upTo(i, `max(${fact(name, "last_at")})`))}::timestamptz[] AS ${fact(name, "part_last_at")}`,
  ]);
}

/**
 * Interval facts or cells merged into one: counts and sums added, the longest interval kept; gauges' extremes
 * kept and the latest value (unless `onlySums`: NULL, which saves building an array per row), with no count
 * where a cell has none (written before migration 25: incomplete).
 */
export function mergedEntityFacts(columns: readonly string[], gauges: readonly string[] = [], onlySums = false): string[] {
  return [
    "sum(intervals)::int AS intervals",
    "max(max_span_ms) AS max_span_ms",
    ...columns.flatMap((name) => [
      `sum(${fact(name, "n")})::int AS ${fact(name, "n")}`,
      ...(["sum", "ratio_sum"] as const).map((f) => `sum(${fact(name, f)}) AS ${fact(name, f)}`),
    ]),
    ...gauges.flatMap((name) => [
      `(CASE WHEN count(*) = count(${fact(name, "n")}) THEN sum(${fact(name, "n")}) END)::int AS ${fact(name, "n")}`,
      `sum(${fact(name, "sum")}) AS ${fact(name, "sum")}`,
      ...(onlySums
        ? (["min", "max", "last"] as const).map((f) => `NULL::float8 AS ${fact(name, f)}`)
        : [
            `min(${fact(name, "min")}) AS ${fact(name, "min")}`,
            `max(${fact(name, "max")}) AS ${fact(name, "max")}`,
            // The value at the latest time; an array's max, unlike an ordered array_agg, lets the datastore group by hashing.
            `(max(ARRAY[date_part('epoch', ${fact(name, "last_at")}), ${fact(name, "last")}]) FILTER (WHERE ${fact(name, "n")} > 0))[2] AS ${fact(name, "last")}`,
          ]),
      `max(${fact(name, "last_at")}) AS ${fact(name, "last_at")}`,
    ]),
  ];
}

/**
 * entityFactColumns of a raw range as it counts when subtracted from the cell around it: counts and sums negated;
 * the longest interval kept (an upper bound); a gauge's extremes and latest value unknown.
 */
function subtractedEntityFacts(columns: readonly string[], gauges: readonly string[]): string[] {
  return ["-r.intervals", "r.max_span_ms", ...subtractedFacts(columns, ENTITY_FACTS, ENTITY_FACTS), ...subtractedLevelFacts(gauges)];
}

/**
 * entityFactColumns of gauges alone as a cell read for some of its parts gives them (`l.part_from..l.part_to`,
 * 0..12 when whole): counts and sums the difference of two running facts (the first part's none: 0), the latest
 * time the later one where the parts hold a value, extremes and latest value unknown (NULL). A cell without
 * running facts (before migration 26) reads a NULL count: incomplete.
 */
function partCellFacts(gauges: readonly string[]): string[] {
  const whole = `(l.part_from = 0 AND l.part_to = ${HOUR_PARTS})`;
  const difference = (name: string, f: "part_n" | "part_sum") => `l.${fact(name, f)}[l.part_to] - coalesce(l.${fact(name, f)}[l.part_from], 0)`;
  return [
    `CASE WHEN ${whole} THEN l.intervals ELSE 0 END`,
    `CASE WHEN ${whole} THEN l.max_span_ms END`,
    ...gauges.flatMap((name) => [
      `CASE WHEN ${whole} THEN l.${fact(name, "n")} ELSE ${difference(name, "part_n")} END`,
      `CASE WHEN ${whole} THEN l.${fact(name, "sum")} ELSE ${difference(name, "part_sum")} END`,
      ...(["min", "max", "last"] as const).map((f) => `CASE WHEN ${whole} THEN l.${fact(name, f)} END`),
      `CASE WHEN ${whole} THEN l.${fact(name, "last_at")} WHEN ${difference(name, "part_n")} > 0 THEN l.${fact(name, "part_last_at")}[l.part_to] END`,
    ]),
  ];
}

/** The gauges' facts that are times. */
const lastTimes = (gauges: readonly string[]) => gauges.map((name) => fact(name, "last_at"));

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
  if (byParts && (q.columns.length > 0 || !q.onlySums)) throw new Error("cells are read by parts for gauges' counts and sums alone");
  const rows = await readRollupBuckets(db, {
    cellsTable: probeTable(entityCellsTableName(q.probe.name)),
    key: "entity",
    cellsWhere: cellWhere,
    params: [...filters.map(([, value]) => value), ...(pinned ? [pinned] : [])],
    facts: entityFactColumns(q.columns, gauges),
    cellFacts: byParts ? partCellFacts(gauges) : undefined,
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
  const conditions = [
    "r.connection_id = ANY($1::int[])",
    "r.collected_at >= $2::timestamptz",
    "r.collected_at <= $3::timestamptz",
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
               FROM ${probeTable(q.probe.name)} r WHERE ${conditions.join(" AND ")}${ofEntity ? ` WINDOW w AS (PARTITION BY ${["r.connection_id", ...entityPartitionSql(q.probe, "r")].join(", ")} ORDER BY r.collected_at)` : ""}) x
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
