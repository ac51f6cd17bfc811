/** Token accounting of the LLM proxy: a log line per call (counts only, never content) and the daily budget. */
import type { Queryable } from "../../drivers/types.ts";
import { addTokens, tokensUsedToday } from "../datastore/llm-token-usage.ts";
import type { Logger } from "../log.ts";
import type { LlmConfig } from "./llm-config.ts";

export class TokenBudgetError extends Error {
  constructor(
    readonly limit: number,
    readonly retryAfterSeconds: number,
  ) {
    super(`daily LLM token limit of ${limit} reached (llm.daily_token_limit); it resets at 00:00 UTC`);
    this.name = "TokenBudgetError";
  }
}

const secondsToUtcMidnight = (now: Date) => Math.max(1, Math.ceil((Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1) - now.getTime()) / 1000));

/** Refuses a call when the caller has spent the day's budget (a call already under way may overshoot it once). */
export async function checkBudget(db: Queryable, llm: LlmConfig, userId: number): Promise<void> {
  const limit = llm.daily_token_limit;
  if (limit === undefined) return;
  if ((await tokensUsedToday(db, userId)) >= limit) throw new TokenBudgetError(limit, secondsToUtcMidnight(new Date()));
}

export interface UsageRecord {
  endpoint: string;
  provider: string;
  model: string;
  prompt_tokens: number;
  completion_tokens: number;
}

export async function recordUsage(db: Queryable, log: Logger, llm: LlmConfig, user: { userId: number; username: string }, usage: UsageRecord): Promise<void> {
  const total = usage.prompt_tokens + usage.completion_tokens;
  log.info("llm usage", { user: user.username, ...usage, total_tokens: total });
  if (llm.daily_token_limit !== undefined) await addTokens(db, user.userId, total);
}
