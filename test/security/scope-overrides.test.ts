/**
 * Overrides at cluster or group scope apply to every server there (#46 item 12): a manager who can read one
 * member of a cluster must not change alert, channel or probe overrides that also govern members they cannot
 * read; and channel names are for channel managers only.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addMember, createGroup, setAdminGrants, setConnectionGrants } from "../../src/datastore/groups.ts";
import { testApp } from "../support/app.ts";
import { userWithToken } from "../support/auth.ts";
import { addConnection, migratedDatastore, type TestDatastore } from "../support/datastore.ts";
import { client } from "../support/http.ts";

let store: TestDatastore;
let api: ReturnType<typeof client>;
let tuner: string;
let viewer: string;
let root: string;
let mixed: { cluster: number; group: number };
let mine: { cluster: number; group: number };
let seen: number;
let ruleId: number;
let channelId: number;

async function clusterOf(name: string, connections: number[]) {
  const [g] = await store.db.query<{ id: number }>("INSERT INTO cluster_groups (name, description) VALUES ($1, '') RETURNING id", [`${name} group`]);
  const [cl] = await store.db.query<{ id: number }>("INSERT INTO clusters (name, description, group_id) VALUES ($1, '', $2) RETURNING id", [name, g.id]);
  await store.db.query("UPDATE connections SET cluster_id = $1 WHERE id = ANY($2::int[])", [cl.id, connections]);
  return { cluster: cl.id, group: g.id };
}

beforeAll(async () => {
  store = await migratedDatastore("pglite");
  api = client(testApp(store.db).app);
  root = (await userWithToken(store.db, "root", { superuser: true })).token;
  seen = await addConnection(store.db, "seen");
  const hidden = await addConnection(store.db, "hidden");
  const alsoSeen = await addConnection(store.db, "also-seen");
  mixed = await clusterOf("mixed", [seen, hidden]);
  mine = await clusterOf("mine", [alsoSeen]);
  const t = await userWithToken(store.db, "tuner");
  const managers = await createGroup(store.db, "managers", "");
  await setAdminGrants(store.db, managers.id, ["manage_alert_rules", "manage_notification_channels", "manage_probes"]);
  await setConnectionGrants(store.db, managers.id, [
    { connection_id: seen, access_level: "read_write" },
    { connection_id: alsoSeen, access_level: "read_write" },
  ]);
  await addMember(store.db, managers.id, { type: "user", id: t.id });
  tuner = t.token;
  const v = await userWithToken(store.db, "viewer");
  const viewers = await createGroup(store.db, "viewers", "");
  await setConnectionGrants(store.db, viewers.id, [{ connection_id: seen, access_level: "read" }]);
  await addMember(store.db, viewers.id, { type: "user", id: v.id });
  viewer = v.token;
  [{ id: ruleId }] = await store.db.query<{ id: number }>("SELECT id FROM alert_rules WHERE name = 'deadlocks_detected'");
  channelId = (
    await api("POST", "/api/v1/notification-channels", {
      token: root,
      body: { channel_type: "webhook", name: "pager of the secret team", description: "pages the secret team", endpoint_url: "http://127.0.0.1:9/x" },
    })
  ).body.id;
});
afterAll(() => store.close());

const writes = (scope: string, id: number) =>
  [
    ["PUT", `/api/v1/alert-overrides/${scope}/${id}/${ruleId}`, { operator: ">", threshold: 1000, severity: "info", enabled: false }],
    ["DELETE", `/api/v1/alert-overrides/${scope}/${id}/${ruleId}`, undefined],
    ["PUT", `/api/v1/channel-overrides/${scope}/${id}/${channelId}`, { enabled: false }],
    ["DELETE", `/api/v1/channel-overrides/${scope}/${id}/${channelId}`, undefined],
    ["PUT", `/api/v1/probe-overrides/${scope}/${id}/pg_stat_database`, { collection_interval_seconds: 86_400 }],
    ["DELETE", `/api/v1/probe-overrides/${scope}/${id}/pg_stat_database`, undefined],
  ] as const;

const overrideCount = async () =>
  (
    await store.db.query<{ n: number }>(
      "SELECT ((SELECT count(*) FROM alert_overrides) + (SELECT count(*) FROM channel_overrides) + (SELECT count(*) FROM probe_configs WHERE scope <> 'global'))::int AS n",
    )
  )[0].n;

describe("overrides at cluster and group scope", () => {
  it("are refused (403) where the scope holds a server the caller cannot read, and nothing is written", async () => {
    for (const [scope, id] of [
      ["cluster", mixed.cluster],
      ["group", mixed.group],
    ] as const) {
      for (const [method, path, body] of writes(scope, id)) {
        const res = await api(method, path, { token: tuner, body });
        expect(res.status, `${method} ${path}`).toBe(403);
        expect(res.body.error).toMatch(new RegExp(`on ${scope} ${id} would also apply to servers you cannot read$`));
      }
    }
    expect(await overrideCount()).toBe(0);
  });

  it("are allowed where the caller reads every server of the scope, and on a server it reads", async () => {
    for (const [scope, id] of [
      ["cluster", mine.cluster],
      ["group", mine.group],
      ["server", seen],
    ] as const) {
      for (const [method, path, body] of writes(scope, id)) {
        const res = await api(method, path, { token: tuner, body });
        expect(res.status, `${method} ${path}`).toBeLessThan(300);
      }
    }
  });
});

describe("GET /api/v1/channel-overrides", () => {
  it("shows channels only to channel managers", async () => {
    const res = await api("GET", `/api/v1/channel-overrides/server/${seen}`, { token: viewer });
    expect(res.status).toBe(403);
    expect(res.text).not.toContain("secret team");
    const managed = await api("GET", `/api/v1/channel-overrides/server/${seen}`, { token: tuner });
    expect(managed.body.map((e: { channel_name: string }) => e.channel_name)).toEqual(["pager of the secret team"]);
  });
});
