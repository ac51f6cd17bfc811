/** `pglens demo`: something real to look at, at once. */
import { randomBytes } from "node:crypto";
import { parseArgs } from "node:util";
import pg from "pg";
import type { Driver } from "../../drivers/types.ts";
import { seal } from "../auth/secret-box.ts";
import { loadDemoEvents } from "../collector/demo-events.ts";
import { DEMO_HOST, loadDemoHistory } from "../collector/demo-history.ts";
import { createConnection } from "../datastore/connections.ts";
import { countUsers } from "../datastore/users.ts";
import { loadNodeConfig } from "../config-file.ts";
import { embeddedSecret } from "../embedded-secret.ts";
import { withDatastore } from "./common.ts";
import { UsageError } from "./usage-error.ts";

const LOCAL = "postgres://postgres@127.0.0.1:5432/postgres";

/** Registers a demo connection holding a generated day of samples; the caller decides when. */
export async function createDemoConnection(db: Driver): Promise<{ id: number; rows: number }> {
  const conn = await createConnection(db, {
    name: `demo-${Date.now().toString(36)}`,
    host: DEMO_HOST,
    port: 5432,
    database_name: "postgres",
    username: "demo",
    password_secret: null,
    sslmode: "disable",
    ssl_root_cert: null,
    allow_cleartext_password: false,
    live_username: null,
    live_password_secret: null,
    is_monitored: false,
    is_shared: true,
    description: "Generated history to explore pglens; delete it when you have your own servers",
    cluster_id: null,
    owner_user_id: null,
  });
  const now = Date.now();
  const rows = await loadDemoHistory(db, conn.id, now);
  await loadDemoEvents(db, conn.id, now);
  return { id: conn.id, rows };
}

async function reachable(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  client.on("error", () => {});
  try {
    await client.connect();
    await client.query("SELECT 1");
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

const MONITOR_ROLE = "pglens_monitor";

/**
 * Live tools refuse superuser logins: with --monitor-role, make (or refresh) a pg_monitor login role with a
 * generated password on the server and register that instead. Answers the URL to register.
 */
async function monitorRole(url: string, create: boolean): Promise<string> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  await client.connect();
  try {
    const [{ rolsuper }] = (await client.query<{ rolsuper: boolean }>("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")).rows;
    if (!rolsuper) return url;
    if (!create) {
      console.error(
        `warning: ${decodeURIComponent(new URL(url).username || "postgres")} is a superuser; the live tools will refuse this connection. Run again with --monitor-role to monitor as a pg_monitor role, or give the connection a pg_monitor live_username`,
      );
      return url;
    }
    const password = randomBytes(24).toString("base64url");
    await client.query(`DO $$ BEGIN CREATE ROLE ${MONITOR_ROLE} LOGIN IN ROLE pg_monitor; EXCEPTION WHEN duplicate_object THEN NULL; END $$`);
    await client.query(`ALTER ROLE ${MONITOR_ROLE} LOGIN PASSWORD '${password}'`);
    await client.query(`GRANT pg_monitor TO ${MONITOR_ROLE}`);
    const monitored = new URL(url);
    monitored.username = MONITOR_ROLE;
    monitored.password = password;
    console.error(`created role ${MONITOR_ROLE} (pg_monitor) with a generated password; pglens monitors as it`);
    return monitored.toString();
  } finally {
    await client.end().catch(() => {});
  }
}

export async function demoCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { server: { type: "string" }, "history-only": { type: "boolean" }, "monitor-role": { type: "boolean" } } });
  const config = loadNodeConfig();
  return withDatastore(async (db) => {
    // Read once the datastore is open: its directory is locked and laid out by then.
    const secret = config.secret ?? (config.datastore.url ? undefined : embeddedSecret(config.datastore.data_dir));
    if ((await countUsers(db)) === 0) throw new UsageError("create a user first (start the service once, or `pglens user create`)");
    const server = values.server ?? LOCAL;
    if (!values["history-only"] && (await reachable(server))) {
      const url = new URL(await monitorRole(server, values["monitor-role"] ?? false));
      const conn = await createConnection(db, {
        name: `local-${url.hostname}-${url.port || 5432}${url.username === MONITOR_ROLE ? "-monitor" : ""}`,
        host: url.hostname,
        port: Number(url.port || 5432),
        database_name: url.pathname.slice(1) || "postgres",
        username: decodeURIComponent(url.username || "postgres"),
        password_secret: url.password ? await seal(decodeURIComponent(url.password), secret) : null,
        sslmode: "disable",
        ssl_root_cert: null,
        allow_cleartext_password: false,
        live_username: null,
        live_password_secret: null,
        is_monitored: true,
        is_shared: true,
        description: "Registered by pglens demo",
        cluster_id: null,
        owner_user_id: null,
      });
      console.error(`registered ${url.hostname}:${url.port || 5432} as connection ${conn.id}; the collector in \`npm start\` samples it from now on`);
      return 0;
    }
    if (values.server) throw new UsageError(`cannot reach ${values.server}`);
    const { id, rows } = await createDemoConnection(db);
    console.error(`no PostgreSQL answered on 127.0.0.1:5432; loaded a generated day of history (${rows.toLocaleString("en-US")} rows) as connection ${id}`);
    return 0;
  });
}
