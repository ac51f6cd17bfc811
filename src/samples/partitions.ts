/** Weekly time partitions of the metrics tables: Monday 00:00 UTC to the next Monday, named <probe>_<YYYYMMDD>. */
import type { Queryable } from "../../drivers/types.ts";
import { isCompressedTableName, probeTable, quoteIdent } from "../probes/ddl.ts";
import { COMPRESSED_TOAST_TARGET } from "../probes/history-ddl.ts";

const WEEK_MS = 7 * 24 * 3600 * 1000;
const DAY_MS = 24 * 3600 * 1000;

export interface Partition {
  name: string;
  from: Date;
  to: Date;
}

export function weekOf(probe: string, at: Date): Partition {
  const day = Math.floor(at.getTime() / DAY_MS) * DAY_MS;
  const sinceMonday = (new Date(day).getUTCDay() + 6) % 7; // getUTCDay: 0 = Sunday
  const from = new Date(day - sinceMonday * DAY_MS);
  const stamp = from.toISOString().slice(0, 10).replace(/-/g, "");
  return { name: `${probe}_${stamp}`, from, to: new Date(from.getTime() + WEEK_MS) };
}

/** The weekly partitions of these times (epoch ms), each worked out once per distinct day. */
export function weeksOf(probe: string, times: Iterable<number>): Partition[] {
  const days = new Set<number>();
  const weeks = new Map<string, Partition>();
  for (const t of times) {
    const day = Math.floor(t / DAY_MS);
    if (days.has(day)) continue;
    days.add(day);
    const week = weekOf(probe, new Date(t));
    weeks.set(week.name, week);
  }
  return [...weeks.values()];
}

const ALREADY_EXISTS = new Set(["42P07", "23505"]);

/**
 * Creates the table's partitions that do not exist yet. Which exist is asked in one statement: they almost always
 * do, and creating each under a savepoint took three statements per table and batch (about a third of the
 * collector's one-sample batches, and a network hop each on a remote datastore). `known`: partitions this
 * transaction has found or made already (ensureBatchPartitions), not asked again; those asked here are added.
 */
export async function ensurePartitions(tx: Queryable, table: string, partitions: readonly Partition[], known?: Set<string>): Promise<void> {
  const asked = known ? partitions.filter((p) => !known.has(p.name)) : partitions;
  await createMissing(
    tx,
    asked.map((partition) => ({ table, partition })),
  );
  for (const p of asked) known?.add(p.name);
}

export interface WantedPartition {
  table: string;
  partition: Partition;
}

/** The partitions of `tables` for these times (epoch ms): a batch's own weeks, where nearly every row it writes lands. */
export function batchPartitions(tables: readonly string[], times: readonly number[]): WantedPartition[] {
  return tables.flatMap((table) => weeksOf(table, times).map((partition) => ({ table, partition })));
}

/**
 * An expression answering which of the wanted partitions do not exist (as text[]), of tables that do (a probe has
 * only some of the derived tables). `$parents` and `$names` are the parameters that carry `partitionParameters`.
 */
export function missingPartitionsSql(parents: string, names: string): string {
  return `ARRAY(SELECT w.name FROM unnest(${parents}::text[], ${names}::text[]) AS w(parent, name)
      WHERE to_regclass(format('metrics.%I', w.parent)) IS NOT NULL AND to_regclass(format('metrics.%I', w.name)) IS NULL)`;
}

export const partitionParameters = (wanted: readonly WantedPartition[]) => [wanted.map((w) => w.table), wanted.map((w) => w.partition.name)];

/** Asks in one statement which of these partitions do not exist and creates them. */
async function createMissing(tx: Queryable, wanted: readonly WantedPartition[]): Promise<void> {
  if (wanted.length === 0) return;
  const [{ missing }] = await tx.query<{ missing: string[] }>(`SELECT ${missingPartitionsSql("$1", "$2")} AS missing`, partitionParameters(wanted));
  await createPartitions(tx, wanted, missing);
}

/** Creates the partitions named `missing`, of those wanted. */
export async function createPartitions(tx: Queryable, wanted: readonly WantedPartition[], missing: readonly string[]): Promise<void> {
  for (const name of missing) {
    const { table, partition } = wanted.find((w) => w.partition.name === name)!;
    await createPartition(tx, table, partition);
  }
}

/** Creates the partition unless it exists; a concurrent creator winning the race is not an error. */
async function createPartition(tx: Queryable, table: string, partition: Partition): Promise<void> {
  await tx.query("SAVEPOINT ensure_partition");
  try {
    await tx.query(
      `CREATE TABLE IF NOT EXISTS metrics.${quoteIdent(partition.name)} PARTITION OF ${probeTable(table)} ` +
        `FOR VALUES FROM ('${partition.from.toISOString()}') TO ('${partition.to.toISOString()}')` +
        (isCompressedTableName(table) ? ` WITH (toast_tuple_target = ${COMPRESSED_TOAST_TARGET})` : ""),
    );
    await tx.query("RELEASE SAVEPOINT ensure_partition");
  } catch (err) {
    await tx.query("ROLLBACK TO SAVEPOINT ensure_partition");
    if (!ALREADY_EXISTS.has((err as { code?: string }).code ?? "")) throw err;
  }
}
