import { readFileSync } from "node:fs";
import { createRoute, z } from "@hono/zod-openapi";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { openPg } from "../drivers/pg.ts";
import type { Driver } from "../drivers/types.ts";
import { openApiDocument } from "../src/app.ts";
import { migrate } from "../src/datastore/migrate.ts";
import { PUBLIC, guarded } from "../src/http/access.ts";
import { newRouter } from "../src/http/router.ts";
import { bearer, userWithToken } from "./support/auth.ts";
import { testApp } from "./support/app.ts";
import { createTestDatabase, freePort } from "./support/postgres.ts";

const LINK = '</api/v1/openapi.json>; rel="service-desc"';

// Routes that exist only in this test, to exercise the cross-cutting behaviour every real route gets.
const probeRoutes = newRouter()
  .openapi(
    guarded(
      PUBLIC,
      createRoute({
        method: "post",
        path: "/test/echo/{id}",
        request: {
          params: z.object({ id: z.coerce.number().int().positive() }),
          query: z.object({ buckets: z.coerce.number().int().min(1).max(500).optional() }),
          body: { content: { "application/json": { schema: z.object({ name: z.string().min(1) }) } }, required: true },
        },
        responses: { 200: { description: "echo" } },
      }),
    ),
    (c) => c.json({ id: c.req.valid("param").id, ...c.req.valid("json") }, 200),
  )
  .openapi(guarded(PUBLIC, createRoute({ method: "get", path: "/test/boom", responses: { 200: { description: "never" } } })), () => {
    throw new Error("secret detail: SELECT password FROM users");
  })
  .openapi(guarded(PUBLIC, createRoute({ method: "get", path: "/test/db", responses: { 200: { description: "rows" } } })), async (c) =>
    c.json(await c.get("db").query("select 1 as one"), 200),
  );

let db: Driver;
let drop: () => Promise<void>;
let token: string;
beforeAll(async () => {
  const database = await createTestDatabase(inject("pg17Url"));
  drop = database.drop;
  db = openPg(database.url);
  await migrate(db);
  token = (await userWithToken(db, "reader")).token;
});
afterAll(async () => {
  await db.close();
  await drop();
});

describe("errors", () => {
  it("answers an unknown path with a JSON 404", async () => {
    const { app } = testApp(db);
    const res = await app.request("/api/v1/nothing-here");
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: "no such endpoint: GET /api/v1/nothing-here" });
    expect(res.headers.get("link")).toBe(LINK);
  });

  it("answers a known path with a wrong method with 405 and Allow", async () => {
    const { app } = testApp(db, { extraRoutes: [probeRoutes] });
    const res = await app.request("/health", { method: "DELETE" });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("GET, HEAD, OPTIONS");
    expect((await res.json()).error).toMatch(/DELETE is not allowed on \/health/);
    const withParam = await app.request("/test/echo/5", { method: "GET" });
    expect(withParam.status).toBe(405);
    expect(withParam.headers.get("allow")).toBe("OPTIONS, POST");
  });

  it("answers OPTIONS with the allowed methods", async () => {
    const { app } = testApp(db);
    const res = await app.request("/health", { method: "OPTIONS" });
    expect(res.status).toBe(204);
    expect(res.headers.get("allow")).toBe("GET, HEAD, OPTIONS");
  });

  it("names the invalid parameter and what is wrong with it", async () => {
    const { app } = testApp(db, { extraRoutes: [probeRoutes] });
    const post = (path: string, body: string) => app.request(path, { method: "POST", body, headers: { "content-type": "application/json" } });
    let res = await post("/test/echo/1?buckets=900", '{"name":"x"}');
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatch(/query parameter `buckets`: .*500/);
    res = await post("/test/echo/abc", '{"name":"x"}');
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatch(/path parameter `id`/);
    res = await post("/test/echo/1", '{"name":""}');
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatch(/body field `name`/);
    res = await post("/test/echo/1", '{"name":');
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: "request body is not valid JSON" });
    res = await post("/test/echo/1?buckets=3", '{"name":"ok"}');
    expect(await res.json()).toEqual({ id: 1, name: "ok" });
  });

  it("hides unexpected exceptions behind a generic 500 and logs them", async () => {
    const { app, logs } = testApp(db, { extraRoutes: [probeRoutes] });
    const res = await app.request("/test/boom");
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ error: "internal server error" });
    const line = logs.find((l) => l.msg === "unhandled error");
    expect(line?.error).toMatch(/secret detail/);
    expect(line?.request_id).toBe(res.headers.get("x-request-id"));
  });

  it("answers 503 when the datastore cannot be reached", async () => {
    const down = openPg(`postgres://postgres:postgres@127.0.0.1:${await freePort()}/postgres`, { connectTimeoutMs: 1000 });
    const { app } = testApp(down, { extraRoutes: [probeRoutes] });
    const res = await app.request("/test/db");
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ error: "the datastore is unavailable; try again shortly" });
    const health = await app.request("/health");
    expect(health.status).toBe(503);
    expect(await health.json()).toMatchObject({
      error: "datastore unavailable",
      status: "unavailable",
      datastore: { status: "unavailable", driver: "pg", error: "cannot connect" },
    });
    await down.close();
  });
});

describe("request plumbing", () => {
  it("gives every response a request id and logs one structured line per request", async () => {
    const { app, logs } = testApp(db);
    const res = await app.request("/health");
    const id = res.headers.get("x-request-id");
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(logs.filter((l) => l.msg === "request")).toEqual([
      expect.objectContaining({ level: "info", request_id: id, method: "GET", path: "/health", status: 200, duration_ms: expect.any(Number) }),
    ]);
    const echoed = await app.request("/health", { headers: { "x-request-id": "trace-123" } });
    expect(echoed.headers.get("x-request-id")).toBe("trace-123");
  });

  it("reports health with version and datastore state", async () => {
    const { app } = testApp(db);
    const res = await app.request("/health");
    expect(res.status).toBe(200);
    const { version } = JSON.parse(readFileSync("package.json", "utf8"));
    expect(await res.json()).toEqual({ status: "ok", version, datastore: { status: "ok", driver: "pg" } });
    expect(res.headers.get("link")).toBe(LINK);
  });
});

describe("OpenAPI", () => {
  it("serves an OpenAPI 3.0.3 document generated from the routes, publicly, with a unique operationId per operation", async () => {
    const { app } = testApp(db);
    const res = await app.request("/api/v1/openapi.json");
    expect(res.status).toBe(200);
    expect(res.headers.get("link")).toBe(LINK);
    const doc = await res.json();
    expect(doc.openapi).toBe("3.0.3");
    expect(doc.paths["/health"].get.responses).toHaveProperty("503");
    expect(doc.servers).toEqual([{ url: "/", description: "The pglens server that serves this document" }]);
    const ids = Object.values(doc.paths as Record<string, Record<string, { operationId?: string }>>).flatMap((ops) =>
      Object.values(ops).map((op) => op.operationId),
    );
    expect(ids.every((id) => typeof id === "string" && /^[a-z][A-Za-z0-9]+$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect(doc.paths["/api/v1/alerts/acknowledge"].delete.operationId).toBe("deleteAlertsAcknowledge");
    expect(doc.paths["/api/v1/rbac/groups/{id}/members"].post.operationId).toBe("postRbacGroupsByIdMembers");
    expect(bearer(token)).toBeTruthy();
  });

  it("matches the committed openapi.gen.json (run `npm run openapi` after changing routes)", () => {
    const { app } = testApp(db);
    const committed = JSON.parse(readFileSync("openapi.gen.json", "utf8"));
    expect(openApiDocument(app)).toEqual(committed);
  });
});
