/**
 * Bearer secrets: 32 random bytes (256 bits), base64url, behind a recognisable prefix so secret scanners can
 * spot leaked ones. Only their SHA-256 is stored.
 */
import { createHash } from "node:crypto";

export const API_TOKEN_PREFIX = "pglens_";
export const SESSION_TOKEN_PREFIX = "pglens_session_";

function randomSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");
}

export const newApiToken = () => API_TOKEN_PREFIX + randomSecret();
export const newSessionToken = () => SESSION_TOKEN_PREFIX + randomSecret();
export const isSessionToken = (token: string) => token.startsWith(SESSION_TOKEN_PREFIX);

/** Hex SHA-256, synchronous (node:crypto, which Workers provide under nodejs_compat): every request hashes its token, and WebCrypto's asynchronous digest cost a few per cent of a cached request. */
export function tokenHash(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}
