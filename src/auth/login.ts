/**
 * Password login: throttled per client address and per (account, address), so nobody can lock a known user
 * out from elsewhere; an optional hard lockout (auth.lockout_after_failures, off by default) needs an admin.
 */
import type { Queryable } from "../../drivers/types.ts";
import type { Config } from "../config.ts";
import { createSession } from "../datastore/sessions.ts";
import { clearFailures, recordFailures, throttledFor } from "../datastore/login-throttle.ts";
import { findUserByName, recordFailedLogin, recordLogin } from "../datastore/users.ts";
import type { Logger } from "../log.ts";
import { verifyPassword } from "./passwords.ts";
import { newSessionToken, tokenHash } from "./tokens.ts";

export type LoginOutcome =
  | { ok: true; token: string; expiresAt: Date; userId: number }
  | { ok: false; reason: "invalid" }
  | { ok: false; reason: "throttled"; retryAfterSeconds: number };

export async function login(
  db: Queryable,
  config: Config,
  log: Logger,
  attempt: { username: string; password: string; clientAddress: string },
): Promise<LoginOutcome> {
  const rules = config.auth;
  const addressKey = `address:${attempt.clientAddress}`;
  const accountKey = `account:${attempt.username.toLowerCase()}@${attempt.clientAddress}`;
  const wait = await throttledFor(
    db,
    [
      { key: addressKey, max: rules.max_failed_logins_per_address },
      { key: accountKey, max: rules.max_failed_logins_per_account },
    ],
    rules.failure_window_minutes,
  );
  if (wait !== null) return { ok: false, reason: "throttled", retryAfterSeconds: wait };

  const user = await findUserByName(db, attempt.username);
  // Always derive a hash, so a missing user costs as much time as a wrong password.
  const passwordOk = await verifyPassword(attempt.password, user?.password_hash);
  if (!user || !passwordOk || !user.enabled || user.locked || user.is_service_account) {
    await recordFailures(db, [addressKey, accountKey], rules.failure_window_minutes);
    if (user && !passwordOk && (await recordFailedLogin(db, user.id, rules.lockout_after_failures)) && !user.locked) {
      log.warn("account locked after repeated failed logins", { username: user.username });
    }
    return { ok: false, reason: "invalid" };
  }
  await clearFailures(db, [addressKey, accountKey]);
  await recordLogin(db, user.id);
  const token = newSessionToken();
  const expiresAt = new Date(Date.now() + rules.session_hours * 3_600_000);
  await createSession(db, tokenHash(token), user.id, expiresAt);
  return { ok: true, token, expiresAt, userId: user.id };
}
