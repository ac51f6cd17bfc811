/** Detection of physical replication clusters from pg_node_role samples (pure). */
import { expect, it } from "vitest";
import { type NodeRole, type ServerAddress, detectReplicationClusters, shownReplicationClusters } from "../../src/clusters/replication-topology.ts";

const node = (id: number, o: Partial<NodeRole>): NodeRole => ({
  connection_id: id,
  host: "db",
  port: 5432,
  is_in_recovery: false,
  system_identifier: "7",
  sender_host: null,
  sender_port: null,
  ...o,
});

it("groups servers sharing a system identifier, primary first, each standby streaming from the server it names", () => {
  const nodes = [
    node(3, { host: "replica-b", is_in_recovery: true, sender_host: "replica-a", sender_port: 5432 }), // cascading
    node(2, { host: "replica-a", is_in_recovery: true, sender_host: "primary", sender_port: 5432 }),
    node(1, { host: "primary" }),
    node(4, { host: "elsewhere", system_identifier: "8" }), // alone: no cluster
  ];
  expect(detectReplicationClusters(nodes)).toEqual([
    {
      prefix: "7",
      kind: "physical",
      primary: 1,
      members: [
        { connection_id: 1, role: "primary" },
        { connection_id: 2, role: "standby" },
        { connection_id: 3, role: "standby" },
      ],
      edges: [
        { source: 3, target: 2, type: "streams_from" },
        { source: 2, target: 1, type: "streams_from" },
      ],
    },
  ]);
});

it("falls back to the primary when the upstream address matches no server, and treats loopback names alike", () => {
  const [viaPrimary] = detectReplicationClusters([
    node(1, { host: "10.0.0.1" }),
    node(2, { is_in_recovery: true, sender_host: "10.9.9.9", sender_port: 5432 }),
  ]);
  expect(viaPrimary.edges).toEqual([{ source: 2, target: 1, type: "streams_from" }]);
  const [loopback] = detectReplicationClusters([
    node(1, { host: "localhost", port: 6000 }),
    node(2, { host: "localhost", port: 6001, is_in_recovery: false }),
    node(3, { host: "127.0.0.1", port: 6002, is_in_recovery: true, sender_host: "127.0.0.1", sender_port: 6001 }),
  ]);
  expect(loopback.primary).toBeNull(); // two servers out of recovery: a promoted copy, no single primary
  expect(loopback.edges).toEqual([{ source: 3, target: 2, type: "streams_from" }]);
});

it("leaves out servers in a cluster of their own and dismissed clusters", () => {
  const nodes = [
    node(1, { host: "a" }),
    node(2, { host: "b", is_in_recovery: true }),
    node(5, { host: "c", system_identifier: "9" }),
    node(6, { host: "d", system_identifier: "9", is_in_recovery: true }),
  ];
  const samples = { nodes, subscriptions: [], servers: nodes };
  expect(shownReplicationClusters(samples, new Set([2]), new Set()).map((c) => c.prefix)).toEqual(["9"]);
  expect(shownReplicationClusters(samples, new Set(), new Set(["9"])).map((c) => c.prefix)).toEqual(["7"]);
});

it("groups a publisher with the servers subscribing to its address, leaving physical members to their cluster", () => {
  const servers: ServerAddress[] = [
    { connection_id: 10, host: "pub.internal", port: 5432 },
    { connection_id: 11, host: "sub-a", port: 5432 },
    { connection_id: 12, host: "sub-b", port: 6000 },
    { connection_id: 13, host: "other", port: 5432 },
  ];
  const subscriptions = [
    { connection_id: 12, publisher_host: "PUB.internal", publisher_port: 5432 },
    { connection_id: 11, publisher_host: "pub.internal", publisher_port: null }, // default port
    { connection_id: 13, publisher_host: "nowhere", publisher_port: 5432 }, // publisher not monitored
  ];
  expect(detectReplicationClusters([], subscriptions, servers)).toEqual([
    {
      prefix: "logical-10",
      kind: "logical",
      primary: 10,
      members: [
        { connection_id: 10, role: "publisher" },
        { connection_id: 11, role: "subscriber" },
        { connection_id: 12, role: "subscriber" },
      ],
      edges: [
        { source: 11, target: 10, type: "subscribes_to" },
        { source: 12, target: 10, type: "subscribes_to" },
      ],
    },
  ]);
  const physical = [node(10, { host: "pub.internal" }), node(14, { is_in_recovery: true })];
  expect(detectReplicationClusters(physical, subscriptions, servers).map((c) => c.prefix)).toEqual(["7"]);
});

it("does not take several connections to one server for replication, and counts them as one primary", () => {
  const sameServer = [node(1, { host: "db", port: 5432 }), node(2, { host: "DB", port: 5432 })]; // two logins
  expect(detectReplicationClusters(sameServer)).toEqual([]);
  const [withStandby] = detectReplicationClusters([...sameServer, node(3, { host: "replica", is_in_recovery: true, sender_host: "db", sender_port: 5432 })]);
  expect(withStandby.primary).toBe(1);
  expect(withStandby.edges).toEqual([{ source: 3, target: 1, type: "streams_from" }]);
});
