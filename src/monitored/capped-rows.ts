/**
 * Fetching the rows of a caller's query within a row cap and a byte cap, counting bytes before they reach
 * this process: values of types that can be large (text, json, bytea, arrays, ...) are cut on the server to
 * `maxCell + 1` characters, and rows are fetched in batches no larger than the bytes left allow. So a query
 * returning 100 MB values costs this process about `maxBytes`, not the values' size.
 */
import type pg from "pg";
import { extended } from "./read-only.ts";

export interface CappedRows {
  fields: Array<{ name: string }>;
  rows: unknown[][];
  command: string | undefined;
  /** The byte cap ended the fetch. */
  bytesCut: boolean;
}

const FETCH_BATCH = 100;
// pg_type categories whose values stay small: numeric, boolean, date/time, timespan, enum, network address.
const SMALL_CATEGORIES = new Set(["N", "B", "D", "T", "E", "I"]);
const SMALL_VALUE_BYTES = 200;

/** About how many bytes a row takes as text. */
const rowBytes = (row: unknown[]) =>
  row.reduce<number>((n, v) => n + (v === null ? 0 : typeof v === "string" ? v.length : (JSON.stringify(v)?.length ?? 0)), 0);
const quoteIdent = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** Which columns (by position) can hold large values. */
async function largeColumns(client: pg.Client, fields: Array<{ dataTypeID: number }>): Promise<boolean[]> {
  const oids = [...new Set(fields.map((f) => f.dataTypeID))];
  const { rows } = await client.query<{ oid: number; typcategory: string }>("SELECT oid::int, typcategory FROM pg_type WHERE oid = ANY($1::oid[])", [oids]);
  const category = new Map(rows.map((r) => [r.oid, r.typcategory]));
  return fields.map((f) => !SMALL_CATEGORIES.has(category.get(f.dataTypeID) ?? "X"));
}

/**
 * Beside cursor `pglens_rows` of `query`, opens `pglens_cut_rows` with every large column cut on the server,
 * keeping column names and order. Answers the cursor to read and the worst size of one of its rows (undefined
 * when the query cannot be wrapped: it is then read as it is, a row at a time).
 */
async function declareCut(client: pg.Client, query: string, maxCell: number): Promise<{ cursor: string; worstRow?: number }> {
  const described = await client.query(extended("FETCH FORWARD 0 FROM pglens_rows"));
  const fields = described.fields ?? [];
  const large = await largeColumns(client, fields);
  const worstRow = large.reduce((n, isLarge) => n + (isLarge ? (maxCell + 1) * 4 : SMALL_VALUE_BYTES), 0);
  if (!large.some(Boolean)) return { cursor: "pglens_rows", worstRow };
  const columns = fields.map((f, i) => (large[i] ? `left(q.c${i}::text, ${maxCell + 1}) AS ${quoteIdent(f.name)}` : `q.c${i} AS ${quoteIdent(f.name)}`));
  const inner = query.replace(/;\s*$/, "");
  await client.query("SAVEPOINT pglens_cut");
  try {
    // The newline ends a trailing -- comment; the positional aliases make duplicate or odd names harmless.
    await client.query(
      extended(`DECLARE pglens_cut_rows NO SCROLL CURSOR FOR SELECT ${columns.join(", ")} FROM (${inner}\n) AS q(${fields.map((_, i) => `c${i}`).join(", ")})`),
    );
    return { cursor: "pglens_cut_rows", worstRow };
  } catch {
    await client.query("ROLLBACK TO SAVEPOINT pglens_cut");
    return { cursor: "pglens_rows" };
  }
}

/** The first `limit + 1` rows of `query` (one more tells that more exist), within `maxBytes`. */
export async function fetchCapped(client: pg.Client, query: string, limit: number, maxBytes: number, maxCell: number): Promise<CappedRows> {
  // A query that can be a cursor is fetched through one, so only the rows (and bytes) needed ever leave the server.
  await client.query("SAVEPOINT pglens_cursor");
  try {
    await client.query(extended(`DECLARE pglens_rows NO SCROLL CURSOR FOR ${query}`));
  } catch (err) {
    const code = (err as { code?: string }).code;
    // 42601 syntax error / 0A000 feature not supported: not a query a cursor can hold (SHOW, EXPLAIN, ...).
    if (code !== "42601" && code !== "0A000") throw err;
    await client.query("ROLLBACK TO SAVEPOINT pglens_cursor");
    const whole = await client.query(extended(query));
    return { fields: whole.fields ?? [], rows: (whole.rows as unknown[][]) ?? [], command: whole.command, bytesCut: false };
  }
  const { cursor, worstRow } = await declareCut(client, query, maxCell);
  const rows: unknown[][] = [];
  let fields: Array<{ name: string }> = [];
  let bytes = 0;
  while (rows.length <= limit && bytes <= maxBytes) {
    const fitting = worstRow === undefined ? 1 : Math.max(1, Math.floor((maxBytes - bytes) / Math.max(1, worstRow)));
    const batch = await client.query(extended(`FETCH FORWARD ${Math.min(FETCH_BATCH, fitting, limit + 1 - rows.length)} FROM ${cursor}`));
    fields = batch.fields ?? fields;
    for (const row of batch.rows as unknown[][]) {
      bytes += rowBytes(row);
      if (bytes > maxBytes) break;
      rows.push(row);
    }
    if (batch.rows.length === 0 || rows.length > limit) break;
  }
  return { fields, rows, command: "SELECT", bytesCut: bytes > maxBytes };
}
