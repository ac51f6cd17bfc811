/**
 * Every probe's SQL for PostgreSQL 18 runs on PGlite (PostgreSQL 18) and answers only columns the catalogue
 * stores (versions 15 and 17 run end to end in collector.test.ts against real servers).
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { PGlite } from "@electric-sql/pglite";
import { PROBES } from "../../src/probes/index.ts";

let db: PGlite;
beforeAll(async () => {
  db = await PGlite.create();
});
afterAll(() => db.close());

it("runs on PostgreSQL 18", async () => {
  const [{ v }] = (await db.query<{ v: string }>("SELECT current_setting('server_version_num') AS v")).rows;
  expect(Math.floor(Number(v) / 10000)).toBe(18);
});

it.each(PROBES.filter((p) => !p.collect.extension).map((p) => [p.name, p] as const))("%s", async (_name, probe) => {
  const statements = probe.collect.sql(18, {});
  expect(statements).not.toBeNull();
  const stored = new Set(probe.columns.map((c) => c.name));
  for (const sql of statements!) {
    const result = await db.query(sql);
    const unknown = result.fields.map((f) => f.name).filter((n) => !stored.has(n));
    expect(unknown).toEqual([]);
  }
});
