/** The shared cache of overview summaries, and the claim that lets one instance at a time write one. */
import type { Queryable } from "../../drivers/types.ts";

export interface SummaryRow {
  scope_key: string;
  fingerprint: string | null;
  summary: string | null;
  generated_at: Date | null;
}

export async function readSummary(db: Queryable, scopeKey: string): Promise<SummaryRow | undefined> {
  const [row] = await db.query<SummaryRow>("SELECT scope_key, fingerprint, summary, generated_at FROM overview_summaries WHERE scope_key = $1", [scopeKey]);
  return row;
}

/**
 * Claims the scope for `seconds` unless another instance holds a live claim. The row's primary key makes
 * the first claim of a new scope unique; the conditional update makes later ones so.
 */
export async function claimSummary(db: Queryable, scopeKey: string, seconds: number): Promise<boolean> {
  const rows = await db.query(
    `INSERT INTO overview_summaries (scope_key, claimed_until) VALUES ($1, now() + make_interval(secs => $2))
     ON CONFLICT (scope_key) DO UPDATE SET claimed_until = EXCLUDED.claimed_until
       WHERE overview_summaries.claimed_until IS NULL OR overview_summaries.claimed_until < now()
     RETURNING scope_key`,
    [scopeKey, seconds],
  );
  return rows.length > 0;
}

export async function saveSummary(db: Queryable, scopeKey: string, fingerprint: string, summary: string): Promise<SummaryRow> {
  const [row] = await db.query<SummaryRow>(
    "UPDATE overview_summaries SET fingerprint = $2, summary = $3, generated_at = now(), claimed_until = NULL WHERE scope_key = $1 RETURNING scope_key, fingerprint, summary, generated_at",
    [scopeKey, fingerprint, summary],
  );
  return row;
}

export async function releaseClaim(db: Queryable, scopeKey: string): Promise<void> {
  await db.query("UPDATE overview_summaries SET claimed_until = NULL WHERE scope_key = $1", [scopeKey]);
}
