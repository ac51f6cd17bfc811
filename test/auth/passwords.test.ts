import { describe, expect, it } from "vitest";
import { checkPasswordPolicy, constantTimeEqual, hashPassword, verifyPassword } from "../../src/auth/passwords.ts";
import { parseExpiry } from "../../src/auth/expiry.ts";
import { API_TOKEN_PREFIX, newApiToken, newSessionToken, tokenHash } from "../../src/auth/tokens.ts";

describe("passwords", () => {
  it("hashes with PBKDF2-SHA256 at OWASP's 600,000 iterations, salted, and verifies", async () => {
    const hash = await hashPassword("a long enough passphrase");
    expect(hash).toMatch(/^pbkdf2-sha256\$6x100000\$[\w-]{22}\$[\w-]{43}$/);
    expect(await hashPassword("a long enough passphrase")).not.toBe(hash);
    expect(await verifyPassword("a long enough passphrase", hash)).toBe(true);
    expect(await verifyPassword("a long enough passphrasE", hash)).toBe(false);
    expect(await verifyPassword("anything at all here", null)).toBe(false);
    expect(await verifyPassword("anything at all here", "garbage")).toBe(false);
  });

  it("enforces length, refuses common passwords and the username", () => {
    expect(() => checkPasswordPolicy("short one")).toThrow("at least 12 characters");
    expect(() => checkPasswordPolicy("Password1234")).toThrow("too common");
    expect(() => checkPasswordPolicy("QWERTYUIOP123")).toThrow("too common");
    expect(() => checkPasswordPolicy("alice.example", "Alice.Example")).toThrow("must not be the username");
    expect(() => checkPasswordPolicy("correct horse battery")).not.toThrow();
  });

  it("compares in constant time over the whole length", () => {
    expect(constantTimeEqual(new Uint8Array([1, 2, 3]), new Uint8Array([1, 2, 3]))).toBe(true);
    expect(constantTimeEqual(new Uint8Array([1, 2, 3]), new Uint8Array([1, 2, 4]))).toBe(false);
    expect(constantTimeEqual(new Uint8Array([1, 2]), new Uint8Array([1, 2, 0]))).toBe(false);
  });
});

describe("tokens", () => {
  it("are 256-bit random secrets behind a recognisable prefix, stored as SHA-256", async () => {
    const token = newApiToken();
    expect(token).toMatch(new RegExp(`^${API_TOKEN_PREFIX}[\\w-]{43}$`));
    expect(newSessionToken()).toMatch(/^pglens_session_[\w-]{43}$/);
    expect(newApiToken()).not.toBe(token);
    expect(tokenHash("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  });

  it("parse lifetimes", () => {
    const now = Date.UTC(2026, 0, 1);
    expect(parseExpiry("never", now)).toBeNull();
    expect(parseExpiry(undefined, now)).toBeNull();
    expect(parseExpiry("30d", now)?.toISOString()).toBe("2026-01-31T00:00:00.000Z");
    expect(parseExpiry("12h", now)?.toISOString()).toBe("2026-01-01T12:00:00.000Z");
    expect(() => parseExpiry("soon", now)).toThrow("expiry must look like");
    expect(() => parseExpiry("0d", now)).toThrow("expiry must look like");
    expect(() => parseExpiry("20y", now)).toThrow("at most 3650 days");
  });
});
