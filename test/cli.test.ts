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
  }, 60_000);

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
    const monitored = await runCli(["demo", "--server", inject("pg17Url"), "--monitor-role"], env);
    expect(monitored.stderr).toContain("created role pglens_monitor (pg_monitor)");
    const history = await runCli(["demo", "--history-only"], env);
    expect(history.stderr).toMatch(/loaded a generated day of history \([\d,]+ rows\) as connection \d+/);
    const db = openPg(database.url);
    expect(await db.query("SELECT is_monitored, username FROM connections ORDER BY id")).toEqual([
      { is_monitored: true, username: "postgres" },
      { is_monitored: true, username: "pglens_monitor" },
      { is_monitored: false, username: "demo" },
    ]);
    await db.close();
    await database.drop();
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

  it("rejects an unknown command with usage", async () => {
    const result = await runCli(["frobnicate"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('unknown command "frobnicate"');
    expect(result.stderr).toContain("Usage: pglens <command>");
  });

  it("prints each command's help for --help without doing anything, and refuses unknown options with exit 2", async () => {
    const database = await createTestDatabase(inject("pg17Url"));
    const dataDir = mkdtempSync(join(tmpdir(), "pglens-help-"));
    const env = { PGLENS_DATASTORE_URL: database.url, PGLENS_DATA_DIR: dataDir, PORT: String(await freePort()) };
    try {
      for (const command of ["serve", "migrate", "collect", "alerter", "openapi", "user", "token", "group", "demo", "samples"]) {
        const res = await runCli([command, "--help"], env);
        expect(res.code, command).toBe(0);
        expect(res.stdout, command).toMatch(new RegExp(`^Usage: pglens ${command} \\.\\.\\.\\n  ${command}`));
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
  }, 90_000);
});
