import { PGlite } from "@electric-sql/pglite";
import { vector } from "@electric-sql/pglite-pgvector";
import { classify } from "./errors.ts";
import { INT8_OID, NUMERIC_OID, parseNumber } from "./type-parsers.ts";
import type { Driver, Queryable } from "./types.ts";

const parsers = { [INT8_OID]: parseNumber, [NUMERIC_OID]: parseNumber };

type PGliteLike = Pick<PGlite, "query" | "transaction" | "close">;

function queryOf(db: Pick<PGlite, "query">): Queryable["query"] {
  return async <R extends object>(sql: string, params?: readonly unknown[]) => {
    try {
      const result = await db.query<R>(sql, params ? [...params] : undefined);
      return result.rows;
    } catch (err) {
      throw classify(err);
    }
  };
}

export function pgliteDriver(db: PGliteLike): Driver {
  return {
    kind: "pglite",
    query: queryOf(db),
    transaction: (work) => db.transaction((tx) => work({ query: queryOf(tx) })),
    close: () => db.close(),
  };
}

/**
 * Embedded Postgres in WebAssembly; `dataDir` persists on disk, absent means in memory. pgvector comes
 * loaded, so memories get vector search on the embedded datastore too.
 */
export async function openPglite(dataDir?: string, options: { loadDataDir?: Blob | File } = {}): Promise<Driver> {
  const db = await PGlite.create({ dataDir, parsers, loadDataDir: options.loadDataDir, extensions: { vector } });
  return pgliteDriver(db);
}
