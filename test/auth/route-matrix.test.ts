/**
 * Walks every route the app registers: without a token -> 401; a user without privileges -> 403 (or a
 * filtered answer for routes any user may call); with the privilege the route declares -> neither.
 * createApp refuses routes without an access decision, so a new route cannot skip this matrix.
 */
import { createRoute } from "@hono/zod-openapi";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_PERMISSIONS } from "../../src/vocabulary/permissions.ts";
import { createGroup, addMember, setAdminGrants } from "../../src/datastore/groups.ts";
import { accessOf, describeAccess } from "../../src/http/access.ts";
import { newRouter } from "../../src/http/router.ts";
import { testApp } from "../support/app.ts";
import { bearer, userWithToken } from "../support/auth.ts";
import { migratedDatastore, type TestDatastore } from "../support/datastore.ts";

let store: TestDatastore;
let app: ReturnType<typeof testApp>["app"];
const tokens: Record<string, string> = {};

beforeAll(async () => {
  store = await migratedDatastore("pg");
  app = testApp(store.db).app;
  tokens.superuser = (await userWithToken(store.db, "root", { superuser: true })).token;
  tokens.user = (await userWithToken(store.db, "nobody")).token;
  for (const permission of ADMIN_PERMISSIONS) {
    const { id, token } = await userWithToken(store.db, `holder-${permission}`);
    const group = await createGroup(store.db, `group-${permission}`, "");
    await setAdminGrants(store.db, group.id, [permission]);
    await addMember(store.db, group.id, { type: "user", id });
    tokens[`permission:${permission}`] = token;
  }
});
afterAll(() => store.close());

// The route table is known before any datastore exists: the driver is not touched to list it.
const table = testApp(undefined as never).app.routes;

function routes() {
  return table
    .filter((r) => r.method !== "ALL")
    .map((r) => ({ method: r.method, path: r.path, access: describeAccess(accessOf(r.method, r.path)!) }))
    .filter((r, i, all) => all.findIndex((o) => o.method === r.method && o.path === r.path) === i);
}

function request(method: string, path: string, token?: string) {
  const url = path.replace(/:type\b/, "user").replace(/:\w+/g, "999999");
  const body = ["POST", "PUT", "PATCH"].includes(method) ? "{}" : undefined;
  return app.request(url, { method, body, headers: { "content-type": "application/json", ...(token ? bearer(token) : {}) } });
}

describe("every route has an access decision that holds", () => {
  it("covers the whole route table", () => {
    expect(routes().length).toBeGreaterThan(30);
    expect(
      new Set(
        routes()
          .filter((r) => r.access === "public")
          .map((r) => `${r.method} ${r.path}`),
      ),
    ).toEqual(
      new Set([
        "GET /health",
        "POST /api/v1/auth/login",
        "POST /api/v1/auth/logout",
        "GET /api/v1/llm/providers",
        "GET /api/v1/llm/models",
        "GET /api/v1/llm/health",
        "GET /api/v1/docs",
        "GET /api/v1/docs/:file",
        // The console's pages check the session themselves and send a browser to sign in (test/console/).
        "GET /",
        "GET /sign-in",
        "POST /sign-in",
        "POST /sign-out",
        "GET /alerts",
        "GET /alerts/:id",
        "GET /servers/:id",
        "GET /console/console.css",
        "GET /console/assets/:file",
        "POST /alerts/:id/acknowledge",
        "GET /blackouts",
        "POST /blackouts",
        "POST /blackouts/:id/stop",
        "POST /alerts/:id/unacknowledge",
        "GET /api/v1/openapi.json",
      ]),
    );
  });

  it("refuses to build an app with a route that has no decision", () => {
    const undecided = newRouter().openapi(createRoute({ method: "get", path: "/api/v1/undecided", responses: { 200: { description: "x" } } }), (c) =>
      c.json({}, 200),
    );
    expect(() => testApp(store.db, { extraRoutes: [undecided] })).toThrow("routes without an access decision: GET /api/v1/undecided");
  });

  it.each(routes().filter((r) => r.access !== "public"))("$method $path ($access)", async ({ method, path, access }) => {
    const anonymous = await request(method, path);
    expect(anonymous.status).toBe(401);
    expect((await anonymous.json()).error).toMatch(/authentication required/);
    expect((await request(method, path, "pglens_forged-token")).status).toBe(401);

    const unprivileged = await request(method, path, tokens.user);
    if (access === "user") expect([401, 403]).not.toContain(unprivileged.status);
    else expect(unprivileged.status).toBe(403);

    const privileged = await request(method, path, tokens[access === "user" ? "user" : access]);
    expect([401, 403]).not.toContain(privileged.status);
    expect(privileged.status).toBeLessThan(500);
  });
});

describe("every route that takes query parameters refuses one it does not take", () => {
  const spec = testApp(undefined as never).app.getOpenAPI31Document({ openapi: "3.1.0", info: { title: "t", version: "0" } });
  const takesQuery = (op: unknown) => ((op as { parameters?: Array<{ in?: string }> } | null)?.parameters ?? []).some((p) => p.in === "query");
  const withQuery = Object.entries(spec.paths ?? {}).flatMap(([path, item]) =>
    Object.entries(item ?? {})
      .filter(([, op]) => takesQuery(op))
      .map(([method]) => ({ method: method.toUpperCase(), path })),
  );

  it("finds the filtering routes", () => {
    expect(withQuery.map((r) => `${r.method} ${r.path}`)).toEqual(
      expect.arrayContaining(["GET /api/v1/alerts", "GET /api/v1/timeline/events", "GET /api/v1/blackouts", "GET /api/v1/metrics/query"]),
    );
  });

  it.each(withQuery)("$method $path", async ({ method, path }) => {
    const url = `${path.replace(/\{\w+\}/g, "999999")}?databse_name=shop`;
    const res = await app.request(url, { method, headers: bearer(tokens.superuser) });
    expect(res.status).toBe(400);
    expect((await res.json()).error).toContain("unknown query parameter `databse_name`");
  });
});
