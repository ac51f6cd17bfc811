/** The datastore DDL generated from the catalogue: one partitioned table per probe and its global config row. */
import { PROBES } from "./index.ts";
import { CUMULATIVE_KINDS, type ProbeColumn, type ProbeDefinition } from "./types.ts";

export const quoteIdent = (name: string) => `"${name.replace(/"/g, '""')}"`;
export const quoteLiteral = (text: string) => `'${text.replace(/'/g, "''")}'`;
export const probeTable = (probe: string) => `metrics.${quoteIdent(probe)}`;

export function createProbeTable(probe: ProbeDefinition): string[] {
  const keys = new Set(probe.keys);
  const columns = [
    `connection_id integer NOT NULL`,
    `collected_at timestamptz NOT NULL`,
    ...probe.columns.map((c) => `${quoteIdent(c.name)} ${c.type}${keys.has(c.name) ? " NOT NULL" : ""}`),
  ];
  const primaryKey = ["connection_id", "collected_at", ...probe.keys].map(quoteIdent).join(", ");
  return [
    `CREATE TABLE ${probeTable(probe.name)} (\n  ${columns.join(",\n  ")},\n  PRIMARY KEY (${primaryKey})\n) PARTITION BY RANGE (collected_at)`,
    `COMMENT ON TABLE ${probeTable(probe.name)} IS ${quoteLiteral(probe.description)}`,
    ...probe.columns.map((c) => `COMMENT ON COLUMN ${probeTable(probe.name)}.${quoteIdent(c.name)} IS ${quoteLiteral(c.description)}`),
  ];
}

/** Columns whose changes the sample writer records per sample (counters, time and session counters). */
export function cumulativeColumns(probe: ProbeDefinition): ProbeColumn[] {
  return probe.columns.filter((c) => CUMULATIVE_KINDS.has(c.kind));
}

/** Name of the table of per-sample changes of a probe's cumulative columns. */
export const changesTableName = (probe: string) => `${probe}__changes`;

/**
 * Per-sample facts that do not depend on a query's window: for each cumulative column, the sum of the valid
 * entity changes since the previous sample (null when no entity had a valid change).
 */
export function createChangesTable(probe: ProbeDefinition): string[] {
  const columns = cumulativeColumns(probe);
  if (columns.length === 0) return [];
  const table = probeTable(changesTableName(probe.name));
  return [
    `CREATE TABLE ${table} (
  connection_id integer NOT NULL,
  collected_at timestamptz NOT NULL,
  prev_collected_at timestamptz NOT NULL,
  ${[...columns.map((c) => `${quoteIdent(c.name)} double precision`), ...recordedGaugeFactColumns(probe)].join(",\n  ")},
  PRIMARY KEY (connection_id, collected_at)
) PARTITION BY RANGE (collected_at)`,
    `COMMENT ON TABLE ${table} IS ${quoteLiteral(`Per-sample sums of valid entity changes of ${probe.name}'s cumulative columns, written by the sample writer`)}`,
  ];
}

/** Name of the table of a multi-entity probe's irregular entity intervals (see createIrregularTable). */
export const irregularTableName = (probe: string) => `${probe}__irregular`;

/**
 * Per entity, the intervals between consecutive samples that are not plain counter growth: the entity appeared or
 * vanished, or a cumulative column was reset, went down, or changed between null and a value. Each row holds the
 * entity's valid changes of that interval (null where not valid). Every other interval's change of an entity is the
 * difference of its two samples, so a window's change is a difference of cumulative values plus these exceptions.
 */
export function createIrregularTable(probe: ProbeDefinition): string[] {
  const columns = cumulativeColumns(probe);
  if (columns.length === 0 || probe.keys.length === 0) return [];
  const table = probeTable(irregularTableName(probe.name));
  const keyTypes = new Map(probe.columns.map((c) => [c.name, c.type]));
  return [
    `CREATE TABLE ${table} (
  connection_id integer NOT NULL,
  collected_at timestamptz NOT NULL,
  ${probe.keys.map((k) => `${quoteIdent(k)} ${keyTypes.get(k)} NOT NULL`).join(",\n  ")},
  ${columns.map((c) => `${quoteIdent(c.name)} double precision`).join(",\n  ")},
  PRIMARY KEY (${["connection_id", "collected_at", ...probe.keys].map(quoteIdent).join(", ")})
) PARTITION BY RANGE (collected_at)`,
    `COMMENT ON TABLE ${table} IS ${quoteLiteral(`Entity intervals of ${probe.name} that are not plain counter growth, with their valid changes; written by the sample writer`)}`,
  ];
}

const NUMERIC_TYPES = /^(smallint|integer|bigint|double precision|real|numeric)/;

/** Columns a query may chart as levels (raw values): numeric, not entity keys, dimensions or markers. */
export function levelColumns(probe: ProbeDefinition): ProbeColumn[] {
  return probe.columns.filter((c) => c.kind !== "dimension" && c.kind !== "marker" && NUMERIC_TYPES.test(c.type) && !probe.keys.includes(c.name));
}

/** Name of the table of a probe's time rollups of level columns (see createLevelsTable). */
export const levelsTableName = (probe: string) => `${probe}__levels`;

/** The six facts a rollup cell keeps per level column, and their column names (`<column>:<fact>`). */
export const LEVEL_FACTS = ["n", "sum", "min", "max", "last", "last_at"] as const;
export type LevelFact = (typeof LEVEL_FACTS)[number];
/** A rollup table's column of one fact of one source column. */
export const factColumn = (column: string, fact: LevelFact | ChangeFact | PartFact) => quoteIdent(`${column}:${fact}`);

/**
 * Time rollups of a probe's level columns, per connection, in cells of 5 minutes and of 1 hour: the samples
 * in the cell, and per column the count, sum, minimum and maximum of the non-null values of every row in
 * the cell's samples, and the last value (that of the latest sample with one, its last entity in key order)
 * with that sample's time. A bucket made of whole cells is answered from them instead of raw rows.
 */
export function createLevelsTable(probe: ProbeDefinition): string[] {
  const columns = levelColumns(probe);
  if (columns.length === 0) return [];
  const facts = columns.flatMap((c) => [
    `${factColumn(c.name, "n")} integer NOT NULL`,
    ...(["sum", "min", "max", "last"] as const).map((f) => `${factColumn(c.name, f)} double precision`),
    `${factColumn(c.name, "last_at")} timestamptz`,
  ]);
  return createCellsTable(levelsTableName(probe.name), ["samples integer NOT NULL", ...facts], `${probe.name}'s level columns`);
}

/** A table of 5-minute and hourly cells per connection, partitioned by week like the samples. */
function createCellsTable(name: string, columns: readonly string[], of: string): string[] {
  const table = probeTable(name);
  return [
    `CREATE TABLE ${table} (
  connection_id integer NOT NULL,
  level_seconds integer NOT NULL CHECK (level_seconds IN (300, 3600)),
  cell_start timestamptz NOT NULL,
  ${columns.join(",\n  ")},
  PRIMARY KEY (connection_id, level_seconds, cell_start)
) PARTITION BY RANGE (cell_start)`,
    `COMMENT ON TABLE ${table} IS ${quoteLiteral(`Time rollups (5 min, 1 h) of ${of} per connection, written by the sample writer`)}`,
  ];
}

/** Name of the table of a probe's time rollups of its per-sample changes (see createChangeCellsTable). */
export const changeCellsTableName = (probe: string) => `${probe}__change_cells`;

/** The facts a change cell keeps per cumulative column, and their column names (`<column>:<fact>`). */
export const CHANGE_FACTS = ["n", "sum", "ratio_sum", "ratio_min", "ratio_max", "ratio_last", "last_to"] as const;
export type ChangeFact = (typeof CHANGE_FACTS)[number];

/**
 * Time rollups of the per-sample changes (`__changes`), per connection, in cells of 5 minutes and 1 hour by
 * the interval's end: how many intervals end in the cell, the longest and the shortest, and per cumulative column how many
 * have a valid change, their sum, and the sum, minimum, maximum and last of change / interval length (ms).
 */
export function createChangeCellsTable(probe: ProbeDefinition): string[] {
  const columns = cumulativeColumns(probe);
  if (columns.length === 0) return [];
  const facts = columns.flatMap((c) => [
    `${factColumn(c.name, "n")} integer NOT NULL`,
    ...(["sum", "ratio_sum", "ratio_min", "ratio_max", "ratio_last"] as const).map((f) => `${factColumn(c.name, f)} double precision`),
    `${factColumn(c.name, "last_to")} timestamptz`,
  ]);
  // The shortest interval since migration 32 (nullable: cells written before have none).
  return createCellsTable(
    changeCellsTableName(probe.name),
    ["intervals integer NOT NULL", "max_span_ms double precision NOT NULL", "min_span_ms double precision", ...facts],
    `${probe.name}'s per-sample changes`,
  );
}

/** Name of the table of a probe's hourly rollups of each entity's changes (see createEntityCellsTable). */
export const entityCellsTableName = (probe: string) => `${probe}__entity_cells`;

/** A probe's recent samples, as rows (migration 40; probes/history-ddl.ts). */
export const rawTableName = (probe: string) => `${probe}__raw`;
/** A probe's closed hours of samples, compressed (probes/history-ddl.ts). */
export const compressedTableName = (probe: string) => `${probe}__compressed`;
export const isCompressedTableName = (table: string) => table.endsWith("__compressed");

/** Every table the sample writer may fill for a probe, under `metrics`: its raw rows and those derived from them (a probe has only some). */
export const writtenTables = (probe: string) => [
  rawTableName(probe),
  changesTableName(probe),
  irregularTableName(probe),
  levelsTableName(probe),
  changeCellsTableName(probe),
  entityCellsTableName(probe),
];

/** The facts an entity cell keeps per cumulative column: fewer than a change cell's, since there is one cell per entity. */
export const ENTITY_FACTS = ["n", "sum", "ratio_sum"] as const;
export type EntityFact = (typeof ENTITY_FACTS)[number];

/** The other numeric columns (gauges such as numbackends or n_dead_tup): an entity cell keeps their level facts. */
export function entityGaugeColumns(probe: ProbeDefinition): ProbeColumn[] {
  return levelColumns(probe).filter((c) => !CUMULATIVE_KINDS.has(c.kind));
}

/** Column types whose sums are exact in any order (whole numbers well below 2^53). */
export const INTEGER_TYPES = new Set(["smallint", "integer", "bigint"]);

/**
 * The gauges of a multi-entity probe with recorded changes whose count and sum of values per sample the sample
 * writer records with the changes (`<column>:n`, `<column>:sum`; since migration 33, null before): integer gauges,
 * so the sums are the pipeline's whatever their order. A summed gauge over narrow buckets then reads a row a
 * sample instead of a row per entity and sample (queries/query.ts).
 */
export function recordedGaugeColumns(probe: ProbeDefinition): ProbeColumn[] {
  if (probe.keys.length === 0 || cumulativeColumns(probe).length === 0) return [];
  return entityGaugeColumns(probe).filter((c) => INTEGER_TYPES.has(c.type));
}

/** The changes' columns of recordedGaugeColumns, nullable: rows written before migration 33 have none. */
export const recordedGaugeFactColumns = (probe: ProbeDefinition): string[] =>
  recordedGaugeColumns(probe).flatMap((c) => [`${factColumn(c.name, "n")} integer`, `${factColumn(c.name, "sum")} double precision`]);

/**
 * The entity cells' level facts of gauges (as the time rollups keep them, LEVEL_FACTS), nullable: cells
 * written before migration 25 have none, and a reader takes a cell without them as incomplete.
 */
export function entityGaugeLevelFactColumns(probe: ProbeDefinition): string[] {
  return entityGaugeColumns(probe).flatMap((c) =>
    LEVEL_FACTS.map((f) => `${factColumn(c.name, f)} ${f === "n" ? "integer" : f === "last_at" ? "timestamptz" : "double precision"}`),
  );
}

/** An entity cell's span, an hour (its `level_seconds` is 3600). */
export const HOUR_MS = 3_600_000;

/** The 5-minute parts of an hour, which the entity cells keep running facts of (PART_FACTS). */
export const HOUR_PARTS = 12;

/**
 * Per gauge, facts over the hour's twelve 5-minute parts. Running facts, element i (1-based) over parts 1..i: the
 * count and sum of the entity's values, the latest time of one (null while there is none) and the value then. So
 * any run of parts reads its count and sum as the difference of two elements, and its latest value as the later
 * element's where the count grew. Extremes do not subtract: `part_min` and `part_max` hold each part's own (null
 * where it has no value), and a run of parts reads the extreme of its elements. A bucket edge that cuts an hour
 * then leaves at most a 5-minute part to read raw, whatever the aggregation.
 */
export const PART_FACTS = ["part_n", "part_sum", "part_last_at", "part_last", "part_min", "part_max"] as const;
export type PartFact = (typeof PART_FACTS)[number];
export const PART_FACT_TYPES: Record<PartFact, string> = {
  part_n: "integer[]",
  part_sum: "double precision[]",
  part_last_at: "timestamptz[]",
  part_last: "double precision[]",
  part_min: "double precision[]",
  part_max: "double precision[]",
};
/** The part facts added by migration 47: null in cells written before, which then have no extremes or latest value by parts. */
export const PART_EXTREME_FACTS = ["part_last", "part_min", "part_max"] as const satisfies readonly PartFact[];

/** The gauges whose facts over the hour's parts the entity cells keep (ProbeDefinition.gaugeParts). */
export const partGaugeColumns = (probe: ProbeDefinition): ProbeColumn[] => (probe.gaugeParts === false ? [] : entityGaugeColumns(probe));

/** The entity cells' PART_FACTS columns, nullable: cells written before migration 26 (or 47) have none (incomplete). */
export function entityGaugePartFactColumns(probe: ProbeDefinition): string[] {
  return partGaugeColumns(probe).flatMap((c) => PART_FACTS.map((f) => `${factColumn(c.name, f)} ${PART_FACT_TYPES[f]}`));
}

/** Every gauge fact column of the entity cells. */
export const entityGaugeFactColumns = (probe: ProbeDefinition): string[] => [...entityGaugeLevelFactColumns(probe), ...entityGaugePartFactColumns(probe)];

/**
 * Hourly rollups of each entity's changes (each database, each table), for per-entity series over long
 * windows: per connection, hour (by the interval's end) and entity (its key values as text), how many of the
 * connection's intervals end in the hour with the entity in both samples and the longest of them, and per
 * cumulative column how many have a valid change, their sum and the sum of change / interval length (ms).
 * Every entity with a row in the hour has a cell, even one with no such interval; the connection's own
 * intervals have a cell under the empty entity `{}`. Gauges have the level facts of the entity's values in the
 * hour (entityGaugeFactColumns).
 */
export function createEntityCellsTable(probe: ProbeDefinition): string[] {
  const columns = cumulativeColumns(probe);
  if (columns.length === 0 || probe.keys.length === 0) return [];
  const table = probeTable(entityCellsTableName(probe.name));
  const facts = columns.flatMap((c) => [
    `${factColumn(c.name, "n")} integer NOT NULL`,
    `${factColumn(c.name, "sum")} double precision`,
    `${factColumn(c.name, "ratio_sum")} double precision`,
  ]);
  return [
    `CREATE TABLE ${table} (
  connection_id integer NOT NULL,
  level_seconds integer NOT NULL CHECK (level_seconds = 3600),
  cell_start timestamptz NOT NULL,
  entity text[] NOT NULL,
  intervals integer NOT NULL,
  max_span_ms double precision,
  ${[...facts, ...entityGaugeFactColumns(probe)].join(",\n  ")},
  PRIMARY KEY (connection_id, level_seconds, cell_start, entity)
) PARTITION BY RANGE (cell_start)`,
    `COMMENT ON TABLE ${table} IS ${quoteLiteral(`Hourly rollups of ${probe.name}'s changes per entity (${probe.keys.join(", ")}), written by the sample writer`)}`,
  ];
}

export function seedGlobalConfig(probe: ProbeDefinition): string {
  return `INSERT INTO probe_configs (probe_name, scope, collection_interval_seconds, retention_days)
    VALUES (${quoteLiteral(probe.name)}, 'global', ${probe.defaultIntervalSeconds}, ${probe.defaultRetentionDays})
    ON CONFLICT DO NOTHING`;
}

/** Every statement that creates the catalogue's tables as they stand today. */
export function catalogueStatements(probes: readonly ProbeDefinition[] = PROBES): string[] {
  return probes.flatMap((p) => [...createProbeTable(p), seedGlobalConfig(p)]);
}
