/**
 * query_database's caps hold while rows arrive (#46 item 9): values that can be large are cut on the monitored
 * server, so four calls at once that each select 100 MB values leave this process's memory nearly where it was.
 * A real PostgreSQL 17 server, a pg_monitor login, the tool as callers use it.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { loadAuthority } from "../../src/auth/rbac.ts";
import { resolveConfig } from "../../src/config.ts";
import { createLogger } from "../../src/log.ts";
import { callTool } from "../../src/mcp/call.ts";
import { migratedDatastore, type TestDatastore } from "../support/datastore.ts";
import { fencedData } from "../support/fenced.ts";
import { TEST_SECRET, monitorRoleUrl, registerServer } from "../support/monitored.ts";

let store: TestDatastore;
let query: (sql: string, maxRows?: number) => Promise<{ text: string; isError: boolean }>;

beforeAll(async () => {
  store = await migratedDatastore("pglite");
  const conn = await registerServer(store.db, "big-values", await monitorRoleUrl(inject("pg17Url")));
  const [root] = await store.db.query<{ id: number }>("INSERT INTO users (username, is_superuser) VALUES ('root', true) RETURNING id");
  const access = await loadAuthority(store.db, { userId: root.id, username: "root", isSuperuser: true, via: "api_token", tokenHash: "x" });
  const config = resolveConfig({ live_tools: { statement_timeout_ms: 60_000 } }, { PGLENS_SECRET: TEST_SECRET });
  query = async (sql, maxRows) => {
    const result = await callTool(
      "query_database",
      { connection_id: conn, query: sql, ...(maxRows ? { max_rows: maxRows } : {}) },
      { db: store.db, readDb: store.db, now: Date.now(), access, config, log: createLogger("error") },
    );
    return { text: result.content[0].text, isError: result.isError };
  };
});
afterAll(() => store.close());

describe("query_database", () => {
  it("cuts large values on the server and keeps names, order and the other columns' values", async () => {
    const { text, isError } = await query(
      "SELECT g AS n, repeat('y', 20000 + g) AS n, g % 2 = 0 AS even, jsonb_build_object('g', g) AS doc FROM generate_series(1, 3) g ORDER BY g DESC -- newest first",
    );
    expect(isError, text).toBe(false);
    const [header, ...rows] = fencedData(text).split("\n");
    expect(header).toBe("n\tn\teven\tdoc");
    expect(rows.map((r) => r.split("\t")[0])).toEqual(["3", "2", "1"]);
    expect(rows.map((r) => r.split("\t")[1])).toEqual(Array(3).fill(`${"y".repeat(10_000)}…`));
    expect(rows.map((r) => r.split("\t")[2])).toEqual(["false", "true", "false"]);
    expect(rows[0].split("\t")[3]).toBe('{"g": 3}');
  });

  it("four calls at once selecting 100 MB values keep this process under +300 MB", { timeout: 120_000 }, async () => {
    const before = process.memoryUsage().rss;
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
    const results = await Promise.all(
      Array.from({ length: 4 }, () => query("SELECT g, repeat('x', 100 * 1024 * 1024) AS big FROM generate_series(1, 3) g")),
    ).finally(() => clearInterval(sampler));
    expect((peak - before) / 1024 / 1024).toBeLessThan(300);
    for (const r of results) {
      expect(r.isError, r.text.slice(0, 300)).toBe(false);
      expect(fencedData(r.text).split("\n")).toEqual(["g\tbig", ...[1, 2, 3].map((g) => `${g}\t${"x".repeat(10_000)}…`)]);
    }
  });
});
