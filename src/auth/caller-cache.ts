/**
 * Resolved callers kept in memory for a few seconds, so a burst of requests with one token authenticates
 * against the datastore once. Bounded in time (`auth.cache_seconds`: a revoked token, disabled user or
 * changed grant takes effect within it on other instances) and in size (the oldest entry goes first).
 * A request that changes state through this instance empties the cache, so its own changes apply at once.
 */
import { ExpiringCache } from "../expiring-cache.ts";
import type { Authority } from "./rbac.ts";

export const MAX_CACHED_CALLERS = 10_000;

export class CallerCache extends ExpiringCache<Authority> {
  constructor(ttlMs: number, now: () => number = Date.now) {
    super(ttlMs, MAX_CACHED_CALLERS, now);
  }
}
