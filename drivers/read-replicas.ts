/**
 * Read replicas of the datastore. Reads that may trail the primary by a few seconds go to a replica that
 * answers and has replayed recently enough, in turn; everything else, and every read when no replica qualifies,
 * goes to the primary. A replica that fails a read is marked down and the read is run on the primary, so
 * callers never see a replica's outage.
 */
import { isUnavailable } from "./errors.ts";
import type { Driver, QueryOptions, Row } from "./types.ts";

export interface ReplicaHealth {
  /** host:port/database: never the credentials. */
  name: string;
  status: "ok" | "lagging" | "down" | "unchecked";
  /** Seconds behind the primary at the last check; 0 when it has replayed everything it received. */
  lag_seconds: number | null;
  /** Why it is down, in general terms. */
  error?: string;
  checked_at: string | null;
}

interface Replica {
  name: string;
  driver: Driver;
  health: ReplicaHealth;
  checking?: Promise<void>;
  checkedAtMs: number;
}

/**
 * A standby streaming from its primary that has replayed all it received is current (an idle primary sends
 * nothing, so the time of its last replayed transaction says nothing then); otherwise, and when it has lost its
 * primary (it cannot know what it misses), its lag is the age of the last replayed transaction. A login without
 * pg_read_all_stats sees a WAL receiver but not its status: one that exists counts as streaming. A server that
 * is not in recovery (a pooler in front of the primary) is current.
 */
const LAG_SQL = `SELECT CASE
    WHEN NOT pg_is_in_recovery() THEN 0
    WHEN pg_last_wal_receive_lsn() IS NOT NULL AND pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn()
      AND EXISTS (SELECT 1 FROM pg_stat_wal_receiver WHERE status IS NULL OR status = 'streaming') THEN 0
    ELSE greatest(0, extract(epoch FROM clock_timestamp() - pg_last_xact_replay_timestamp()))
  END::float8 AS lag_seconds`;

/** Serialization failures a standby raises when replay cancels a read (SQLSTATE 40001): the primary answers. */
const RECOVERY_CONFLICT = "40001";

const CHECK_TIMEOUT_MS = 2000;

class CheckTimeout extends Error {}

/** host:port/database of a PostgreSQL URL. */
export function replicaName(url: string): string {
  const u = new URL(url);
  return `${u.hostname}${u.port ? `:${u.port}` : ""}${u.pathname}`;
}

export interface ReplicaOptions {
  maxLagSeconds: number;
  /** How old a replica's last check may be before a read checks it again. */
  checkEveryMs: number;
}

export class ReplicaSet {
  private readonly replicas: Replica[];
  private turn = 0;
  /** Reads through this driver go to a replica when one qualifies, else to the primary. */
  readonly reader: Driver;

  constructor(
    private readonly primary: Driver,
    replicas: Array<{ name: string; driver: Driver }>,
    private readonly options: ReplicaOptions,
  ) {
    this.replicas = replicas.map((r) => ({ ...r, checkedAtMs: 0, health: { name: r.name, status: "unchecked", lag_seconds: null, checked_at: null } }));
    this.reader = {
      kind: primary.kind,
      query: (sql, params, options) => this.read(sql, params, options),
      // A transaction may write: it belongs to the primary.
      transaction: (work) => primary.transaction(work),
      close: async () => {},
    };
  }

  /**
   * Each replica's state, measured again where the last check is older than checkEveryMs: /health is public, so
   * calling it often must not make pglens query its replicas as often.
   */
  async health(): Promise<ReplicaHealth[]> {
    await Promise.all(this.replicas.filter((r) => this.stale(r)).map((r) => this.check(r)));
    return this.replicas.map((r) => ({ ...r.health }));
  }

  async close(): Promise<void> {
    await Promise.all(this.replicas.map((r) => r.driver.close()));
  }

  private async read<R extends object = Row>(sql: string, params?: readonly unknown[], options?: QueryOptions): Promise<R[]> {
    const replica = await this.choose();
    if (!replica) return this.primary.query<R>(sql, params, options);
    try {
      return await replica.driver.query<R>(sql, params, options);
    } catch (err) {
      if (isUnavailable(err)) this.markDown(replica, err);
      else if ((err as { code?: unknown }).code !== RECOVERY_CONFLICT) throw err;
      return this.primary.query<R>(sql, params, options);
    }
  }

  /** The next current replica in turn; a replica never checked is checked first, a stale check is renewed in the background. */
  private async choose(): Promise<Replica | undefined> {
    const unchecked = this.replicas.filter((r) => r.health.status === "unchecked");
    if (unchecked.length) await Promise.all(unchecked.map((r) => this.check(r)));
    for (const r of this.replicas) if (this.stale(r)) void this.check(r);
    const current = this.replicas.filter((r) => r.health.status === "ok");
    if (!current.length) return undefined;
    return current[this.turn++ % current.length];
  }

  private stale(replica: Replica): boolean {
    return Date.now() - replica.checkedAtMs >= this.options.checkEveryMs;
  }

  /** One check in flight per replica; concurrent callers share it. */
  private check(replica: Replica): Promise<void> {
    replica.checking ??= this.measure(replica).finally(() => {
      replica.checking = undefined;
    });
    return replica.checking;
  }

  private async measure(replica: Replica): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new CheckTimeout(`no answer within ${CHECK_TIMEOUT_MS / 1000} s`)), CHECK_TIMEOUT_MS);
    });
    try {
      const [row] = await Promise.race([replica.driver.query<{ lag_seconds: number | null }>(LAG_SQL), timeout]);
      const lag = row.lag_seconds;
      const current = lag !== null && lag <= this.options.maxLagSeconds;
      this.record(replica, { status: current ? "ok" : "lagging", lag_seconds: lag === null ? null : Math.round(lag * 1000) / 1000 });
    } catch (err) {
      this.markDown(replica, err);
    } finally {
      clearTimeout(timer);
    }
  }

  /** The reason is said in general terms: /health is public. */
  private markDown(replica: Replica, err: unknown): void {
    const reason = err instanceof CheckTimeout ? err.message : isUnavailable(err) ? "cannot connect" : "query failed";
    this.record(replica, { status: "down", lag_seconds: null, error: reason });
  }

  private record(replica: Replica, state: Pick<ReplicaHealth, "status" | "lag_seconds" | "error">): void {
    replica.checkedAtMs = Date.now();
    replica.health = { name: replica.name, ...state, checked_at: new Date(replica.checkedAtMs).toISOString() };
  }
}
