/**
 * Who wrote to the datastore lately, per user, so that their reads go to the primary until a replica has
 * caught up with their write (read your own writes). Kept in this process: another instance does not know.
 */
const PRUNE_ABOVE = 10_000;

export class RecentWriters {
  private readonly until = new Map<number, number>();

  constructor(readonly windowMs: number) {}

  wrote(userId: number): void {
    if (this.until.size >= PRUNE_ABOVE) for (const [id, t] of this.until) if (t <= Date.now()) this.until.delete(id);
    this.until.set(userId, Date.now() + this.windowMs);
  }

  wroteRecently(userId: number): boolean {
    const t = this.until.get(userId);
    if (t === undefined) return false;
    if (t > Date.now()) return true;
    this.until.delete(userId);
    return false;
  }
}
