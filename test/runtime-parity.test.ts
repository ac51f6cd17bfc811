import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { openPg } from "../drivers/pg.ts";
import type { Driver } from "../drivers/types.ts";
import { writeSamples } from "../src/samples/sample-writer.ts";
import { migrate } from "../src/datastore/migrate.ts";
import { startNeonProxy, type NeonProxy } from "./neon-proxy.ts";
import { bearer, userWithToken } from "./support/auth.ts";
import { addConnection } from "./support/datastore.ts";
import { testApp } from "./support/app.ts";
import { serveOnFreePort } from "./support/node-server.ts";
import { createTestDatabase, freePort } from "./support/postgres.ts";
import { startWorker, type TestWorker } from "./support/worker.ts";

// The same requests must get the same answers from Node and from workerd.
const WINDOW = "time_range=custom&time_start=2026-01-01T00:00:00Z&time_end=2026-01-01T00:10:00Z";
const REQUESTS: Array<[string, RequestInit?]> = [
  ["/health"],
  [`/api/v1/metrics/query?probe_name=pg_stat_database&connection_id=1&metrics=xact_commit_per_sec,numbackends&${WINDOW}`],
  ["/api/v1/metrics/query?probe_name=pg_stat_database&connection_id=1&metrics=numbackends_per_sec"],
  ["/api/v1/mcp/tools"],
  ["/api/v1/mcp/tools/call", { method: "POST", body: JSON.stringify({ name: "list_probes" }), headers: { "content-type": "application/json" } }],
  ["/api/v1/no-such-thing"],
  ["/health", { method: "POST" }],
  ["/health", { method: "OPTIONS" }],
  ["/api/v1/openapi.json"],
];
// Without a token: the same refusals from both runtimes.
const UNAUTHENTICATED: Array<[string, RequestInit?]> = [
  ["/api/v1/mcp/tools", { headers: { authorization: "Bearer pglens_not-a-real-token" } }],
  [
    "/api/v1/auth/login",
    { method: "POST", body: JSON.stringify({ username: "parity", password: "wrong password here" }), headers: { "content-type": "application/json" } },
  ],
];

let auth: Record<string, string>;
const withAuth = (init?: RequestInit): RequestInit => ({ ...init, headers: { ...(init?.headers as Record<string, string>), ...auth } });

async function snapshot(res: Response) {
  const text = await res.text();
  return {
    status: res.status,
    contentType: res.headers.get("content-type"),
    link: res.headers.get("link"),
    allow: res.headers.get("allow"),
    hasRequestId: Boolean(res.headers.get("x-request-id")),
    body: text ? JSON.parse(text) : null,
  };
}

let database: { url: string; drop(): Promise<void> };
let nodeDriver: Driver;
let node: { url: string; close(): Promise<void> };
let proxy: NeonProxy;

beforeAll(async () => {
  database = await createTestDatabase(inject("pg17Url"));
  nodeDriver = openPg(database.url);
  await migrate(nodeDriver);
  const id = await addConnection(nodeDriver, "parity");
  const rows = [0, 1, 2].flatMap((j) =>
    ["a", "b"].map((d) => ({
      collected_at: new Date(Date.parse("2026-01-01T00:00:30Z") + j * 60_000).toISOString(),
      database_name: d,
      numbackends: 2,
      xact_commit: 60 * j,
    })),
  );
  await writeSamples(nodeDriver, { connectionId: id, probe: "pg_stat_database", rows });
  auth = bearer((await userWithToken(nodeDriver, "parity", { superuser: true })).token);
  node = await serveOnFreePort(testApp(nodeDriver).app.fetch);
  proxy = await startNeonProxy();
});
afterAll(async () => {
  await node.close();
  await nodeDriver.close();
  await proxy.close();
  await database.drop();
});

describe.each([
  ["pg over TCP sockets", () => ({ bindings: { PGLENS_DATASTORE_URL: database.url } })],
  [
    "neon-http through the local proxy",
    () => ({
      bindings: {
        PGLENS_DATASTORE_URL: database.url,
        PGLENS_DATASTORE_DRIVER: "neon-http",
        PGLENS_NEON_FETCH_ENDPOINT: proxy.fetchEndpoint,
        PGLENS_NEON_WS_PROXY: proxy.wsProxy,
        PGLENS_NEON_SECURE_WEBSOCKET: "false",
      },
    }),
  ],
  // No datastore URL among the bindings: the Worker reaches the database only through Miniflare's local Hyperdrive.
  ["pg through a Hyperdrive binding", () => ({ bindings: {}, hyperdrives: { HYPERDRIVE: database.url } })],
])("Node and workerd (%s) answer alike", (_name, setup) => {
  let worker: TestWorker;
  beforeAll(async () => {
    const { bindings, hyperdrives } = setup() as { bindings: Record<string, string>; hyperdrives?: Record<string, string> };
    worker = await startWorker(bindings, { hyperdrives });
  });
  afterAll(() => worker.dispose());

  it.each(REQUESTS)("%s %o", async (path, init) => {
    const fromNode = await snapshot(await fetch(node.url + path, withAuth(init)));
    const fromWorker = await snapshot(await worker.fetch(path, withAuth(init)));
    const driverless = (s: typeof fromNode) =>
      path === "/health" && s.body ? { ...s, body: { ...s.body, datastore: { ...s.body.datastore, driver: "*" } } } : s;
    expect(driverless(fromWorker)).toEqual(driverless(fromNode));
    if (fromNode.contentType?.startsWith("application/json")) expect(fromNode.link).toBe('</api/v1/openapi.json>; rel="service-desc"');
  });

  it.each(UNAUTHENTICATED)("without a valid token: %s", async (path, init) => {
    const fromNode = await snapshot(await fetch(node.url + path, init));
    const fromWorker = await snapshot(await worker.fetch(path, init));
    expect(fromNode.status).toBe(401);
    expect(fromWorker).toEqual(fromNode);
  });

  it("serves the public OpenAPI document without a token, identically", async () => {
    const fromNode = await snapshot(await fetch(`${node.url}/api/v1/openapi.json`));
    expect(fromNode.status).toBe(200);
    expect(await snapshot(await worker.fetch("/api/v1/openapi.json"))).toEqual(fromNode);
  });

  it("serves the API docs viewer without a token, its files from the static assets as Node serves them from the package", async () => {
    for (const path of ["/api/v1/docs", "/api/v1/docs/init.js", "/api/v1/docs/swagger-ui.css", "/api/v1/docs/swagger-ui-bundle.js", "/api/v1/docs/nope.js"]) {
      const fromNode = await fetch(node.url + path);
      const fromWorker = await worker.fetch(path);
      const [nodeText, workerText] = [await fromNode.text(), await fromWorker.text()];
      expect([path, fromWorker.status, fromWorker.headers.get("content-type")]).toEqual([path, fromNode.status, fromNode.headers.get("content-type")]);
      expect(workerText === nodeText, path).toBe(true);
    }
  });

  it("runs the scheduled handler", async () => {
    await worker.scheduled("* * * * *");
    expect(worker.logs.some((l) => l.includes('"msg":"scheduled tick"'))).toBe(true);
  });
});

describe("workerd with the datastore down", () => {
  it("answers /health with 503", async () => {
    const worker = await startWorker({ PGLENS_DATASTORE_URL: `postgres://postgres:postgres@127.0.0.1:${await freePort()}/postgres` });
    try {
      const res = await worker.fetch("/health");
      expect(res.status).toBe(503);
      expect(await res.json()).toMatchObject({ error: "datastore unavailable", datastore: { status: "unavailable" } });
    } finally {
      await worker.dispose();
    }
  });

  it("reaches the datastore through the Hyperdrive binding configuration names, rather than PGLENS_DATASTORE_URL", async () => {
    const unreachable = `postgres://postgres:postgres@127.0.0.1:${await freePort()}/postgres`;
    const worker = await startWorker(
      { PGLENS_DATASTORE_URL: unreachable, PGLENS_HYPERDRIVE_BINDING: "DATASTORE" },
      { hyperdrives: { DATASTORE: database.url } },
    );
    try {
      const res = await worker.fetch("/health");
      expect(await res.json()).toMatchObject({ status: "ok", datastore: { status: "ok", driver: "pg" } });
    } finally {
      await worker.dispose();
    }
  });

  it("refuses to start with invalid configuration, naming the key", async () => {
    const worker = await startWorker({ PGLENS_DATASTORE_DRIVER: "mysql" });
    try {
      const res = await worker.fetch("/health");
      expect(res.status).toBe(500);
      expect((await res.json()).error).toMatch(/`datastore.driver` \(from PGLENS_DATASTORE_DRIVER\)/);
    } finally {
      await worker.dispose();
    }
  });
});
