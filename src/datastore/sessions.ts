/** Login sessions, shared by every instance through the datastore. */
import type { Queryable } from "../../drivers/types.ts";

export async function createSession(db: Queryable, tokenHash: string, userId: number, expiresAt: Date): Promise<void> {
  await db.query("INSERT INTO sessions (token_hash, user_id, expires_at) VALUES ($1, $2, $3)", [tokenHash, userId, expiresAt.toISOString()]);
  // Expired sessions are removed as new ones are made, so the table does not grow without bound.
  await db.query("DELETE FROM sessions WHERE expires_at < now()");
}

export async function deleteSession(db: Queryable, tokenHash: string): Promise<void> {
  await db.query("DELETE FROM sessions WHERE token_hash = $1", [tokenHash]);
}

export async function deleteUserSessions(db: Queryable, userId: number): Promise<void> {
  await db.query("DELETE FROM sessions WHERE user_id = $1", [userId]);
}

/** Expired sessions and login-throttle windows long past: removed on the collector's maintenance schedule. */
export async function pruneExpiredAuthState(db: Queryable): Promise<number> {
  const sessions = await db.query("DELETE FROM sessions WHERE expires_at < now() RETURNING token_hash");
  await db.query("DELETE FROM login_throttle WHERE window_started < now() - interval '1 day'");
  return sessions.length;
}
