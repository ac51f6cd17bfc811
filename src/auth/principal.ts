/** Who is calling: resolved from a bearer token or the session cookie. */
import type { Queryable } from "../../drivers/types.ts";
import { isSessionToken, tokenHash } from "./tokens.ts";

export interface Principal {
  userId: number;
  username: string;
  isSuperuser: boolean;
  via: "session" | "api_token";
  /** Set for API tokens: scopes hang off it. */
  tokenId?: number;
  tokenHash: string;
}

interface Found {
  id: number;
  username: string;
  is_superuser: boolean;
  token_id: number | null;
  /** Set for API tokens whose last use was recorded over a minute ago. */
  stale_use: boolean | null;
}

/** Null when the token is unknown, expired, or its user is disabled or locked. */
export async function authenticate(db: Queryable, token: string): Promise<Principal | null> {
  const hash = await tokenHash(token);
  const session = isSessionToken(token);
  const [row] = await db.query<Found>(
    session
      ? `SELECT u.id, u.username, u.is_superuser, NULL::int AS token_id, NULL::boolean AS stale_use FROM sessions s JOIN users u ON u.id = s.user_id
          WHERE s.token_hash = $1 AND s.expires_at > now() AND u.enabled AND NOT u.locked`
      : `SELECT u.id, u.username, u.is_superuser, t.id AS token_id,
                 (t.last_used_at IS NULL OR t.last_used_at < now() - interval '1 minute') AS stale_use FROM api_tokens t JOIN users u ON u.id = t.user_id
          WHERE t.token_hash = $1 AND (t.expires_at IS NULL OR t.expires_at > now()) AND u.enabled AND NOT u.locked`,
    [hash],
  );
  if (!row) return null;
  // At most one write a minute per token, so use of a token costs no write per request.
  if (row.stale_use) await db.query("UPDATE api_tokens SET last_used_at = now() WHERE id = $1", [row.token_id]);
  return { userId: row.id, username: row.username, isSuperuser: row.is_superuser, via: session ? "session" : "api_token", tokenId: row.token_id ?? undefined, tokenHash: hash };
}
