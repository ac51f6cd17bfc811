import { ENTITY_FACTS, HOUR_PARTS, LEVEL_FACTS, PART_FACTS, changesTableName, factColumn as fact, probeTable, quoteIdent } from "../probes/ddl.ts";
import type { ProbeDefinition } from "../probes/types.ts";
import { spanMsSql } from "./read-changes.ts";
import { subtractedLevelFacts } from "./level-cells.ts";
import { subtractedFacts } from "./read-rollup-cells.ts";
import { excludedRowsSql } from "./read-raw-rows.ts";
import { samplesSql } from "../probes/history-ddl.ts";

/** The entity's key values as text, in the probe's key order. */
export const entityKeySql = (probe: ProbeDefinition, alias: string) => `ARRAY[${probe.keys.map((k) => `${alias}.${quoteIdent(k)}::text`).join(", ")}]`;

/**
 * An entity's key columns for a window's PARTITION BY: text keys in byte order, since a partition needs only
 * equality and the locale's collation made the sort of a bucket edge's rows a third of a week's read.
 */
export const entityPartitionSql = (probe: ProbeDefinition, alias: string) =>
  probe.keys.map((k) => `${alias}.${quoteIdent(k)}${probe.columns.find((c) => c.name === k)?.type === "text" ? ' COLLATE "C"' : ""}`);

/** The entity of the rows that carry the connection's own intervals, beside its entities' (no probe key is empty). */
export const CONNECTION_ENTITY = "{}";

/** Gauges' level facts of a row without values (the connection's own). */
export const noGaugeFacts = (gauges: readonly string[]) =>
  gauges.flatMap((name) => [
    `0 AS ${fact(name, "n")}`,
    ...(["sum", "min", "max", "last"] as const).map((f) => `NULL::float8 AS ${fact(name, f)}`),
    `NULL::timestamptz AS ${fact(name, "last_at")}`,
  ]);

/** A gauge's level facts of one raw row `r` alone; with `onlySums`, no extremes or latest value (NULL). */
export const gaugeFactsOfRow = (gauges: readonly string[], onlySums = false) =>
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
                            FROM ${samplesSql(probe, previousSample, range.to, [...columns, ...markers, ...gauges])} r
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
export function entityGaugeFacts(
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
            FROM ${samplesSql(probe, range.from, range.to, gauges)} r WHERE ${conditions.join(" AND ")}
          OFFSET 0`; // kept a subquery: one index range scan per range, not every row compared with every range
}

export const entityFactColumns = (columns: readonly string[], gauges: readonly string[] = []) => [
  "intervals",
  "max_span_ms",
  ...columns.flatMap((name) => ENTITY_FACTS.map((f) => fact(name, f))),
  ...gauges.flatMap((name) => LEVEL_FACTS.map((f) => fact(name, f))),
];

/** The entity cells' facts of gauges over the hour's parts (ddl.ts PART_FACTS). */
export const partFactColumns = (gauges: readonly string[]) => gauges.flatMap((name) => PART_FACTS.map((f) => fact(name, f)));

/**
 * Aggregates of a cell's fact rows (each at its `collected_at`) into the facts of its gauges over the hour's parts
 * (ddl.ts PART_FACTS, in that order): element i counts and sums the values in parts 1..i and holds the latest
 * time of one and its value; the extremes are part i's own (as entity-cell-facts.ts).
 */
export function hourPartFacts(gauges: readonly string[]): string[] {
  const part = `(floor(date_part('epoch', collected_at) / ${3600 / HOUR_PARTS})::bigint % ${HOUR_PARTS})`;
  const upTo = (i: number, aggregate: string) => `${aggregate} FILTER (WHERE ${part} < ${i})`;
  const inPart = (i: number, aggregate: string) => `${aggregate} FILTER (WHERE ${part} = ${i - 1})`;
  const parts = (each: (i: number) => string) => `ARRAY[${Array.from({ length: HOUR_PARTS }, (_, i) => each(i + 1)).join(", ")}]`;
  return gauges.flatMap((name) => {
    const latest = `max(ARRAY[date_part('epoch', ${fact(name, "last_at")}), ${fact(name, "last")}])`;
    return [
      `${parts((i) => `coalesce(${upTo(i, `sum(${fact(name, "n")})`)}, 0)`)}::integer[] AS ${fact(name, "part_n")}`,
      `${parts((i) => `coalesce(${upTo(i, `sum(${fact(name, "sum")})`)}, 0)`)}::double precision[] AS ${fact(name, "part_sum")}`,
      `${parts((i) => upTo(i, `max(${fact(name, "last_at")})`))}::timestamptz[] AS ${fact(name, "part_last_at")}`,
      `${parts((i) => `(${latest} FILTER (WHERE ${part} < ${i} AND ${fact(name, "n")} > 0))[2]`)}::double precision[] AS ${fact(name, "part_last")}`,
      `${parts((i) => inPart(i, `min(${fact(name, "min")})`))}::double precision[] AS ${fact(name, "part_min")}`,
      `${parts((i) => inPart(i, `max(${fact(name, "max")})`))}::double precision[] AS ${fact(name, "part_max")}`,
    ];
  });
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
export function subtractedEntityFacts(columns: readonly string[], gauges: readonly string[]): string[] {
  return ["-r.intervals", "r.max_span_ms", ...subtractedFacts(columns, ENTITY_FACTS, ENTITY_FACTS), ...subtractedLevelFacts(gauges)];
}

/**
 * entityFactColumns of gauges alone as a cell read for some of its parts gives them (`l.part_from..l.part_to`,
 * 0..12 when whole): counts and sums the difference of two running facts (the first part's none: 0), the latest
 * time and value the later one's where the parts hold a value, the extremes those of the parts' own (unless
 * `onlySums`: unknown, NULL). A cell without the facts it needs (before migration 26; for extremes and latest
 * values, before migration 47) reads a NULL count: incomplete.
 */
export function partCellFacts(gauges: readonly string[], onlySums: boolean): string[] {
  const whole = `(l.part_from = 0 AND l.part_to = ${HOUR_PARTS})`;
  const difference = (name: string, f: "part_n" | "part_sum") => `l.${fact(name, f)}[l.part_to] - coalesce(l.${fact(name, f)}[l.part_from], 0)`;
  const ofParts = (name: string, f: "part_min" | "part_max", extreme: "min" | "max") =>
    `(SELECT ${extreme}(v) FROM unnest(l.${fact(name, f)}[l.part_from + 1:l.part_to]) AS v)`;
  return [
    `CASE WHEN ${whole} THEN l.intervals ELSE 0 END`,
    `CASE WHEN ${whole} THEN l.max_span_ms END`,
    ...gauges.flatMap((name) => {
      // The extremes and latest value by parts are written together (migration 47): one of them tells.
      const count = onlySums ? difference(name, "part_n") : `CASE WHEN l.${fact(name, "part_min")} IS NOT NULL THEN ${difference(name, "part_n")} END`;
      return [
        `CASE WHEN ${whole} THEN l.${fact(name, "n")} ELSE ${count} END`,
        `CASE WHEN ${whole} THEN l.${fact(name, "sum")} ELSE ${difference(name, "part_sum")} END`,
        ...(onlySums
          ? (["min", "max", "last"] as const).map((f) => `CASE WHEN ${whole} THEN l.${fact(name, f)} END`)
          : [
              `CASE WHEN ${whole} THEN l.${fact(name, "min")} ELSE ${ofParts(name, "part_min", "min")} END`,
              `CASE WHEN ${whole} THEN l.${fact(name, "max")} ELSE ${ofParts(name, "part_max", "max")} END`,
              `CASE WHEN ${whole} THEN l.${fact(name, "last")} WHEN ${difference(name, "part_n")} > 0 THEN l.${fact(name, "part_last")}[l.part_to] END`,
            ]),
        `CASE WHEN ${whole} THEN l.${fact(name, "last_at")} WHEN ${difference(name, "part_n")} > 0 THEN l.${fact(name, "part_last_at")}[l.part_to] END`,
      ];
    }),
  ];
}

/** The gauges' facts that are times. */
export const lastTimes = (gauges: readonly string[]) => gauges.map((name) => fact(name, "last_at"));
