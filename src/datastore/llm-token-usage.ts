/** Per-user daily token counts of the LLM proxy (UTC days, kept by the datastore's clock). */
import type { Queryable } from "../../drivers/types.ts";

/**
 * Adds `tokens` to today's count in one statement, only while the count is below `limit` (when given), so
 * parallel calls on any number of instances cannot all pass a nearly spent budget. Returns the day charged,
 * or null when the budget was already spent.
 */
export async function reserveTokens(db: Queryable, userId: number, tokens: number, limit?: number): Promise<string | null> {
  const rows = await db.query<{ day: string }>(
    `INSERT INTO llm_token_usage (user_id, day, tokens) VALUES ($1, (now() AT TIME ZONE 'UTC')::date, $2)
     ON CONFLICT (user_id, day) DO UPDATE SET tokens = llm_token_usage.tokens + EXCLUDED.tokens
      WHERE $3::bigint IS NULL OR llm_token_usage.tokens < $3::bigint
     RETURNING day::text AS day`,
    [userId, Math.max(0, tokens), limit ?? null],
  );
  return rows[0]?.day ?? null;
}

/** Corrects the count of the day a reservation was charged to by `delta` tokens (negative gives back). */
export async function adjustTokens(db: Queryable, userId: number, day: string, delta: number): Promise<void> {
  if (delta === 0) return;
  await db.query("UPDATE llm_token_usage SET tokens = greatest(0, tokens + $3) WHERE user_id = $1 AND day = $2::date", [userId, day, delta]);
}
