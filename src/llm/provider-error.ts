/**
 * What a provider failure looks like to callers and logs: the provider, its HTTP status and its own short
 * message, with every configured secret cut out (providers sometimes quote the key they were sent).
 */
import { APICallError } from "ai";
import type { LlmConfig } from "../llm-config.ts";
import type { LlmProviderName } from "../llm-config.ts";

export class LlmProviderError extends Error {
  constructor(
    readonly provider: LlmProviderName,
    /** 502: the provider failed; 504: it did not answer in time. */
    readonly status: 502 | 504,
    message: string,
  ) {
    super(message);
    this.name = "LlmProviderError";
  }
}

const MAX_MESSAGE = 300;

/** Every secret of the llm configuration: keys and custom header values. */
function secretsOf(llm: LlmConfig): { keys: string[]; headerValues: string[] } {
  const settings = Object.values(llm.providers).filter((s) => s !== undefined);
  const long = (v: string | undefined): v is string => Boolean(v && v.length >= 4);
  return { keys: settings.map((s) => s.api_key).filter(long), headerValues: settings.flatMap((s) => Object.values(s.headers)).filter(long) };
}

export function redact(llm: LlmConfig, text: string): string {
  const { keys, headerValues } = secretsOf(llm);
  let out = text;
  for (const secret of [...keys, ...headerValues]) out = out.split(secret).join("[redacted]");
  // Providers quote keys masked ("sk-proj-****abcd"): any word that starts like one of our keys goes too.
  for (const key of keys.filter((k) => k.length >= 12)) out = out.replace(new RegExp(`${escapeRegExp(key.slice(0, 6))}\\S*`, "g"), "[redacted]");
  return out;
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The caller-facing error for whatever a provider call threw. */
export function providerFailure(llm: LlmConfig, provider: LlmProviderName, err: unknown, timeoutSeconds: number): LlmProviderError {
  if (isTimeout(err)) return new LlmProviderError(provider, 504, `${provider} did not answer within ${timeoutSeconds} s (llm.timeout_seconds)`);
  const apiError = findApiError(err);
  if (apiError?.statusCode) {
    return new LlmProviderError(provider, 502, redact(llm, `${provider} answered HTTP ${apiError.statusCode}: ${clip(apiError.message)}`));
  }
  if (apiError) return new LlmProviderError(provider, 502, redact(llm, `${provider} could not be reached: ${clip(causeMessage(apiError))}`));
  return new LlmProviderError(provider, 502, redact(llm, `${provider} request failed: ${clip((err as Error)?.message ?? String(err))}`));
}

function findApiError(err: unknown): APICallError | undefined {
  for (let e = err; e; e = (e as { cause?: unknown }).cause) {
    if (APICallError.isInstance(e)) return e;
    const last = (e as { lastError?: unknown }).lastError;
    if (APICallError.isInstance(last)) return last;
  }
  return undefined;
}

function isTimeout(err: unknown): boolean {
  for (let e = err; e; e = (e as { cause?: unknown }).cause) if ((e as Error).name === "TimeoutError") return true;
  return false;
}

const causeMessage = (e: Error) => ((e.cause as Error | undefined)?.message ? `${e.message} (${(e.cause as Error).message})` : e.message);
const clip = (s: string) => (s.length > MAX_MESSAGE ? `${s.slice(0, MAX_MESSAGE)}...` : s);
