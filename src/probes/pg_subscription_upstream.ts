import { dim } from "./columns.ts";
import type { ProbeDefinition } from "./types.ts";

// The publisher's address from a subscription's connection string (key=value or URI form); the rest of it,
// a password included, is never read into pglens.
const HOST = `coalesce(substring(s.subconninfo from 'host=''?([^'' ]+)'), substring(s.subconninfo from '^postgres(?:ql)?://(?:[^@/]*@)?([^:/?]+)'))`;
const PORT = `coalesce(substring(s.subconninfo from 'port=''?([0-9]+)'), substring(s.subconninfo from '^postgres(?:ql)?://(?:[^@/]*@)?[^:/?]+:([0-9]+)'), '5432')::int`;

/** Where this server's logical subscriptions replicate from: the topology's logical replication clusters. */
export const pgSubscriptionUpstream: ProbeDefinition = {
  name: "pg_subscription_upstream",
  description:
    "Each logical subscription and the publisher address it connects to (reading subscription connection strings needs a superuser login; otherwise unavailable)",
  scope: "server",
  defaultIntervalSeconds: 300,
  defaultRetentionDays: 7,
  keys: ["subname"],
  columns: [
    dim("subname", "Name of the subscription"),
    dim("subscription_database", "Database the subscription lives in"),
    dim("subenabled", "Whether the subscription is enabled", "boolean"),
    dim("publisher_host", "Host of the publisher it connects to"),
    dim("publisher_port", "Port of the publisher it connects to", "integer"),
  ],
  collect: {
    runs: "server",
    sql: () => [
      `SELECT s.subname, d.datname AS subscription_database, s.subenabled, ${HOST} AS publisher_host, ${PORT} AS publisher_port
         FROM pg_subscription s JOIN pg_database d ON d.oid = s.subdbid`,
    ],
  },
};
