/** pgvector helpers shared by the tables that keep embeddings when the datastore has the extension. */
import type { Queryable } from "../../drivers/types.ts";

/** Whether this table got its `embedding` column (pgvector was there when its migration ran). */
export async function hasVectorColumn(db: Queryable, table: string): Promise<boolean> {
  const [row] = await db.query<{ present: boolean }>(
    "SELECT EXISTS (SELECT 1 FROM information_schema.columns WHERE table_name = $1 AND column_name = 'embedding' AND table_schema = current_schema()) AS present",
    [table],
  );
  return row.present;
}

/** A vector as pgvector's text input, to pass as a parameter cast with `::vector`. */
export const vectorLiteral = (v: readonly number[]) => `[${v.join(",")}]`;
