/**
 * The OpenAPI document generates clients: openapi-typescript turns openapi.gen.json into types, a small
 * openapi-fetch client (login, list connections, a metrics query, open alerts) compiles under `tsc --strict`, and
 * then runs against a real pglens server. Ids, counts and flags in query strings are numbers and booleans to it.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import openapiTS, { astToString } from "openapi-typescript";
import { afterAll, beforeAll, expect, it } from "vitest";
import { testApp } from "./support/app.ts";
import { CHEAP_HASH } from "./support/auth.ts";
import { addConnection, migratedDatastore, type TestDatastore } from "./support/datastore.ts";
import { serveOnFreePort } from "./support/node-server.ts";
import { hashPassword } from "../src/auth/passwords.ts";
import { createUser } from "../src/datastore/users.ts";
import { API_TYPES, apiTypes } from "../scripts/api-types.ts";

const ROOT = resolve(import.meta.dirname, "..");
let store: TestDatastore;
let server: { url: string; close(): Promise<void> };
let dir: string;

const CLIENT = `
import createClient from "openapi-fetch";
import type { paths } from "./api.ts";

export async function run(baseUrl: string): Promise<{ connections: string[]; points: number; alerts: number }> {
  const api = createClient<paths>({ baseUrl });
  const login = await api.POST("/api/v1/auth/login", { body: { username: "codegen", password: "a long enough passphrase 9" } });
  if (!login.data) throw new Error("login failed: " + JSON.stringify(login.error));
  const headers = { authorization: \`Bearer \${login.data.token}\` };
  const listed = await api.GET("/api/v1/connections", { headers });
  if (!listed.data) throw new Error("list failed");
  const connections: string[] = listed.data.map((c) => c.name);
  const series = await api.GET("/api/v1/metrics/query", {
    headers,
    params: { query: { probe_name: "pg_stat_database", connection_id: [listed.data[0].id], metrics: "numbackends", time_range: "1h", buckets: 12 } },
  });
  if (!series.data) throw new Error("query failed: " + JSON.stringify(series.error));
  const points: number = series.data[0].data.length;
  const open = await api.GET("/api/v1/alerts", { headers, params: { query: { connection_id: [listed.data[0].id], exclude_cleared: true, limit: 10 } } });
  if (!open.data) throw new Error("alerts failed: " + JSON.stringify(open.error));
  return { connections, points, alerts: open.data.total };
}
`;

beforeAll(async () => {
  store = await migratedDatastore("pglite");
  await createUser(store.db, { username: "codegen", passwordHash: await hashPassword("a long enough passphrase 9", CHEAP_HASH) });
  await addConnection(store.db, "from-codegen");
  await store.db.query("UPDATE connections SET is_shared = true");
  server = await serveOnFreePort(testApp(store.db).app.fetch);
  dir = mkdtempSync(join(ROOT, "test", ".codegen-"));
});
afterAll(async () => {
  await server?.close();
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

it("generates types, compiles a typed client under --strict, and runs it", async () => {
  const doc = JSON.parse(readFileSync(join(ROOT, "openapi.gen.json"), "utf8"));
  writeFileSync(join(dir, "api.ts"), astToString(await openapiTS(doc)));
  const tsc = join(ROOT, "node_modules", "typescript", "bin", "tsc");
  const flags = [
    "--strict",
    "--noEmit",
    "--target",
    "es2022",
    "--module",
    "nodenext",
    "--moduleResolution",
    "nodenext",
    "--allowImportingTsExtensions",
    "--skipLibCheck",
  ];
  /** tsc's diagnostics for a file, empty when it compiles. */
  const compile = (file: string, text: string): string => {
    writeFileSync(join(dir, file), text);
    try {
      execFileSync(process.execPath, [tsc, ...flags, join(dir, file)], { cwd: ROOT, stdio: "pipe" });
      return "";
    } catch (err) {
      return String((err as { stdout?: Buffer }).stdout);
    }
  };
  expect(compile("client.ts", CLIENT)).toBe("");
  // The compile check is real: a wrong field type in the client must fail it...
  expect(compile("broken.ts", CLIENT.replace("const points: number = series.data[0].data.length;", "const points: number = series.data[0].name;"))).toMatch(
    /broken\.ts.*error TS2322: Type 'string' is not assignable to type 'number'/,
  );
  // ...and so must an id given as text where the document says integer.
  expect(compile("text-id.ts", CLIENT.replace("connection_id: [listed.data[0].id], exclude_cleared", 'connection_id: ["1"], exclude_cleared'))).toMatch(
    /text-id\.ts.*error TS2322: Type 'string' is not assignable to type 'number'/,
  );
  const { run } = (await import(join(dir, "client.ts"))) as { run(url: string): Promise<{ connections: string[]; points: number; alerts: number }> };
  const result = await run(server.url);
  expect(result.connections).toEqual(["from-codegen"]);
  expect(result.points).toBe(13); // 12 buckets and the end instant
  expect(result.alerts).toBe(0);
}, 60_000);

it("the tests' typed client is typed by the current document (run `npm run openapi` after changing routes)", async () => {
  expect(readFileSync(API_TYPES, "utf8")).toBe(await apiTypes());
});
