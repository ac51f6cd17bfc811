/**
 * Event streams outlive the moment their caller was let in (#46 item 7): after a sign-out, a revoked token, a
 * disabled user or a lost grant, a stream must send nothing more but one final error event, then close. Real
 * HTTP, a local LLM wire server, the real datastore.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addMember, createGroup, setConnectionGrants } from "../../src/datastore/groups.ts";
import { CREDENTIAL_GONE } from "../../src/http/credential-check.ts";
import { OVERVIEW_POLL_MS } from "../../src/routes/overview.ts";
import { testApp } from "../support/app.ts";
import { userWithToken } from "../support/auth.ts";
import { addConnection, migratedDatastore, type TestDatastore } from "../support/datastore.ts";
import { KEYS, type WireServer, llmSection, startWireServer } from "../support/llm-wire.ts";
import { serveOnFreePort } from "../support/node-server.ts";
import { type SseEvent, parseSse } from "../support/sse.ts";

let wire: WireServer;
let store: TestDatastore;
let server: { url: string; close(): Promise<void> };
let prod: number;

beforeAll(async () => {
  wire = await startWireServer();
  store = await migratedDatastore("pglite");
  prod = await addConnection(store.db, "prod-db-1");
  await store.db.query("UPDATE connections SET is_shared = true");
  server = await serveOnFreePort(testApp(store.db, { config: { llm: llmSection(wire, { openai: KEYS.openai }) } }).app.fetch);
});
afterAll(async () => {
  await server.close();
  await wire.close();
  await store.close();
});

/** A stream read event by event; `rest()` reads until the server closes it (or `ms` pass). */
function openStream(res: Response) {
  const reader = res.body!.getReader();
  let text = "";
  let seen = 0;
  const pull = async () => {
    const { value, done } = await reader.read();
    if (done) return false;
    text += new TextDecoder().decode(value);
    return true;
  };
  return {
    async next(): Promise<SseEvent> {
      for (;;) {
        const events = parseSse(text);
        if (events.length > seen) return events[seen++];
        if (!(await pull())) throw new Error("stream ended");
      }
    },
    async rest(ms: number): Promise<{ events: SseEvent[]; closed: boolean }> {
      const timer = setTimeout(() => void reader.cancel(), ms);
      let closed = false;
      try {
        while (await pull());
        closed = true;
      } catch {
        closed = false;
      } finally {
        clearTimeout(timer);
      }
      return { events: parseSse(text).slice(seen), closed };
    },
  };
}

const get = (path: string, token: string) => fetch(server.url + path, { headers: { authorization: `Bearer ${token}` } });

describe("GET /api/v1/overview/stream", () => {
  it("ends with one error event once the session is signed out, the token revoked, the user disabled, or the grant gone", {
    timeout: OVERVIEW_POLL_MS * 2 + 15_000,
  }, async () => {
    const signedIn = await userWithToken(store.db, "signed-in", { password: "a long enough passphrase 9" });
    const login = await fetch(`${server.url}/api/v1/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username: "signed-in", password: "a long enough passphrase 9" }),
    });
    const session = (await login.json()).token as string;
    const revoked = await userWithToken(store.db, "revoked");
    const disabled = await userWithToken(store.db, "disabled");
    const narrowed = await userWithToken(store.db, "narrowed");
    await store.db.query("UPDATE connections SET is_shared = false");
    const group = await createGroup(store.db, "readers", "");
    await setConnectionGrants(store.db, group.id, [{ connection_id: prod, access_level: "read" }]);
    for (const u of [signedIn, revoked, disabled, narrowed]) await addMember(store.db, group.id, { type: "user", id: u.id });
    const narrowedGroup = await createGroup(store.db, "narrowed-only", "");
    await store.db.query("DELETE FROM group_members WHERE member_user_id = $1", [narrowed.id]);
    await setConnectionGrants(store.db, narrowedGroup.id, [{ connection_id: prod, access_level: "read" }]);
    await addMember(store.db, narrowedGroup.id, { type: "user", id: narrowed.id });

    const streams = await Promise.all(
      [session, revoked.token, disabled.token, narrowed.token].map(async (token) => {
        const res = await get(`/api/v1/overview/stream?connection_ids=${prod}`, token);
        expect(res.status).toBe(200);
        const stream = openStream(res);
        expect((await stream.next()).event).toBe("overview");
        return stream;
      }),
    );
    expect((await fetch(`${server.url}/api/v1/auth/logout`, { method: "POST", headers: { authorization: `Bearer ${session}` } })).status).toBeLessThan(300);
    await store.db.query("DELETE FROM api_tokens WHERE user_id = $1", [revoked.id]);
    await store.db.query("UPDATE users SET enabled = false WHERE id = $1", [disabled.id]);
    await setConnectionGrants(store.db, narrowedGroup.id, []);
    // A significant change: a stream still open to these callers would write and send a new summary.
    await store.db.query(
      "INSERT INTO alerts (alert_type, connection_id, severity, title, status, metric_name) VALUES ('threshold', $1, 'critical', 'disk full', 'active', 'disk')",
      [prod],
    );

    const ends = await Promise.all(streams.map((s) => s.rest(OVERVIEW_POLL_MS + 8_000)));
    for (const [i, end] of ends.entries()) {
      expect(end.closed, `stream ${i}`).toBe(true);
      expect(
        end.events.map((e) => e.event),
        `stream ${i}`,
      ).toEqual(["error"]);
    }
    for (const end of ends.slice(0, 3)) expect(end.events[0].data.error).toBe(CREDENTIAL_GONE);
    expect(ends[3].events[0].data.error).toContain("none of the servers asked for is visible to you");
  });
});

describe("POST /api/v1/llm/chat/stream", () => {
  it("stops the model and ends with an error event once the token is revoked mid-stream", async () => {
    const user = await userWithToken(store.db, "chatter");
    const res = await fetch(`${server.url}/api/v1/llm/chat/stream`, {
      method: "POST",
      headers: { authorization: `Bearer ${user.token}`, "content-type": "application/json" },
      body: JSON.stringify({ provider: "openai", model: "slow", messages: [{ role: "user", content: "go on" }] }),
    });
    const stream = openStream(res);
    let event = await stream.next();
    while (event.event !== "content_delta") event = await stream.next();
    await store.db.query("DELETE FROM api_tokens WHERE user_id = $1", [user.id]);
    const end = await stream.rest(8_000);
    expect(end.closed).toBe(true);
    expect(end.events.at(-1)).toEqual({ event: "error", data: { error: CREDENTIAL_GONE } });
    expect(end.events.filter((e) => e.event === "content_delta").length).toBeLessThan(20); // about a second's worth, not the 40 parts
    expect(end.events.some((e) => e.event === "message_end")).toBe(false);
  });
});
