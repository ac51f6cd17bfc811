/** The connection (and database) a credential has selected as its current one (POST /api/v1/connections/current). */
import type { Queryable } from "../../drivers/types.ts";

export interface CurrentConnection {
  connection_id: number;
  database_name: string | null;
}

export async function currentConnection(db: Queryable, tokenHash: string): Promise<CurrentConnection | undefined> {
  return (await db.query<CurrentConnection>("SELECT connection_id, database_name FROM current_connections WHERE token_hash = $1", [tokenHash]))[0];
}

export async function selectCurrentConnection(db: Queryable, tokenHash: string, current: CurrentConnection): Promise<void> {
  await db.query(
    `INSERT INTO current_connections (token_hash, connection_id, database_name) VALUES ($1, $2, $3)
     ON CONFLICT (token_hash) DO UPDATE SET connection_id = excluded.connection_id, database_name = excluded.database_name, updated_at = now()`,
    [tokenHash, current.connection_id, current.database_name],
  );
}

export async function clearCurrentConnection(db: Queryable, tokenHash: string): Promise<void> {
  await db.query("DELETE FROM current_connections WHERE token_hash = $1", [tokenHash]);
}
