import { classify } from "./errors.ts";
import { INT8_OID, NUMERIC_OID, parseNumber } from "./type-parsers.ts";
import type { Driver, DriverKind } from "./types.ts";

/** What node-postgres' Pool and Neon's WebSocket Pool have in common. */
export interface PgLikePool {
  query(sql: string, params?: unknown[]): Promise<{ rows: unknown[] }>;
  connect(): Promise<PgLikeClient>;
  end(): Promise<void>;
  on(event: "error", listener: (err: Error) => void): unknown;
}
interface PgLikeClient {
  query(sql: string, params?: unknown[]): Promise<{ rows: unknown[] }>;
  release(destroy?: boolean | Error): void;
}

interface TypeParserSource {
  getTypeParser(oid: number, format?: string): (text: string) => unknown;
}

/** A `types` option for pg-compatible pools that applies the driver contract's parsing. */
export function contractTypes(base: TypeParserSource): TypeParserSource {
  return {
    getTypeParser(oid, format) {
      if ((oid === INT8_OID || oid === NUMERIC_OID) && format !== "binary") return parseNumber;
      return base.getTypeParser(oid, format);
    },
  };
}

async function run<R extends object>(target: PgLikeClient | PgLikePool, sql: string, params?: readonly unknown[]): Promise<R[]> {
  try {
    const result = await target.query(sql, params ? [...params] : undefined);
    return result.rows as R[];
  } catch (err) {
    throw classify(err);
  }
}

/** `setup`: a statement each pooled connection runs once, before its first query (failures ignored). */
export function poolDriver(kind: DriverKind, pool: PgLikePool, setup?: string): Driver {
  // An idle client losing its connection must not crash the process; the next query reports it.
  pool.on("error", () => {});
  const counts = pool as Partial<Record<"totalCount" | "idleCount" | "waitingCount", number>>;
  const prepared = new WeakSet<PgLikeClient>();
  const checkout = async (): Promise<PgLikeClient> => {
    let client: PgLikeClient;
    try {
      client = await pool.connect();
    } catch (err) {
      throw classify(err);
    }
    if (setup && !prepared.has(client)) {
      prepared.add(client);
      await client.query(setup).catch(() => {});
    }
    return client;
  };
  return {
    kind,
    poolStats: () => ({ total: counts.totalCount ?? 0, idle: counts.idleCount ?? 0, waiting: counts.waitingCount ?? 0 }),
    query: async (sql, params) => {
      if (!setup) return run(pool, sql, params);
      const client = await checkout();
      try {
        return await run(client, sql, params);
      } finally {
        client.release();
      }
    },
    async transaction(work) {
      const client = await checkout();
      try {
        await run(client, "BEGIN");
        const result = await work({ query: (sql, params) => run(client, sql, params) });
        await run(client, "COMMIT");
        client.release();
        return result;
      } catch (err) {
        await client.query("ROLLBACK").then(
          () => client.release(),
          (rollbackErr: Error) => client.release(rollbackErr),
        );
        throw err;
      }
    },
    close: () => pool.end(),
  };
}
