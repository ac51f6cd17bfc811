/**
 * Bearer secrets: 32 random bytes (256 bits), base64url, behind a recognisable prefix so secret scanners can
 * spot leaked ones. Only their SHA-256 is stored.
 */
export const API_TOKEN_PREFIX = "pglens_";
export const SESSION_TOKEN_PREFIX = "pglens_session_";

function randomSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

export const newApiToken = () => API_TOKEN_PREFIX + randomSecret();
export const newSessionToken = () => SESSION_TOKEN_PREFIX + randomSecret();
export const isSessionToken = (token: string) => token.startsWith(SESSION_TOKEN_PREFIX);

export async function tokenHash(token: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(token)));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}
