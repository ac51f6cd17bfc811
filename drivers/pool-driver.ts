import { classify } from "./errors.ts";
import { INT8_OID, NUMERIC_OID, parseNumber } from "./type-parsers.ts";
import type { Driver, DriverKind, QueryOptions } from "./types.ts";

/** What node-postgres' Pool and Neon's WebSocket Pool have in common. */
export interface PgLikePool {
  query(sql: string, params?: unknown[]): Promise<{ rows: unknown[] }>;
  connect(): Promise<PgLikeClient>;
  end(): Promise<void>;
  on(event: "error", listener: (err: Error) => void): unknown;
}
interface PgLikeClient {
  query(sql: string | NamedStatement, params?: unknown[]): Promise<{ rows: unknown[] }>;
  release(destroy?: boolean | Error): void;
  on?(event: "error", listener: (err: Error) => void): unknown;
}
interface NamedStatement {
  name: string;
  text: string;
  values?: unknown[];
}

/** Where `reusePlan` statements run: a pool of its own, since the plan cache mode its sessions set is per session. */
export interface PlanReuse {
  pool: PgLikePool;
  /** Run once per connection; must set `plan_cache_mode = force_generic_plan`. */
  setup: string;
  /** Prepared statements one connection keeps: the most recently used. */
  perConnection: number;
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

async function run<R extends object>(target: PgLikeClient | PgLikePool, sql: string, params?: readonly unknown[], name?: string): Promise<R[]> {
  try {
    const values = params ? [...params] : undefined;
    const result = await (name ? (target as PgLikeClient).query({ name, text: sql, values }) : target.query(sql, values));
    return result.rows as R[];
  } catch (err) {
    throw classify(err);
  }
}

/** A pool's connections, each having run `setup` once before its first query (failures ignored). */
function checkouts(pool: PgLikePool, setup: string | undefined): () => Promise<PgLikeClient> {
  // An idle client losing its connection must not crash the process; the next query reports it.
  pool.on("error", () => {});
  const ready = new WeakSet<PgLikeClient>();
  return async () => {
    let client: PgLikeClient;
    try {
      client = await pool.connect();
    } catch (err) {
      throw classify(err);
    }
    if (!ready.has(client)) {
      ready.add(client);
      // Nor one in use (its backend terminated mid-transaction, say): the query under way fails with it.
      client.on?.("error", () => {});
      if (setup) await client.query(setup).catch(() => {});
    }
    return client;
  };
}

/** A prepared statement that the server does not know, or knows already: a pooler that moves sessions between servers. */
const LOST_STATEMENT = new Set(["26000", "42P05"]);

/**
 * Forgets a prepared statement, on the server and in node-postgres, whose record of what it has prepared is
 * internal: false where that record is not found (another driver version), and the connection must go instead.
 */
async function deallocate(client: PgLikeClient, name: string): Promise<boolean> {
  const records = (client as { connection?: Record<string, unknown> }).connection;
  const kept = [records?.parsedStatements, records?.submittedNamedStatements].filter((r): r is Record<string, unknown> => typeof r === "object" && r !== null);
  if (!kept.length) return false;
  if (kept.some((r) => name in r)) await client.query(`DEALLOCATE ${name}`); // else its parse failed: nothing to forget
  for (const r of kept) delete r[name];
  return true;
}

/**
 * `reusePlan` statements as named prepared statements, planned once per connection with a generic plan: the long
 * metrics reads cost PostgreSQL more to plan than to run (a filter's read by difference: 5 ms to plan, 3 to run).
 * Each connection keeps its `perConnection` most recently used (a plan holds about a megabyte of the datastore's
 * memory). Behind a pooler that loses prepared statements, they run as `ordinary` statements from then on.
 */
function planReuser(plans: PlanReuse, ordinary: <R extends object>(sql: string, params?: readonly unknown[]) => Promise<R[]>) {
  const checkout = checkouts(plans.pool, plans.setup);
  const names = new WeakMap<PgLikeClient, Map<string, string>>(); // per connection: statement text -> its name, least recently used first
  let unsupported = false;
  let next = 0;
  return async <R extends object>(sql: string, params?: readonly unknown[]): Promise<R[]> => {
    if (unsupported) return ordinary<R>(sql, params);
    const client = await checkout();
    let replace = false;
    try {
      let known = names.get(client);
      if (!known) names.set(client, (known = new Map()));
      let name = known.get(sql);
      if (name) known.delete(sql);
      else {
        const [oldest] = known;
        if (oldest && known.size >= plans.perConnection) {
          if (await deallocate(client, oldest[1])) known.delete(oldest[0]);
          else replace = true;
        }
        name = `pglens_${++next}`;
      }
      known.set(sql, name);
      return await run<R>(client, sql, params, name);
    } catch (err) {
      if (!LOST_STATEMENT.has((err as { code?: string }).code ?? "")) throw err;
      unsupported = replace = true;
      return ordinary<R>(sql, params);
    } finally {
      client.release(replace);
    }
  };
}

/**
 * `setup`: a statement each pooled connection runs once, before its first query (failures ignored); `plans`: where
 * `reusePlan` statements run (else they run as any other).
 */
export function poolDriver(kind: DriverKind, pool: PgLikePool, setup?: string, plans?: PlanReuse): Driver {
  const counts = (p: PgLikePool) => p as Partial<Record<"totalCount" | "idleCount" | "waitingCount", number>>;
  const stat = (key: "totalCount" | "idleCount" | "waitingCount") => (counts(pool)[key] ?? 0) + (plans ? (counts(plans.pool)[key] ?? 0) : 0);
  const checkout = checkouts(pool, setup);
  const ordinary = async <R extends object>(sql: string, params?: readonly unknown[]): Promise<R[]> => {
    if (!setup) return run<R>(pool, sql, params);
    const client = await checkout();
    try {
      return await run<R>(client, sql, params);
    } finally {
      client.release();
    }
  };
  const reusingPlan = plans && planReuser(plans, ordinary);
  const query = <R extends object>(sql: string, params?: readonly unknown[], options?: QueryOptions): Promise<R[]> =>
    options?.reusePlan && reusingPlan ? reusingPlan<R>(sql, params) : ordinary<R>(sql, params);
  return {
    kind,
    poolStats: () => ({ total: stat("totalCount"), idle: stat("idleCount"), waiting: stat("waitingCount") }),
    query,
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
    close: async () => {
      await Promise.all([pool.end(), plans?.pool.end()]);
    },
  };
}
