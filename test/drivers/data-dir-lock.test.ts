/**
 * The embedded datastore is never opened by two processes: with `pglens serve` running on a PGlite
 * directory, the README's CLI commands refuse (saying who holds it and what to do) and write nothing; once
 * the server stops they work, a killed holder's stale lock is taken over, and after a restart every table
 * reads the same by index and by sequential scan.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openPglite } from "../../drivers/pglite.ts";
import { runCli, startServe } from "../support/cli.ts";
import { freePort } from "../support/postgres.ts";

const dataDir = mkdtempSync(join(tmpdir(), "pglens-lock-"));
const env = {
  PGLENS_DATA_DIR: dataDir,
  PGLENS_DATASTORE_URL: "",
  PGLENS_DEMO: "false",
  PGLENS_COLLECTOR: "false",
  PGLENS_ALERTER: "false",
  PGLENS_ADMIN_USERNAME: "admin",
  PGLENS_ADMIN_PASSWORD: "first start password 1",
};
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

async function stop(child: import("node:child_process").ChildProcess) {
  const exited = new Promise((r) => child.once("exit", r));
  child.kill("SIGTERM");
  await exited;
}

describe("the embedded datastore lock", () => {
  it("refuses CLI writes while the server runs, allows them after, and keeps the data consistent", async () => {
    const port = await freePort();
    const { child } = await startServe(env, port);
    let serverPid = child.pid;
    expect(statSync(dataDir).mode & 0o777).toBe(0o700); // PGlite's own files are world-writable: the directory keeps others out
    try {
      for (const args of [
        ["user", "create", "alice", "--service-account"],
        ["token", "create", "--user", "admin"],
        ["demo", "--history-only"],
      ]) {
        const res = await runCli(args, env);
        expect(res.code, args.join(" ")).toBe(1);
        expect(res.stderr).toContain(`pglens serve (pid ${serverPid}) holds the embedded datastore ${dataDir}: stop it first`);
      }
    } finally {
      await stop(child);
    }
    expect((await runCli(["user", "create", "alice", "--service-account"], env)).code).toBe(0);
    expect((await runCli(["token", "create", "--user", "alice"], env)).code).toBe(0);

    // A holder killed without cleanup leaves its lock behind; the next process takes it over.
    writeFileSync(join(dataDir, "pglens.lock"), JSON.stringify({ pid: 2 ** 22 + 12345, command: "pglens serve", since: new Date().toISOString() }));
    const listed = await runCli(["user", "list"], env);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain("alice");

    // Restarted, the server sees what the CLI wrote; then every table reads the same both ways.
    const again = await startServe(env, await freePort());
    serverPid = again.child.pid;
    expect(JSON.parse(readFileSync(join(dataDir, "pglens.lock"), "utf8")).pid).toBe(serverPid);
    await stop(again.child);
    const db = await openPglite(join(dataDir, "db"));
    try {
      const tables = await db.query<{ name: string; key: string }>(
        `SELECT format('%I.%I', n.nspname, c.relname) AS name, a.attname AS key FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid
           JOIN pg_namespace n ON n.oid = c.relnamespace JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = i.indkey[0]
          WHERE i.indisprimary AND n.nspname = 'public' AND c.relkind = 'r'`,
      );
      expect(tables.length).toBeGreaterThan(10);
      for (const t of tables) {
        await db.query("SET enable_seqscan = off");
        const [byIndex] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${t.name} WHERE ${t.key} IS NOT NULL`);
        await db.query("SET enable_seqscan = on");
        for (const setting of ["enable_indexscan", "enable_bitmapscan", "enable_indexonlyscan"]) await db.query(`SET ${setting} = off`);
        const [byScan] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${t.name}`);
        await db.query("RESET ALL");
        expect(byIndex.n, t.name).toBe(byScan.n);
      }
      expect((await db.query<{ username: string }>("SELECT username FROM users ORDER BY username")).map((u) => u.username)).toEqual(["admin", "alice"]);
    } finally {
      await db.close();
    }
  }, 450_000);
});
