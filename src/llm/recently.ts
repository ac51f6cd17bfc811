/**
 * Answers of the public LLM endpoints, kept for a while per key (failures too): anyone may call them, and
 * none of them may turn into load on a provider. Concurrent callers share one pending call.
 */
export class Recently<T> {
  private readonly kept = new Map<string, { at: number; value: Promise<T> }>();
  constructor(
    private readonly ms: number,
    private readonly now: () => number = Date.now,
  ) {}

  get(key: string, compute: () => Promise<T>): Promise<T> {
    const at = this.now();
    const hit = this.kept.get(key);
    if (hit && at - hit.at < this.ms) return hit.value;
    const value = compute();
    this.kept.set(key, { at, value });
    return value;
  }
}
