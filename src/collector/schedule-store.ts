/** The collector's bookkeeping in the datastore: which (connection, probe) is due, who claimed it, how it went. */
import type { Driver, Queryable } from "../../drivers/types.ts";

export interface Candidate {
  connectionId: number;
  probe: string;
  intervalSeconds: number;
}

export interface ProbeOutcome {
  connectionId: number;
  probe: string;
  status: "ok" | "unavailable" | "error";
  collectedAt: Date;
  rows: number;
  error?: string;
  /** Do not try again before this time (unavailable probes wait long, not in a tight loop). */
  notBefore?: Date;
  /** Time spent querying the server and storing the sample. */
  durationMs?: number;
}

const LEASE_SECONDS = 120;
/** The advisory lock claims take turns on (one bigint; the sample writer locks pairs of integers, another key space). */
const CLAIM_LOCK_KEY = 5_118_270_433;
const CLAIM_STALL_SECONDS = 5;

/**
 * Waits for the claimers' turn, held until the transaction ends. A claimer that stalls holding it (a frozen
 * process, a lost network) is ended by the datastore after a few seconds, so the others wait that long at most;
 * one that waited longer than three times that answers false: its tick claims nothing, the next tries again.
 */
export async function takeClaimTurn(tx: Queryable): Promise<boolean> {
  try {
    await tx.query(
      `SELECT set_config('idle_in_transaction_session_timeout', '${CLAIM_STALL_SECONDS}s', true),
              set_config('lock_timeout', '${3 * CLAIM_STALL_SECONDS}s', true),
              pg_advisory_xact_lock($1)`,
      [CLAIM_LOCK_KEY],
    );
    return true;
  } catch (err) {
    if ((err as { code?: string }).code === LOCK_NOT_AVAILABLE) return false;
    throw err;
  }
}

const LOCK_NOT_AVAILABLE = "55P03";

/** SQL: whether the run claimed at `last` (NULL: none) leaves nothing due at `now`, `seconds` being a slot. */
export const slotDoneSql = (last: string, now: string, seconds: string) =>
  `(floor(date_part('epoch', ${last}) / ${seconds}) = floor(date_part('epoch', ${now}) / ${seconds}) OR ${last} > ${now} - make_interval(secs => ${seconds} / 2.0))`;

/**
 * Claims the candidates that are due: no run has finished in the current slot of their interval (time since the
 * epoch in whole intervals, by the datastore's clock) and half an interval has passed since the last, no back-off
 * holds them, and no other instance holds a live claim.
 *
 * At most `maxRows` probe runs are claimed, those that waited longest first (a server's probes, claimed together,
 * share their last slot and so stay together): one lease must cover the work claimed, so a large estate is
 * collected in several ticks. Claims take turns (a transaction lock held for the one statement, milliseconds):
 * two claims running at once skipped each other's rows as they locked them and split a third of the servers'
 * probes between two instances, each then connecting to the server. A claim's statement starts after the
 * previous claim committed, so it sees that claim; rows locked otherwise (a run recording its outcome) are skipped.
 *
 * Slots, not "an interval since the last run": a minute's Cron Trigger firing a little early no longer skips a
 * 60-second probe's round, and a one-second tick no longer lets each run start a little later than the last.
 * The half interval keeps a run that finished just before a slot's end from being followed at once.
 */
export async function claimDue(db: Driver, candidates: readonly Candidate[], maxRows = Number.MAX_SAFE_INTEGER): Promise<Candidate[]> {
  if (candidates.length === 0) return [];
  const ids = candidates.map((c) => c.connectionId);
  const probes = candidates.map((c) => c.probe);
  const intervals = candidates.map((c) => c.intervalSeconds);
  await db.query(`INSERT INTO probe_schedule (connection_id, probe_name) SELECT * FROM unnest($1::int[], $2::text[]) ON CONFLICT DO NOTHING`, [ids, probes]);
  const claimed = await db.transaction(async (tx) => {
    if (!(await takeClaimTurn(tx))) return [];
    return tx.query<{ connection_id: number; probe_name: string }>(
      `WITH due AS (
       SELECT s.connection_id, s.probe_name
         FROM probe_schedule s
         JOIN unnest($1::int[], $2::text[], $3::int[]) AS c(connection_id, probe_name, interval_seconds)
           ON s.connection_id = c.connection_id AND s.probe_name = c.probe_name
        WHERE (${slotDoneSql("coalesce(s.last_slot_at, s.last_run_at)", "now()", "c.interval_seconds")} IS NOT TRUE)
          AND (s.not_before IS NULL OR s.not_before <= now())
          AND (s.claimed_until IS NULL OR s.claimed_until < now())
        ORDER BY coalesce(s.last_slot_at, s.last_run_at, '-infinity'), s.connection_id
        LIMIT $4
          FOR UPDATE OF s SKIP LOCKED
     )
     UPDATE probe_schedule s SET claimed_until = now() + make_interval(secs => ${LEASE_SECONDS}), claimed_at = now()
       FROM due
      WHERE s.connection_id = due.connection_id AND s.probe_name = due.probe_name
      RETURNING s.connection_id, s.probe_name`,
      [ids, probes, intervals, maxRows],
    );
  });
  const key = (id: number, probe: string) => `${id}\u0000${probe}`;
  const got = new Set(claimed.map((c) => key(c.connection_id, c.probe_name)));
  return candidates.filter((c) => got.has(key(c.connectionId, c.probe)));
}

/** One statement for a server's outcomes, not one per probe (35 statements a server-round). */
export async function recordOutcomes(db: Queryable, outcomes: readonly ProbeOutcome[]): Promise<void> {
  if (outcomes.length === 0) return;
  const column = <T>(pick: (o: ProbeOutcome) => T) => outcomes.map(pick);
  await db.query(
    `UPDATE probe_schedule s SET last_run_at = o.at, last_slot_at = s.claimed_at, claimed_until = NULL, last_status = o.status, last_error = o.error,
            last_rows = o.rows, not_before = o.not_before, last_success_at = CASE WHEN o.status = 'ok' THEN o.at ELSE s.last_success_at END
       FROM unnest($1::int[], $2::text[], $3::timestamptz[], $4::text[], $5::text[], $6::int[], $7::timestamptz[])
            AS o(connection_id, probe_name, at, status, error, rows, not_before)
      WHERE s.connection_id = o.connection_id AND s.probe_name = o.probe_name`,
    [
      column((o) => o.connectionId),
      column((o) => o.probe),
      column((o) => o.collectedAt.toISOString()),
      column((o) => o.status),
      column((o) => o.error ?? null),
      column((o) => o.rows),
      column((o) => o.notBefore?.toISOString() ?? null),
    ],
  );
}

/** Lets claims go without a run (the server could not be reached): the back-off decides when to try again. */
export async function releaseClaims(db: Queryable, connectionId: number, probes: readonly string[]): Promise<void> {
  await db.query("UPDATE probe_schedule SET claimed_until = NULL WHERE connection_id = $1 AND probe_name = ANY($2::text[])", [connectionId, probes]);
}

const MAX_BACKOFF_SECONDS = 600;

/** Notes that a server could not be reached: the error shows on the connection, retries back off exponentially. */
export async function recordUnreachable(db: Queryable, connectionId: number, error: string, baseSeconds: number): Promise<void> {
  await db.query("UPDATE connections SET connection_error = $2 WHERE id = $1", [connectionId, error]);
  await db.query(
    `INSERT INTO connection_health (connection_id, consecutive_failures, retry_at, checked_at, check_every_seconds) VALUES ($1, 1, now() + make_interval(secs => $2), now(), $2)
     ON CONFLICT (connection_id) DO UPDATE SET consecutive_failures = connection_health.consecutive_failures + 1,
       retry_at = now() + make_interval(secs => least($3, $2 * power(2, connection_health.consecutive_failures))),
       checked_at = now(), check_every_seconds = $2`,
    [connectionId, baseSeconds, MAX_BACKOFF_SECONDS],
  );
}

/**
 * Servers in back-off due a reachability check (every `check_every_seconds`, the shortest probe interval when
 * it failed), claimed so that one instance checks each.
 */
export async function claimReachabilityChecks(db: Queryable): Promise<number[]> {
  const rows = await db.query<{ connection_id: number }>(
    `UPDATE connection_health SET checked_at = now()
      WHERE retry_at > now() AND (checked_at IS NULL OR checked_at <= now() - make_interval(secs => check_every_seconds))
      RETURNING connection_id`,
  );
  return rows.map((r) => r.connection_id);
}

export async function recordReachable(db: Queryable, connectionId: number): Promise<void> {
  await db.query("UPDATE connections SET connection_error = NULL WHERE id = $1 AND connection_error IS NOT NULL", [connectionId]);
  await db.query("DELETE FROM connection_health WHERE connection_id = $1", [connectionId]);
}

/** Connections in back-off: not to be tried before their retry time. */
export async function backingOff(db: Queryable): Promise<Set<number>> {
  const rows = await db.query<{ connection_id: number }>("SELECT connection_id FROM connection_health WHERE retry_at > now()");
  return new Set(rows.map((r) => r.connection_id));
}
