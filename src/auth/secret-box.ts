/**
 * Encryption of stored secrets (connection passwords, and later channel credentials): AES-256-GCM with a
 * random 96-bit IV, under a key derived from PGLENS_SECRET with PBKDF2-SHA256 (WebCrypto, both runtimes).
 * Stored as `v1.<iv>.<ciphertext+tag>` in base64url; the version prefix leaves room for key rotation.
 */
const SALT = new TextEncoder().encode("pglens stored secrets v1");
const b64 = (bytes: Uint8Array) =>
  btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");
const unb64 = (text: string) => Uint8Array.from(atob(text.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0));

/** A secret is missing or unusable: the operator must configure PGLENS_SECRET. */
export class SecretUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SecretUnavailableError";
  }
}

const keys = new Map<string, Promise<CryptoKey>>();

function keyFor(secret: string): Promise<CryptoKey> {
  let key = keys.get(secret);
  if (!key) {
    key = crypto.subtle
      .importKey("raw", new TextEncoder().encode(secret), "PBKDF2", false, ["deriveKey"])
      .then((material) =>
        crypto.subtle.deriveKey({ name: "PBKDF2", hash: "SHA-256", salt: SALT, iterations: 100_000 }, material, { name: "AES-GCM", length: 256 }, false, [
          "encrypt",
          "decrypt",
        ]),
      );
    keys.set(secret, key);
  }
  return key;
}

function requireSecret(secret: string | undefined): string {
  if (!secret)
    throw new SecretUnavailableError("PGLENS_SECRET is not set, so stored passwords cannot be encrypted or read; set it (16+ characters) and restart");
  return secret;
}

export async function seal(plaintext: string, secret: string | undefined): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const data = await crypto.subtle.encrypt({ name: "AES-GCM", iv }, await keyFor(requireSecret(secret)), new TextEncoder().encode(plaintext));
  return `v1.${b64(iv)}.${b64(new Uint8Array(data))}`;
}

export async function open(sealed: string, secret: string | undefined): Promise<string> {
  const [version, iv, data] = sealed.split(".");
  if (version !== "v1" || !iv || !data) throw new SecretUnavailableError("a stored secret has an unknown format");
  try {
    const plain = await crypto.subtle.decrypt(
      { name: "AES-GCM", iv: unb64(iv) as BufferSource },
      await keyFor(requireSecret(secret)),
      unb64(data) as BufferSource,
    );
    return new TextDecoder().decode(plain);
  } catch (err) {
    if (err instanceof SecretUnavailableError) throw err;
    throw new SecretUnavailableError("a stored secret cannot be decrypted with the current PGLENS_SECRET (was it changed?)");
  }
}
