/** Failed-login counters per client address and per account, in the datastore so every instance sees them. */
import type { Queryable } from "../../drivers/types.ts";

export interface ThrottleRule {
  key: string;
  max: number;
}

/** Seconds until the first exhausted rule's window ends, or null when every rule still allows a try. */
export async function throttledFor(db: Queryable, rules: readonly ThrottleRule[], windowMinutes: number): Promise<number | null> {
  const rows = await db.query<{ key: string; failures: number; remaining: number }>(
    `SELECT key, failures, extract(epoch FROM window_started + make_interval(mins => $2) - now())::float8 AS remaining
       FROM login_throttle WHERE key = ANY($1::text[])`,
    [rules.map((r) => r.key), windowMinutes],
  );
  let wait: number | null = null;
  for (const row of rows) {
    const rule = rules.find((r) => r.key === row.key)!;
    if (row.remaining > 0 && row.failures >= rule.max) wait = Math.max(wait ?? 0, Math.ceil(row.remaining));
  }
  return wait;
}

export async function recordFailures(db: Queryable, keys: readonly string[], windowMinutes: number): Promise<void> {
  for (const key of keys) {
    await db.query(
      `INSERT INTO login_throttle (key, failures, window_started) VALUES ($1, 1, now())
       ON CONFLICT (key) DO UPDATE SET
         failures = CASE WHEN login_throttle.window_started < now() - make_interval(mins => $2) THEN 1 ELSE login_throttle.failures + 1 END,
         window_started = CASE WHEN login_throttle.window_started < now() - make_interval(mins => $2) THEN now() ELSE login_throttle.window_started END`,
      [key, windowMinutes],
    );
  }
}

export async function clearFailures(db: Queryable, keys: readonly string[]): Promise<void> {
  await db.query("DELETE FROM login_throttle WHERE key = ANY($1::text[])", [keys]);
}
