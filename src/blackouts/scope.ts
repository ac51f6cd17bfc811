/**
 * What a blackout (or schedule) covers: the estate, a cluster group, a cluster, or a server (optionally one
 * of its databases). estate > group > cluster > server > database: a window on an outer scope covers
 * everything inside it.
 */
import { InputError } from "../errors.ts";

export const BLACKOUT_SCOPES = ["estate", "group", "cluster", "server"] as const;
export type BlackoutScope = (typeof BLACKOUT_SCOPES)[number];

export interface ScopeTarget {
  scope: BlackoutScope;
  group_id: number | null;
  cluster_id: number | null;
  connection_id: number | null;
  database_name: string | null;
}

const ID_OF: Record<Exclude<BlackoutScope, "estate">, "group_id" | "cluster_id" | "connection_id"> = {
  group: "group_id",
  cluster: "cluster_id",
  server: "connection_id",
};
const IDS = ["group_id", "cluster_id", "connection_id"] as const;

/** The scope and ids as given, checked for consistency; throws InputError saying what to change. */
export function checkScope(input: {
  scope: BlackoutScope;
  group_id?: number | null;
  cluster_id?: number | null;
  connection_id?: number | null;
  database_name?: string | null;
}): ScopeTarget {
  const given = IDS.filter((k) => input[k] !== undefined && input[k] !== null);
  if (input.scope === "estate") {
    if (given.length) throw new InputError(`estate scope takes no ${given.join(", ")}: it covers every server`);
  } else {
    const wanted = ID_OF[input.scope];
    if (!given.includes(wanted)) throw new InputError(`${input.scope} scope needs ${wanted}`);
    const extra = given.filter((k) => k !== wanted);
    if (extra.length) throw new InputError(`${input.scope} scope takes only ${wanted}, not ${extra.join(", ")}`);
  }
  if (input.database_name && input.scope !== "server") throw new InputError("database_name: only a server-scope window can name a database");
  return {
    scope: input.scope,
    group_id: input.group_id ?? null,
    cluster_id: input.cluster_id ?? null,
    connection_id: input.connection_id ?? null,
    database_name: input.database_name ?? null,
  };
}

export interface Placement {
  connectionId: number;
  clusterId: number | null;
  groupId: number | null;
}

/** Whether the window covers the connection: all of it, only one database of it, or not at all. */
export function coverage(t: ScopeTarget, p: Placement): { all: true } | { database: string } | null {
  switch (t.scope) {
    case "estate":
      return { all: true };
    case "group":
      return p.groupId !== null && t.group_id === p.groupId ? { all: true } : null;
    case "cluster":
      return p.clusterId !== null && t.cluster_id === p.clusterId ? { all: true } : null;
    case "server":
      if (t.connection_id !== p.connectionId) return null;
      return t.database_name ? { database: t.database_name } : { all: true };
  }
}
