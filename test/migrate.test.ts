import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { openPg } from "../drivers/pg.ts";
import { openPglite } from "../drivers/pglite.ts";
import { migrate } from "../src/datastore/migrate.ts";
import { MIGRATIONS } from "../src/datastore/migrations/index.ts";
import { createTestDatabase } from "./support/postgres.ts";

const latest = Math.max(...MIGRATIONS.map((m) => m.version));

describe("migrations", () => {
  let database: { url: string; drop(): Promise<void> };
  beforeAll(async () => {
    database = await createTestDatabase(inject("pg17Url"));
  });
  afterAll(() => database.drop());

  it("are numbered without gaps or duplicates", () => {
    expect(MIGRATIONS.map((m) => m.version)).toEqual(MIGRATIONS.map((_, i) => i + 1));
  });

  it("apply once even when two instances start at the same moment", async () => {
    const a = openPg(database.url);
    const b = openPg(database.url);
    const [first, second] = await Promise.all([migrate(a), migrate(b)]);
    expect(first.applied.length + second.applied.length).toBe(MIGRATIONS.length);
    expect(first.version).toBe(latest);
    expect(second.version).toBe(latest);
    const again = await migrate(a);
    expect(again).toEqual({ applied: [], version: latest });
    const tables = await a.query<{ name: string }>(
      "select table_schema || '.' || table_name as name from information_schema.tables where table_name in ('connections','probe_configs','schema_version') order by 1",
    );
    expect(tables.map((t) => t.name)).toEqual(["public.connections", "public.probe_configs", "public.schema_version"]);
    expect(await a.query("select 1 from information_schema.schemata where schema_name = 'metrics'")).toHaveLength(1);
    await Promise.all([a.close(), b.close()]);
  });

  it("roll back a failing migration entirely", async () => {
    const db = await openPglite();
    const broken = [...MIGRATIONS, { version: latest + 1, name: "broken", statements: ["CREATE TABLE half_done (id int)", "SELECT * FROM missing"] }];
    await expect(migrate(db, broken)).rejects.toMatchObject({ code: "42P01" });
    expect(await db.query("select to_regclass('half_done') as t")).toEqual([{ t: null }]);
    expect(await db.query("select to_regclass('schema_version') as t")).toEqual([{ t: null }]);
    expect((await migrate(db)).version).toBe(latest);
    await db.close();
  });
});
