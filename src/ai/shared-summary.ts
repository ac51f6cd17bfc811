/**
 * LLM texts written once per change and shared by every pglens instance: kept in the datastore under a key
 * with the fingerprint of the facts they describe; one instance at a time claims a key to write it.
 */
import type { Queryable } from "../../drivers/types.ts";
import { type SummaryRow, claimSummary, readSummary, releaseClaim, saveSummary } from "../datastore/overview-summaries.ts";
import { chat } from "../llm/chat.ts";
import type { LlmConfig } from "../llm/llm-config.ts";
import { choose } from "../llm/providers.ts";
import type { Logger } from "../log.ts";

/** How long an instance may take to write a text before another may try. */
const CLAIM_SECONDS = 120;

export interface Shared {
  row: SummaryRow | undefined;
  /** generating: another instance holds the claim; `row` is the previous text, if any. */
  status: "ready" | "generating";
}

export async function sharedSummary(db: Queryable, key: string, print: string, refresh: boolean, write: () => Promise<string>): Promise<Shared> {
  const cached = await readSummary(db, key);
  if (cached?.summary && cached.fingerprint === print && !refresh) return { row: cached, status: "ready" };
  if (!(await claimSummary(db, key, CLAIM_SECONDS))) return { row: cached, status: "generating" };
  try {
    return { row: await saveSummary(db, key, print, await write()), status: "ready" };
  } catch (err) {
    await releaseClaim(db, key);
    throw err;
  }
}

/** One short answer from the default chat model: focused (temperature 0.3) and brief (512 tokens). */
export async function askForText(llm: LlmConfig, log: Logger, endpoint: string, system: string, content: string): Promise<string> {
  const choice = choose(llm, "chat");
  const reply = await chat({ ...llm, max_tokens: 512, temperature: 0.3 }, choice, { system, tools: [], messages: [{ role: "user", content }] });
  log.info("llm usage", { user: "(pglens)", endpoint, provider: choice.provider, model: choice.model, prompt_tokens: reply.token_usage.prompt_tokens, completion_tokens: reply.token_usage.completion_tokens });
  return reply.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("").trim();
}
