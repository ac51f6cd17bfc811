import WebSocket from "ws";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { DatastoreUnavailableError } from "../../drivers/errors.ts";
import { openNeonHttp, openNeonWs } from "../../drivers/neon.ts";
import { openPg } from "../../drivers/pg.ts";
import { openPglite } from "../../drivers/pglite.ts";
import { chooseDriver } from "../../drivers/choose.ts";
import { arrayLiteral, timeOfMs, timesLiteral, valuesLiteral } from "../../src/datastore/array-literal.ts";
import type { Driver } from "../../drivers/types.ts";
import { startNeonProxy, type NeonProxy } from "../neon-proxy.ts";
import { createTestDatabase, freePort } from "../support/postgres.ts";

let proxy: NeonProxy;
const drops: Array<() => Promise<void>> = [];

beforeAll(async () => {
  proxy = await startNeonProxy();
});
afterAll(async () => {
  await proxy.close();
  for (const drop of drops) await drop();
});

async function database(serverUrl: string): Promise<string> {
  const db = await createTestDatabase(serverUrl);
  drops.push(db.drop);
  return db.url;
}

const neonOptions = () => ({ fetchEndpoint: proxy.fetchEndpoint, wsProxy: proxy.wsProxy, secureWebSocket: false, webSocketConstructor: WebSocket });

const cases: Array<[string, () => Promise<Driver>]> = [
  ["pg on PostgreSQL 17", async () => openPg(await database(inject("pg17Url")))],
  ["neon-http through the local proxy", async () => openNeonHttp(await database(inject("pg17Url")), neonOptions())],
  ["neon-ws through the local proxy", async () => openNeonWs(await database(inject("pg17Url")), neonOptions())],
  ["pglite in memory", () => openPglite()],
];
if (inject("systemPgUrl")) cases.push(["pg on the system PostgreSQL", async () => openPg(await database(inject("systemPgUrl")))]);

describe.each(cases)("driver contract: %s", (_name, open) => {
  let db: Driver;
  beforeAll(async () => {
    db = await open();
    await db.query("create table t (id int primary key, note text)");
  });
  afterAll(() => db.close());

  it("runs parameterised queries and parses types the same way", async () => {
    const [row] = await db.query(
      "select $1::int as i, 9007199254740991::int8 as big, 12.5::numeric as num, $2::text as s, " +
        "'2026-01-02T03:04:05Z'::timestamptz as ts, '{\"a\":[1]}'::jsonb as j, null::int as n, true as b",
      [7, "x"],
    );
    expect(row).toEqual({ i: 7, big: 9007199254740991, num: 12.5, s: "x", ts: new Date("2026-01-02T03:04:05Z"), j: { a: [1] }, n: null, b: true });
  });

  it("takes arrays of whole numbers as literals, and times as epoch milliseconds (the rollup reads' plans)", async () => {
    const ms = [Date.UTC(2026, 10, 24, 1, 2, 3, 456), -1, 0];
    const [row] = await db.query<{ ints: number[]; times: Date[] }>(
      `select $1::int[] as ints, array(select ${timeOfMs("u")} from unnest($2::int8[]) as u) as times`,
      [arrayLiteral([3, null, -7]), arrayLiteral(ms)],
    );
    expect(row.ints).toEqual([3, null, -7]);
    expect(row.times.map((t) => t.getTime())).toEqual(ms);
    expect(() => arrayLiteral([1.5])).toThrow(/whole number/);
    // An instant's fraction of a millisecond is cut off, as from a Date (the ISO strings sent before were).
    expect(timesLiteral([1.9, -1.5])).toBe(`{${new Date(1.9).getTime()},${new Date(-1.5).getTime()}}`);
    expect(timesLiteral([1.9])).toBe("{1}");
  });

  it("reads a column's values from an array literal as from the driver's own array (the sample writer's inserts)", async () => {
    const columns: Array<[string, unknown[]]> = [
      ["text", ['we"ird', "back\\slash", "a,b", "{x}", "NULL", "", " spaced ", "ünï 🐘", null, 7]],
      ["float8", [0.1, -2.5e-7, 1e21, 123456789.125, null, "42.5"]],
      ["int8", [9007199254740991, -3, 0, null, "17"]],
      ["bool", [true, false, null, "true"]],
      ["timestamptz", [new Date(Date.UTC(2026, 10, 27, 1, 2, 3, 456)), "2026-11-27T01:02:03.456+02:00", null]],
    ];
    for (const [type, values] of columns) {
      const [row] = await db.query<{ literal: unknown[]; own: unknown[] }>(`select $1::${type}[] as literal, $2::${type}[] as own`, [
        valuesLiteral(values),
        values,
      ]);
      expect(row.literal, type).toEqual(row.own);
      expect(row.literal, type).toHaveLength(values.length);
    }
  });

  it("returns an entity key as JSON text, as the entity cells' reads parse it", async () => {
    const [row] = await db.query<{ entity: string }>(`select array_to_json(array['we"ird', null, 'a,b', '{x}', 'ünï'])::text as entity`);
    expect(typeof row.entity).toBe("string");
    expect(JSON.parse(row.entity)).toEqual(['we"ird', null, "a,b", "{x}", "ünï"]);
  });

  it("commits a transaction that resolves", async () => {
    const result = await db.transaction(async (tx) => {
      await tx.query("insert into t values ($1, $2)", [1, "kept"]);
      return (await tx.query<{ c: number }>("select count(*)::int as c from t"))[0].c;
    });
    expect(result).toBe(1);
    expect(await db.query("select note from t where id = 1")).toEqual([{ note: "kept" }]);
  });

  it("rolls back a transaction that throws", async () => {
    await expect(
      db.transaction(async (tx) => {
        await tx.query("insert into t values ($1, $2)", [2, "lost"]);
        throw new Error("boom");
      }),
    ).rejects.toThrow("boom");
    expect(await db.query("select id from t where id = 2")).toEqual([]);
  });

  it("runs a statement marked to reuse its plan like any other, again and again", async () => {
    for (const n of [1, 2, 3]) {
      expect(await db.query("select $1::int + 1 as n, note from t where id = $2", [n, 1], { reusePlan: true })).toEqual([{ n: n + 1, note: "kept" }]);
    }
    await expect(db.query("select * from no_such_table where 1 = $1", [1], { reusePlan: true })).rejects.toMatchObject({ code: "42P01" });
  });

  it("keeps the SQLSTATE of SQL errors", async () => {
    await expect(db.query("select * from no_such_table")).rejects.toMatchObject({ code: "42P01" });
    await expect(db.transaction((tx) => tx.query("insert into t values (1, 'dup')"))).rejects.toMatchObject({ code: "23505" });
  });
});

describe("node-postgres sessions", () => {
  it("run with JIT off, in queries and in transactions alike", async () => {
    const db = openPg(await database(inject("pg17Url")), { max: 2 });
    try {
      const seen = await Promise.all([
        db.query<{ jit: string }>("SHOW jit"),
        db.query<{ jit: string }>("SHOW jit"),
        db.transaction((tx) => tx.query<{ jit: string }>("SHOW jit")),
      ]);
      expect(seen.map(([row]) => row.jit)).toEqual(["off", "off", "off"]);
    } finally {
      await db.close();
    }
  });
});

describe("node-postgres plan reuse", () => {
  // One connection for the statements that reuse their plans, keeping two: every such statement below shares it.
  const open = async () => openPg(await database(inject("pg17Url")), { plans: { connections: 1, perConnection: 2 } });
  const prepared = (db: Driver, pattern: string) =>
    db.query<{ generic_plans: number; custom_plans: number }>(
      "SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE statement LIKE $1",
      [pattern],
      { reusePlan: true },
    );

  it("plans a marked statement once per connection, generically, and nothing else", async () => {
    const db = await open();
    try {
      for (const n of [1, 2, 3]) expect(await db.query("SELECT $1::int AS marked_read", [n], { reusePlan: true })).toEqual([{ marked_read: n }]);
      expect(await prepared(db, "%marked_read%")).toEqual([{ generic_plans: 3, custom_plans: 0 }]);
      // Other statements keep the server's plan choice and are not prepared.
      expect(await db.query("SHOW plan_cache_mode")).toEqual([{ plan_cache_mode: "auto" }]);
      await db.query("SELECT $1::int AS unmarked_read", [1]);
      expect(await prepared(db, "%unmarked_read%")).toEqual([]);
    } finally {
      await db.close();
    }
  });

  it("keeps a connection's most recently used statements, forgetting the oldest on the same connection", async () => {
    const db = openPg(await database(inject("pg17Url")), { plans: { connections: 1, perConnection: 3 } });
    const pid = async () => (await db.query<{ pid: number }>("SELECT pg_backend_pid() AS pid", [], { reusePlan: true }))[0].pid;
    try {
      const first = await pid(); // kept, least recently used first: [pid]
      await db.query("SELECT $1::int AS first_read", [1], { reusePlan: true }); // [pid, first]
      expect(await prepared(db, "%first_read%")).toHaveLength(1); // [pid, first, question]
      await pid(); // [first, question, pid]
      await db.query("SELECT $1::int AS third_read", [1], { reusePlan: true }); // one too many: first goes
      expect(await prepared(db, "%first_read%")).toEqual([]);
      expect(await pid()).toBe(first); // the same connection
      expect(await db.query("SELECT $1::int AS first_read", [2], { reusePlan: true })).toEqual([{ first_read: 2 }]); // prepared again
      expect(await prepared(db, "%third_read%")).toEqual([]);
    } finally {
      await db.close();
    }
  });

  it("runs marked statements as ordinary ones from then on where prepared statements get lost (a pooler)", async () => {
    const db = await open();
    try {
      await db.query("SELECT $1::int AS marked_read", [1], { reusePlan: true });
      // Behind the driver's back, as a pooler moving the session to another server would.
      await db.query("DEALLOCATE ALL", [], { reusePlan: true });
      expect(await db.query("SELECT $1::int AS marked_read", [2], { reusePlan: true })).toEqual([{ marked_read: 2 }]);
      expect(await db.query("SELECT $1::int AS marked_read", [3], { reusePlan: true })).toEqual([{ marked_read: 3 }]);
    } finally {
      await db.close();
    }
  });

  it("keeps nothing prepared in a driver for one request (Workers), which runs marked statements as any other", async () => {
    const db = openPg(await database(inject("pg17Url")), { max: 1, plans: false });
    try {
      expect(await db.query("SELECT $1::int AS marked_read", [1], { reusePlan: true })).toEqual([{ marked_read: 1 }]);
      expect(await db.query("SELECT count(*)::int AS n FROM pg_prepared_statements")).toEqual([{ n: 0 }]);
    } finally {
      await db.close();
    }
  });
});

describe("unreachable datastore", () => {
  it.each([
    ["pg", (url: string) => openPg(url, { connectTimeoutMs: 2000 })],
    ["neon-http", (url: string) => openNeonHttp(url, neonOptions())],
    ["neon-ws", (url: string) => openNeonWs(url, { ...neonOptions(), connectTimeoutMs: 2000 })],
  ])("%s reports DatastoreUnavailableError", async (_kind, open) => {
    const db = open(`postgres://postgres:postgres@127.0.0.1:${await freePort()}/postgres`);
    await expect(db.query("select 1")).rejects.toBeInstanceOf(DatastoreUnavailableError);
    await db.close();
  });
});

describe("a failing statement on a reachable datastore", () => {
  it("is its error, not DatastoreUnavailableError (a protocol violation is a bug, not an outage)", async () => {
    const db = openPg(await database(inject("pg17Url")), { max: 1 });
    try {
      const failure = await db.query("SELECT $1::int AS one", [1, 2]).catch((err: unknown) => err);
      expect(failure).toMatchObject({ code: "08P01" });
      expect(failure).not.toBeInstanceOf(DatastoreUnavailableError);
    } finally {
      await db.close();
    }
  });
});

describe("driver selection", () => {
  it("picks the embedded default, the URL's kind, or the explicit choice", () => {
    expect(chooseDriver({})).toBe("pglite");
    expect(chooseDriver({ url: "postgres://u@db.example.com/x" })).toBe("pg");
    expect(chooseDriver({ url: "postgres://u@ep-cool-1.eu-central-1.aws.neon.tech/x" })).toBe("neon-http");
    expect(chooseDriver({ url: "postgres://u@db.example.com/x", driver: "neon-ws" })).toBe("neon-ws");
  });
});
