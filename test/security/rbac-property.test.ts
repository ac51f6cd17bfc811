/**
 * Property: whatever sequence of RBAC calls a non-superuser makes, it ends up with no right it did not start
 * with. Each world is random (users, nested groups, grants, token scopes) from a printed seed; the attacker
 * then makes random calls with every credential it gets hold of (its token, tokens it mints, sessions of
 * accounts whose password it sets). After every call:
 *  - every credential the attacker holds is covered by the attacker's starting rights (superuser status,
 *    `*`, every admin permission and MCP item, all-connections grants, each connection's level);
 *  - the set of superusers has not grown;
 *  - tokens holding more than the attacker are untouched (not revoked, not rescoped).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { missingRight } from "../../src/auth/escalation.ts";
import { ACCESS_LEVELS, ADMIN_PERMISSIONS, ALL, MCP_PRIVILEGES } from "../../src/vocabulary/permissions.ts";
import { resolveCaller } from "../../src/auth/principal.ts";
import { type Authority, loadAuthority } from "../../src/auth/rbac.ts";
import { addMember, createGroup, setAdminGrants, setConnectionGrants, setMcpGrants } from "../../src/datastore/groups.ts";
import { setTokenScope } from "../../src/datastore/api-tokens.ts";
import { issueApiToken } from "../../src/auth/issue-token.ts";
import { testApp } from "../support/app.ts";
import { userWithToken } from "../support/auth.ts";
import { migratedDatastore, type TestDatastore } from "../support/datastore.ts";
import { client } from "../support/http.ts";
import { seededRandom } from "../support/seeded-random.ts";

const WORLDS = Number(process.env.RBAC_WORLDS ?? 40);
const CALLS_PER_WORLD = 40;
const PASSWORD = "a long enough passphrase 7";

function random(seed: number) {
  const next = seededRandom(seed);
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)];
  const some = <T>(items: readonly T[], p: number): T[] => items.filter(() => next() < p);
  return { next, int, pick, some, chance: (p: number) => next() < p };
}
type Random = ReturnType<typeof random>;

let store: TestDatastore;
let send: ReturnType<typeof client>;

beforeAll(async () => {
  store = await migratedDatastore("pglite");
  send = client(testApp(store.db).app);
});
afterAll(() => store.close());

const MCP_ITEMS = MCP_PRIVILEGES.map((p) => p.identifier);
const randomAdmin = (r: Random) => (r.chance(0.08) ? [ALL] : r.some(ADMIN_PERMISSIONS, 0.3));
const randomMcp = (r: Random) => (r.chance(0.08) ? [ALL] : r.some(MCP_ITEMS, 0.3));
const randomConnectionGrants = (r: Random, connections: number[]) =>
  r.some([0, ...connections], 0.35).map((connection_id) => ({ connection_id, access_level: r.pick(ACCESS_LEVELS) }));

interface World {
  users: number[];
  usernames: Map<number, string>;
  groups: number[];
  connections: number[];
  tokens: Map<string, number>;
  attacker: { id: number; token: string };
}

async function buildWorld(r: Random, n: number): Promise<World> {
  const db = store.db;
  await db.query("TRUNCATE users, user_groups, connections RESTART IDENTITY CASCADE");
  const root = await userWithToken(db, `root${n}`, { superuser: true });
  const users = [root.id];
  const usernames = new Map([[root.id, `root${n}`]]);
  const tokens = new Map([[root.token, root.id]]);
  for (let i = 0; i < 5; i++) {
    const name = `u${n}_${i}`;
    const u = await userWithToken(db, name, { superuser: i === 4 });
    users.push(u.id);
    usernames.set(u.id, name);
    tokens.set(u.token, u.id);
  }
  const connections: number[] = [];
  for (let i = 0; i < 3; i++) {
    const owner = r.chance(0.5) ? r.pick(users) : null;
    const [row] = await db.query<{ id: number }>(
      "INSERT INTO connections (name, host, port, database_name, username, owner_user_id, is_shared) VALUES ($1, '127.0.0.1', 5432, 'postgres', 'x', $2, $3) RETURNING id",
      [`c${n}_${i}`, owner, r.chance(0.5)],
    );
    connections.push(row.id);
  }
  const groups: number[] = [];
  for (let i = 0; i < 6; i++) {
    const g = await createGroup(db, `g${n}_${i}`, "");
    await setAdminGrants(db, g.id, randomAdmin(r));
    await setMcpGrants(db, g.id, randomMcp(r));
    await setConnectionGrants(db, g.id, randomConnectionGrants(r, connections));
    // Nest only into later groups, so the starting world has no cycle.
    for (const outer of groups) if (r.chance(0.2)) await addMember(db, outer, { type: "group", id: g.id });
    for (const u of users.slice(1)) if (r.chance(0.25)) await addMember(db, g.id, { type: "user", id: u });
    groups.push(g.id);
  }
  // The attacker: a non-superuser with some management rights of its own, sometimes on a scoped token.
  const attackerId = users[1 + r.int(3)];
  const own = await createGroup(db, `attacker${n}`, "");
  await setAdminGrants(db, own.id, r.some(["manage_groups", "manage_permissions", "manage_users", "manage_token_scopes"], 0.7));
  await setConnectionGrants(db, own.id, randomConnectionGrants(r, connections));
  await setMcpGrants(db, own.id, randomMcp(r));
  await addMember(db, own.id, { type: "user", id: attackerId });
  groups.push(own.id);
  const minted = await issueApiToken(db, { owner: usernames.get(attackerId)! });
  if (r.chance(0.4)) {
    await setTokenScope(db, minted.id, {
      connections: randomConnectionGrants(r, connections),
      mcp_privileges: randomMcp(r),
      admin_permissions: r.some([...ADMIN_PERMISSIONS, ALL], 0.5),
    });
  }
  tokens.set(minted.token, attackerId);
  return { users, usernames, groups, connections, tokens, attacker: { id: attackerId, token: minted.token } };
}

/** The caller of a token as requests see it (one statement), checked against the step-by-step load escalation checks use. */
async function authorityOf(token: string): Promise<Authority | null> {
  const caller = await resolveCaller(store.db, token);
  if (caller) expect(caller).toEqual(await loadAuthority(store.db, caller.principal));
  return caller;
}

const superusers = async () => (await store.db.query<{ id: number }>("SELECT id FROM users WHERE is_superuser ORDER BY id")).map((u) => u.id);
const tokenState = async () =>
  new Map(
    (
      await store.db.query<{ id: number; user_id: number; scope: string }>(
        `SELECT t.id, t.user_id, concat_ws('|', (SELECT string_agg(connection_id || access_level, ',' ORDER BY connection_id) FROM token_connection_scope WHERE token_id = t.id),
           (SELECT string_agg(identifier, ',' ORDER BY identifier) FROM token_mcp_scope WHERE token_id = t.id),
           (SELECT string_agg(permission, ',' ORDER BY permission) FROM token_admin_scope WHERE token_id = t.id), t.scoped::text) AS scope FROM api_tokens t`,
      )
    ).map((t) => [t.id, t]),
  );

/** One random call by the attacker, with one of the credentials it holds. Returns a new credential if it got one. */
async function attack(r: Random, w: World, credentials: string[], step: string[]): Promise<string | undefined> {
  const which = r.int(credentials.length);
  const token = credentials[which];
  const user = r.pick(w.users);
  const group = r.pick(w.groups);
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await send(method, path, { token, body });
    step.push(`[credential ${which}] ${method} ${path} ${body === undefined ? "" : JSON.stringify(body)} -> ${res.status}`);
    expect(res.status, res.text).toBeLessThan(500);
    return res;
  };
  switch (r.int(12)) {
    case 0:
      await call(
        "POST",
        `/api/v1/rbac/groups/${group}/members`,
        r.chance(0.7) ? { user_id: r.chance(0.5) ? w.attacker.id : user } : { group_id: r.pick(w.groups) },
      );
      return;
    case 1:
      await call("PUT", `/api/v1/rbac/groups/${group}/permissions`, { admin_permissions: randomAdmin(r) });
      return;
    case 2:
      await call("PUT", `/api/v1/rbac/groups/${group}/privileges/connections`, { connection_privileges: randomConnectionGrants(r, w.connections) });
      return;
    case 3:
      await call("PUT", `/api/v1/rbac/groups/${group}/privileges/mcp`, { mcp_privileges: randomMcp(r) });
      return;
    case 4: {
      const res = await call("POST", "/api/v1/rbac/groups", { name: `new${r.int(1e9)}` });
      if (res.status === 201) w.groups.push(res.body.id);
      return;
    }
    case 5: {
      const res = await call("POST", "/api/v1/rbac/tokens", { owner_username: w.usernames.get(user) });
      return res.status === 201 ? res.body.token : undefined;
    }
    case 6: {
      const t = r.pick(await store.db.query<{ id: number }>("SELECT id FROM api_tokens ORDER BY id"));
      if (!t) return;
      if (r.chance(0.4)) await call("DELETE", `/api/v1/rbac/tokens/${t.id}/scope`);
      else
        await call("PUT", `/api/v1/rbac/tokens/${t.id}/scope`, {
          connections: randomConnectionGrants(r, w.connections),
          admin_permissions: r.some([...ADMIN_PERMISSIONS, ALL], 0.4),
        });
      return;
    }
    case 7: {
      const t = r.pick(await store.db.query<{ id: number }>("SELECT id FROM api_tokens ORDER BY id"));
      if (t) await call("DELETE", `/api/v1/rbac/tokens/${t.id}`);
      return;
    }
    case 8: {
      // Take over an account: set its password, then log in as it.
      const set = await call("PUT", `/api/v1/rbac/users/${user}`, { password: PASSWORD, enabled: true });
      if (set.status !== 200) return;
      const login = await send("POST", "/api/v1/auth/login", { body: { username: w.usernames.get(user), password: PASSWORD } });
      expect(login.status, login.text).toBe(200);
      return login.body.token;
    }
    case 9:
      await call("PUT", `/api/v1/rbac/users/${user}`, r.chance(0.5) ? { is_superuser: true } : { enabled: false });
      return;
    case 10: {
      const name = `made${r.int(1e9)}`;
      const res = await call("POST", "/api/v1/rbac/users", { username: name, password: PASSWORD, is_superuser: r.chance(0.5) });
      if (res.status !== 201) return;
      w.users.push(res.body.id);
      w.usernames.set(res.body.id, name);
      return;
    }
    default:
      await call("DELETE", `/api/v1/rbac/groups/${group}/members/${r.chance(0.5) ? "user" : "group"}/${r.chance(0.5) ? user : r.pick(w.groups)}`);
  }
}

describe("RBAC property: a non-superuser never gains a right it did not hold", () => {
  for (let n = 0; n < WORLDS; n++) {
    const seed = 1000 + n;
    it(`world seed ${seed}`, async () => {
      const r = random(seed);
      const w = await buildWorld(r, n);
      const start = (await authorityOf(w.attacker.token))!;
      const startSuperusers = await superusers();
      // Tokens the attacker must not touch: those holding something the attacker lacks.
      const before = await tokenState();
      const protectedTokens: number[] = [];
      for (const [id, t] of before) {
        const held = await loadAuthority(store.db, {
          userId: t.user_id,
          username: "",
          isSuperuser: startSuperusers.includes(t.user_id),
          via: "api_token",
          tokenId: id,
          tokenHash: "",
        });
        if ((await missingRight(store.db, start, held)) !== null) protectedTokens.push(id);
      }
      const credentials = [w.attacker.token];
      const steps: string[] = [];
      for (let i = 0; i < CALLS_PER_WORLD; i++) {
        const gained = await attack(r, w, credentials, steps);
        if (gained) credentials.push(gained);
        const trail = `seed ${seed}, after:\n${steps.join("\n")}`;
        for (const credential of credentials) {
          const now = await authorityOf(credential);
          if (now) expect(await missingRight(store.db, start, now), trail).toBeNull();
        }
        expect(await superusers(), trail).toEqual(startSuperusers);
        const after = await tokenState();
        for (const id of protectedTokens) expect(after.get(id), trail).toEqual(before.get(id));
      }
      for (const s of steps) outcomes[s.slice(s.lastIndexOf(" ") + 1)] = (outcomes[s.slice(s.lastIndexOf(" ") + 1)] ?? 0) + 1;
      grantsWon += steps.filter((s) => / -> 20[014]$/.test(s) && /members|privileges|tokens/.test(s)).length;
    });
  }

  it("exercised both outcomes: calls that succeed (rights handed on) and calls refused", () => {
    expect(outcomes["403"]).toBeGreaterThan(WORLDS * 5);
    expect(grantsWon).toBeGreaterThan(WORLDS);
  });
});

const outcomes: Record<string, number> = {};
let grantsWon = 0;
