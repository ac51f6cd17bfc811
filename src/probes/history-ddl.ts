/**
 * A probe's samples since migration 40: recent samples as rows in `<probe>__raw`, closed days compressed into
 * `<probe>__compressed` (one row per connection, entity and day, values as arrays), and under the probe's own
 * name a view over both that returns the rows and columns the table had, for anyone who queries it directly.
 */
import { compressedTableName, probeTable, quoteIdent, quoteLiteral, rawTableName } from "./ddl.ts";
import type { ProbeDefinition } from "./types.ts";

/** Where the sample writer inserts; readers go through samplesSql. */
export const rawTable = (probe: string) => probeTable(rawTableName(probe));
export const compressedTable = (probe: string) => probeTable(compressedTableName(probe));

/** A compressed chunk holds one UTC day of one entity's samples. */
export const CHUNK_MS = 86_400_000;

/** The probe's columns stored as arrays in a compressed row: all but the entity keys, which identify the row. */
export const arrayColumns = (probe: ProbeDefinition) => probe.columns.filter((c) => !probe.keys.includes(c.name));

const keyColumns = (probe: ProbeDefinition) => probe.keys.map((k) => probe.columns.find((c) => c.name === k)!);

/**
 * One row per connection, day and entity: sample times as milliseconds after the day's start (`offsets`, in
 * time order) and each other column's values in the same order, so the row's values TOAST-compress together.
 */
export function createCompressedTable(probe: ProbeDefinition): string[] {
  const table = compressedTable(probe.name);
  const columns = [
    "connection_id integer NOT NULL",
    "chunk_start timestamptz NOT NULL",
    ...keyColumns(probe).map((c) => `${quoteIdent(c.name)} ${c.type} NOT NULL`),
    "first_at timestamptz NOT NULL",
    "last_at timestamptz NOT NULL",
    "samples integer NOT NULL",
    "offsets integer[] NOT NULL",
    ...arrayColumns(probe).map((c) => `${quoteIdent(c.name)} ${c.type}[] NOT NULL`),
  ];
  const primaryKey = ["connection_id", "chunk_start", ...probe.keys].map(quoteIdent).join(", ");
  return [
    `CREATE TABLE ${table} (\n  ${columns.join(",\n  ")},\n  PRIMARY KEY (${primaryKey})\n) PARTITION BY RANGE (chunk_start)`,
    `COMMENT ON TABLE ${table} IS ${quoteLiteral(`Closed days of ${probe.name}'s samples, one row per connection, day and entity; read through metrics.${probe.name}`)}`,
  ];
}

/** The view under the probe's name, with the table's comments. */
export function createSamplesView(probe: ProbeDefinition): string[] {
  const view = probeTable(probe.name);
  return [
    `CREATE VIEW ${view} AS ${samplesSelect(probe)}`,
    `COMMENT ON VIEW ${view} IS ${quoteLiteral(`${probe.description} (recent samples and compressed history)`)}`,
    ...probe.columns.map((c) => `COMMENT ON COLUMN ${view}.${quoteIdent(c.name)} IS ${quoteLiteral(c.description)}`),
  ];
}

/**
 * A probe's sample rows between two instants (SQL expressions of type timestamptz, both included) as a
 * parenthesized subquery with the table's columns: `FROM ${samplesSql(probe, "$2", "$3")} s`. The range is
 * what lets a read skip the days it does not need: the view cannot, since a sample's time is known only
 * after its day's arrays are unnested. Without a range every compressed day is read.
 */
export function samplesSql(probe: ProbeDefinition, from?: string, to?: string): string {
  return `(${samplesSelect(probe, from === undefined || to === undefined ? undefined : { from, to })})`;
}

function samplesSelect(probe: ProbeDefinition, range?: { from: string; to: string }): string {
  const names = probe.columns.map((c) => quoteIdent(c.name));
  const arrays = arrayColumns(probe).map((c) => quoteIdent(c.name));
  const keys = new Set(probe.keys);
  const at = "c.chunk_start + u.offset_ms * interval '1 millisecond'";
  const from = range && `(${range.from})::timestamptz`;
  const to = range && `(${range.to})::timestamptz`;
  const raw = `SELECT connection_id, collected_at, ${names.join(", ")} FROM ${rawTable(probe.name)}${range ? ` WHERE collected_at >= ${from} AND collected_at <= ${to}` : ""}`;
  const compressed =
    `SELECT c.connection_id, ${at} AS collected_at, ${probe.columns.map((col) => `${keys.has(col.name) ? "c" : "u"}.${quoteIdent(col.name)}`).join(", ")}
       FROM ${compressedTable(probe.name)} c
       CROSS JOIN LATERAL unnest(c.offsets, ${arrays.map((a) => `c.${a}`).join(", ")}) AS u(offset_ms, ${arrays.join(", ")})` +
    (range
      ? `\n      WHERE c.chunk_start > ${from} - interval '1 day' AND c.chunk_start <= ${to} AND c.last_at >= ${from} AND c.first_at <= ${to}
        AND ${at} >= ${from} AND ${at} <= ${to}`
      : "");
  return `${raw}\n     UNION ALL\n     ${compressed}`;
}

/**
 * The latest sample time of a connection before an instant (SQL expressions; `conditions` on key columns
 * only), without unnesting more than one day: the compressed days hold it only in the latest day that starts
 * with a sample before it.
 */
export function previousSampleTimeSql(probe: ProbeDefinition, connection: string, before: string, conditions: readonly string[] = []): string {
  return neighbourSql(probe, connection, before, conditions, "max", "<", "first_at");
}

/** The earliest sample time of a connection after an instant; see previousSampleTimeSql. */
export function nextSampleTimeSql(probe: ProbeDefinition, connection: string, after: string, conditions: readonly string[] = []): string {
  return neighbourSql(probe, connection, after, conditions, "min", ">", "last_at");
}

function neighbourSql(
  probe: ProbeDefinition,
  connection: string,
  instant: string,
  conditions: readonly string[],
  pick: "max" | "min",
  side: "<" | ">",
  reach: string,
): string {
  const where = [`connection_id = ${connection}`, ...conditions].join(" AND ");
  const compressed = compressedTable(probe.name);
  const day = `(SELECT ${pick}(chunk_start) FROM ${compressed} WHERE ${where} AND ${reach} ${side} ${instant})`;
  return `(SELECT ${pick === "max" ? "greatest" : "least"}(
     (SELECT ${pick}(collected_at) FROM ${rawTable(probe.name)} WHERE ${where} AND collected_at ${side} ${instant}),
     (SELECT ${pick}(c.chunk_start + u.offset_ms * interval '1 millisecond') FROM ${compressed} c CROSS JOIN LATERAL unnest(c.offsets) AS u(offset_ms)
       WHERE ${where} AND c.chunk_start = ${day} AND c.chunk_start + u.offset_ms * interval '1 millisecond' ${side} ${instant})))`;
}

/**
 * The latest sample time of a connection with rows matching `where` (SQL on the probe's columns). The raw rows
 * hold the newest samples, so the compressed days are read only when they have none, and then only the latest
 * day: a connection whose matching rows lie only in older compressed days has none here.
 */
export function latestSampleTimeSql(probe: ProbeDefinition, connection: string, where = "TRUE"): string {
  const day = `(SELECT max(chunk_start) FROM ${compressedTable(probe.name)} WHERE connection_id = ${connection})`;
  return `coalesce(
     (SELECT max(collected_at) FROM ${rawTable(probe.name)} WHERE connection_id = ${connection} AND ${where}),
     (SELECT max(collected_at) FROM ${samplesSql(probe, day, `${day} + interval '1 day' - interval '1 millisecond'`)} l WHERE connection_id = ${connection} AND ${where}))`;
}
