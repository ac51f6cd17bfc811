import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { once } from "node:events";
import { spawn } from "node:child_process";
import { describe, expect, inject, it } from "vitest";
import { openPg } from "../drivers/pg.ts";
import { resolveCaller } from "../src/auth/principal.ts";
import { MIGRATIONS } from "../src/datastore/migrations/index.ts";
import { runCli, startServe } from "./support/cli.ts";
import { createTestDatabase, freePort } from "./support/postgres.ts";
import { VERSION } from "../src/version.ts";
import { COMMANDS, type CommandSpec } from "../src/cli/options.ts";

describe("pglens CLI", () => {
  it("serves on the embedded datastore and shuts down gracefully on SIGTERM", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "pglens-data-"));
    const port = await freePort();
    const { child, output } = await startServe({ PGLENS_DATA_DIR: dataDir, PGLENS_DATASTORE_URL: "" }, port);
    const health = await (await fetch(`http://127.0.0.1:${port}/health`)).json();
    expect(health).toMatchObject({ status: "ok", datastore: { driver: "pglite" } });
    // The first start creates `admin` with a random password kept in the data dir.
    const password = readFileSync(join(dataDir, "secrets", "initial-admin-password"), "utf8").trim();
    const login = await fetch(`http://127.0.0.1:${port}/api/v1/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username: "admin", password }),
    });
    expect(login.status).toBe(200);
    expect(output()).not.toContain(password);
    // ...and a demo connection with a generated day of history, so there is something to look at.
    const { token } = await login.json();
    const auth = { authorization: `Bearer ${token}` };
    const [demo] = await (await fetch(`http://127.0.0.1:${port}/api/v1/connections`, { headers: auth })).json();
    expect(demo.name).toMatch(/^demo-/);
    const series = await (
      await fetch(
        `http://127.0.0.1:${port}/api/v1/metrics/query?probe_name=pg_stat_database&connection_id=${demo.id}&metrics=xact_commit_per_sec,blk_read_time_pct&time_range=24h`,
        { headers: auth },
      )
    ).json();
    expect(series.every((s: { data: Array<{ value: number | null }> }) => s.data.filter((p) => p.value !== null).length > 100)).toBe(true);
    child.kill("SIGTERM");
    const [code] = await once(child, "exit");
    expect(code).toBe(0);
    expect(output()).toContain('"msg":"shutting down","signal":"SIGTERM"');
    expect(readFileSync(join(dataDir, "secrets", "secret"), "utf8").trim()).toMatch(/^[\w-]{43}$/); // generated for the embedded default
    expect(output()).toContain("(first start only)");
    // A restart opens what is there, and does not claim to be a first start.
    const again = await startServe({ PGLENS_DATA_DIR: dataDir, PGLENS_DATASTORE_URL: "" }, port);
    again.child.kill("SIGTERM");
    await once(again.child, "exit");
    expect(again.output()).toContain("opening the embedded datastore");
    expect(again.output()).not.toContain("first start only");
  }, 400_000); // two starts, each with startServe's deadline

  it("migrates a datastore and reports the schema version", async () => {
    const database = await createTestDatabase(inject("pg17Url"));
    const result = await runCli(["migrate"], { PGLENS_DATASTORE_URL: database.url });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('"msg":"datastore ready"');
    expect(result.stdout).not.toContain("postgres:postgres@"); // never the password
    const db = openPg(database.url);
    expect(await db.query("select version from schema_version order by 1")).toEqual(MIGRATIONS.map((m) => ({ version: m.version })));
    await db.close();
    await database.drop();
  });

  it("creates users and service tokens from the command line", async () => {
    const database = await createTestDatabase(inject("pg17Url"));
    const env = { PGLENS_DATASTORE_URL: database.url };
    const dir = mkdtempSync(join(tmpdir(), "pglens-cli-"));
    writeFileSync(join(dir, "pw"), "a fine long passphrase\n");
    const created = await runCli(["user", "create", "alice", "--password-file", join(dir, "pw")], env);
    expect(created.stderr).toContain("created user alice");
    expect((await runCli(["user", "create", "svc", "--service-account"], env)).code).toBe(0);
    const weak = await runCli(["user", "create", "bob", "--password", "password1234"], env);
    expect(weak.code).toBe(2);
    expect(weak.stderr).toContain("warning: a password given with --password can be read");
    expect(weak.stderr).toContain("too common");
    expect((await runCli(["user", "list"], env)).stdout).toMatch(/alice\s+enabled/);

    const token = await runCli(["token", "create", "--user", "svc", "--expires", "30d", "--note", "ci", "--json"], env);
    expect(token.code).toBe(0);
    const issued = JSON.parse(token.stdout);
    expect(issued).toMatchObject({ id: expect.any(Number), token: expect.stringMatching(/^pglens_/), owner: "svc", note: "ci" });
    const db = openPg(database.url);
    expect((await resolveCaller(db, issued.token))?.principal).toMatchObject({ username: "svc", via: "api_token" });
    const list = await runCli(["token", "list"], env);
    expect(list.stdout).toMatch(new RegExp(`${issued.id}\\s+svc`));
    expect(list.stdout).not.toContain(issued.token);
    expect((await runCli(["token", "delete", String(issued.id)], env)).code).toBe(0);
    expect(await resolveCaller(db, issued.token)).toBeNull();
    // Without --expires a token expires in 90 days; `never` must be asked for.
    const lasting = JSON.parse((await runCli(["token", "create", "--user", "svc", "--json"], env)).stdout);
    expect(Date.parse(lasting.expires_at) - Date.now()).toBeGreaterThan(89 * 86_400_000);
    expect(Date.parse(lasting.expires_at) - Date.now()).toBeLessThan(91 * 86_400_000);
    expect(JSON.parse((await runCli(["token", "create", "--user", "svc", "--expires", "never", "--json"], env)).stdout).expires_at).toBeNull();
    expect((await runCli(["token", "create", "--user", "nobody"], env)).stderr).toContain("no user named `nobody`");
    expect((await runCli(["token", "create"], env)).code).toBe(2);
    await db.close();
    await database.drop();
  });

  it("registers a reachable server with `pglens demo --server`, or loads history without one", async () => {
    const database = await createTestDatabase(inject("pg17Url"));
    const env = { PGLENS_DATASTORE_URL: database.url, PGLENS_SECRET: "demo test secret value" };
    expect((await runCli(["demo"], env)).stderr).toContain("create a user first");
    const dir = mkdtempSync(join(tmpdir(), "pglens-demo-"));
    writeFileSync(join(dir, "pw"), "a fine long passphrase\n");
    await runCli(["user", "create", "alice", "--password-file", join(dir, "pw")], env);
    const registered = await runCli(["demo", "--server", inject("pg17Url")], env);
    expect(registered.stderr).toMatch(/registered 127.0.0.1:\d+ as connection \d+/);
    expect(registered.stderr).toContain("warning: postgres is a superuser; the live tools will refuse this connection");
    // A role of this test's own: the server is shared with other tests.
    const role = `pglens_cli_${process.pid}`;
    const monitored = await runCli(["demo", "--server", inject("pg17Url"), "--monitor-role", "--role", role], env);
    expect(monitored.stderr).toContain(`created role ${role} (pg_monitor)`);
    // It exists now: pglens does not change its password (another install may use it) unless told to.
    const again = await runCli(["demo", "--server", inject("pg17Url"), "--monitor-role", "--role", role], env);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain(`role ${role} already exists and pglens does not know its password; pass --reset-password`);
    const reset = await runCli(["demo", "--server", inject("pg17Url"), "--monitor-role", "--role", role, "--reset-password"], env);
    expect(reset.stderr).toContain(`gave role ${role} (pg_monitor) a new generated password`);
    expect(reset.stderr).toMatch(/connection \d+ \(local-127\.0\.0\.1-\d+-monitor\) already watches 127\.0\.0\.1:\d+; its stored password is updated/);
    const history = await runCli(["demo", "--history-only"], env);
    expect(history.stderr).toMatch(/loaded a generated day of history \([\d,]+ rows\) as connection \d+/);
    const db = openPg(database.url);
    expect(await db.query("SELECT is_monitored, username FROM connections ORDER BY id")).toEqual([
      { is_monitored: true, username: "postgres" },
      { is_monitored: true, username: role },
      { is_monitored: false, username: "demo" },
    ]);
    await db.close();
    await database.drop();
    const server = openPg(inject("pg17Url"));
    await server.query(`DROP ROLE ${role}`);
    await server.close();
  });

  it("stops with a message naming the key when the configuration is invalid", async () => {
    const result = await runCli(["serve"], { PGLENS_DATASTORE_DRIVER: "oracle" });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/`datastore.driver` \(from PGLENS_DATASTORE_DRIVER\)/);
  });

  it("prints the committed OpenAPI document", async () => {
    const result = await runCli(["openapi"]);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual(JSON.parse(readFileSync("openapi.gen.json", "utf8")));
  });

  it("explains itself when run bare, starting nothing, and prints its version", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "pglens-bare-"));
    const port = await freePort();
    const bare = await runCli([], { PGLENS_DATA_DIR: dataDir, PGLENS_DATASTORE_URL: "", PORT: String(port) });
    expect(bare.code).toBe(2);
    expect(bare.stderr).toContain("Usage: pglens <command>");
    expect(bare.stderr).toContain("  serve ");
    expect(bare.stdout).toBe("");
    expect(readdirSync(dataDir)).toEqual([]); // no datastore opened
    expect(
      await fetch(`http://127.0.0.1:${port}/health`).then(
        () => "answered",
        () => "nothing listens",
      ),
    ).toBe("nothing listens");
    for (const spelling of ["version", "--version"]) {
      const v = await runCli([spelling]);
      expect(v.code, spelling).toBe(0);
      expect(v.stdout, spelling).toBe(`${VERSION}\n`);
    }
  });

  it("manages connections and lists open alerts of a running server over its API, with a token", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "pglens-remote-"));
    const port = await freePort();
    const env = {
      PGLENS_DATA_DIR: dataDir,
      PGLENS_DATASTORE_URL: "",
      PGLENS_DEMO: "false",
      PGLENS_COLLECTOR: "false",
      PGLENS_ALERTER: "false",
      PGLENS_ADMIN_USERNAME: "admin",
      PGLENS_ADMIN_PASSWORD: "remote admin passphrase 7",
    };
    const { child } = await startServe(env, port);
    try {
      const url = `http://127.0.0.1:${port}`;
      const login = await (
        await fetch(`${url}/api/v1/auth/login`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ username: "admin", password: "remote admin passphrase 7" }),
        })
      ).json();
      const issued = await (
        await fetch(`${url}/api/v1/rbac/tokens`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${login.token}` },
          body: JSON.stringify({ note: "cli" }),
        })
      ).json();
      const remote = { PGLENS_URL: url, PGLENS_TOKEN: issued.token };
      const added = await runCli(
        ["connection", "add", "--name", "orders-db", "--host", "127.0.0.1", "--port", "1", "--user", "monitor", "--no-password"],
        remote,
      );
      expect(added.code, added.stderr).toBe(0);
      expect(added.stderr).toMatch(/^added connection \d+ \(orders-db\)/);
      const listed = await runCli(["connection", "list"], remote);
      expect(listed.stdout).toMatch(/^ID\s+NAME\s+ADDRESS/);
      expect(listed.stdout).toMatch(/\d+\s+orders-db\s+127\.0\.0\.1:1\s+postgres\s+monitor\s+monitored/);
      const [row] = JSON.parse((await runCli(["connection", "list", "--json"], remote)).stdout);
      expect((await runCli(["alerts"], remote)).stderr).toContain("no open alerts on the servers this token can read");
      const refused = await runCli(["connection", "add", "--name", "orders-db", "--host", "h", "--user", "u", "--no-password"], remote);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(/HTTP 409 from POST \/api\/v1\/connections/);
      expect((await runCli(["connection", "remove", String(row.id)], remote)).stderr).toContain(`removed connection ${row.id}`);
      expect(JSON.parse((await runCli(["connection", "list", "--json"], remote)).stdout)).toEqual([]);
      const tokenless = await runCli(["connection", "list"], { PGLENS_URL: url, PGLENS_TOKEN: "" });
      expect(tokenless.code).toBe(2);
      expect(tokenless.stderr).toContain("no token: set PGLENS_TOKEN");
      const nowhere = await runCli(["alerts", "--url", `http://127.0.0.1:${await freePort()}`], remote);
      expect(nowhere.code).toBe(1);
      expect(nowhere.stderr).toContain("cannot reach pglens at");
    } finally {
      child.kill("SIGTERM");
      await once(child, "exit");
    }
  }, 300_000);

  it("rejects an unknown command with usage", async () => {
    const result = await runCli(["frobnicate"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('unknown command "frobnicate"');
    expect(result.stderr).toContain("Usage: pglens <command>");
  });

  it("names the subcommands, with their help, when a command that has them is given none or an unknown one", async () => {
    for (const [command, subcommands] of Object.entries({
      user: ["create", "list"],
      token: ["create", "list", "delete"],
      group: ["grant"],
      samples: ["import"],
      connection: ["list", "add", "remove"],
    })) {
      const bare = await runCli([command]);
      expect(bare.code, command).toBe(2);
      expect(bare.stdout, command).toBe("");
      expect(bare.stderr, command).toMatch(new RegExp(`^pglens: \`${command}\` needs one of: ${subcommands.join(", ")}\n\nUsage: pglens ${command} `));
      for (const sub of subcommands) expect(bare.stderr, `${command} ${sub}`).toContain(`Usage: pglens ${command} ${sub}`);
      const unknown = await runCli([command, "frob"]);
      expect(unknown.code, command).toBe(2);
      expect(unknown.stderr, command).toMatch(new RegExp(`^pglens: unknown ${command} command "frob"\n\nUsage: pglens ${command} `));
    }
    const missing = await runCli(["token", "create"]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^pglens: --user NAME is required: the token's owner\n\nUsage: pglens token create \[options\]\n/);
  });

  it("prints each command's help for --help without doing anything, and refuses unknown options with exit 2", async () => {
    const database = await createTestDatabase(inject("pg17Url"));
    const dataDir = mkdtempSync(join(tmpdir(), "pglens-help-"));
    const env = { PGLENS_DATASTORE_URL: database.url, PGLENS_DATA_DIR: dataDir, PORT: String(await freePort()) };
    try {
      for (const command of ["serve", "migrate", "collect", "alerter", "openapi", "user", "token", "group", "demo", "samples", "connection", "alerts"]) {
        const res = await runCli([command, "--help"], env);
        expect(res.code, command).toBe(0);
        expect(res.stdout, command).toMatch(new RegExp(`^Usage: pglens ${command}`));
        // Every option the parser takes, and every variable the command reads, is in its help.
        for (const [key, spec] of Object.entries(COMMANDS as Record<string, CommandSpec>).filter(([k]) => k.split(" ")[0] === command)) {
          for (const option of Object.keys(spec.options)) expect(res.stdout, `${key} --${option}`).toContain(`  --${option}`);
          for (const variable of spec.env) expect(res.stdout, `${key} ${variable}`).toContain(variable);
        }
      }
      // Nothing happened: no migration ran, nothing was created under the data directory.
      const db = openPg(database.url);
      expect(await db.query("SELECT to_regclass('public.schema_version') AS t")).toEqual([{ t: null }]);
      await db.close();
      expect(readdirSync(dataDir)).toEqual([]);
      for (const args of [
        ["serve", "--bogus"],
        ["migrate", "extra"],
        ["collect", "--nope"],
        ["user", "create", "x", "--wat"],
      ]) {
        const res = await runCli(args, env);
        expect(res.code, args.join(" ")).toBe(2);
        expect(res.stderr, args.join(" ")).toMatch(/^pglens: .*; see `pglens \w+ --help`\n$/);
      }
    } finally {
      await database.drop();
    }
  });

  it("stops the server when `npm start` gets SIGTERM", async () => {
    const port = await freePort();
    const dataDir = mkdtempSync(join(tmpdir(), "pglens-npm-start-"));
    // A process group of its own, so whatever is left can be cleaned up if the check fails.
    const npm = spawn("npm", ["start"], {
      cwd: join(import.meta.dirname, ".."),
      env: { ...process.env, PORT: String(port), PGLENS_DATA_DIR: dataDir, PGLENS_DATASTORE_URL: "", PGLENS_DEMO: "false" },
      stdio: "ignore",
      detached: true,
    });
    const healthy = async () =>
      fetch(`http://127.0.0.1:${port}/health`).then(
        (r) => r.ok,
        () => false,
      );
    for (let i = 0; i < 240 && !(await healthy()); i++) await new Promise((r) => setTimeout(r, 250));
    expect(await healthy()).toBe(true);
    npm.kill("SIGTERM");
    let stopped = false;
    for (let i = 0; i < 40 && !stopped; i++) {
      await new Promise((r) => setTimeout(r, 250));
      stopped = !(await healthy());
    }
    try {
      process.kill(-npm.pid!, "SIGKILL");
    } catch {
      // the group is gone: nothing left behind
    }
    expect(stopped).toBe(true);
  }, 300_000);
});
