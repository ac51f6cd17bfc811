/**
 * The one path that writes samples. A batch is validated completely before anything is written, then
 * its partitions are ensured and its rows inserted inside the caller's transaction.
 */
import type { Driver, Queryable } from "../../drivers/types.ts";
import { timeOfMs, valuesLiteral } from "../datastore/array-literal.ts";
import { InputError } from "../errors.ts";
import { findProbe } from "../probes/index.ts";
import { quoteIdent, writtenTables } from "../probes/ddl.ts";
import { rawTable } from "../probes/history-ddl.ts";
import type { ProbeDefinition } from "../probes/types.ts";
import { decompressedSql } from "./compress-history.ts";
import { batchPartitions, createPartitions, missingPartitionsSql, partitionParameters } from "./partitions.ts";
import { recordChanges } from "./record-changes.ts";
import { recordLevels } from "./record-levels.ts";

export type SampleRow = { collected_at: string | Date } & Record<string, unknown>;

export interface SampleBatch {
  connectionId: number;
  probe: string;
  rows: readonly SampleRow[];
  /** How errors name row `i` of this batch (default `row N`); an import names its input's line. */
  describeRow?: (i: number) => string;
}

/** Samples may not come from the future; a little clock skew is forgiven. */
const FUTURE_TOLERANCE_MS = 5 * 60_000;

/** A batch that cannot be written as given; the message says why and where. */
export class SampleError extends InputError {}

interface PreparedBatch {
  probe: ProbeDefinition;
  columns: string[];
  /** Each row: its time (epoch ms), then the probe's columns in order. */
  rows: unknown[][];
  /** The distinct sample times (epoch ms), in order of first appearance. */
  times: number[];
}

function parseTime(value: unknown, where: () => string): Date {
  const date = value instanceof Date ? value : typeof value === "string" ? new Date(value) : new Date(Number.NaN);
  if (Number.isNaN(date.getTime())) throw new SampleError(`${where()}: \`collected_at\` must be an ISO 8601 timestamp, got ${JSON.stringify(value)}`);
  return date;
}

function prepare(batch: SampleBatch, rowOffset: number): PreparedBatch {
  const probe = findProbe(batch.probe);
  if (!probe) throw new SampleError(`unknown probe \`${batch.probe}\``);
  if (!Number.isInteger(batch.connectionId) || batch.connectionId <= 0) throw new SampleError(`connection id must be a positive integer`);
  const known = new Set(probe.columns.map((c) => c.name));
  const columns = probe.columns.map((c) => c.name);
  const checks = probe.columns.map((c) => columnCheck(c.type));
  const latest = Date.now() + FUTURE_TOLERANCE_MS;
  const seen = new Set<string>();
  // A sample's rows share their collected_at: each distinct value is parsed and checked once.
  const parsed = new Map<unknown, number>();
  const times = new Set<number>();
  const rows = batch.rows.map((row, i) => {
    // Spelled only for an error: a batch is thousands of rows.
    const where = () => batch.describeRow?.(i) ?? `row ${rowOffset + i + 1}`;
    if (typeof row !== "object" || row === null || Array.isArray(row)) throw new SampleError(`${where()}: expected an object`);
    for (const key of Object.keys(row)) {
      if (key !== "collected_at" && !known.has(key)) throw new SampleError(`${where()}: probe \`${probe.name}\` has no column \`${key}\``);
    }
    let at = parsed.get(row.collected_at);
    if (at === undefined) {
      const date = parseTime(row.collected_at, where);
      if (date.getTime() > latest) throw new SampleError(`${where()}: \`collected_at\` ${date.toISOString()} is in the future`);
      at = date.getTime();
      // Strings only: two equal Dates are two keys.
      if (!(row.collected_at instanceof Date)) parsed.set(row.collected_at, at);
      times.add(at);
    }
    for (const key of probe.keys) {
      if (row[key] === undefined || row[key] === null) throw new SampleError(`${where()}: entity key \`${key}\` is required`);
    }
    const identity = JSON.stringify([at, ...probe.keys.map((k) => row[k])]);
    if (seen.has(identity)) throw new SampleError(`${where()}: a row for the same entity and collected_at appears twice`);
    seen.add(identity);
    return [
      at,
      ...columns.map((name, j) => {
        const value = row[name];
        if (value === undefined || value === null) return null;
        const problem = checks[j](value);
        if (problem) throw new SampleError(`${where()}, column \`${name}\`: ${problem}`);
        return value;
      }),
    ];
  });
  return { probe, columns, rows, times: [...times] };
}

const NUMERIC = /^(integer|bigint|smallint|double precision|real|numeric|oid)/;

/**
 * A column's check, chosen once from its type: each value is checked here, so that a mistake is reported with its
 * row (or line). Answers what is wrong with a value (not null), or undefined.
 */
function columnCheck(type: string): (value: unknown) => string | undefined {
  const numeric = NUMERIC.test(type);
  const boolean = type === "boolean";
  const timestamp = type.startsWith("timestamp");
  return (value) => {
    if (typeof value === "number") {
      if (!Number.isFinite(value)) return "not a finite number";
      if (!boolean && !timestamp) return undefined;
    }
    if (typeof value === "object" && !(value instanceof Date)) return "nested values are not supported";
    if (numeric && !(typeof value === "number" || (typeof value === "string" && value.trim() !== "" && Number.isFinite(Number(value))))) {
      return `expected a number (${type}), got ${JSON.stringify(value)}`;
    }
    if (boolean && typeof value !== "boolean" && value !== "true" && value !== "false") return `expected true or false, got ${JSON.stringify(value)}`;
    if (timestamp && Number.isNaN(new Date(value as string).getTime())) return `expected a timestamp, got ${JSON.stringify(value)}`;
    return undefined;
  };
}

/**
 * One statement whatever the batch's size: a column's values travel as one array literal (far cheaper to parse
 * than a parameter each). Hours of the batch already compressed become raw rows again in the same statement, so
 * that a row already stored there is refused as a duplicate and the batch is derived against them.
 */
async function insert(tx: Queryable, batch: SampleBatch, prepared: PreparedBatch): Promise<void> {
  const { probe, columns, rows, times } = prepared;
  const columnList = ["connection_id", "collected_at", ...columns].map(quoteIdent).join(", ");
  // Times travel as epoch milliseconds (a sample's rows share one; an ISO string each costs far more to spell).
  const arrays = ["double precision", ...probe.columns.map((c) => c.type)].map((type, i) => ({ type, values: rows.map((row) => row[i]) }));
  const names = arrays.map((_, i) => `c${i}`);
  const [from, to] = [arrays.length + 2, arrays.length + 3];
  await tx.query(
    `WITH ${decompressedSql(probe, "$1", `$${from}`, `$${to}`)}
     INSERT INTO ${rawTable(probe.name)} (${columnList})
     SELECT $1::integer, ${timeOfMs("c0")}, ${names.slice(1).join(", ")} FROM unnest(${arrays.map((a, i) => `$${i + 2}::${a.type}[]`).join(", ")}) AS u(${names.join(", ")})`,
    [
      batch.connectionId,
      ...arrays.map((a) => valuesLiteral(a.values)),
      new Date(times.reduce((a, b) => Math.min(a, b))).toISOString(),
      new Date(times.reduce((a, b) => Math.max(a, b))).toISOString(),
    ],
  );
}

/** Writes one batch inside `tx`; throws SampleError (nothing written by this call) for bad input. */
export async function writeSamplesIn(tx: Queryable, batch: SampleBatch, rowOffset = 0): Promise<number> {
  const prepared = prepare(batch, rowOffset);
  if (prepared.rows.length === 0) return 0;
  // One writer at a time per connection and probe (an import beside the collector, say): each recomputes the
  // changes and rollups around its batch from the rows it can see, so it must see the other's. And the
  // connection, checked once for the batch (the metrics tables have no foreign key, migration 34), locked as a
  // key check would: its deletion waits for this batch, whose rows its trigger then deletes. The same statement
  // asks which weeks of the batch, of every table it writes, have no partition yet; the writers below ask only
  // for others. (A partition made meanwhile by another writer is no error; one dropped meanwhile, by retention,
  // is old enough to hold no row of a batch being collected.)
  const wanted = batchPartitions(writtenTables(prepared.probe.name), prepared.times);
  const [{ connection, missing }] = await tx.query<{ connection: number | null; missing: string[] }>(
    `SELECT pg_advisory_xact_lock($1, hashtext($2)) AS locked, (SELECT id FROM connections WHERE id = $1 FOR KEY SHARE) AS connection,
            ${missingPartitionsSql("$3", "$4")} AS missing`,
    [batch.connectionId, prepared.probe.name, ...partitionParameters(wanted)],
  );
  if (connection === null) throw new SampleError(`connection ${batch.connectionId} does not exist`);
  await createPartitions(tx, wanted, missing);
  const known = new Set(wanted.map((w) => w.partition.name));
  try {
    await insert(tx, batch, prepared);
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === "23505") throw new SampleError(`samples for connection ${batch.connectionId} at one of these collected_at times are already stored`);
    if (code === "22P02" || code === "22003" || code === "22007" || code === "22008")
      throw new SampleError(`a value does not fit its column: ${(err as Error).message}`);
    throw err;
  }
  await recordChanges(tx, prepared.probe, batch.connectionId, prepared.times, known);
  await recordLevels(tx, prepared.probe, batch.connectionId, prepared.times, known);
  return prepared.rows.length;
}

/** Writes one batch in its own transaction. */
export function writeSamples(db: Driver, batch: SampleBatch): Promise<number> {
  return db.transaction((tx) => writeSamplesIn(tx, batch));
}
