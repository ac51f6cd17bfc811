/** Ingest-time hourly rollups of each entity: an appending batch's facts added, or the hours a batch touched recomputed from raw rows. */
import type { Queryable } from "../../drivers/types.ts";
import { entityFactColumns, entityIntervalFacts, mergedEntityFacts, partFactColumns, hourPartFacts } from "./entity-cells.ts";
import { timeOfMs, valuesLiteral } from "../datastore/array-literal.ts";
import type { EntityCellFacts } from "../metrics/entity-cell-facts.ts";
import {
  ENTITY_FACTS,
  HOUR_MS as HOUR,
  LEVEL_FACTS,
  PART_FACTS,
  PART_FACT_TYPES,
  type PartFact,
  cumulativeColumns,
  entityCellsTableName,
  entityGaugeColumns,
  factColumn,
  partGaugeColumns,
  probeTable,
  quoteIdent,
} from "../probes/ddl.ts";
import type { ProbeDefinition } from "../probes/types.ts";
import { ensurePartitions, weeksOf } from "./partitions.ts";

/** Ensures the weekly partitions of the hours from..to (epoch ms; weeks start on an hour, so an hour lies in its start's week). */
async function ensureHours(tx: Queryable, table: string, hours: Iterable<number>, known?: Set<string>): Promise<void> {
  await ensurePartitions(tx, table, weeksOf(table, hours), known);
}

/**
 * `ends`: the end times (epoch ms) of the intervals whose changes were just recorded, and the batch's sample
 * times. Whole hours are recomputed from raw rows, so cells stay exact whatever order samples arrive in; every
 * entity with a row in an hour has a cell there, so a recomputed hour overwrites each of its cells.
 */
export async function recordEntityCells(
  tx: Queryable,
  probe: ProbeDefinition,
  connectionId: number,
  ends: readonly number[],
  known?: Set<string>,
): Promise<void> {
  if (ends.length === 0) return;
  const from = Math.floor(ends.reduce((a, b) => Math.min(a, b)) / HOUR) * HOUR;
  const to = Math.floor(ends.reduce((a, b) => Math.max(a, b)) / HOUR) * HOUR + HOUR;
  await writeCellsOfRange(tx, probe, connectionId, from, to, "replace", known);
}

/** The hours from..to (epoch ms, `to` excluded). */
const hoursOf = (from: number, to: number) => {
  const first = Math.floor(from / HOUR) * HOUR;
  return Array.from({ length: Math.ceil((to - first) / HOUR) }, (_, i) => first + i * HOUR);
};

/**
 * An INSERT of the cells of the intervals (and gauge values) of connection `$1[1]` at `$2 <= collected_at < $3`,
 * one per hour and entity, each hour's facts those of the range alone; the caller says what a conflict does.
 */
function cellsOfRange(probe: ProbeDefinition, table: string, columns: readonly string[], gauges: readonly string[]): string {
  const partGauges = partGaugeNames(probe);
  const factColumns = [...entityFactColumns(columns, gauges), ...partFactColumns(partGauges)];
  return `INSERT INTO ${probeTable(table)} AS t (connection_id, level_seconds, cell_start, entity, ${factColumns.join(", ")})
     SELECT connection_id, 3600, to_timestamp(floor(extract(epoch FROM collected_at) / 3600) * 3600) AS hour, entity, ${[...mergedEntityFacts(columns, gauges), ...hourPartFacts(partGauges)].join(", ")}
       FROM (${entityIntervalFacts(probe, columns, { from: "$2::timestamptz", to: "$3::timestamptz" }, [], gauges)}) facts
      GROUP BY connection_id, hour, entity`;
}

/**
 * Adds `facts` (entity-cell-facts.ts) to the cells: for a batch that only appends to the connection's history,
 * whose intervals no cell counts yet, of several samples (an import's; the writer has their rows in hand). Cheaper
 * than recomputing whole hours from raw rows. One statement, a column's values as one array.
 */
export async function addEntityCells(
  tx: Queryable,
  probe: ProbeDefinition,
  connectionId: number,
  facts: readonly EntityCellFacts[],
  known?: Set<string>,
): Promise<void> {
  const columns = cumulativeColumns(probe).map((c) => c.name);
  if (columns.length === 0 || probe.keys.length === 0 || facts.length === 0) return;
  const gauges = entityGaugeColumns(probe).map((c) => c.name);
  const partGauges = partGaugeNames(probe);
  const table = entityCellsTableName(probe.name);
  await ensureHours(tx, table, new Set(facts.map((f) => f.hour)), known);
  // An entity travels as one text array per key (unnest would flatten a two-dimensional array); `{}` as `own`.
  // Times travel as epoch milliseconds, turned into timestamps by the statement: spelling tens of thousands of
  // instants as ISO strings, quoted inside quoted arrays, was a large share of the collector's CPU.
  const arrays: Array<[string, unknown[]]> = [
    ["double precision", facts.map((f) => f.hour)],
    ["boolean", facts.map((f) => f.entity.length === 0)],
    ...probe.keys.map((_, k): [string, unknown[]] => ["text", facts.map((f) => f.entity[k] ?? null)]),
    ["integer", facts.map((f) => f.intervals)],
    ["double precision", facts.map((f) => f.maxSpanMs)],
    ...columns.flatMap(
      (_, c): Array<[string, unknown[]]> => [
        ["integer", facts.map((f) => f.columns[c].n)],
        ["double precision", facts.map((f) => f.columns[c].sum)],
        ["double precision", facts.map((f) => f.columns[c].ratioSum)],
      ],
    ),
    ...gauges.flatMap(
      (_, g): Array<[string, unknown[]]> => [
        ["integer", facts.map((f) => f.gauges[g].n)],
        ...(["sum", "min", "max", "last"] as const).map((x): [string, unknown[]] => ["double precision", facts.map((f) => f.gauges[g][x])]),
        ["double precision", facts.map((f) => f.gauges[g].lastAt)],
      ],
    ),
    // Arrays travel as their text (unnest would flatten an array of arrays).
    ...partGauges.flatMap((name): Array<[string, unknown[]]> => {
      const g = gauges.indexOf(name);
      return PART_FACTS.map((part) => ["text", facts.map((f) => valuesLiteral(f.gauges[g][PART_FACT_KEYS[part]]))]);
    }),
  ];
  const factNames = [...entityFactColumns(columns, gauges), ...partFactColumns(partGauges)];
  const names = ["cell_start", "own", ...probe.keys.map((_, k) => `k${k}`), ...factNames];
  const keys = probe.keys.map((_, k) => `k${k}`).join(", ");
  const updates = addedFactsSql(columns, gauges, partGauges);
  const lastAts = new Set(gauges.map((name) => factColumn(name, "last_at")));
  const selected = [
    ...entityFactColumns(columns, gauges).map((f) => (lastAts.has(f) ? timeOfMs(f) : f)),
    ...partGauges.flatMap((name) =>
      PART_FACTS.map((f) => {
        const c = factColumn(name, f);
        return f === "part_last_at"
          ? `ARRAY(SELECT ${timeOfMs("ms")} FROM unnest(${c}::float8[]) WITH ORDINALITY AS u(ms, i) ORDER BY i)`
          : `${c}::${PART_FACT_TYPES[f]}`;
      }),
    ),
  ];
  await tx.query(
    `INSERT INTO ${probeTable(table)} AS t (connection_id, level_seconds, cell_start, entity, ${factNames.join(", ")})
     SELECT $1::integer, 3600, ${timeOfMs("cell_start")}, CASE WHEN own THEN '{}'::text[] ELSE ARRAY[${keys}] END, ${selected.join(", ")}
       FROM unnest(${arrays.map(([type], i) => `$${i + 2}::${type}[]`).join(", ")}) AS f(${names.map((n) => (n.startsWith('"') ? n : quoteIdent(n))).join(", ")})
     ON CONFLICT (connection_id, level_seconds, cell_start, entity) DO UPDATE SET ${updates.join(", ")}`,
    [connectionId, ...arrays.map(([, values]) => valuesLiteral(values))],
  );
}

/**
 * addEntityCells of the intervals ending in `from..to` (epoch ms, both included), computed by the datastore from
 * raw rows as for recomputed hours (the intervals' changes must be recorded first): for a collector's one-sample
 * batch, whose rows the writer does not read back (record-sample-changes.ts).
 */
export function addEntityCellsOfRange(
  tx: Queryable,
  probe: ProbeDefinition,
  connectionId: number,
  from: number,
  to: number,
  known?: Set<string>,
): Promise<void> {
  return writeCellsOfRange(tx, probe, connectionId, from, to + 1, "add", known);
}

/**
 * The cells of the range from..to (epoch ms, `to` excluded) of a connection, computed from raw rows; a cell
 * already stored is replaced by them (its hour recomputed whole) or has them added (its intervals counted before).
 */
async function writeCellsOfRange(
  tx: Queryable,
  probe: ProbeDefinition,
  connectionId: number,
  from: number,
  to: number,
  stored: "replace" | "add",
  known?: Set<string>,
): Promise<void> {
  const columns = cumulativeColumns(probe).map((c) => c.name);
  if (columns.length === 0 || probe.keys.length === 0) return;
  const gauges = entityGaugeColumns(probe).map((c) => c.name);
  const partGauges = partGaugeNames(probe);
  const table = entityCellsTableName(probe.name);
  await ensureHours(tx, table, hoursOf(from, to), known);
  const updates =
    stored === "add"
      ? addedFactsSql(columns, gauges, partGauges)
      : [...entityFactColumns(columns, gauges), ...partFactColumns(partGauges)].map((f) => `${f} = excluded.${f}`);
  await tx.query(
    `${cellsOfRange(probe, table, columns, gauges)} ON CONFLICT (connection_id, level_seconds, cell_start, entity) DO UPDATE SET ${updates.join(", ")}`,
    [[connectionId], new Date(from).toISOString(), new Date(to).toISOString()],
  );
}

/** The ON CONFLICT updates that add a cell's new facts to the stored ones. */
function addedFactsSql(columns: readonly string[], gauges: readonly string[], partGauges: readonly string[]): string[] {
  const added = (f: string) => `${f} = CASE WHEN t.${f} IS NULL THEN excluded.${f} WHEN excluded.${f} IS NULL THEN t.${f} ELSE t.${f} + excluded.${f} END`;
  return [
    "intervals = t.intervals + excluded.intervals",
    "max_span_ms = greatest(t.max_span_ms, excluded.max_span_ms)",
    ...columns.flatMap((name) =>
      ENTITY_FACTS.map((f) => (f === "n" ? `${factColumn(name, f)} = t.${factColumn(name, f)} + excluded.${factColumn(name, f)}` : added(factColumn(name, f)))),
    ),
    // A gauge's count stays null in a cell written before its facts were kept (migration 25): incomplete.
    ...gauges.flatMap((name) => {
      const [n, sum, min, max, last, lastAt] = LEVEL_FACTS.map((f) => factColumn(name, f));
      return [
        `${n} = t.${n} + excluded.${n}`,
        added(sum),
        `${min} = least(t.${min}, excluded.${min})`,
        `${max} = greatest(t.${max}, excluded.${max})`,
        `${last} = CASE WHEN t.${lastAt} IS NULL OR excluded.${lastAt} > t.${lastAt} THEN coalesce(excluded.${last}, t.${last}) ELSE t.${last} END`,
        `${lastAt} = greatest(t.${lastAt}, excluded.${lastAt})`,
      ];
    }),
    // Facts over parts merge part by part: running counts and sums add, the latest time is the later one and the
    // value the one then, extremes the extremes; none in a cell written before migration 26 (or 47, for the last three).
    ...partGauges.flatMap((name) => {
      const c = (f: PartFact) => factColumn(name, f);
      // `a` the stored element, `b` the added one, and with `at`, their latest times.
      const partByPart = (f: PartFact, merged: string, at?: PartFact) => {
        const arrays = [`t.${c(f)}`, `excluded.${c(f)}`, ...(at ? [`t.${c(at)}`, `excluded.${c(at)}`] : [])];
        const names = ["a", "b", ...(at ? ["a_at", "b_at"] : []), "i"];
        return `${c(f)} = CASE WHEN t.${c(f)} IS NOT NULL THEN ARRAY(SELECT ${merged} FROM unnest(${arrays.join(", ")}) WITH ORDINALITY AS u(${names.join(", ")}) ORDER BY i) END`;
      };
      return [
        partByPart("part_n", "a + b"),
        partByPart("part_sum", "a + b"),
        partByPart("part_last_at", "greatest(a, b)"),
        partByPart("part_last", "CASE WHEN b_at IS NOT NULL AND (a_at IS NULL OR b_at > a_at) THEN b ELSE a END", "part_last_at"),
        partByPart("part_min", "least(a, b)"),
        partByPart("part_max", "greatest(a, b)"),
      ];
    }),
  ];
}

const partGaugeNames = (probe: ProbeDefinition) => partGaugeColumns(probe).map((c) => c.name);

/** Where entity-cell-facts.ts keeps each fact over parts. */
const PART_FACT_KEYS = {
  part_n: "partN",
  part_sum: "partSum",
  part_last_at: "partLastAt",
  part_last: "partLast",
  part_min: "partMin",
  part_max: "partMax",
} as const satisfies Record<PartFact, string>;
