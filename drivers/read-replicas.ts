/**
 * Read replicas of the datastore. Reads that may trail the primary by a few seconds go to a replica that
 * answers and has replayed recently enough, in turn (and, for a caller who wrote, has replayed their write);
 * everything else, and every read when no replica qualifies, goes to the primary. A replica that fails a read
 * is marked down and the read is run on the primary, so callers never see a replica's outage. What is known of
 * each replica outlives requests (ReplicaSet); connections and checks belong to one request where the runtime
 * wants it so, on Workers (ReplicaSession).
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

/** What pglens knows of one replica between requests. */
interface Replica {
  name: string;
  open: () => Driver;
  /** The driver every request shares, where drivers outlive requests (Node). */
  shared?: Driver;
  health: ReplicaHealth;
  checkedAtMs: number;
  /** The check in flight, shared by concurrent requests (Node only: on Workers a request awaits only its own I/O). */
  checking?: Promise<void>;
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

/** Whether a replica has replayed a write at this WAL position; a server not in recovery has it. */
const REPLAYED_SQL = "SELECT coalesce(pg_last_wal_replay_lsn() >= $1::pg_lsn, true) AS replayed";

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
  /**
   * Workers: a replica's driver is opened for one request and closed with it (sockets cannot outlive a request
   * there), and a stale check is awaited by the request that needs it rather than left running behind it.
   */
  perRequest?: boolean;
}

/** A WAL position as PostgreSQL writes it (`16/B374D848`). */
export const LSN_PATTERN = /^[0-9A-F]{1,8}\/[0-9A-F]{1,8}$/i;

/** The replicas and what is known of them; each request reads through its own `session`. */
export class ReplicaSet {
  private readonly replicas: Replica[];
  private turn = 0;

  constructor(
    replicas: Array<{ name: string; open: () => Driver }>,
    readonly options: ReplicaOptions,
  ) {
    this.replicas = replicas.map((r) => ({ ...r, checkedAtMs: 0, health: { name: r.name, status: "unchecked", lag_seconds: null, checked_at: null } }));
  }

  /**
   * Reads of one request. `minLsn`: the caller wrote at that WAL position on the primary (possibly through another
   * pglens instance); only a replica that has replayed it may answer them.
   */
  session(primary: Driver, minLsn?: string): ReplicaSession {
    return new ReplicaSession(this, primary, minLsn);
  }

  /** The replicas in the order reads take turns, starting with the next one's. */
  inTurn(): Replica[] {
    const start = this.turn++;
    return this.replicas.map((_, i) => this.replicas[(start + i) % this.replicas.length]);
  }

  all(): readonly Replica[] {
    return this.replicas;
  }

  stale(replica: Replica): boolean {
    return Date.now() - replica.checkedAtMs >= this.options.checkEveryMs;
  }

  async close(): Promise<void> {
    await Promise.all(this.replicas.map((r) => r.shared?.close()));
  }
}

/** One request's view of the replicas: the drivers it opened (Workers) and what it learnt of the caller's write. */
export class ReplicaSession {
  /** Reads through this driver go to a replica when one qualifies, else to the primary. */
  readonly reader: Driver;
  private readonly opened = new Map<Replica, Driver>();
  private readonly checking = new Map<Replica, Promise<void>>();
  private readonly replayed = new Map<Replica, Promise<boolean>>();

  constructor(
    private readonly set: ReplicaSet,
    private readonly primary: Driver,
    private readonly minLsn?: string,
  ) {
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
    await Promise.all(
      this.set
        .all()
        .filter((r) => this.set.stale(r))
        .map((r) => this.check(r)),
    );
    return this.set.all().map((r) => ({ ...r.health }));
  }

  /** Closes the drivers this request opened; shared ones stay open. */
  async close(): Promise<void> {
    await Promise.all([...this.checking.values(), ...this.replayed.values()].map((p) => p.catch(() => {})));
    await Promise.all([...this.opened.values()].map((d) => d.close().catch(() => {})));
    this.opened.clear();
  }

  private driverOf(replica: Replica): Driver {
    if (!this.set.options.perRequest) {
      replica.shared ??= replica.open();
      return replica.shared;
    }
    let driver = this.opened.get(replica);
    if (!driver) this.opened.set(replica, (driver = replica.open()));
    return driver;
  }

  private async read<R extends object = Row>(sql: string, params?: readonly unknown[], options?: QueryOptions): Promise<R[]> {
    const replica = await this.choose();
    if (!replica) return this.primary.query<R>(sql, params, options);
    try {
      return await this.driverOf(replica).query<R>(sql, params, options);
    } catch (err) {
      if (isUnavailable(err)) this.markDown(replica, err);
      else if ((err as { code?: unknown }).code !== RECOVERY_CONFLICT) throw err;
      return this.primary.query<R>(sql, params, options);
    }
  }

  /**
   * The next current replica in turn that has the caller's write; a replica never checked is checked first, a
   * stale check is renewed (in the background where drivers outlive requests).
   */
  private async choose(): Promise<Replica | undefined> {
    const replicas = this.set.all();
    const unchecked = replicas.filter((r) => r.health.status === "unchecked" || (this.set.options.perRequest && this.set.stale(r)));
    if (unchecked.length) await Promise.all(unchecked.map((r) => this.check(r)));
    for (const r of replicas) if (this.set.stale(r)) void this.check(r);
    for (const r of this.set.inTurn()) if (r.health.status === "ok" && (await this.hasWrite(r))) return r;
    return undefined;
  }

  /** Asked once per request and replica, only of a caller who says they wrote. */
  private hasWrite(replica: Replica): Promise<boolean> {
    if (!this.minLsn) return Promise.resolve(true);
    let answer = this.replayed.get(replica);
    if (!answer) {
      answer = this.driverOf(replica)
        .query<{ replayed: boolean }>(REPLAYED_SQL, [this.minLsn])
        .then(([row]) => row.replayed === true)
        .catch((err) => {
          if (isUnavailable(err)) this.markDown(replica, err);
          return false;
        });
      this.replayed.set(replica, answer);
    }
    return answer;
  }

  /** One check in flight per replica; concurrent callers share it. */
  private check(replica: Replica): Promise<void> {
    if (this.set.options.perRequest) {
      let own = this.checking.get(replica);
      if (!own) this.checking.set(replica, (own = this.measure(replica)));
      return own;
    }
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
      const [row] = await Promise.race([this.driverOf(replica).query<{ lag_seconds: number | null }>(LAG_SQL), timeout]);
      const lag = row.lag_seconds;
      const current = lag !== null && lag <= this.set.options.maxLagSeconds;
      record(replica, { status: current ? "ok" : "lagging", lag_seconds: lag === null ? null : Math.round(lag * 1000) / 1000 });
    } catch (err) {
      this.markDown(replica, err);
    } finally {
      clearTimeout(timer);
    }
  }

  /** The reason is said in general terms: /health is public. */
  private markDown(replica: Replica, err: unknown): void {
    const reason = err instanceof CheckTimeout ? err.message : isUnavailable(err) ? "cannot connect" : "query failed";
    record(replica, { status: "down", lag_seconds: null, error: reason });
  }
}

function record(replica: Replica, state: Pick<ReplicaHealth, "status" | "lag_seconds" | "error">): void {
  replica.checkedAtMs = Date.now();
  replica.health = { name: replica.name, ...state, checked_at: new Date(replica.checkedAtMs).toISOString() };
}
