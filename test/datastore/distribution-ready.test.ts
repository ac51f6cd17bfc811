/**
 * The migrated schema keeps what a distributed engine (Citus) needs to shard the samples by connection:
 * every sample, derived and compressed table has connection_id, every index and unique key on them leads
 * with it (a unique key must hold the distribution column), and no foreign key ties them to the
 * application's tables or to each other. docs/scaling.md gives the statements that rely on this.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { migratedDatastore, type TestDatastore } from "../support/datastore.ts";

let store: TestDatastore;
beforeAll(async () => {
  store = await migratedDatastore("pglite");
});
afterAll(() => store.close());

/** Tables of the metrics schema as a distributed engine sees them: partitioned parents and plain tables. */
const TABLES = `SELECT c.oid, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                 WHERE n.nspname = 'metrics' AND c.relkind IN ('r', 'p') AND NOT c.relispartition`;

it("gives every sample, derived and compressed table a connection_id", async () => {
  const tables = await store.db.query<{ relname: string }>(TABLES);
  expect(tables.length).toBeGreaterThan(100);
  const without = await store.db.query<{ relname: string }>(
    `SELECT t.relname FROM (${TABLES}) t WHERE NOT EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = t.oid AND a.attname = 'connection_id' AND NOT a.attisdropped)`,
  );
  expect(without).toEqual([]);
  for (const suffix of ["__raw", "__compressed", "__changes", "__levels", "__entity_cells"])
    expect(
      tables.some((t) => t.relname.endsWith(suffix)),
      suffix,
    ).toBe(true);
});

it("leads every index and unique key of them with connection_id", async () => {
  const indexes = await store.db.query<{ relname: string; first: string; unique: boolean; definition: string }>(
    `SELECT t.relname, a.attname AS first, x.indisunique AS unique, pg_get_indexdef(x.indexrelid) AS definition
       FROM (${TABLES}) t JOIN pg_index x ON x.indrelid = t.oid
       LEFT JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = x.indkey[0]`,
  );
  expect(indexes.length).toBeGreaterThan(100);
  expect(indexes.filter((i) => i.first !== "connection_id").map((i) => i.definition)).toEqual([]);
  expect(indexes.some((i) => i.unique)).toBe(true);
});

it("ties them to nothing by foreign key, in either direction", async () => {
  const keys = await store.db.query<{ definition: string }>(
    `SELECT conrelid::regclass::text || ': ' || pg_get_constraintdef(oid) AS definition FROM pg_constraint
      WHERE contype = 'f' AND (conrelid IN (SELECT oid FROM (${TABLES}) t) OR confrelid IN (SELECT oid FROM (${TABLES}) t))`,
  );
  expect(keys).toEqual([]);
});
