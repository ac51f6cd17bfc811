/**
 * The one path that writes samples. A batch is validated completely before anything is written, then
 * its partitions are ensured and its rows inserted inside the caller's transaction.
 */
import type { Driver, Queryable } from "../../drivers/types.ts";
import { InputError } from "../errors.ts";
import { findProbe } from "../probes/index.ts";
import { probeTable, quoteIdent } from "../probes/ddl.ts";
import type { ProbeDefinition } from "../probes/types.ts";
import { type Partition, ensurePartition, weekOf } from "./partitions.ts";
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
  rows: unknown[][];
  partitions: Partition[];
}

function parseTime(value: unknown, where: string): Date {
  const date = value instanceof Date ? value : typeof value === "string" ? new Date(value) : new Date(Number.NaN);
  if (Number.isNaN(date.getTime())) throw new SampleError(`${where}: \`collected_at\` must be an ISO 8601 timestamp, got ${JSON.stringify(value)}`);
  return date;
}

function prepare(batch: SampleBatch, rowOffset: number): PreparedBatch {
  const probe = findProbe(batch.probe);
  if (!probe) throw new SampleError(`unknown probe \`${batch.probe}\``);
  if (!Number.isInteger(batch.connectionId) || batch.connectionId <= 0) throw new SampleError(`connection id must be a positive integer`);
  const known = new Map(probe.columns.map((c) => [c.name, c]));
  const columns = probe.columns.map((c) => c.name);
  const seen = new Set<string>();
  const partitions = new Map<string, Partition>();
  const rows = batch.rows.map((row, i) => {
    const where = batch.describeRow?.(i) ?? `row ${rowOffset + i + 1}`;
    if (typeof row !== "object" || row === null || Array.isArray(row)) throw new SampleError(`${where}: expected an object`);
    for (const key of Object.keys(row)) {
      if (key !== "collected_at" && !known.has(key)) throw new SampleError(`${where}: probe \`${probe.name}\` has no column \`${key}\``);
    }
    const at = parseTime(row.collected_at, where);
    if (at.getTime() > Date.now() + FUTURE_TOLERANCE_MS) throw new SampleError(`${where}: \`collected_at\` ${at.toISOString()} is in the future`);
    for (const key of probe.keys) {
      if (row[key] === undefined || row[key] === null) throw new SampleError(`${where}: entity key \`${key}\` is required`);
    }
    const identity = JSON.stringify([at.getTime(), ...probe.keys.map((k) => row[k])]);
    if (seen.has(identity)) throw new SampleError(`${where}: a row for the same entity and collected_at appears twice`);
    seen.add(identity);
    const partition = weekOf(probe.name, at);
    partitions.set(partition.name, partition);
    return [at.toISOString(), ...probe.columns.map((c) => normalise(row[c.name], c.type, `${where}, column \`${c.name}\``))];
  });
  return { probe, columns, rows, partitions: [...partitions.values()] };
}

const NUMERIC = /^(integer|bigint|smallint|double precision|real|numeric|oid)/;

/** The value checked against its column's type here, so a mistake is reported with its row (or line). */
function normalise(value: unknown, type: string, where: string): unknown {
  if (value === undefined || value === null) return null;
  if (typeof value === "number" && !Number.isFinite(value)) throw new SampleError(`${where}: not a finite number`);
  if (typeof value === "object" && !(value instanceof Date)) throw new SampleError(`${where}: nested values are not supported`);
  if (NUMERIC.test(type) && !(typeof value === "number" || (typeof value === "string" && value.trim() !== "" && Number.isFinite(Number(value))))) {
    throw new SampleError(`${where}: expected a number (${type}), got ${JSON.stringify(value)}`);
  }
  if (type === "boolean" && typeof value !== "boolean" && value !== "true" && value !== "false") throw new SampleError(`${where}: expected true or false, got ${JSON.stringify(value)}`);
  if (type.startsWith("timestamp") && Number.isNaN(new Date(value as string).getTime())) throw new SampleError(`${where}: expected a timestamp, got ${JSON.stringify(value)}`);
  return value;
}

/** One statement whatever the batch's size: a column's values travel as one array (far cheaper to parse than a parameter each). */
async function insert(tx: Queryable, batch: SampleBatch, prepared: PreparedBatch): Promise<void> {
  const { probe, columns, rows } = prepared;
  const columnList = ["connection_id", "collected_at", ...columns].map(quoteIdent).join(", ");
  const arrays = ["timestamptz", ...probe.columns.map((c) => c.type)].map((type, i) => ({ type, values: rows.map((row) => row[i]) }));
  await tx.query(
    `INSERT INTO ${probeTable(probe.name)} (${columnList}) SELECT $1::integer, * FROM unnest(${arrays.map((a, i) => `$${i + 2}::${a.type}[]`).join(", ")})`,
    [batch.connectionId, ...arrays.map((a) => a.values)],
  );
}

/** Writes one batch inside `tx`; throws SampleError (nothing written by this call) for bad input. */
export async function writeSamplesIn(tx: Queryable, batch: SampleBatch, rowOffset = 0): Promise<number> {
  const prepared = prepare(batch, rowOffset);
  if (prepared.rows.length === 0) return 0;
  // One writer at a time per connection and probe (an import beside the collector, say): each recomputes the
  // changes and rollups around its batch from the rows it can see, so it must see the other's.
  await tx.query("SELECT pg_advisory_xact_lock($1, hashtext($2))", [batch.connectionId, prepared.probe.name]);
  for (const partition of prepared.partitions) await ensurePartition(tx, prepared.probe.name, partition);
  try {
    await insert(tx, batch, prepared);
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === "23503") throw new SampleError(`connection ${batch.connectionId} does not exist`);
    if (code === "23505") throw new SampleError(`samples for connection ${batch.connectionId} at one of these collected_at times are already stored`);
    if (code === "22P02" || code === "22003" || code === "22007" || code === "22008") throw new SampleError(`a value does not fit its column: ${(err as Error).message}`);
    throw err;
  }
  const times = [...new Set(prepared.rows.map((row) => Date.parse(row[0] as string)))];
  await recordChanges(tx, prepared.probe, batch.connectionId, times);
  await recordLevels(tx, prepared.probe, batch.connectionId, times);
  return prepared.rows.length;
}

/** Writes one batch in its own transaction. */
export function writeSamples(db: Driver, batch: SampleBatch): Promise<number> {
  return db.transaction((tx) => writeSamplesIn(tx, batch));
}
