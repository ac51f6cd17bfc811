/**
 * Malformed input for every operation of openapi.gen.json: odd path ids, odd query values, bodies of the
 * wrong shape, NUL characters and out-of-range numbers. No answer may be a 5xx the operation does not
 * document (a live endpoint may answer 502 when its server is unreachable), and every error is JSON.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, expect, it } from "vitest";
import { testApp } from "../support/app.ts";
import { userWithToken } from "../support/auth.ts";
import { addConnection, migratedDatastore, type TestDatastore } from "../support/datastore.ts";

interface Operation {
  parameters?: Array<{ name: string; in: string }>;
  requestBody?: unknown;
  responses: Record<string, unknown>;
}

const doc = JSON.parse(readFileSync("openapi.gen.json", "utf8")) as { paths: Record<string, Record<string, Operation>> };

const IDS = ["1", "0", "-1", "%201", "1e3", "99999999999999999999", "abc", "%00", "1.5"];
const QUERY_VALUES = ["", "%00", "99999999999999999999", "-1", "x".repeat(300), "1,abc"];
const BODIES: unknown[] = [
  null,
  [],
  "text",
  12,
  {},
  { name: "\u0000", username: "a\u0000", id: 99999999999999999999, connection_id: 1e20 },
  { name: "a\u0000b" },
  { username: "\u0000root", password: "a long enough password\u0000" },
  { connection_id: 99999999999999999999 },
  { user_id: 99999999999999999999 },
  { name: 5, host: [], port: "5432", connection_id: -1, user_id: "1", group_id: {}, password: null },
  { connection_privileges: [{ connection_id: 1e12, access_level: "read" }], mcp_privileges: ["\u0000"], admin_permissions: [1] },
];

let store: TestDatastore;
let app: ReturnType<typeof testApp>["app"];
let token: string;

beforeAll(async () => {
  store = await migratedDatastore("pg");
  ({ app } = testApp(store.db));
  token = (await userWithToken(store.db, "root", { superuser: true })).token;
  await addConnection(store.db, "target");
});
afterAll(() => store.close());

const operations = Object.entries(doc.paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => ({ path, method: method.toUpperCase(), op })));

it.each(operations.map((o) => [`${o.method} ${o.path}`, o] as const))("%s answers malformed input with a documented status", async (_name, { path, method, op }) => {
  const documented = new Set(Object.keys(op.responses).map(Number));
  const requests: Array<{ url: string; body?: string }> = [];
  for (const id of IDS) requests.push({ url: path.replace(/\{\w+\}/g, id) });
  const base = path.replace(/\{\w+\}/g, "1");
  for (const q of (op.parameters ?? []).filter((p) => p.in === "query")) for (const v of QUERY_VALUES) requests.push({ url: `${base}?${q.name}=${encodeURIComponent(v).replace("%2500", "%00")}` });
  if (op.requestBody || ["POST", "PUT"].includes(method)) {
    for (const body of BODIES) requests.push({ url: base, body: JSON.stringify(body) });
    requests.push({ url: base, body: "{not json" });
  }
  for (const { url, body } of requests) {
    const res = await app.request(url, { method, body, headers: { authorization: `Bearer ${token}`, "content-type": "application/json" } });
    const text = await res.text();
    if (res.status >= 500) expect(documented.has(res.status), `${method} ${url} ${body ?? ""} -> ${res.status} ${text}`).toBe(true);
    if (res.status >= 400) expect(() => JSON.parse(text).error, `${method} ${url} -> ${text}`).not.toThrow();
  }
});
