/** POST /api/v1/chat/compact: the compaction of ai/compaction.ts over HTTP, its defaults and its 400s. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testApp } from "../support/app.ts";
import { userWithToken } from "../support/auth.ts";
import { migratedDatastore, type TestDatastore } from "../support/datastore.ts";
import { client } from "../support/http.ts";

let store: TestDatastore;
let api: ReturnType<typeof client>;
let token: string;

beforeAll(async () => {
  store = await migratedDatastore("pglite");
  api = client(testApp(store.db).app);
  token = (await userWithToken(store.db, "compactor")).token;
});
afterAll(() => store.close());

const history = Array.from({ length: 30 }, (_, i) => ({
  role: i % 2 ? "assistant" : "user",
  content: `message ${i} ${"about the orders table ".repeat(40)}`,
  timestamp: `t${i}`,
}));

describe("POST /api/v1/chat/compact", () => {
  it("compacts to the budget, keeping first, recent and extra fields, with the summary and counts", async () => {
    const res = await api("POST", "/api/v1/chat/compact", { token, body: { messages: history, max_tokens: 2000, recent_window: 4 } });
    expect(res.status, res.text).toBe(200);
    const { messages, summary, token_estimate, compaction_info } = res.body;
    expect(messages[0]).toEqual(history[0]);
    expect(messages.slice(-4)).toEqual(history.slice(-4));
    expect(messages[1]).toEqual({ role: "assistant", content: summary.description });
    expect(token_estimate).toBeLessThanOrEqual(2000);
    expect(compaction_info).toMatchObject({ original_count: 30, compacted_count: messages.length, dropped_count: 30 - (messages.length - 1), anchor_count: 1 });
    expect(compaction_info.compression_ratio).toBeLessThan(1);
  });

  it("returns a history within budget as it is", async () => {
    const res = await api("POST", "/api/v1/chat/compact", { token, body: { messages: history.slice(0, 3) } });
    expect(res.body).toMatchObject({ messages: history.slice(0, 3), summary: null, compaction_info: { dropped_count: 0, compression_ratio: 1 } });
  });

  it("leaves out the summary when summarization is off", async () => {
    const res = await api("POST", "/api/v1/chat/compact", {
      token,
      body: { messages: history, max_tokens: 2000, recent_window: 4, options: { enable_summarization: false } },
    });
    expect(res.body.summary).toBeNull();
    expect(res.body.compaction_info.dropped_count).toBeGreaterThan(0);
    for (const m of res.body.messages) expect(history).toContainEqual(m);
  });

  it("refuses bad input with 400, and callers without a token with 401", async () => {
    for (const [body, message] of [
      [{ messages: [] }, /messages: the array cannot be empty/],
      [{ messages: history, max_tokens: 0 }, /max_tokens/],
      [{ messages: history, options: { token_counter_type: "gpt2" } }, /token_counter_type/],
      [{ messages: history, options: { enable_llm_summarization: true } }, /enable_llm_summarization: not available/],
    ] as const) {
      const res = await api("POST", "/api/v1/chat/compact", { token, body });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(message);
    }
    expect((await api("POST", "/api/v1/chat/compact", { body: { messages: history } })).status).toBe(401);
  });
});
