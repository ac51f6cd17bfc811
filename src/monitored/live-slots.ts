/**
 * Limits on live sessions: at most N at once per monitored connection and per user, across every instance.
 * A session claims a numbered slot row (the primary key makes a slot single-owner); a crashed holder's slot
 * lapses at its expiry.
 */
import type { Queryable } from "../../drivers/types.ts";
import type { Config } from "../config.ts";

export class LiveBusyError extends Error {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(message);
    this.name = "LiveBusyError";
  }
}

export interface LiveLimits {
  perConnection: number;
  perUser: number;
  /** How long a claim may live: past this the slot is free again even if its holder never released it. */
  holdMs: number;
}

/** The limits the configuration sets (live_tools.*). */
export const liveLimits = (config: Config): LiveLimits => ({
  perConnection: config.live_tools.max_sessions_per_connection,
  perUser: config.live_tools.max_sessions_per_user,
  holdMs: config.live_tools.statement_timeout_ms * 2 + 10_000,
});

export async function withLiveSlot<T>(db: Queryable, connectionId: number, userId: number, limits: LiveLimits, work: () => Promise<T>): Promise<T> {
  const retryAfter = Math.max(1, Math.ceil(limits.holdMs / 4000));
  await db.query("DELETE FROM live_sessions WHERE expires_at < now()");
  const [{ n }] = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM live_sessions WHERE user_id = $1", [userId]);
  if (n >= limits.perUser)
    throw new LiveBusyError(`too many live queries: you already have ${n} running (at most ${limits.perUser}); try again when one finishes`, retryAfter);
  let slot: number | undefined;
  for (let attempt = 0; attempt < 3 && slot === undefined; attempt++) {
    const [claimed] = await db.query<{ slot: number }>(
      `INSERT INTO live_sessions (connection_id, slot, user_id, expires_at)
       SELECT $1, s, $2, now() + make_interval(secs => $4::float8 / 1000) FROM generate_series(1, $3::int) s
        WHERE s NOT IN (SELECT slot FROM live_sessions WHERE connection_id = $1) ORDER BY s LIMIT 1
       ON CONFLICT DO NOTHING RETURNING slot`,
      [connectionId, userId, limits.perConnection, limits.holdMs],
    );
    slot = claimed?.slot;
    if (!claimed) {
      const [{ used }] = await db.query<{ used: number }>("SELECT count(*)::int AS used FROM live_sessions WHERE connection_id = $1", [connectionId]);
      if (used >= limits.perConnection) break;
    }
  }
  if (slot === undefined)
    throw new LiveBusyError(`too many live queries on connection ${connectionId} (at most ${limits.perConnection} at once); try again shortly`, retryAfter);
  try {
    return await work();
  } finally {
    await db.query("DELETE FROM live_sessions WHERE connection_id = $1 AND slot = $2", [connectionId, slot]).catch(() => {});
  }
}
