/**
 * An assistant arriving cold: with no MCP privileges, `initialize` says why and how to fix it; an
 * administrator runs `pglens group grant` (the README's recipe); then list_connections finds the servers.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { openPg } from "../../drivers/pg.ts";
import type { Driver } from "../../drivers/types.ts";
import { issueApiToken } from "../../src/auth/issue-token.ts";
import { migrate } from "../../src/datastore/migrate.ts";
import { runCli } from "../support/cli.ts";
import { dataOf, mcpClient } from "../support/mcp-client.ts";
import { TEST_SECRET, registerServer } from "../support/monitored.ts";
import { testApp } from "../support/app.ts";
import { serveOnFreePort } from "../support/node-server.ts";
import { createTestDatabase } from "../support/postgres.ts";

let database: { url: string; drop(): Promise<void> };
let db: Driver;
let node: { url: string; close(): Promise<void> };
let token: string;
let conn: number;

beforeAll(async () => {
  database = await createTestDatabase(inject("pg17Url"));
  db = openPg(database.url);
  await migrate(db);
  conn = await registerServer(db, "prod", inject("pg17Url"));
  node = await serveOnFreePort(testApp(db).app.fetch);
  const env = { PGLENS_DATASTORE_URL: database.url, PGLENS_SECRET: TEST_SECRET };
  expect((await runCli(["user", "create", "assistant", "--service-account"], env)).code).toBe(0);
  token = (await issueApiToken(db, { owner: "assistant" })).token;
});
afterAll(async () => {
  await node?.close();
  await db.close();
  await database.drop();
});

describe("an assistant arriving cold", () => {
  it("is told why it has no tools, then gets them through `pglens group grant`", async () => {
    const cold = await mcpClient(node.url, token);
    expect((await cold.listTools()).tools).toEqual([]);
    expect(cold.getInstructions()).toContain("assistant holds no MCP privileges");
    expect(cold.getInstructions()).toContain("pglens group grant");
    await cold.close();

    const env = { PGLENS_DATASTORE_URL: database.url, PGLENS_SECRET: TEST_SECRET };
    const bad = await runCli(["group", "grant", "assistants", "--mcp", "no_such_tool"], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("unknown MCP privilege `no_such_tool`");
    const granted = await runCli(
      ["group", "grant", "assistants", "--member", "assistant", "--mcp", "list_connections,query_metrics", "--connections", "0:read"],
      env,
    );
    expect(granted.code, granted.stderr).toBe(0);
    expect(granted.stderr).toContain("MCP list_connections, query_metrics; connections 0:read");
    expect((await runCli(["group", "grant", "assistants", "--member", "assistant"], env)).code).toBe(0); // again: no duplicate, no error

    const warm = await mcpClient(node.url, token);
    expect((await warm.listTools()).tools.map((t) => t.name)).toEqual(["list_connections", "query_metrics"]);
    expect(warm.getInstructions()).toContain("find servers with list_connections");
    const listed = dataOf(await warm.callTool({ name: "list_connections", arguments: {} }));
    expect(listed.split("\n")[0]).toBe("id\tname\thost\tport\tdatabase_name\tis_monitored\taccess\tlast_collected_at\tconnection_error");
    expect(listed).toMatch(new RegExp(`\\n${conn}\\tprod\\t127\\.0\\.0\\.1\\t\\d+\\tpostgres\\ttrue\\tread\\t`));
    await warm.close();
  });
});
