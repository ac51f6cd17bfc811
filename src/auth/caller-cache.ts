/**
 * Resolved callers kept in memory for a few seconds, so a burst of requests with one token authenticates
 * against the datastore once. Bounded in time (`auth.cache_seconds`: a revoked token, disabled user or
 * changed grant takes effect within it on other instances) and in size (the oldest entry goes first).
 * A request that changes state through this instance empties the cache, so its own changes apply at once.
 */
import type { Authority } from "./rbac.ts";

export const MAX_CACHED_CALLERS = 10_000;

export class CallerCache {
  private readonly entries = new Map<string, { authority: Authority; until: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  get(tokenHash: string): Authority | undefined {
    const hit = this.entries.get(tokenHash);
    if (!hit) return undefined;
    if (hit.until > this.now()) return hit.authority;
    this.entries.delete(tokenHash);
    return undefined;
  }

  set(tokenHash: string, authority: Authority): void {
    if (this.ttlMs <= 0) return;
    this.entries.delete(tokenHash);
    if (this.entries.size >= MAX_CACHED_CALLERS) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(tokenHash, { authority, until: this.now() + this.ttlMs });
  }

  clear(): void {
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}
