/**
 * A probe's samples since migration 40: recent samples as rows in `<probe>__raw`, closed hours compressed into
 * `<probe>__compressed` (one row per connection, entity and hour, values as arrays), and under the probe's own
 * name a view over both that returns the rows and columns the table had, for anyone who queries it directly.
 */
import { compressedTableName, probeTable, quoteIdent, quoteLiteral, rawTableName } from "./ddl.ts";
import type { ProbeColumn, ProbeDefinition } from "./types.ts";

/** Where the sample writer inserts; readers go through samplesSql. */
export const rawTable = (probe: string) => probeTable(rawTableName(probe));
export const compressedTable = (probe: string) => probeTable(compressedTableName(probe));

/**
 * A compressed chunk holds an hour of one entity's samples; CHUNK_SQL is the same span in SQL. Hours rather than
 * days: a read that looks up samples at a few instants decompresses a chunk's arrays whole (bench:storage, 7 days
 * of 20 databases: a day's chunks took 3.9 bytes per value and made a per-database week 11x slower to read, an
 * hour's 8.9 bytes and 1.4x).
 */
export const CHUNK_MS = 3_600_000;
export const CHUNK_SQL = "interval '1 hour'";

/** The probe's columns stored as arrays in a compressed row: all but the entity keys, which identify the row. */
export const arrayColumns = (probe: ProbeDefinition) => probe.columns.filter((c) => !probe.keys.includes(c.name));

const keyColumns = (probe: ProbeDefinition) => probe.keys.map((k) => probe.columns.find((c) => c.name === k)!);

/**
 * One row per connection, hour and entity: sample times as milliseconds after the hour's start (`offsets`, in
 * time order) and each other column's values in the same order, or NULL where the hour has none of that column
 * (unnest and subscripts read NULL elements from it all the same). Every array is compressed where it is, not
 * moved out of line: storage MAIN, and the partitions' COMPRESSED_TOAST_TARGET.
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
    ...arrayColumns(probe).map((c) => `${quoteIdent(c.name)} ${c.type}[]`),
  ];
  const primaryKey = ["connection_id", "chunk_start", ...probe.keys].map(quoteIdent).join(", ");
  return [
    `CREATE TABLE ${table} (\n  ${columns.join(",\n  ")},\n  PRIMARY KEY (${primaryKey})\n) PARTITION BY RANGE (chunk_start)`,
    ...compressedArraysInline(probe),
    `COMMENT ON TABLE ${table} IS ${quoteLiteral(`Closed hours of ${probe.name}'s samples, one row per connection, hour and entity; read through metrics.${probe.name}`)}`,
  ];
}

/**
 * A compressed row's arrays kept in the row and compressed, each of them (partitions inherit the storage).
 * With the default storage, TOAST compresses only the largest arrays, until the row fits in 2 kB, and moves
 * the rest out of line when the target is lowered (bench:storage: 13.7 MB where 6.9 MB stayed in the row).
 */
export function compressedArraysInline(probe: ProbeDefinition): string[] {
  const table = compressedTable(probe.name);
  return [
    `ALTER TABLE ${table} ${["offsets", ...arrayColumns(probe).map((c) => c.name)].map((c) => `ALTER COLUMN ${quoteIdent(c)} SET STORAGE MAIN`).join(", ")}`,
  ];
}

/**
 * The row size above which TOAST compresses a compressed row's arrays: the least PostgreSQL takes, so every array
 * of a row TOAST looks at is compressed. TOAST looks only at rows above 2 kB, whatever this says; a partition's
 * setting (a partitioned table has none of its own).
 */
export const COMPRESSED_TOAST_TARGET = 128;

/** The view under the probe's name, with the table's comments. */
export function createSamplesView(probe: ProbeDefinition): string[] {
  const view = probeTable(probe.name);
  return [
    `CREATE VIEW ${view} AS ${unionOf(samplesSelect(probe, probe.columns))}`,
    `COMMENT ON VIEW ${view} IS ${quoteLiteral(`${probe.description} (recent samples and compressed history)`)}`,
    ...probe.columns.map((c) => `COMMENT ON COLUMN ${view}.${quoteIdent(c.name)} IS ${quoteLiteral(c.description)}`),
  ];
}

/**
 * A probe's sample rows between two instants (SQL expressions of type timestamptz, both included) as a
 * parenthesized subquery with the table's columns: `FROM ${samplesSql(probe, "$2", "$3")} s`. The range is
 * what lets a read skip the chunks it does not need: the view cannot, since a sample's time is known only
 * after its chunk's arrays are unnested. Without a range every compressed chunk is read. `columns`: the only
 * columns besides connection_id, collected_at and the entity keys (unless `keys` is false) that the read uses, so
 * that no other column's arrays are decompressed (a reader naming another gets an error, not a wrong answer).
 */
export function samplesSql(probe: ProbeDefinition, from?: string, to?: string, columns?: readonly string[], keys = true): string {
  return `(${unionOf(sampleArmsSql(probe, from, to, columns, keys))})`;
}

const unionOf = ({ raw, compressed }: { raw: string; compressed: string }) => `${raw}
     UNION ALL
     ${compressed}`;

/**
 * samplesSql's two parts, the raw rows and the compressed chunks' rows, each a SELECT of the same columns: for a
 * read that takes the least or greatest of each part, which PostgreSQL finds by index in the raw table only when
 * that table is not behind a UNION.
 */
export function sampleArmsSql(
  probe: ProbeDefinition,
  from?: string,
  to?: string,
  columns?: readonly string[],
  keys = true,
): { raw: string; compressed: string } {
  const kept = columns ? new Set([...(keys ? probe.keys : []), ...columns]) : undefined;
  const selected = kept ? probe.columns.filter((c) => kept.has(c.name)) : probe.columns;
  return samplesSelect(probe, selected, from === undefined || to === undefined ? undefined : { from, to });
}

function samplesSelect(probe: ProbeDefinition, columns: readonly ProbeColumn[], range?: { from: string; to: string }): { raw: string; compressed: string } {
  // Aliases hc, hu, hp and hs: unlike any that a caller's instants may name (`p.collected_at`, say).
  const keys = new Set(probe.keys);
  const names = columns.map((col) => quoteIdent(col.name));
  const arrays = columns.filter((col) => !keys.has(col.name)).map((col) => quoteIdent(col.name));
  const from = range && `(${range.from})::timestamptz`;
  const to = range && `(${range.to})::timestamptz`;
  const raw = `SELECT connection_id, collected_at${names.map((n) => `, ${n}`).join("")} FROM ${rawTable(probe.name)}${range ? ` WHERE collected_at >= ${from} AND collected_at <= ${to}` : ""}`;
  const chunks = range ? `hc.chunk_start > ${from} - ${CHUNK_SQL} AND hc.chunk_start <= ${to} AND hc.last_at >= ${from} AND hc.first_at <= ${to}` : "";
  const columnValue = (col: ProbeColumn, element: (array: string) => string) =>
    keys.has(col.name) ? `hc.${quoteIdent(col.name)}` : element(`hc.${quoteIdent(col.name)}`);
  // One instant: each entity's element at that time, found by its offset, instead of every element of the chunk.
  if (range && range.from === range.to)
    return {
      raw,
      compressed: `SELECT hc.connection_id, ${from} AS collected_at${columns.map((col) => `, ${columnValue(col, (a) => `${a}[hp.i]`)}`).join("")}
       FROM ${compressedTable(probe.name)} hc
       CROSS JOIN LATERAL (SELECT array_position(hc.offsets, (extract(epoch FROM ${from} - hc.chunk_start) * 1000)::integer) AS i) hp
      WHERE ${chunks} AND hp.i IS NOT NULL`,
    };
  // A range: each chunk's elements in it, found by a binary search of the offsets (width_bucket), and only those
  // unnested: the time of every element compared with the range took ten times as long (lab: an hour's chunks of
  // 20 databases read for 2 minutes each, 120 ms against 11).
  const elements = range ? `[hs.first:hs.last]` : "";
  const offsetOf = (instant: string, round: "ceil" | "floor") =>
    `greatest(-1, least(${CHUNK_MS + 1}, ${round}(extract(epoch FROM ${instant} - hc.chunk_start) * 1000)))::integer`;
  const compressed = `SELECT hc.connection_id, hc.chunk_start + hu.offset_ms * interval '1 millisecond' AS collected_at${columns.map((col) => `, ${columnValue(col, () => `hu.${quoteIdent(col.name)}`)}`).join("")}
       FROM ${compressedTable(probe.name)} hc${
         range
           ? `
       CROSS JOIN LATERAL (SELECT width_bucket(${offsetOf(from!, "ceil")} - 1, hc.offsets) + 1 AS first, width_bucket(${offsetOf(to!, "floor")}, hc.offsets) AS last OFFSET 0) hs`
           : ""
       }
       CROSS JOIN LATERAL unnest(${["hc.offsets", ...arrays.map((a) => `hc.${a}`)].map((a) => `${a}${elements}`).join(", ")}) AS hu(${["offset_ms", ...arrays].join(", ")})${
         range
           ? `
      WHERE ${chunks}`
           : ""
       }`;
  return { raw, compressed };
}

/**
 * The latest sample time of a connection before an instant (SQL expressions; `conditions` on key columns
 * only), without unnesting more than one chunk: the compressed chunks hold it only in the latest chunk that starts
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
  const chunk = `(SELECT ${pick}(chunk_start) FROM ${compressed} WHERE ${where} AND ${reach} ${side} ${instant})`;
  return `(SELECT ${pick === "max" ? "greatest" : "least"}(
     (SELECT ${pick}(collected_at) FROM ${rawTable(probe.name)} WHERE ${where} AND collected_at ${side} ${instant}),
     (SELECT ${pick}(c.chunk_start + u.offset_ms * interval '1 millisecond') FROM ${compressed} c CROSS JOIN LATERAL unnest(c.offsets) AS u(offset_ms)
       WHERE ${where} AND c.chunk_start = ${chunk} AND c.chunk_start + u.offset_ms * interval '1 millisecond' ${side} ${instant})))`;
}

/**
 * The latest sample time of a connection with rows matching `where` (SQL on the probe's columns, which the
 * compressed chunks unnest: `columns`, by default every column). The raw rows
 * hold the newest samples, so the compressed chunks are read only when they have none, and then only the latest
 * chunk: a connection whose matching rows lie only in older compressed chunks has none here.
 */
export function latestSampleTimeSql(probe: ProbeDefinition, connection: string, where = "TRUE", columns?: readonly string[]): string {
  const chunk = `(SELECT max(chunk_start) FROM ${compressedTable(probe.name)} WHERE connection_id = ${connection})`;
  // Without a condition, the latest chunk's rows tell their last sample times: nothing to unnest.
  const compressed =
    where === "TRUE"
      ? `(SELECT max(last_at) FROM ${compressedTable(probe.name)} WHERE connection_id = ${connection} AND chunk_start = ${chunk})`
      : `(SELECT max(collected_at) FROM ${samplesSql(probe, chunk, `${chunk} + ${CHUNK_SQL} - interval '1 millisecond'`, columns)} l WHERE connection_id = ${connection} AND ${where})`;
  return `coalesce(
     (SELECT max(collected_at) FROM ${rawTable(probe.name)} WHERE connection_id = ${connection} AND ${where}),
     ${compressed})`;
}

/**
 * The latest sample time in [from, to] of each group of a connection's rows (`by`: key columns), as a relation of
 * `by` and `at`. A compressed chunk gives its last_at, unless `to` cuts it: only such a chunk is unnested (reading
 * the window's samples to take their maximum unnested every chunk; lab, 200 tables over 24 h: database-summaries'
 * dead tuple statement 138 ms against 12).
 */
export function latestSampleTimesSql(probe: ProbeDefinition, connection: string, from: string, to: string, by: readonly string[]): string {
  const keys = by.map(quoteIdent).join(", ");
  const [lo, hi] = [`(${from})::timestamptz`, `(${to})::timestamptz`];
  const at = "hc.chunk_start + u.offset_ms * interval '1 millisecond'";
  return `(SELECT ${keys}, max(at) AS at FROM (
     SELECT ${keys}, max(collected_at) AS at FROM ${rawTable(probe.name)}
      WHERE connection_id = ${connection} AND collected_at >= ${lo} AND collected_at <= ${hi} GROUP BY ${keys}
     UNION ALL
     SELECT ${keys}, max(CASE WHEN hc.last_at <= ${hi} THEN hc.last_at
                              ELSE (SELECT max(${at}) FROM unnest(hc.offsets) AS u(offset_ms) WHERE ${at} >= ${lo} AND ${at} <= ${hi}) END)
       FROM ${compressedTable(probe.name)} hc
      WHERE connection_id = ${connection} AND hc.chunk_start > ${lo} - ${CHUNK_SQL} AND hc.chunk_start <= ${hi} AND hc.last_at >= ${lo} AND hc.first_at <= ${hi}
      GROUP BY ${keys}) l
    GROUP BY ${keys})`;
}

/**
 * latestSampleTimeSql as a one-row relation with the column `at`, for a read that then looks up the sample at
 * `at` (a lateral samplesSql). OFFSET 0 keeps the planner from copying the subqueries into every use of `at`
 * (the lookup names it a dozen times): pg_stat_statements' latest sample took 90 ms to plan that way, 1.5 ms so.
 */
export function latestSampleAtSql(probe: ProbeDefinition, connection: string, where = "TRUE", columns?: readonly string[]): string {
  return `(SELECT ${latestSampleTimeSql(probe, connection, where, columns)} AS at OFFSET 0)`;
}
