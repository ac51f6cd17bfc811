/**
 * Attacks on the RBAC write paths, performed through the HTTP API as an attacker would (security review,
 * findings 1, 2 and 5). Each must fail, and the legitimate form of each action must still work.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addMember, createGroup, setAdminGrants, setConnectionGrants, setMcpGrants } from "../../src/datastore/groups.ts";
import { issueApiToken } from "../../src/auth/issue-token.ts";
import { testApp } from "../support/app.ts";
import { userWithToken } from "../support/auth.ts";
import { addConnection, migratedDatastore, type TestDatastore } from "../support/datastore.ts";
import { client } from "../support/http.ts";

let store: TestDatastore;
let send: ReturnType<typeof client>;
let root: { id: number; token: string };
let admins: number;
let conn: number;

/** A user who belongs to a fresh group holding exactly `permissions`. */
async function userWith(
  name: string,
  permissions: string[],
  extra: { connections?: Array<{ connection_id: number; access_level: "read" | "read_write" }>; mcp?: string[] } = {},
) {
  const user = await userWithToken(store.db, name);
  const group = await createGroup(store.db, `${name}-group`, "");
  await setAdminGrants(store.db, group.id, permissions);
  if (extra.connections) await setConnectionGrants(store.db, group.id, extra.connections);
  if (extra.mcp) await setMcpGrants(store.db, group.id, extra.mcp);
  await addMember(store.db, group.id, { type: "user", id: user.id });
  return { ...user, group: group.id };
}

beforeAll(async () => {
  store = await migratedDatastore("pglite");
  send = client(testApp(store.db).app);
  root = await userWithToken(store.db, "root", { superuser: true });
  admins = (await createGroup(store.db, "admins", "")).id;
  await setAdminGrants(store.db, admins, ["*"]);
  conn = await addConnection(store.db, "prod");
});
afterAll(() => store.close());

describe("finding 1: group membership is no path to more rights", () => {
  it("refuses joining (or nesting into) a group that holds more than the caller", async () => {
    const mallory = await userWith("mallory", ["manage_groups"]);
    const join = await send("POST", `/api/v1/rbac/groups/${admins}/members`, { token: mallory.token, body: { user_id: mallory.id } });
    expect(join).toMatchObject({ status: 403, body: { error: expect.stringContaining("the admin permission `*`") } });
    const nest = await send("POST", `/api/v1/rbac/groups/${admins}/members`, { token: mallory.token, body: { group_id: mallory.group } });
    expect(nest.status).toBe(403);
    // Inherited rights count too: a group nested inside admins carries `*` to its members.
    const inner = (await send("POST", "/api/v1/rbac/groups", { token: root.token, body: { name: "inner" } })).body.id;
    expect((await send("POST", `/api/v1/rbac/groups/${admins}/members`, { token: root.token, body: { group_id: inner } })).status).toBe(204);
    expect((await send("POST", `/api/v1/rbac/groups/${inner}/members`, { token: mallory.token, body: { user_id: mallory.id } })).status).toBe(403);
    const info = await send("GET", "/api/v1/user/info", { token: mallory.token });
    expect(info.body.admin_permissions).toEqual(["manage_groups"]);
    // What the caller does hold it may hand on.
    const peers = (await send("POST", "/api/v1/rbac/groups", { token: mallory.token, body: { name: "peers" } })).body.id;
    expect((await send("POST", `/api/v1/rbac/groups/${mallory.group}/members`, { token: mallory.token, body: { group_id: peers } })).status).toBe(204);
  });

  it("refuses taking away rights the caller does not hold: removing members, deleting the group, revoking grants", async () => {
    const vandal = await userWith("vandal", ["manage_groups", "manage_permissions"]);
    const dba = await userWithToken(store.db, "dba");
    await addMember(store.db, admins, { type: "user", id: dba.id });
    expect((await send("DELETE", `/api/v1/rbac/groups/${admins}/members/user/${dba.id}`, { token: vandal.token })).body.error).toContain(
      "removing a member from group",
    );
    expect((await send("DELETE", `/api/v1/rbac/groups/${admins}`, { token: vandal.token })).status).toBe(403);
    const ops = (await send("POST", "/api/v1/rbac/groups", { token: root.token, body: { name: "ops-grants" } })).body.id;
    await setMcpGrants(store.db, ops, ["query_database"]);
    expect((await send("PUT", `/api/v1/rbac/groups/${ops}/privileges/mcp`, { token: vandal.token, body: { mcp_privileges: [] } })).body.error).toContain(
      "the MCP privilege `query_database`",
    );
    expect((await send("GET", "/api/v1/user/info", { token: dba.token })).body.admin_permissions).toEqual(["*"]);
  });

  it("lets only a superuser change or delete a superuser account, or its groups", async () => {
    const eve = await userWith("eve", ["manage_users", "manage_groups"]);
    const reset = await send("PUT", `/api/v1/rbac/users/${root.id}`, { token: eve.token, body: { password: "a brand new passphrase 1" } });
    expect(reset).toMatchObject({ status: 403, body: { error: "only a superuser can change or delete a superuser account" } });
    expect((await send("PUT", `/api/v1/rbac/users/${root.id}`, { token: eve.token, body: { enabled: false } })).status).toBe(403);
    expect((await send("DELETE", `/api/v1/rbac/users/${root.id}`, { token: eve.token })).status).toBe(403);
    expect((await send("POST", `/api/v1/rbac/groups/${eve.group}/members`, { token: eve.token, body: { user_id: root.id } })).status).toBe(403);
    // Nor an account whose rights exceed the caller's: a new password is a way to log in as it.
    const boss = await userWithToken(store.db, "boss");
    await addMember(store.db, admins, { type: "user", id: boss.id });
    expect((await send("PUT", `/api/v1/rbac/users/${boss.id}`, { token: eve.token, body: { password: "a brand new passphrase 1" } })).status).toBe(403);
    const junior = await userWithToken(store.db, "junior");
    expect((await send("PUT", `/api/v1/rbac/users/${junior.id}`, { token: eve.token, body: { display_name: "Junior" } })).status).toBe(200);
  });

  it("grants connection and MCP privileges only within the caller's own", async () => {
    const perm = await userWith("perm", ["manage_permissions"], { connections: [{ connection_id: conn, access_level: "read" }], mcp: ["query_metrics"] });
    const target = (await send("POST", "/api/v1/rbac/groups", { token: root.token, body: { name: "target" } })).body.id;
    const put = (kind: string, body: unknown) => send("PUT", `/api/v1/rbac/groups/${target}/privileges/${kind}`, { token: perm.token, body });
    expect((await put("connections", { connection_privileges: [{ connection_id: 0, access_level: "read" }] })).body.error).toContain(
      "read on every connection (connection 0)",
    );
    expect((await put("connections", { connection_privileges: [{ connection_id: conn, access_level: "read_write" }] })).body.error).toContain(
      `read_write on connection ${conn}`,
    );
    expect((await put("mcp", { mcp_privileges: ["*"] })).status).toBe(403);
    expect((await put("mcp", { mcp_privileges: ["query_database"] })).status).toBe(403);
    expect((await put("connections", { connection_privileges: [{ connection_id: conn, access_level: "read" }] })).status).toBe(200);
    expect((await put("mcp", { mcp_privileges: ["query_metrics"] })).status).toBe(200);
  });

  it("keeps the last superuser from deleting or demoting itself", async () => {
    const lonely = await migratedDatastore("pglite");
    const only = await userWithToken(lonely.db, "only", { superuser: true });
    const call = client(testApp(lonely.db).app);
    expect((await call("DELETE", `/api/v1/rbac/users/${only.id}`, { token: only.token })).status).toBe(409);
    expect((await call("PUT", `/api/v1/rbac/users/${only.id}`, { token: only.token, body: { is_superuser: false } })).body.error).toContain(
      "last enabled superuser",
    );
    await lonely.close();
  });
});

describe("finding 2: a scoped token stays inside its scope", () => {
  const scopedToken = async (scope: Record<string, unknown>) => {
    const minted = await issueApiToken(store.db, { owner: "root" });
    expect((await send("PUT", `/api/v1/rbac/tokens/${minted.id}/scope`, { token: root.token, body: scope })).status).toBe(200);
    return minted;
  };

  it("cannot change, delete or go live on a connection it may only read, even as its superuser owner's token", async () => {
    const { token } = await scopedToken({ connections: [{ connection_id: conn, access_level: "read" }] });
    expect((await send("GET", `/api/v1/connections/${conn}`, { token })).status).toBe(200);
    expect((await send("PUT", `/api/v1/connections/${conn}`, { token, body: { description: "mine now" } })).status).toBe(403);
    expect((await send("DELETE", `/api/v1/connections/${conn}`, { token })).status).toBe(403);
    expect((await send("GET", `/api/v1/connections/${conn}/databases`, { token })).status).toBe(403);
    // Never set dimensions are empty: no admin rights, no superuser powers.
    expect((await send("GET", "/api/v1/rbac/users", { token })).status).toBe(403);
    expect((await send("PUT", `/api/v1/rbac/groups/${admins}/permissions`, { token, body: { admin_permissions: ["*"] } })).status).toBe(403);
  });

  it("reads `[]` as nothing", async () => {
    const { token } = await scopedToken({ admin_permissions: [] });
    expect((await send("GET", "/api/v1/rbac/users", { token })).status).toBe(403);
    expect((await send("GET", "/api/v1/connections", { token })).body).toEqual([]);
  });

  it("can neither widen nor remove its own scope, and mints only tokens as narrow as itself", async () => {
    const self = await scopedToken({ connections: [{ connection_id: conn, access_level: "read" }], admin_permissions: ["manage_token_scopes"] });
    const widen = await send("PUT", `/api/v1/rbac/tokens/${self.id}/scope`, {
      token: self.token,
      body: { connections: [{ connection_id: 0, access_level: "read_write" }] },
    });
    expect(widen.status).toBe(403);
    expect((await send("PUT", `/api/v1/rbac/tokens/${self.id}/scope`, { token: self.token, body: { admin_permissions: ["*"] } })).status).toBe(403);
    expect((await send("DELETE", `/api/v1/rbac/tokens/${self.id}/scope`, { token: self.token })).status).toBe(403);
    const child = await send("POST", "/api/v1/rbac/tokens", { token: self.token, body: { note: "child" } });
    expect(child.status).toBe(201);
    const info = await send("GET", "/api/v1/user/info", { token: child.body.token });
    expect(info.body.token_scope).toEqual({
      connections: [{ connection_id: conn, access_level: "read" }],
      mcp_privileges: [],
      admin_permissions: ["manage_token_scopes"],
    });
    // Narrowing is always allowed.
    expect((await send("PUT", `/api/v1/rbac/tokens/${self.id}/scope`, { token: self.token, body: { admin_permissions: [] } })).status).toBe(200);
  });
});

describe("finding 5: tokens for other users", () => {
  it("need manage_users and the target's rights, default to an expiry and name their creator", async () => {
    const minter = await userWith("minter", ["manage_token_scopes"]);
    const victim = await userWithToken(store.db, "victim");
    const tokenFor = (token: string, owner: string) => send("POST", "/api/v1/rbac/tokens", { token, body: { owner_username: owner } });
    expect((await tokenFor(minter.token, "victim")).body.error).toContain("manage_users");
    const manager = await userWith("manager", ["manage_token_scopes", "manage_users"]);
    const boss = await userWithToken(store.db, "boss2");
    await addMember(store.db, admins, { type: "user", id: boss.id });
    expect((await tokenFor(manager.token, "boss2")).status).toBe(403);
    expect((await tokenFor(manager.token, "root")).status).toBe(403);
    const made = await tokenFor(manager.token, "victim");
    expect(made.status).toBe(201);
    expect(Date.parse(made.body.expires_at) - Date.now()).toBeGreaterThan(29 * 86_400_000);
    expect(Date.parse(made.body.expires_at) - Date.now()).toBeLessThan(31 * 86_400_000);
    const listed = (await send("GET", "/api/v1/rbac/tokens", { token: root.token })).body.tokens.find((t: { id: number }) => t.id === made.body.id);
    expect(listed).toMatchObject({ owner: "victim", created_by: "manager" });
    expect(victim.id).toBeGreaterThan(0);
  });

  it("revoking or rescoping someone else's token needs the same, and a scoped token cannot revoke its owner's broader tokens", async () => {
    const minter = await userWith("revoker", ["manage_token_scopes"]);
    const target = await issueApiToken(store.db, { owner: "root" });
    const peer = await userWithToken(store.db, "peer");
    const peerToken = await issueApiToken(store.db, { owner: "peer" });
    expect((await send("DELETE", `/api/v1/rbac/tokens/${target.id}`, { token: minter.token })).body.error).toContain("manage_users");
    expect((await send("PUT", `/api/v1/rbac/tokens/${peerToken.id}/scope`, { token: minter.token, body: { connections: [] } })).status).toBe(403);
    const manager = await userWith("revoke-manager", ["manage_token_scopes", "manage_users"]);
    expect((await send("DELETE", `/api/v1/rbac/tokens/${target.id}`, { token: manager.token })).body.error).toContain("superuser");
    expect((await send("DELETE", `/api/v1/rbac/tokens/${peerToken.id}`, { token: manager.token })).status).toBe(204);
    expect(peer.id).toBeGreaterThan(0);
    // A scoped token of the minter, narrowed to no admin rights but manage_token_scopes, meets its owner's own token.
    const narrow = (await send("POST", "/api/v1/rbac/tokens", { token: minter.token, body: {} })).body;
    expect(
      (await send("PUT", `/api/v1/rbac/tokens/${narrow.id}/scope`, { token: minter.token, body: { admin_permissions: ["manage_token_scopes"] } })).status,
    ).toBe(200);
    const ownBroad = await issueApiToken(store.db, { owner: "revoker" });
    await setMcpGrants(store.db, minter.group, ["query_metrics"]);
    expect((await send("DELETE", `/api/v1/rbac/tokens/${ownBroad.id}`, { token: narrow.token })).body.error).toContain("the MCP privilege `query_metrics`");
    expect((await send("DELETE", `/api/v1/rbac/tokens/${ownBroad.id}`, { token: minter.token })).status).toBe(204);
  });
});
