/**
 * Token accounting of the LLM proxy: a log line per call (counts only, never content) and the daily budget.
 * A call reserves an estimate (prompt + max_tokens) before it starts and settles to the provider's report after,
 * so parallel calls cannot pass the limit by more than one call's overshoot, and a caller who leaves early
 * still pays for what the provider produced.
 */
import type { Queryable } from "../../drivers/types.ts";
import { adjustTokens, reserveTokens } from "../datastore/llm-token-usage.ts";
import type { Logger } from "../log.ts";
import type { LlmConfig } from "../llm-config.ts";

export class TokenBudgetError extends Error {
  constructor(
    readonly limit: number,
    readonly retryAfterSeconds: number,
  ) {
    super(`daily LLM token limit of ${limit} reached (llm.daily_token_limit); it resets at 00:00 UTC`);
    this.name = "TokenBudgetError";
  }
}

const secondsToUtcMidnight = (now: Date) =>
  Math.max(1, Math.ceil((Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1) - now.getTime()) / 1000));

/** About four characters a token: what a call is charged before (or without) the provider's report. */
export const estimateTokens = (text: string) => Math.ceil(text.length / 4);

export interface UsageRecord {
  provider: string;
  model: string;
  prompt_tokens: number;
  completion_tokens: number;
}

/** Who pays for a call. */
export interface Payer {
  db: Queryable;
  log: Logger;
  llm: LlmConfig;
  user: { userId: number; username: string };
}

export interface Reservation {
  /** The provider reported its usage: that is what the call costs. */
  settle(usage: UsageRecord): Promise<void>;
  /** The call failed before the provider produced anything: it costs nothing. */
  release(): Promise<void>;
}

/** Reserves `estimate` tokens of the payer's day for a call to `endpoint`; TokenBudgetError when the day's budget is spent. */
export async function reserve(payer: Payer, endpoint: string, estimate: number): Promise<Reservation> {
  const { db, log, llm, user } = payer;
  const limit = llm.daily_token_limit;
  const day = limit === undefined ? null : await reserveTokens(db, user.userId, estimate, limit);
  if (limit !== undefined && day === null) throw new TokenBudgetError(limit, secondsToUtcMidnight(new Date()));
  let settled = false; // the first word on a call's cost is the last
  const close = async (tokens: number) => {
    settled = true;
    if (day !== null) await adjustTokens(db, user.userId, day, tokens - estimate);
  };
  return {
    async settle(usage) {
      if (settled) return;
      const total = usage.prompt_tokens + usage.completion_tokens;
      log.info("llm usage", { user: user.username, endpoint, ...usage, total_tokens: total });
      await close(total);
    },
    release: async () => {
      if (!settled) await close(0);
    },
  };
}

/** Runs `call` on a reservation: settled to the provider's report, given back when the call fails. */
export async function charged<T>(reservation: Reservation, call: () => Promise<T>, usage: (result: T) => UsageRecord): Promise<T> {
  let result: T;
  try {
    result = await call();
  } catch (err) {
    await reservation.release();
    throw err;
  }
  await reservation.settle(usage(result));
  return result;
}
