/**
 * Attempts to write, to reach beyond the database, or to hold the server through the live tools. They run
 * as a non-superuser pg_monitor role (which may even write `victim`, so refusals come from the read-only
 * transaction, not from missing grants). Every attempt must fail with a clear message and change nothing.
 */
import { existsSync } from "node:fs";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callTool } from "../../src/mcp/call.ts";
import { loadAuthority } from "../../src/auth/rbac.ts";
import { seal } from "../../src/auth/secret-box.ts";
import { resolveConfig } from "../../src/config.ts";
import { createLogger } from "../../src/log.ts";
import { migratedDatastore, type TestDatastore } from "../support/datastore.ts";
import { TEST_SECRET, registerServer } from "../support/monitored.ts";
import { startEmbeddedPostgres, type TestServer } from "../support/postgres.ts";

let server: TestServer;
let store: TestDatastore;
let admin: pg.Client;
let bystander: pg.Client;
let conn: number;
let call: (name: string, args: Record<string, unknown>) => ReturnType<typeof callTool>;
let superConn: number;
let callAs: (config: Record<string, unknown>, name: string, args: Record<string, unknown>) => ReturnType<typeof callTool>;
let callLive: (name: string, args: Record<string, unknown>) => ReturnType<typeof callTool>;
let callAsLogin: (login: string, asLiveUsername: boolean, name: string, args: Record<string, unknown>) => ReturnType<typeof callTool>;

const MONITOR_PASSWORD = "monitor password 123";

beforeAll(async () => {
  server = await startEmbeddedPostgres();
  admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  await admin.query(`
    CREATE TABLE victim (id int PRIMARY KEY, note text);
    INSERT INTO victim VALUES (1, 'original');
    CREATE SEQUENCE victim_seq;
    CREATE FUNCTION evil() RETURNS int LANGUAGE plpgsql AS $$ BEGIN INSERT INTO victim VALUES (99, 'evil'); RETURN 1; END $$;
    CREATE PROCEDURE evil_proc() LANGUAGE plpgsql AS $$ BEGIN DELETE FROM victim; END $$;
    CREATE ROLE pglens_monitor LOGIN PASSWORD '${MONITOR_PASSWORD}' IN ROLE pg_monitor;
    GRANT SELECT, INSERT, UPDATE, DELETE ON victim TO pglens_monitor;
    GRANT USAGE, UPDATE ON SEQUENCE victim_seq TO pglens_monitor;
    GRANT CREATE ON SCHEMA public TO pglens_monitor;
    CREATE EXTENSION dblink;
    CREATE ROLE pglens_live NOLOGIN IN ROLE pg_monitor;
    GRANT SELECT, INSERT, UPDATE, DELETE ON victim TO pglens_live;
    CREATE ROLE su_role SUPERUSER NOLOGIN;
    CREATE ROLE su_middle NOLOGIN IN ROLE su_role;
    CREATE ROLE repl_role REPLICATION NOLOGIN;
    CREATE ROLE noinherit_su LOGIN NOINHERIT PASSWORD '${MONITOR_PASSWORD}' IN ROLE pg_monitor, su_role;
    CREATE ROLE deep_su LOGIN PASSWORD '${MONITOR_PASSWORD}' IN ROLE pg_monitor, su_middle;
    CREATE ROLE deep_repl LOGIN NOINHERIT PASSWORD '${MONITOR_PASSWORD}' IN ROLE pg_monitor;
    CREATE ROLE repl_middle NOLOGIN IN ROLE repl_role;
    GRANT repl_middle TO deep_repl;`);
  bystander = new pg.Client({ connectionString: server.url, application_name: "bystander" });
  bystander.on("error", () => {});
  await bystander.connect();

  store = await migratedDatastore("pglite");
  const url = new URL(server.url);
  url.username = "pglens_monitor";
  url.password = MONITOR_PASSWORD;
  conn = await registerServer(store.db, "victim-server", url.toString());
  const [root] = await store.db.query<{ id: number }>("INSERT INTO users (username, is_superuser) VALUES ('root', true) RETURNING id");
  const access = await loadAuthority(store.db, { userId: root.id, username: "root", isSuperuser: true, via: "api_token", tokenHash: "x" });
  const config = resolveConfig({ live_tools: { statement_timeout_ms: 1500 } }, { PGLENS_SECRET: TEST_SECRET });
  call = (name, args) =>
    callTool(name, { connection_id: conn, ...args }, { db: store.db, readDb: store.db, now: Date.now(), access, config, log: createLogger("error") });
  superConn = await registerServer(store.db, "superuser-login", server.url);
  callAs = (live, name, args) =>
    callTool(
      name,
      { connection_id: superConn, ...args },
      {
        db: store.db,
        readDb: store.db,
        now: Date.now(),
        access,
        config: resolveConfig({ live_tools: { statement_timeout_ms: 1500, ...live } }, { PGLENS_SECRET: TEST_SECRET }),
        log: createLogger("error"),
      },
    );
  // The collector's login is the superuser; the live tools have a pg_monitor login of their own.
  const liveConn = await registerServer(store.db, "superuser-with-live-login", server.url);
  await store.db.query("UPDATE connections SET live_username = 'pglens_monitor', live_password_secret = $2 WHERE id = $1", [
    liveConn,
    await seal(MONITOR_PASSWORD, TEST_SECRET),
  ]);
  callLive = (name, args) =>
    callTool(name, { connection_id: liveConn, ...args }, { db: store.db, readDb: store.db, now: Date.now(), access, config, log: createLogger("error") });
  callAsLogin = async (login, asLiveUsername, name, args) => {
    const url = new URL(server.url);
    if (!asLiveUsername) [url.username, url.password] = [login, MONITOR_PASSWORD];
    const id = await registerServer(store.db, `${login}-${asLiveUsername}`, url.toString());
    if (asLiveUsername)
      await store.db.query("UPDATE connections SET live_username = $2, live_password_secret = $3 WHERE id = $1", [
        id,
        login,
        await seal(MONITOR_PASSWORD, TEST_SECRET),
      ]);
    return callTool(name, { connection_id: id, ...args }, { db: store.db, readDb: store.db, now: Date.now(), access, config, log: createLogger("error") });
  };
});

afterAll(async () => {
  await bystander.end().catch(() => {});
  await admin.end();
  await store.close();
  await server.stop();
});

const QUERIES: Array<[string, RegExp]> = [
  ["INSERT INTO victim VALUES (2, 'x')", /read-only transaction/],
  ["UPDATE victim SET note = 'changed'", /read-only transaction/],
  ["DELETE FROM victim", /read-only transaction/],
  ["SELECT 1; DELETE FROM victim", /multiple commands/],
  ["COMMIT; DELETE FROM victim", /multiple commands/],
  ["SET TRANSACTION READ WRITE", /read-only transaction|read-write mode/],
  ["WITH gone AS (DELETE FROM victim RETURNING *) SELECT * FROM gone", /read-only transaction/],
  ["SELECT evil()", /read-only transaction/],
  ["SELECT nextval('victim_seq')", /read-only transaction/],
  ["DO $$ BEGIN DELETE FROM victim; END $$", /read-only transaction/],
  ["CALL evil_proc()", /read-only transaction/],
  ["CREATE TEMP TABLE scratch (x int)", /read-only transaction/],
  ["CREATE TABLE owned (x int)", /read-only transaction/],
  ["COPY victim TO PROGRAM 'touch /tmp/pglens-pwned-program'", /permission denied|superuser|pg_execute_server_program|read-only/],
  ["COPY (SELECT 1) TO '/tmp/pglens-pwned-file'", /permission denied|superuser|pg_write_server_files|read-only/],
  ["SELECT pg_read_file('/etc/passwd')", /permission denied/],
  ["SELECT lo_import('/etc/passwd')", /permission denied|read-only/],
  ["SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'bystander'", /permission denied|must be a (member|superuser)/],
  ["LOCK TABLE victim IN ACCESS EXCLUSIVE MODE", /refused: the statement took AccessExclusiveLock on victim/],
  ["SELECT pg_advisory_lock(42)", /refused: the statement took ExclusiveLock on advisory/],
  ["SELECT * FROM victim FOR UPDATE", /read-only transaction/],
  ["SELECT pg_sleep(3600)", /statement timeout/],
  ["VACUUM victim", /transaction block/],
  ["ALTER SYSTEM SET work_mem = '1GB'", /transaction block|permission denied/],
  ["SELECT dblink_exec('dbname=postgres', 'DELETE FROM victim')", /password or GSSAPI delegated credentials required|password is required/],
];

const EXPLAINS: Array<[Record<string, unknown>, RegExp]> = [
  [{ statement: "INSERT INTO victim VALUES (3, 'x')", analyze: true }, /read-only transaction/],
  [{ statement: "DELETE FROM victim", analyze: true, buffers: true }, /read-only transaction/],
  [{ statement: "SELECT 1; DELETE FROM victim" }, /multiple commands/],
  [{ statement: "SELECT evil()", analyze: true }, /read-only transaction/],
  [{ statement: "SELECT pg_sleep(3600)", analyze: true }, /statement timeout/],
  [{ statement: "UPDATE victim SET note = 'x' RETURNING *", analyze: true, format: "json" }, /read-only transaction/],
];

describe("query_database refuses", () => {
  it.each(QUERIES)("%s", async (query, message) => {
    const result = await call("query_database", { query });
    expect(result.isError).toBe(true);
    expect(result.content[0].text).toMatch(message);
  });
});

describe("execute_explain refuses", () => {
  it.each(EXPLAINS)("%o", async (args, message) => {
    const result = await call("execute_explain", args);
    expect(result.isError).toBe(true);
    expect(result.content[0].text).toMatch(message);
  });
});

// Finding 4: on a superuser login the read-only transaction alone does not hold (dblink_exec, COPY TO PROGRAM,
// server files, pg_authid, other sessions, replication slots, statistics, checkpoints).
const SUPERUSER_ATTACKS: Array<[string, RegExp]> = [
  ["SELECT dblink_exec('dbname=postgres user=postgres', 'DELETE FROM victim')", /password or GSSAPI delegated credentials required|password is required/],
  ["SELECT dblink_exec('dbname=postgres user=postgres', 'CHECKPOINT')", /password or GSSAPI delegated credentials required|password is required/],
  ["COPY victim TO PROGRAM 'touch /tmp/pglens-pwned-program'", /permission denied|pg_execute_server_program|read-only/],
  ["COPY (SELECT 1) TO '/tmp/pglens-pwned-file'", /permission denied|pg_write_server_files|read-only/],
  ["SELECT pg_read_file('/etc/passwd')", /permission denied/],
  ["SELECT rolname, rolpassword FROM pg_authid", /permission denied/],
  ["SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'bystander'", /permission denied|must be a (member|superuser)/],
  ["SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = 'bystander'", /permission denied|must be a (member|superuser)/],
  ["SELECT pg_create_physical_replication_slot('pglens_pwned', true)", /permission denied|must be superuser or replication|read-only/],
  ["SELECT pg_stat_reset()", /permission denied/],
];

describe("on a superuser login", () => {
  it("the live tools refuse, naming the fix, when live_tools.role is not set", async () => {
    for (const [name, args] of [
      ["query_database", { query: "SELECT 1" }],
      ["execute_explain", { statement: "SELECT 1" }],
      ["get_schema_info", {}],
    ] as const) {
      const result = await callAs({}, name, args);
      expect(result.isError).toBe(true);
      expect(result.content[0].text).toMatch(/logs in as postgres \(superuser\).*set the connection's live_username to a pg_monitor login/);
    }
  });

  it.each(SUPERUSER_ATTACKS)("with live_tools.role, refuses %s", async (query, message) => {
    const result = await callAs({ role: "pglens_live" }, "query_database", { query });
    expect(result.isError).toBe(true);
    expect(result.content[0].text).toMatch(message);
  });

  it("with live_tools.role, explain analyze cannot write through dblink either, and honest queries run as that role", async () => {
    const plan = await callAs({ role: "pglens_live" }, "execute_explain", {
      statement: "SELECT dblink_exec('dbname=postgres user=postgres', 'DELETE FROM victim')",
      analyze: true,
    });
    expect(plan.isError).toBe(true);
    const who = await callAs({ role: "pglens_live" }, "query_database", { query: "SELECT current_user AS who" });
    expect(who.content[0].text).toMatch(/\nwho\npglens_live\n/);
  });

  it("live_tools.role guards against mistakes only: the caller's own SQL can switch back (use live_username)", async () => {
    const escaped = await callAs({ role: "pglens_live" }, "query_database", {
      query: "SELECT set_config('role', 'postgres', true) AS r, current_setting('is_superuser') AS su",
    });
    expect(escaped.content[0].text).toMatch(/\nr\tsu\npostgres\ton\n/);
  });

  it("refuses a live_tools.role that is itself powerful", async () => {
    const result = await callAs({ role: "postgres" }, "query_database", { query: "SELECT 1" });
    expect(result.content[0].text).toMatch(/live_tools.role postgres itself has superuser/);
  });
});

describe("on a superuser login with a live_username", () => {
  it.each([
    ...SUPERUSER_ATTACKS,
    ["SELECT set_config('role', 'postgres', true)", /permission denied to set role/],
    ["SELECT set_config('session_authorization', 'postgres', true)", /permission denied to set session authorization/],
    ["SET ROLE postgres", /permission denied to set role/],
  ] as Array<[string, RegExp]>)("refuses %s", async (query, message) => {
    const result = await callLive("query_database", { query });
    expect(result.isError).toBe(true);
    expect(result.content[0].text).toMatch(message);
  });

  it("runs honest questions as the live login, in every live tool", async () => {
    const who = await callLive("query_database", { query: "SELECT session_user AS s, current_user AS c" });
    expect(who.content[0].text).toMatch(/\ns\tc\npglens_monitor\tpglens_monitor\n/);
    expect((await callLive("execute_explain", { statement: "SELECT 1", analyze: true })).isError).toBe(false);
    expect((await callLive("get_schema_info", { schema_name: "public" })).content[0].text).toContain("victim");
  });
});

// A login that is not powerful itself but may become a powerful role (SET ROLE works through a NOINHERIT
// membership too) would run `set_config('role', ...)` and then write through dblink_exec as a superuser.
describe("a login that is a member of a powerful role", () => {
  const BECOME_AND_WRITE =
    "SELECT set_config('role', 'su_role', true), dblink_exec('dbname=postgres user=postgres', 'INSERT INTO victim VALUES (7, ''pwned'')')";
  it.each([
    ["noinherit_su", /noinherit_su \(member of su_role, a superuser role\)|noinherit_su has member of su_role, a superuser role/],
    ["deep_su", /deep_su \(member of su_role, a superuser role\)|deep_su has member of su_role, a superuser role/],
    ["deep_repl", /deep_repl \(member of repl_role, a replication role\)|deep_repl has member of repl_role, a replication role/],
  ])("%s is refused, as the collector login and as live_username, naming the role", async (login, message) => {
    for (const asLiveUsername of [false, true]) {
      const result = await callAsLogin(login, asLiveUsername, "query_database", { query: BECOME_AND_WRITE });
      expect(result.isError).toBe(true);
      expect(result.content[0].text).toMatch(message);
    }
    expect((await admin.query("SELECT count(*)::int AS n FROM victim WHERE id = 7")).rows[0].n).toBe(0);
  });
});

describe("after every attempt", () => {
  it("leaves the database, the files and the other sessions as they were", async () => {
    expect((await admin.query("SELECT id, note FROM victim ORDER BY id")).rows).toEqual([{ id: 1, note: "original" }]);
    expect((await admin.query("SELECT to_regclass('owned') AS t")).rows).toEqual([{ t: null }]);
    expect((await admin.query("SELECT last_value, is_called FROM victim_seq")).rows).toEqual([{ last_value: "1", is_called: false }]);
    expect(existsSync("/tmp/pglens-pwned-program") || existsSync("/tmp/pglens-pwned-file")).toBe(false);
    expect((await bystander.query("SELECT 1 AS alive")).rows).toEqual([{ alive: 1 }]);
    const leftovers = await admin.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE usename = 'pglens_monitor'");
    expect(leftovers.rows[0].n).toBe(0);
    expect((await admin.query("SELECT count(*)::int AS n FROM pg_replication_slots")).rows[0].n).toBe(0);
  });

  it("still answers honest questions, cutting long results with a note", async () => {
    const result = await call("query_database", { query: "SELECT g FROM generate_series(1, 50) g", max_rows: 10 });
    expect(result.isError).toBe(false);
    expect(result.content[0].text).toMatch(/\n10\n[^\n]*>>>\n\(10 rows; more rows exist: only the first 10 are shown/);
    const show = await call("query_database", { query: "SHOW default_transaction_read_only" });
    expect(show.content[0].text).toMatch(/default_transaction_read_only\non\n/);
  });
});
