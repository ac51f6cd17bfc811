/**
 * The one interface the rest of pglens uses to reach the datastore.
 *
 * Contract shared by every implementation (checked by test/drivers/drivers.test.ts):
 * - parameters are positional (`$1`, `$2`, ...), one statement per call;
 * - `int8` and `numeric` come back as JS numbers, `timestamptz` as `Date`, `json`/`jsonb` parsed;
 * - a failure to reach the server is thrown as `DatastoreUnavailableError`; SQL errors keep their SQLSTATE `code`.
 */
export type Row = Record<string, unknown>;

export interface QueryOptions {
  /**
   * The statement is one of a few long reads whose best plan does not depend on its parameters' values (index
   * lookups over time ranges whose partitions are pruned as it runs). A driver may keep it prepared on its
   * connections and plan it once each (a generic plan) rather than on every call; others ignore the hint.
   */
  reusePlan?: boolean;
}

export interface Queryable {
  query<R extends object = Row>(sql: string, params?: readonly unknown[], options?: QueryOptions): Promise<R[]>;
}

export interface Driver extends Queryable {
  readonly kind: DriverKind;
  /** Runs `work` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
  /** Connections of a pooled driver: open, idle, and requests waiting for one (self-monitoring). */
  poolStats?(): { total: number; idle: number; waiting: number };
}

export const DRIVER_KINDS = ["pg", "neon-http", "neon-ws", "pglite"] as const;
export type DriverKind = (typeof DRIVER_KINDS)[number];

/** Where the Neon driver sends its traffic; unset means Neon's hosted proxy. */
export interface NeonEndpoints {
  fetchEndpoint?: string;
  wsProxy?: string;
  secureWebSocket?: boolean;
}
