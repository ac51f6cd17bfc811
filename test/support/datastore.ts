/**
 * Fresh, migrated datastores of each kind the metrics tests run on. Each test worker migrates one of each kind
 * once and copies it for every later datastore (PGlite: loaded from a dump of its data directory, 1.3 s instead
 * of 3.2 s; PostgreSQL: CREATE DATABASE ... TEMPLATE, without running the migrations again).
 */
import { PGlite } from "@electric-sql/pglite";
import { vector } from "@electric-sql/pglite-pgvector";
import { inject } from "vitest";
import { openPg } from "../../drivers/pg.ts";
import { openPglite, pgliteDriver } from "../../drivers/pglite.ts";
import type { Driver } from "../../drivers/types.ts";
import { migrate } from "../../src/datastore/migrate.ts";
import { createTestDatabase } from "./postgres.ts";

let pgliteDump: Promise<Blob> | undefined;
let pgTemplate: Promise<string> | undefined;

async function migratedPgliteDump(): Promise<Blob> {
  const db = await PGlite.create({ extensions: { vector } });
  try {
    await migrate(pgliteDriver(db));
    return await db.dumpDataDir("none");
  } finally {
    await db.close();
  }
}

/** A migrated database on the run's PostgreSQL 17 that no one connects to, to copy. */
async function migratedPgTemplate(serverUrl: string): Promise<string> {
  const template = await createTestDatabase(serverUrl);
  const db = openPg(template.url);
  await migrate(db);
  await db.close();
  return template.name;
}

export interface TestDatastore {
  db: Driver;
  url?: string;
  close(): Promise<void>;
}

export const DATASTORE_KINDS = ["pg", "pglite"] as const;

export async function migratedDatastore(kind: (typeof DATASTORE_KINDS)[number]): Promise<TestDatastore> {
  if (kind === "pglite") {
    pgliteDump ??= migratedPgliteDump();
    const db = await openPglite(undefined, { loadDataDir: await pgliteDump });
    return { db, close: () => db.close() };
  }
  const serverUrl = inject("pg17Url");
  pgTemplate ??= migratedPgTemplate(serverUrl);
  const database = await createTestDatabase(serverUrl, await pgTemplate);
  const db = openPg(database.url);
  return {
    db,
    url: database.url,
    async close() {
      await db.close();
      await database.drop();
    },
  };
}

/** Registers a bare connection row (the estate API comes later) and returns its id. */
export async function addConnection(db: Driver, name: string): Promise<number> {
  const [row] = await db.query<{ id: number }>("INSERT INTO connections (name, host, username) VALUES ($1, 'localhost', 'monitor') RETURNING id", [name]);
  return row.id;
}
