/** Fresh, migrated datastores of each kind the metrics tests run on. */
import { inject } from "vitest";
import { openPg } from "../../drivers/pg.ts";
import { openPglite } from "../../drivers/pglite.ts";
import type { Driver } from "../../drivers/types.ts";
import { migrate } from "../../src/datastore/migrate.ts";
import { createTestDatabase } from "./postgres.ts";

export interface TestDatastore {
  db: Driver;
  url?: string;
  close(): Promise<void>;
}

export const DATASTORE_KINDS = ["pg", "pglite"] as const;

export async function migratedDatastore(kind: (typeof DATASTORE_KINDS)[number]): Promise<TestDatastore> {
  if (kind === "pglite") {
    const db = await openPglite();
    await migrate(db);
    return { db, close: () => db.close() };
  }
  const database = await createTestDatabase(inject("pg17Url"));
  const db = openPg(database.url);
  await migrate(db);
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
