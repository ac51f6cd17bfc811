/**
 * Malformed input for every operation of openapi.gen.json: odd path ids, odd query values, bodies of the
 * wrong shape, NUL characters and out-of-range numbers, each body field given a value of every wrong kind, a
 * query parameter repeated. No answer may be a 5xx the operation does not document (a live endpoint may answer
 * 502 when its server is unreachable), and every error is JSON with a message.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, expect, it } from "vitest";
import { testApp } from "../support/app.ts";
import { userWithToken } from "../support/auth.ts";
import { addConnection, migratedDatastore, type TestDatastore } from "../support/datastore.ts";

interface Operation {
  parameters?: Array<{ name: string; in: string }>;
  requestBody?: { content?: Record<string, { schema?: { $ref?: string; properties?: object } }> };
  responses: Record<string, unknown>;
}

const doc = JSON.parse(readFileSync("openapi.gen.json", "utf8")) as {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, { properties?: object }> };
};

const IDS = ["1", "0", "-1", "%201", "1e3", "99999999999999999999", "abc", "%00", "1.5"];
const QUERY_VALUES = [
  "",
  "%00",
  "99999999999999999999",
  "-1",
  "x".repeat(300),
  "x".repeat(5000),
  "1,abc",
  "1,,2",
  "1e309",
  "NaN",
  " 1",
  "1.5",
  "2026-13-45T99:99:99Z",
  "💥",
  "[1]",
  "null",
];
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
  (function nested(depth: number): unknown {
    return depth === 0 ? 1 : { a: nested(depth - 1) };
  })(2000),
];
/** Given to each field of a body alone. */
const FIELD_VALUES: unknown[] = ["", "\u0000", "💥", -1, 0, 1.5, 1e308, 2 ** 53, "1", true, null, [], {}, ["a"], "x".repeat(100_000)];
/** The parameters the metrics endpoints require, given sane values beside an odd one so that it is the odd one judged. */
const SANE: Record<string, string> = { probe_name: "pg_stat_database", connection_id: "1" };

const bodyFields = (op: Operation): string[] => {
  const schema = op.requestBody?.content?.["application/json"]?.schema;
  const resolved = schema?.$ref ? doc.components.schemas[schema.$ref.split("/").pop()!] : schema;
  return Object.keys(resolved?.properties ?? {});
};

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

const operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
  Object.entries(methods).map(([method, op]) => ({ path, method: method.toUpperCase(), op })),
);

it.each(operations.map((o) => [`${o.method} ${o.path}`, o] as const))(
  "%s answers malformed input with a documented status",
  async (_name, { path, method, op }) => {
    const documented = new Set(Object.keys(op.responses).map(Number));
    const requests: Array<{ url: string; body?: string }> = [];
    for (const id of IDS) requests.push({ url: path.replace(/\{\w+\}/g, id) });
    const base = path.replace(/\{\w+\}/g, "1");
    const names = (op.parameters ?? []).filter((p) => p.in === "query").map((p) => p.name);
    for (const name of names) {
      const sane = names
        .filter((n) => n !== name && SANE[n])
        .map((n) => `${n}=${SANE[n]}&`)
        .join("");
      for (const v of QUERY_VALUES) requests.push({ url: `${base}?${sane}${name}=${encodeURIComponent(v).replace("%2500", "%00")}` });
      requests.push({ url: `${base}?${sane}${name}=1&${name}=2` });
    }
    if (op.requestBody || ["POST", "PUT"].includes(method)) {
      for (const body of BODIES) requests.push({ url: base, body: JSON.stringify(body) });
      requests.push({ url: base, body: "{not json" });
      for (const field of bodyFields(op)) for (const v of FIELD_VALUES) requests.push({ url: base, body: JSON.stringify({ [field]: v }) });
    }
    for (const { url, body } of requests) {
      const res = await app.request(url, { method, body, headers: { authorization: `Bearer ${token}`, "content-type": "application/json" } });
      // An event stream that started never ends: its status is what is judged.
      if (res.headers.get("content-type")?.startsWith("text/event-stream")) {
        await res.body?.cancel();
        continue;
      }
      const text = await res.text();
      if (res.status >= 500) expect(documented.has(res.status), `${method} ${url} ${body ?? ""} -> ${res.status} ${text}`).toBe(true);
      if (res.status >= 400) expect(JSON.parse(text).error, `${method} ${url} -> ${text}`).toMatch(/./);
    }
  },
);
