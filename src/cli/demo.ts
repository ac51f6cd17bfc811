/** `pglens demo`: something real to look at, at once. */
import { randomBytes } from "node:crypto";
import { parseArgs } from "node:util";
import pg from "pg";
import type { Driver } from "../../drivers/types.ts";
import { seal } from "../auth/secret-box.ts";
import { loadDemoEvents } from "../collector/demo-events.ts";
import { DEMO_HOST, loadDemoHistory } from "../collector/demo-history.ts";
import { createConnection, listConnections, updateConnection } from "../datastore/connections.ts";
import { countUsers } from "../datastore/users.ts";
import { loadNodeConfig } from "../config-file.ts";
import { embeddedSecret } from "../embedded-secret.ts";
import { withDatastore } from "./common.ts";
import { UsageError } from "./usage-error.ts";
import { parserOptions } from "./options.ts";

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

interface RoleChoice {
  create: boolean;
  name: string;
  /** Set a new password on a role that exists (others may log in with the old one). */
  resetPassword: boolean;
}

/**
 * Live tools refuse superuser logins: with --monitor-role, make a pg_monitor login role with a generated password
 * on the server and register that instead. A role that exists keeps its password unless --reset-password: another
 * install may log in with it. Answers the URL to register.
 */
async function monitorRole(url: string, role: RoleChoice): Promise<string> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  await client.connect();
  try {
    const [{ rolsuper }] = (await client.query<{ rolsuper: boolean }>("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")).rows;
    if (!rolsuper) return url;
    if (!role.create) {
      console.error(
        `warning: ${decodeURIComponent(new URL(url).username || "postgres")} is a superuser; the live tools will refuse this connection. Run again with --monitor-role to monitor as a pg_monitor role, or give the connection a pg_monitor live_username`,
      );
      return url;
    }
    const exists = (await client.query("SELECT 1 FROM pg_roles WHERE rolname = $1", [role.name])).rowCount! > 0;
    if (exists && !role.resetPassword) {
      throw new UsageError(
        `role ${role.name} already exists and pglens does not know its password; pass --reset-password to give it a new one (anything else logging in as it will need the new one), or --role NAME for a role of its own`,
      );
    }
    const password = randomBytes(24).toString("base64url");
    const ident = (await client.query<{ q: string }>("SELECT quote_ident($1) AS q", [role.name])).rows[0].q;
    await client.query(exists ? `ALTER ROLE ${ident} LOGIN PASSWORD '${password}'` : `CREATE ROLE ${ident} LOGIN PASSWORD '${password}' IN ROLE pg_monitor`);
    await client.query(`GRANT pg_monitor TO ${ident}`);
    const monitored = new URL(url);
    monitored.username = role.name;
    monitored.password = password;
    console.error(
      `${exists ? "gave role" : "created role"} ${role.name} (pg_monitor) ${exists ? "a new" : "with a"} generated password; pglens monitors as it`,
    );
    return monitored.toString();
  } finally {
    await client.end().catch(() => {});
  }
}

export async function demoCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: parserOptions("demo") });
  const roleName = values.role ?? MONITOR_ROLE;
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(roleName))
    throw new UsageError(`--role: a PostgreSQL role name of lower-case letters, digits and _ (got ${JSON.stringify(roleName)})`);
  if ((values.role || values["reset-password"]) && !values["monitor-role"]) throw new UsageError("--role and --reset-password go with --monitor-role");
  const config = loadNodeConfig();
  return withDatastore(async (db) => {
    // Read once the datastore is open: its directory is locked and laid out by then.
    const secret = config.secret ?? (config.datastore.url ? undefined : embeddedSecret(config.datastore.data_dir));
    if ((await countUsers(db)) === 0) throw new UsageError("create a user first (start the service once, or `pglens user create`)");
    const server = values.server ?? LOCAL;
    if (!values["history-only"] && (await reachable(server))) {
      const url = new URL(
        await monitorRole(server, { create: values["monitor-role"] ?? false, name: roleName, resetPassword: values["reset-password"] ?? false }),
      );
      const name = `local-${url.hostname}-${url.port || 5432}${values["monitor-role"] && url.username === roleName ? "-monitor" : ""}`;
      const passwordSecret = url.password ? await seal(decodeURIComponent(url.password), secret) : null;
      // Registered before (say, before its role's password was reset): the same connection, with the new password.
      const known = (await listConnections(db)).find((c) => c.name === name && c.username === decodeURIComponent(url.username || "postgres"));
      if (known) {
        await updateConnection(db, known.id, { password_secret: passwordSecret });
        console.error(`connection ${known.id} (${name}) already watches ${url.hostname}:${url.port || 5432}; its stored password is updated`);
        return 0;
      }
      const conn = await createConnection(db, {
        name,
        host: url.hostname,
        port: Number(url.port || 5432),
        database_name: url.pathname.slice(1) || "postgres",
        username: decodeURIComponent(url.username || "postgres"),
        password_secret: passwordSecret,
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
