/**
 * LLM texts written once per change and shared by every pglens instance: kept in the datastore under a key
 * with the fingerprint of the facts they describe; one instance at a time claims a key to write it.
 */
import type { Queryable } from "../../drivers/types.ts";
import { type SummaryRow, claimSummary, readSummary, releaseClaim, saveSummary } from "../datastore/overview-summaries.ts";
import { TooSoonError } from "../errors.ts";
import { type ChatReply, chat } from "../llm/chat.ts";
import { type Payer, charged, estimateTokens, reserve } from "../llm/usage.ts";
import type { LlmConfig } from "../llm-config.ts";
import { choose } from "../llm/providers.ts";
import type { Logger } from "../log.ts";

/** How long an instance may take to write a text before another may try. */
const CLAIM_SECONDS = 120;

export interface Shared {
  row: SummaryRow | undefined;
  /** generating: another instance holds the claim; `row` is the previous text, if any. */
  status: "ready" | "generating";
}

/** A text asked to be written again sooner than this after the last one is refused (429). */
export const REFRESH_INTERVAL_SECONDS = 60;

/**
 * The text under `key`, written again when the facts' fingerprint changed, or when someone asked (`refreshBy`,
 * who then pays for the call, and at most once a minute per key whoever asks).
 */
export async function sharedSummary(
  db: Queryable,
  key: string,
  print: string,
  refreshBy: Payer | undefined,
  write: (payer?: Payer) => Promise<string>,
): Promise<Shared> {
  const cached = await readSummary(db, key);
  if (refreshBy && cached?.summary && cached.generated_at) {
    const age = (Date.now() - cached.generated_at.getTime()) / 1000;
    if (age < REFRESH_INTERVAL_SECONDS) {
      const wait = Math.ceil(REFRESH_INTERVAL_SECONDS - age);
      throw new TooSoonError(
        `this text was written ${Math.floor(age)} s ago: a refresh is allowed once every ${REFRESH_INTERVAL_SECONDS} s; try again in ${wait} s`,
        wait,
      );
    }
  }
  if (cached?.summary && cached.fingerprint === print && !refreshBy) return { row: cached, status: "ready" };
  if (!(await claimSummary(db, key, CLAIM_SECONDS))) return { row: cached, status: "generating" };
  try {
    return { row: await saveSummary(db, key, print, await write(refreshBy)), status: "ready" };
  } catch (err) {
    await releaseClaim(db, key);
    throw err;
  }
}

const MAX_TOKENS = 512;

/**
 * One short answer from the default chat model: focused (temperature 0.3) and brief (512 tokens). Charged to
 * `payer`'s daily budget when a person asked for it; pglens's own writing is only logged.
 */
export async function askForText(llm: LlmConfig, log: Logger, endpoint: string, system: string, content: string, payer?: Payer): Promise<string> {
  const choice = choose(llm, "chat");
  const ask = () => chat({ ...llm, max_tokens: MAX_TOKENS, temperature: 0.3 }, choice, { system, tools: [], messages: [{ role: "user", content }] });
  let reply: ChatReply;
  if (payer) {
    reply = await charged(await reserve(payer, endpoint, estimateTokens(system + content) + MAX_TOKENS), ask, (r) => r.token_usage);
  } else {
    reply = await ask();
    log.info("llm usage", {
      user: "(pglens)",
      endpoint,
      provider: choice.provider,
      model: choice.model,
      prompt_tokens: reply.token_usage.prompt_tokens,
      completion_tokens: reply.token_usage.completion_tokens,
    });
  }
  return reply.content
    .flatMap((b) => (b.type === "text" ? [b.text] : []))
    .join("")
    .trim();
}
