/**
 * Compaction's promises, on random chat histories (text of all lengths, SQL, schema talk, acknowledgements,
 * tool calls answered in the next message, several calls per turn, a last call left unanswered) and random
 * budgets and windows: the first and last messages are kept; output is the input in order, less some
 * messages, plus at most one summary right after the first; no tool result loses its call, no call loses its
 * result; and the estimate never exceeds the budget when the first and last messages with their tool
 * partners fit in it.
 */
import { describe, expect, it } from "vitest";
import { type CompactMessage, DEFAULT_OPTIONS, TOKEN_COUNTERS, compact, estimateTokens, units } from "../../src/ai/compaction.ts";
import { seededRandom } from "../support/seeded-random.ts";

const WORDS = ["vacuum", "index", "replication", "lag", "checkpoint", "why", "is", "the", "table", "slow", "orders", "bloat", "wal", "ok"];

function history(rand: () => number): CompactMessage[] {
  const pick = <T>(xs: T[]) => xs[Math.floor(rand() * xs.length)];
  const sentence = (n: number) => Array.from({ length: n }, () => pick(WORDS)).join(" ");
  const out: CompactMessage[] = [];
  const length = 1 + Math.floor(rand() * 40);
  let call = 0;
  while (out.length < length) {
    const r = rand();
    if (r < 0.1) out.push({ role: "user", content: "thanks" });
    else if (r < 0.2) out.push({ role: "user", content: `SELECT * FROM ${pick(["orders", "users", "events"])} WHERE id = ${out.length}` });
    else if (r < 0.3) out.push({ role: "assistant", content: `CREATE TABLE t${out.length} (id int primary key)` });
    else if (r < 0.5) {
      const ids = Array.from({ length: 1 + Math.floor(rand() * 3) }, () => `call_${call++}`);
      out.push({
        role: "assistant",
        content: [
          { type: "text", text: sentence(3) },
          ...ids.map((id) => ({ type: "tool_use", id, name: pick(["query_metrics", "list_alerts"]), input: { n: id } })),
        ],
      });
      if (rand() < 0.9)
        out.push({ role: "user", content: ids.map((id) => ({ type: "tool_result", tool_use_id: id, content: sentence(1 + Math.floor(rand() * 200)) })) });
    } else out.push({ role: rand() < 0.5 ? "user" : "assistant", content: `${sentence(1 + Math.floor(rand() * 300))}?` });
  }
  return out;
}

const idsOf = (m: CompactMessage, type: "tool_use" | "tool_result") =>
  typeof m.content === "string" ? [] : m.content.flatMap((b) => (b.type === type ? [type === "tool_use" ? b.id! : b.tool_use_id!] : []));

describe("compaction on random histories", () => {
  for (let seed = 1; seed <= 300; seed++) {
    it(`seed ${seed}`, () => {
      const rand = seededRandom(seed);
      const messages = history(rand);
      const options = {
        ...DEFAULT_OPTIONS,
        maxTokens: Math.floor(20 + rand() * 3000),
        recentWindow: Math.floor(rand() * 12),
        keepAnchors: rand() < 0.5,
        enableSummarization: rand() < 0.7,
        minImportantMessages: Math.floor(rand() * 5),
        tokenCounter: TOKEN_COUNTERS[Math.floor(rand() * TOKEN_COUNTERS.length)],
      };
      const result = compact(messages, options);
      const out = result.messages;

      // First and last kept; the input's order, with at most one summary right after the first.
      expect(out[0]).toBe(messages[0]);
      expect(out.at(-1)).toBe(messages.at(-1));
      const summaries = out.filter((m) => !messages.includes(m));
      expect(summaries.length).toBeLessThanOrEqual(1);
      if (summaries.length) expect(out[1]).toBe(summaries[0]);
      const originals = out.filter((m) => messages.includes(m));
      const positions = originals.map((m) => messages.indexOf(m));
      expect(positions).toEqual([...positions].sort((a, b) => a - b));

      // Tool calls and their results stay together.
      const calls = new Set(out.flatMap((m) => idsOf(m, "tool_use")));
      const answered = new Set(out.flatMap((m) => idsOf(m, "tool_result")));
      const inputAnswered = new Set(messages.flatMap((m) => idsOf(m, "tool_result")));
      for (const id of answered) expect(calls.has(id), `result ${id} without its call`).toBe(true);
      for (const id of calls) if (inputAnswered.has(id)) expect(answered.has(id), `call ${id} without its result`).toBe(true);

      // The estimate is the output's, and within budget whenever the must-keep part fits.
      const cost = (ms: CompactMessage[]) => ms.reduce((s, m) => s + estimateTokens(m, options.tokenCounter), 0);
      expect(result.token_estimate).toBe(cost(out));
      const all = units(messages);
      const mustKeep = [...new Set([all.find((u) => u.includes(0))!, all.find((u) => u.includes(messages.length - 1))!])].flat();
      if (cost(mustKeep.map((i) => messages[i])) <= options.maxTokens)
        expect(result.token_estimate).toBeLessThanOrEqual(Math.max(options.maxTokens, cost(messages)));
      if (cost(messages) > options.maxTokens && cost(mustKeep.map((i) => messages[i])) <= options.maxTokens && messages.length > options.recentWindow + 1) {
        expect(result.token_estimate).toBeLessThanOrEqual(options.maxTokens);
      }

      // The counts add up.
      const info = result.compaction_info;
      expect(info.original_count).toBe(messages.length);
      expect(info.compacted_count).toBe(out.length);
      expect(info.dropped_count).toBe(messages.length - originals.length);
      expect(info.tokens_saved).toBe(cost(messages) - result.token_estimate);
    });
  }
});

describe("compaction by example", () => {
  const long = (role: string, words: number) => ({ role, content: `${"word ".repeat(words)}?` });

  it("leaves a short history or one within budget unchanged", () => {
    const messages = [long("user", 10), long("assistant", 10)];
    expect(compact(messages, { ...DEFAULT_OPTIONS, maxTokens: 1 }).messages).toBe(messages);
    const within = Array.from({ length: 30 }, (_, i) => long(i % 2 ? "assistant" : "user", 5));
    const result = compact(within);
    expect(result.messages).toBe(within);
    expect(result.compaction_info).toMatchObject({ dropped_count: 0, compression_ratio: 1 });
    expect(result.summary).toBeNull();
  });

  it("keeps the anchor, the recent window and important middle messages, and summarizes the rest", () => {
    const messages: CompactMessage[] = [
      { role: "user", content: "We are tuning the orders database on prod-db-1 today, please help" },
      long("assistant", 400),
      { role: "user", content: "why is SELECT * FROM orders JOIN customers so slow on the primary?" },
      long("assistant", 400),
      { role: "assistant", content: "The error was: could not extend file, remember to check disk space" },
      long("user", 300),
      long("assistant", 300),
      { role: "user", content: "and the replicas?" },
      { role: "assistant", content: "They are fine." },
    ];
    const result = compact(messages, { ...DEFAULT_OPTIONS, maxTokens: 200, recentWindow: 2, minImportantMessages: 0, keepAnchors: true });
    expect(result.messages[0]).toBe(messages[0]);
    expect(result.messages.slice(-2)).toEqual(messages.slice(-2));
    expect(result.messages).toContain(messages[4]); // an error to remember: an anchor, kept with keep_anchors
    expect(compact(messages, { ...DEFAULT_OPTIONS, maxTokens: 200, recentWindow: 2, minImportantMessages: 0, keepAnchors: false }).messages).not.toContain(
      messages[4],
    );
    expect(result.messages).not.toContain(messages[1]);
    expect(result.summary?.tables).toEqual(["orders", "customers"]);
    expect(result.summary?.topics[0]).toBe("why is SELECT * FROM");
    expect(result.messages[1]).toEqual({ role: "assistant", content: result.summary!.description });
    expect(result.summary!.description).toMatch(/^\[Compressed context: Topics: .*Tables: orders, customers\. \d+ messages compressed\]$/);
    expect(result.token_estimate).toBeLessThanOrEqual(200);
  });

  it("moves the recent window back rather than keep a tool result without its call", () => {
    const messages: CompactMessage[] = [
      { role: "user", content: "check the alerts please, all of them" },
      long("assistant", 500),
      { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "list_alerts", input: {} }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "3 alerts firing" }] },
      { role: "assistant", content: "Three alerts are firing." },
    ];
    const result = compact(messages, { ...DEFAULT_OPTIONS, maxTokens: 150, recentWindow: 2 });
    expect(result.messages).toContain(messages[2]);
    expect(result.messages).toContain(messages[3]);
    expect(result.messages).not.toContain(messages[1]);
  });

  it("weighs SQL above plain text, and adds per-message overhead", () => {
    expect(estimateTokens({ role: "user", content: "x".repeat(400) })).toBe(110);
    expect(estimateTokens({ role: "user", content: `select ${"x".repeat(393)}` })).toBe(130);
    expect(estimateTokens({ role: "user", content: "x".repeat(400) }, "anthropic")).toBe(120);
  });
});
