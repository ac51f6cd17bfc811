/**
 * Compressed history: a closed chunk (an hour) of a connection's raw samples of a probe is rewritten as one row
 * per entity (probes/history-ddl.ts), with the best TOAST compression the datastore has, and its raw rows deleted,
 * in one transaction. A write into a compressed chunk first turns it back into raw rows (decompressChunks), so
 * the writer's checks and derived facts work on rows as always; the next round compresses it again.
 */
import type { Driver, Queryable } from "../../drivers/types.ts";
import { compressedTableName, quoteIdent, rawTableName } from "../probes/ddl.ts";
import { CHUNK_MS, CHUNK_SQL, arrayColumns, compressedTable, rawTable } from "../probes/history-ddl.ts";
import { PROBES } from "../probes/index.ts";
import type { ProbeDefinition } from "../probes/types.ts";
import { ensurePartitions, weekOf } from "./partitions.ts";

/** The newest samples stay raw rows: a chunk is closed once it ended this long ago (late samples land raw). */
export const KEEP_RAW_MS = 2 * 3600_000;

/** Raw rows before this instant (epoch ms) lie in closed chunks: chunks that ended at least KEEP_RAW_MS before `now`. */
export const closedBefore = (now: number) => Math.floor((now - KEEP_RAW_MS) / CHUNK_MS) * CHUNK_MS;

export interface CompressionRound {
  /** Chunks compressed (one connection, probe and hour each). */
  chunks: number;
  /** Raw rows they held. */
  rows: number;
  /** Whether the round stopped at its time budget with closed chunks left. */
  unfinished: boolean;
}

/**
 * Compresses closed chunks, oldest first per connection and probe, until none is left or `budgetMs` has passed
 * (a round never holds more than one lease's work). A chunk another instance or the writer is working on is skipped.
 */
export async function compressClosedChunks(db: Driver, now = Date.now(), budgetMs = 10_000): Promise<CompressionRound> {
  const cutoff = new Date(closedBefore(now)).toISOString();
  const deadline = performance.now() + budgetMs;
  const round: CompressionRound = { chunks: 0, rows: 0, unfinished: false };
  const compression = await bestCompression(db);
  for (const probe of PROBES) {
    // Each connection's oldest raw sample, by the primary key (connection_id, collected_at, ...): no scan of old rows.
    const oldest = await db.query<{ id: number; chunk: Date }>(
      `SELECT c.id, date_bin(${CHUNK_SQL}, o.at, timestamptz '2000-01-01 00:00:00+00') AS chunk
         FROM connections c CROSS JOIN LATERAL (SELECT min(collected_at) AS at FROM ${rawTable(probe.name)} WHERE connection_id = c.id) o
        WHERE o.at < $1::timestamptz ORDER BY c.id`,
      [cutoff],
    );
    for (const { id, chunk } of oldest) {
      let next: Date | undefined = chunk;
      while (next) {
        if (performance.now() > deadline) return { ...round, unfinished: true };
        const rows = await compressChunk(db, probe, id, next.getTime(), compression);
        if (rows === undefined) break; // busy: another instance or a write has it
        if (rows > 0) round.chunks++;
        round.rows += rows;
        next = await oldestRawChunkBefore(db, probe, id, cutoff);
      }
    }
    await truncateEmptiedWeeks(db, probe, closedBefore(now));
  }
  return round;
}

/**
 * Raw weeks that compression emptied are truncated: deleted rows leave their pages and index entries behind
 * until a VACUUM, and the index pages for good. Under the partition's exclusive lock, so that rows a writer
 * committed meanwhile (a compressed chunk turned back into rows) are seen and the week kept.
 */
async function truncateEmptiedWeeks(db: Driver, probe: ProbeDefinition, cutoff: number): Promise<void> {
  const weeks = await db.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = to_regclass($1) AND pg_relation_size(c.oid) > 0`,
    [rawTable(probe.name)],
  );
  for (const { name } of weeks) {
    const week = weekOf(rawTableName(probe.name), new Date(Date.parse(`${name.slice(-8, -4)}-${name.slice(-4, -2)}-${name.slice(-2)}T00:00:00Z`)));
    if (week.name !== name || week.to.getTime() > cutoff) continue;
    // Readers queue behind a lock that is waited for: a week that is being read is left for a later round.
    await db
      .transaction(async (tx) => {
        const table = `metrics.${quoteIdent(name)}`;
        await tx.query("SET LOCAL lock_timeout = '1s'");
        await tx.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
        const [{ empty }] = await tx.query<{ empty: boolean }>(`SELECT NOT EXISTS (SELECT 1 FROM ${table}) AS empty`);
        if (empty) await tx.query(`TRUNCATE ${table}`);
      })
      .catch((err: { code?: string }) => {
        if (err.code !== "55P03") throw err; // lock_not_available
      });
  }
}

async function oldestRawChunkBefore(db: Queryable, probe: ProbeDefinition, connectionId: number, cutoff: string): Promise<Date | undefined> {
  const [row] = await db.query<{ chunk: Date | null }>(
    `SELECT date_bin(${CHUNK_SQL}, min(collected_at), timestamptz '2000-01-01 00:00:00+00') AS chunk FROM ${rawTable(probe.name)}
      WHERE connection_id = $1 AND collected_at < $2::timestamptz`,
    [connectionId, cutoff],
  );
  return row?.chunk ?? undefined;
}

/** lz4 where the server was built with it, else PostgreSQL's own pglz. */
async function bestCompression(db: Queryable): Promise<"lz4" | "pglz"> {
  const [row] = await db.query<{ lz4: boolean }>(
    "SELECT coalesce('lz4' = ANY(enumvals), false) AS lz4 FROM pg_settings WHERE name = 'default_toast_compression'",
  );
  return row?.lz4 ? "lz4" : "pglz";
}

/**
 * One chunk of one connection's samples of a probe, in one transaction: its compressed rows (if it was compressed
 * before and written since) back to raw, then every raw row of the chunk into one compressed row per entity.
 * Answers the raw rows compressed, or undefined when the chunk is locked by a writer or another compressor.
 */
export async function compressChunk(
  db: Driver,
  probe: ProbeDefinition,
  connectionId: number,
  chunkStart: number,
  compression: "lz4" | "pglz" = "pglz",
): Promise<number | undefined> {
  return db.transaction(async (tx) => {
    // The sample writer's lock (sample-writer.ts): a chunk is never compressed under a batch being written into it.
    const [{ locked }] = await tx.query<{ locked: boolean }>("SELECT pg_try_advisory_xact_lock($1, hashtext($2)) AS locked", [connectionId, probe.name]);
    if (!locked) return undefined;
    // Done by another instance since this one looked: nothing to undo and redo.
    const [{ raw }] = await tx.query<{ raw: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM ${rawTable(probe.name)} WHERE connection_id = $1 AND collected_at >= $2::timestamptz AND collected_at < $2::timestamptz + ${CHUNK_SQL}) AS raw`,
      [connectionId, new Date(chunkStart).toISOString()],
    );
    if (!raw) return 0;
    await tx.query(`SET LOCAL default_toast_compression = ${compression}`);
    const start = new Date(chunkStart);
    await ensurePartitions(tx, compressedTableName(probe.name), [weekOf(compressedTableName(probe.name), start)]);
    await decompressChunks(tx, probe, connectionId, chunkStart, chunkStart);
    const keys = probe.keys.map(quoteIdent);
    const arrays = arrayColumns(probe).map((c) => quoteIdent(c.name));
    const [{ rows }] = await tx.query<{ rows: number }>(
      `WITH gone AS (DELETE FROM ${rawTable(probe.name)} WHERE connection_id = $1 AND collected_at >= $2::timestamptz AND collected_at < $2::timestamptz + ${CHUNK_SQL} RETURNING *),
            made AS (INSERT INTO ${compressedTable(probe.name)} (connection_id, chunk_start, ${[...keys, "first_at", "last_at", "samples", "offsets", ...arrays].join(", ")})
                     SELECT $1, $2::timestamptz, ${[
                       ...keys,
                       "min(collected_at)",
                       "max(collected_at)",
                       "count(*)",
                       "array_agg((extract(epoch FROM collected_at - $2::timestamptz) * 1000)::integer ORDER BY collected_at)",
                       // An hour without a value of the column keeps none: no array of nulls, ~29 bytes each.
                       ...arrays.map((a) => `CASE WHEN count(${a}) > 0 THEN array_agg(${a} ORDER BY collected_at) END`),
                     ].join(", ")}
                       FROM gone${keys.length ? ` GROUP BY ${keys.join(", ")}` : ""}
                     RETURNING samples)
       SELECT coalesce(sum(samples), 0)::int AS rows FROM made`,
      [connectionId, start.toISOString()],
    );
    return rows;
  });
}

/**
 * Turns the compressed chunks of a connection's probe that hold any instant from `from` to `to` (epoch ms) back
 * into raw rows, inside the caller's transaction (which holds the writer's lock). Answers the rows restored.
 */
export async function decompressChunks(tx: Queryable, probe: ProbeDefinition, connectionId: number, from: number, to: number): Promise<number> {
  const [{ rows }] = await tx.query<{ rows: number }>(`WITH ${decompressedSql(probe, "$1", "$2", "$3")} SELECT count(*)::int AS rows FROM back`, [
    connectionId,
    new Date(from).toISOString(),
    new Date(to).toISOString(),
  ]);
  return rows;
}

/**
 * What decompressChunks runs, as two CTEs (`gone`, `back`: one row per raw row restored) to put before another
 * statement; the parameters are the connection and the instants (timestamptz text) from and to.
 */
export function decompressedSql(probe: ProbeDefinition, connection: string, from: string, to: string): string {
  const names = probe.columns.map((c) => quoteIdent(c.name));
  const keys = new Set(probe.keys);
  const arrays = arrayColumns(probe).map((c) => quoteIdent(c.name));
  return `gone AS (DELETE FROM ${compressedTable(probe.name)} WHERE connection_id = ${connection} AND chunk_start > ${from}::timestamptz - ${CHUNK_SQL} AND chunk_start <= ${to}::timestamptz RETURNING *),
          back AS (INSERT INTO ${rawTable(probe.name)} (connection_id, collected_at, ${names.join(", ")})
                   SELECT g.connection_id, g.chunk_start + u.offset_ms * interval '1 millisecond', ${probe.columns.map((c) => `${keys.has(c.name) ? "g" : "u"}.${quoteIdent(c.name)}`).join(", ")}
                     FROM gone g CROSS JOIN LATERAL unnest(g.offsets, ${arrays.map((a) => `g.${a}`).join(", ")}) AS u(offset_ms, ${arrays.join(", ")})
                   RETURNING 1)`;
}
