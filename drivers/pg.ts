import pg from "pg";
import { contractTypes, poolDriver } from "./pool-driver.ts";
import type { Driver } from "./types.ts";

export interface PgOptions {
  max?: number;
  connectTimeoutMs?: number;
  applicationName?: string;
  /**
   * The connections kept for `reusePlan` statements and the prepared statements each keeps (default 4 and 16);
   * false where the driver lives for one request (Workers), which would only open one more connection for them.
   */
  plans?: { connections: number; perConnection: number } | false;
}

/** node-postgres pool: self-hosted Postgres (and, bundled with nodejs_compat, Workers via TCP sockets). */
export function openPg(url: string, options: PgOptions = {}): Driver {
  const poolOf = (max: number, idleTimeoutMillis: number) =>
    new pg.Pool({
      connectionString: url,
      max,
      connectionTimeoutMillis: options.connectTimeoutMs ?? 5000,
      idleTimeoutMillis,
      application_name: options.applicationName ?? "pglens",
      types: contractTypes(pg.types),
    });
  const pool = poolOf(options.max ?? 10, 30_000);
  // The metrics reads are short statements whose row estimates can be far too high (a LATERAL per time range);
  // JIT compiling them costs more than running them (measured: 0.8 s of a 0.9 s statement). A SET rather than a
  // startup option, which poolers such as PgBouncer refuse; where it fails, JIT simply stays as configured.
  if (options.plans === false) return poolDriver("pg", pool, "SET jit = off");
  // The long metrics reads (`reusePlan`) run on a few connections of their own that keep them prepared with a
  // generic plan, planned once per connection: planning was most of such a read (partitions are pruned as it runs
  // instead). Idle for ten minutes before closing, so that a dashboard refreshing every minute keeps its plans; each
  // keeps its 16 most recently used, so at most 4 x 16 plans of about a megabyte each in the datastore's memory.
  const { connections, perConnection } = options.plans ?? { connections: 4, perConnection: 16 };
  const plans = { pool: poolOf(connections, 600_000), setup: "SET jit = off; SET plan_cache_mode = force_generic_plan", perConnection };
  return poolDriver("pg", pool, "SET jit = off", plans);
}
