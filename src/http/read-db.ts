/**
 * The datastore a request reads samples, alerts and the estate from: a read replica when the datastore has
 * some (datastore.read_urls), unless the caller wrote lately; the primary otherwise. Rights, tokens and
 * anything a request writes always use `c.get("db")`, the primary: a revoked token must stop working at once.
 */
import type { Context } from "hono";
import { ReplicaSet, replicaName } from "../../drivers/read-replicas.ts";
import type { Driver } from "../../drivers/types.ts";
import { type Config, ConfigError } from "../config.ts";
import type { AppEnv, ReadReplicas } from "./context.ts";
import { RecentWriters } from "./recent-writers.ts";

/** How old a replica's lag may be before a read measures it again. */
const REPLICA_CHECK_MS = 5000;

export function readDb(c: Context<AppEnv>): Driver {
  const replicas = c.get("replicas");
  const principal = c.get("principal");
  if (!replicas || (principal && replicas.writers.wroteRecently(principal.userId))) return c.get("db");
  return replicas.set.reader;
}

/** The replicas `datastore.read_urls` names beside the primary, each opened by `open`; none when it names none. */
export function openReadReplicas(config: Config, primary: Driver, open: (url: string) => Driver): ReadReplicas | undefined {
  const { read_urls: urls, max_replica_lag_seconds: maxLag } = config.datastore;
  if (!urls.length) return undefined;
  if (primary.kind === "pglite") throw new ConfigError("`datastore.read_urls`: the embedded datastore has no replicas; set datastore.url to the primary first");
  const replicas = urls.map((url) => ({ name: replicaName(url), driver: open(url) }));
  // A write is on every current replica once the lag they may have has passed (and the age of their last check).
  const set = new ReplicaSet(primary, replicas, { maxLagSeconds: maxLag, checkEveryMs: REPLICA_CHECK_MS });
  return { set, writers: new RecentWriters(maxLag * 1000 + REPLICA_CHECK_MS) };
}
