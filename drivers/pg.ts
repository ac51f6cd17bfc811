import pg from "pg";
import { contractTypes, poolDriver } from "./pool-driver.ts";
import type { Driver } from "./types.ts";

export interface PgOptions {
  max?: number;
  connectTimeoutMs?: number;
  applicationName?: string;
}

/** node-postgres pool: self-hosted Postgres (and, bundled with nodejs_compat, Workers via TCP sockets). */
export function openPg(url: string, options: PgOptions = {}): Driver {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max ?? 10,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 5000,
    idleTimeoutMillis: 30_000,
    application_name: options.applicationName ?? "pglens",
    types: contractTypes(pg.types),
  });
  // The metrics reads are short statements whose row estimates can be far too high (a LATERAL per time range);
  // JIT compiling them costs more than running them (measured: 0.8 s of a 0.9 s statement). A SET rather than a
  // startup option, which poolers such as PgBouncer refuse; where it fails, JIT simply stays as configured.
  return poolDriver("pg", pool, "SET jit = off");
}
