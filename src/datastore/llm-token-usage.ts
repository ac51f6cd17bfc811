/** Per-user daily token counts of the LLM proxy (UTC days, kept by the datastore's clock). */
import type { Queryable } from "../../drivers/types.ts";

export async function tokensUsedToday(db: Queryable, userId: number): Promise<number> {
  const rows = await db.query<{ tokens: string }>("SELECT tokens FROM llm_token_usage WHERE user_id = $1 AND day = (now() AT TIME ZONE 'UTC')::date", [userId]);
  return rows.length ? Number(rows[0].tokens) : 0;
}

/** Adds to today's count in one statement, so concurrent requests on several instances all count. */
export async function addTokens(db: Queryable, userId: number, tokens: number): Promise<void> {
  if (tokens <= 0) return;
  await db.query(
    `INSERT INTO llm_token_usage (user_id, day, tokens) VALUES ($1, (now() AT TIME ZONE 'UTC')::date, $2)
     ON CONFLICT (user_id, day) DO UPDATE SET tokens = llm_token_usage.tokens + EXCLUDED.tokens`,
    [userId, tokens],
  );
}
