/**
 * Password hashing with WebCrypto PBKDF2-SHA256 (Node and Workers alike). OWASP asks for 600,000 iterations;
 * Cloudflare's runtime refuses more than 100,000 per call, so the hash chains six 100,000-iteration rounds,
 * each round's output keying the next: the same work, computable everywhere. Stored as
 * `pbkdf2-sha256$<rounds>x<iterations>$<salt>$<hash>` (base64url), so the cost can change later.
 */
import { InputError } from "../errors.ts";
import { COMMON_PASSWORDS } from "./common-passwords.ts";

const ITERATIONS = 100_000;
const ROUNDS = 6;
const MIN_LENGTH = 12;
const MAX_LENGTH = 1024;

const encoder = new TextEncoder();
const b64 = (bytes: Uint8Array) =>
  btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");
const unb64 = (text: string) => Uint8Array.from(atob(text.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0));

async function derive(password: string, salt: Uint8Array, rounds: number, iterations: number): Promise<Uint8Array> {
  let material: Uint8Array = encoder.encode(password);
  for (let r = 0; r < rounds; r++) {
    const key = await crypto.subtle.importKey("raw", material as BufferSource, "PBKDF2", false, ["deriveBits"]);
    material = new Uint8Array(await crypto.subtle.deriveBits({ name: "PBKDF2", hash: "SHA-256", salt: salt as BufferSource, iterations }, key, 256));
  }
  return material;
}

/** Compares in time that depends only on the length, not on where the bytes differ. */
export function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  let diff = a.length ^ b.length;
  for (let i = 0; i < Math.max(a.length, b.length); i++) diff |= (a[i] ?? 0) ^ (b[i] ?? 0);
  return diff === 0;
}

/** `cost` lowers the work for test fixtures only; real hashes use the default. */
export async function hashPassword(
  password: string,
  cost: { rounds: number; iterations: number } = { rounds: ROUNDS, iterations: ITERATIONS },
): Promise<string> {
  const salt = crypto.getRandomValues(new Uint8Array(16));
  const hash = await derive(password, salt, cost.rounds, cost.iterations);
  return `pbkdf2-sha256$${cost.rounds}x${cost.iterations}$${b64(salt)}$${b64(hash)}`;
}

// Verified against when the user does not exist, so a miss costs as much as a wrong password.
const DUMMY_HASH = `pbkdf2-sha256$${ROUNDS}x${ITERATIONS}$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA`;

export async function verifyPassword(password: string, stored: string | null | undefined): Promise<boolean> {
  const parts = (stored || DUMMY_HASH).split("$");
  const cost = /^(\d+)x(\d+)$/.exec(parts[1] ?? "");
  if (parts[0] !== "pbkdf2-sha256" || !cost || parts.length !== 4) return false;
  const actual = await derive(password, unb64(parts[2]), Number(cost[1]), Number(cost[2]));
  return constantTimeEqual(actual, unb64(parts[3])) && Boolean(stored);
}

/** Length 12..1024, not a very common password, not the username. */
export function checkPasswordPolicy(password: string, username?: string): void {
  const length = [...password].length;
  if (length < MIN_LENGTH) throw new InputError(`password must be at least ${MIN_LENGTH} characters long`);
  if (length > MAX_LENGTH) throw new InputError(`password must be at most ${MAX_LENGTH} characters long`);
  const normalised = password.normalize("NFKC").toLowerCase().replace(/\s+/g, "");
  if (COMMON_PASSWORDS.has(normalised)) throw new InputError("password is too common; choose a less predictable one");
  if (username && normalised === username.toLowerCase()) throw new InputError("password must not be the username");
}
