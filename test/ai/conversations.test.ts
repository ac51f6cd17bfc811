/**
 * Conversations through the API: each user's own (API tokens reach their owner's), titles and previews
 * from the first user message, newest first; another user's conversation is a 404 to every method and
 * stays as it was; bad input is a 400 that writes nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { conversationPreview, conversationTitle } from "../../src/vocabulary/conversation-text.ts";
import { issueApiToken } from "../../src/auth/issue-token.ts";
import { testApp } from "../support/app.ts";
import { userWithToken } from "../support/auth.ts";
import { migratedDatastore, type TestDatastore } from "../support/datastore.ts";
import { client } from "../support/http.ts";

let store: TestDatastore;
let api: ReturnType<typeof client>;
let ann: string;
let bob: string;

beforeAll(async () => {
  store = await migratedDatastore("pglite");
  api = client(testApp(store.db).app);
  ann = (await userWithToken(store.db, "ann")).token;
  bob = (await userWithToken(store.db, "bob")).token;
});
afterAll(() => store.close());

const messages = (first: string) => [
  { role: "user", content: first, timestamp: "2026-11-23T10:00:00Z" },
  {
    role: "assistant",
    content: [{ type: "text", text: "Let me look." }],
    provider: "anthropic",
    model: "claude-sonnet-4-5",
    activity: [{ tool: "query_metrics" }],
  },
];

describe("conversations", () => {
  it("saves, lists newest first with title and preview, gets, replaces, renames and deletes", async () => {
    const long = "Why is the checkpoint on prod-db-1 taking so long every night around two?";
    const created = await api("POST", "/api/v1/conversations", {
      token: ann,
      body: { provider: "anthropic", model: "claude-sonnet-4-5", connection: "prod-db-1", messages: messages(long) },
    });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({
      title: "Why is the checkpoint on prod-db-1 taking so lo...",
      provider: "anthropic",
      connection: "prod-db-1",
      messages: messages(long),
    });
    expect(created.body.id).toMatch(/^conv_\d+_[0-9a-f]{16}$/);
    const second = await api("POST", "/api/v1/conversations", { token: ann, body: { messages: [{ role: "user", content: "short one" }] } });
    expect(second.body).toMatchObject({ title: "short one", provider: null, model: null, connection: null });

    const list = await api("GET", "/api/v1/conversations", { token: ann });
    expect(list.body.conversations.map((c: { id: string }) => c.id)).toEqual([second.body.id, created.body.id]);
    expect(list.body.conversations[1]).toEqual({
      id: created.body.id,
      title: created.body.title,
      connection: "prod-db-1",
      created_at: created.body.created_at,
      updated_at: created.body.updated_at,
      preview: long,
    });
    expect((await api("GET", "/api/v1/conversations?limit=1&offset=1", { token: ann })).body.conversations.map((c: { id: string }) => c.id)).toEqual([
      created.body.id,
    ]);

    expect((await api("GET", `/api/v1/conversations/${created.body.id}`, { token: ann })).body).toEqual(created.body);
    const replaced = await api("PUT", `/api/v1/conversations/${created.body.id}`, {
      token: ann,
      body: { model: "gpt-4.1-mini", messages: [...messages(long), { role: "user", content: "and now?" }] },
    });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toMatchObject({ title: created.body.title, provider: null, model: "gpt-4.1-mini", connection: null });
    expect(replaced.body.messages).toHaveLength(3);
    expect(Date.parse(replaced.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(created.body.updated_at));
    expect((await api("GET", "/api/v1/conversations", { token: ann })).body.conversations[0].id).toBe(created.body.id);

    expect((await api("PATCH", `/api/v1/conversations/${created.body.id}`, { token: ann, body: { title: "  Nightly checkpoints  " } })).body).toEqual({
      success: true,
    });
    expect((await api("GET", `/api/v1/conversations/${created.body.id}`, { token: ann })).body.title).toBe("Nightly checkpoints");
    expect((await api("DELETE", `/api/v1/conversations/${created.body.id}`, { token: ann })).body).toEqual({ success: true });
    expect((await api("GET", `/api/v1/conversations/${created.body.id}`, { token: ann })).status).toBe(404);
  });

  it("shows another user's conversation to no method: 404, and it stays as it was", async () => {
    const mine = await api("POST", "/api/v1/conversations", { token: ann, body: { messages: messages("ann's private question") } });
    const path = `/api/v1/conversations/${mine.body.id}`;
    for (const [method, body] of [
      ["GET"],
      ["PUT", { messages: [{ role: "user", content: "overwritten" }] }],
      ["PATCH", { title: "hijacked" }],
      ["DELETE"],
    ] as const) {
      const res = await api(method, path, { token: bob, body });
      expect(res, `${method}`).toMatchObject({ status: 404, body: { error: "conversation not found" } });
    }
    expect((await api("GET", "/api/v1/conversations", { token: bob })).body.conversations).toEqual([]);
    expect((await api("DELETE", "/api/v1/conversations?all=true", { token: bob })).body).toEqual({ success: true, deleted: 0 });
    expect((await api("GET", path, { token: ann })).body).toEqual(mine.body);
  });

  it("lets every API token of a user reach that user's conversations", async () => {
    const { token: second } = await issueApiToken(store.db, { owner: "ann" });
    const mine = await api("POST", "/api/v1/conversations", { token: ann, body: { messages: messages("from the first token") } });
    expect((await api("GET", `/api/v1/conversations/${mine.body.id}`, { token: second })).status).toBe(200);
  });

  it("deletes all only with ?all=true, and only the caller's", async () => {
    const carl = (await userWithToken(store.db, "carl")).token;
    await api("POST", "/api/v1/conversations", { token: carl, body: { messages: messages("one") } });
    await api("POST", "/api/v1/conversations", { token: carl, body: { messages: messages("two") } });
    const annBefore = (await api("GET", "/api/v1/conversations", { token: ann })).body.conversations.length;
    expect(await api("DELETE", "/api/v1/conversations", { token: carl })).toMatchObject({
      status: 400,
      body: { error: "use ?all=true to delete all of your conversations" },
    });
    expect((await api("DELETE", "/api/v1/conversations?all=true", { token: carl })).body).toEqual({ success: true, deleted: 2 });
    expect((await api("GET", "/api/v1/conversations", { token: ann })).body.conversations.length).toBe(annBefore);
  });

  it("refuses bad input with a 400 that writes nothing, and callers without a token with 401", async () => {
    const before = (await store.db.query<{ n: number }>("SELECT count(*)::int AS n FROM conversations"))[0].n;
    const cases: Array<[string, string, unknown, RegExp]> = [
      ["POST", "/api/v1/conversations", { messages: [] }, /messages: at least one message/],
      ["POST", "/api/v1/conversations", { messages: [{ role: "robot", content: "x" }] }, /role/],
      ["POST", "/api/v1/conversations", { messages: [{ role: "user" }] }, /content/],
      ["PATCH", "/api/v1/conversations/conv_1_0123456789abcdef", { title: "   " }, /title: required/],
      ["GET", "/api/v1/conversations/not-an-id", undefined, /not a conversation id/],
      ["GET", "/api/v1/conversations?limit=101", undefined, /limit/],
    ];
    for (const [method, path, body, message] of cases) {
      const res = await api(method, path, { token: ann, body });
      expect(res.status, `${method} ${path}`).toBe(400);
      expect(res.body.error).toMatch(message);
    }
    expect((await store.db.query<{ n: number }>("SELECT count(*)::int AS n FROM conversations"))[0].n).toBe(before);
    expect((await api("GET", "/api/v1/conversations")).status).toBe(401);
    expect((await api("POST", "/api/v1/conversations", { body: { messages: messages("x") } })).status).toBe(401);
  });
});

describe("titles and previews", () => {
  it("come from the first user message with plain text, clipped with an ellipsis", () => {
    expect(
      conversationTitle([
        { role: "assistant", content: "hi" },
        { role: "user", content: [{ type: "text", text: "blocks" }] },
      ]),
    ).toBe("New conversation");
    expect(conversationTitle([{ role: "user", content: "x".repeat(50) }])).toBe("x".repeat(50));
    expect(conversationTitle([{ role: "user", content: "x".repeat(51) }])).toBe(`${"x".repeat(47)}...`);
    expect(conversationTitle([{ role: "user", content: "two\nlines" }])).toBe("two lines");
    expect(conversationPreview([{ role: "user", content: "y".repeat(101) }])).toBe(`${"y".repeat(97)}...`);
  });
});
