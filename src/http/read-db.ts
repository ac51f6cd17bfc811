/**
 * The datastore a request reads samples, alerts and the estate from: a read replica when the datastore has
 * some (datastore.read_urls), unless the caller wrote lately; the primary otherwise. Rights, tokens and
 * anything a request writes always use `c.get("db")`, the primary: a revoked token must stop working at once.
 *
 * A caller's own writes: after a write, this instance sends that user's reads to the primary for a while, and
 * the response carries the primary's WAL position (header `Pglens-Lsn`, cookie `pglens_lsn`). A request that
 * brings it back, to any instance, reads only from a replica that has replayed it.
 */
import type { Context } from "hono";
import { getCookie } from "hono/cookie";
import { LSN_PATTERN, ReplicaSet, type ReplicaSession, replicaName } from "../../drivers/read-replicas.ts";
import type { Driver } from "../../drivers/types.ts";
import { type Config, ConfigError } from "../config.ts";
import { InputError } from "../errors.ts";
import type { AppEnv, ReadReplicas } from "./context.ts";
import { RecentWriters } from "./recent-writers.ts";

/** How old a replica's lag may be before a read measures it again. */
const REPLICA_CHECK_MS = 5000;

const LSN_HEADER = "Pglens-Lsn";
const LSN_COOKIE = "pglens_lsn";

export function readDb(c: Context<AppEnv>): Driver {
  const replicas = c.get("replicas");
  const principal = c.get("principal");
  if (!replicas || (principal && replicas.writers.wroteRecently(principal.userId))) return c.get("db");
  return replicaSession(c, replicas).reader;
}

/** The request's view of the replicas, opened on first use and closed with the request (http/middleware.ts). */
export function replicaSession(c: Context<AppEnv>, replicas: ReadReplicas): ReplicaSession {
  let session = c.get("replicaSession");
  if (!session) c.set("replicaSession", (session = replicas.set.session(c.get("db"), writtenLsn(c))));
  return session;
}

/** The WAL position the caller says they wrote at; a malformed header is refused, a malformed cookie ignored. */
function writtenLsn(c: Context<AppEnv>): string | undefined {
  const header = c.req.header(LSN_HEADER);
  if (header !== undefined) {
    if (!LSN_PATTERN.test(header)) throw new InputError(`${LSN_HEADER} must be a WAL position as a write's response gave it (e.g. 16/B374D848)`);
    return header;
  }
  const cookie = getCookie(c, LSN_COOKIE);
  return cookie && LSN_PATTERN.test(cookie) ? cookie : undefined;
}

/**
 * After a successful write: this instance keeps the user's reads on the primary, and the response says where the
 * write is in the WAL so that other instances can do the same. A datastore that cannot say (no WAL function)
 * leaves only the first.
 */
export async function noteWrite(c: Context<AppEnv>, replicas: ReadReplicas, userId: number): Promise<void> {
  replicas.writers.wrote(userId);
  const [row] = await c
    .get("db")
    .query<{ lsn: string }>("SELECT pg_current_wal_lsn()::text AS lsn")
    .catch(() => [undefined]);
  if (!row?.lsn) return;
  c.res.headers.set(LSN_HEADER, row.lsn);
  const secure = c.get("secureTransport") ? "; Secure" : "";
  c.res.headers.append(
    "Set-Cookie",
    `${LSN_COOKIE}=${row.lsn}; Max-Age=${Math.ceil(replicas.writers.windowMs / 1000)}; Path=/; HttpOnly; SameSite=Lax${secure}`,
  );
}

/**
 * The replicas `datastore.read_urls` names beside the primary, each opened by `open`; none when it names none.
 * `perRequest` (Workers): drivers live for one request.
 */
export function openReadReplicas(
  config: Config,
  primaryKind: Driver["kind"],
  open: (url: string) => Driver,
  options: { perRequest?: boolean } = {},
): ReadReplicas | undefined {
  const { read_urls: urls, max_replica_lag_seconds: maxLag } = config.datastore;
  if (!urls.length) return undefined;
  if (primaryKind === "pglite") throw new ConfigError("`datastore.read_urls`: the embedded datastore has no replicas; set datastore.url to the primary first");
  const replicas = urls.map((url) => ({ name: replicaName(url), open: () => open(url) }));
  const set = new ReplicaSet(replicas, { maxLagSeconds: maxLag, checkEveryMs: REPLICA_CHECK_MS, perRequest: options.perRequest });
  // A write is on every current replica once the lag they may have has passed (and the age of their last check).
  return { set, writers: new RecentWriters(maxLag * 1000 + REPLICA_CHECK_MS) };
}
