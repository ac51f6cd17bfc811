/** Registers a real PostgreSQL server as a monitored connection, its password sealed like the API does. */
import type { Queryable } from "../../drivers/types.ts";
import { seal } from "../../src/auth/secret-box.ts";
import { resolveConfig } from "../../src/config.ts";
import { createLogger } from "../../src/log.ts";

export const TEST_SECRET = "test secret for sealing passwords";

/** The configuration and a quiet logger for running the collector and alerter against test servers. */
export const monitoringConfig = resolveConfig({}, { PGLENS_SECRET: TEST_SECRET });
export const quietLog = createLogger("error");
export const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function registerServer(db: Queryable, name: string, serverUrl: string): Promise<number> {
  const url = new URL(serverUrl);
  const password = url.password ? await seal(decodeURIComponent(url.password), TEST_SECRET) : null;
  const [row] = await db.query<{ id: number }>(
    `INSERT INTO connections (name, host, port, database_name, username, password_secret, sslmode, is_monitored, is_shared)
     VALUES ($1, $2, $3, $4, $5, $6, 'disable', true, true) RETURNING id`,
    [name, url.hostname, Number(url.port || 5432), url.pathname.slice(1) || "postgres", decodeURIComponent(url.username), password],
  );
  return row.id;
}

/** Every probe at `seconds`, so a test sees several runs quickly. */
export async function collectEvery(db: Queryable, seconds: number): Promise<void> {
  await db.query("UPDATE probe_configs SET collection_interval_seconds = $1 WHERE scope = 'global'", [seconds]);
}

export const MONITOR_ROLE = "pglens_test_monitor"; // not `pglens demo --monitor-role`'s pglens_monitor, which the CLI test re-passwords
export const MONITOR_PASSWORD = "monitor password 123";

/**
 * The URL of a pg_monitor login on the server (made once per server): the role the live tools are meant to
 * run as. A superuser URL would make them refuse (see docs/security.md).
 */
export async function monitorRoleUrl(serverUrl: string): Promise<string> {
  const { default: pg } = await import("pg");
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`DO $$ BEGIN
        CREATE ROLE ${MONITOR_ROLE} LOGIN PASSWORD '${MONITOR_PASSWORD}' IN ROLE pg_monitor;
      EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$`);
  } finally {
    await admin.end();
  }
  const url = new URL(serverUrl);
  url.username = MONITOR_ROLE;
  url.password = MONITOR_PASSWORD;
  return url.toString();
}
