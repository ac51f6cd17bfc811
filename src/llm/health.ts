/** Provider health from a cheap live call each: a model list, or an embedding of one word for Voyage, which has no list. */
import { LLM_PROVIDERS, type LlmConfig, type LlmProviderName } from "../llm-config.ts";
import { embedTexts } from "./embed.ts";
import { listModels } from "./models.ts";
import { defaultModel, settingsOf } from "./providers.ts";

const CHECK_TIMEOUT_MS = 10_000;

export interface ProviderHealth {
  name: LlmProviderName;
  status: "ok" | "error" | "unconfigured";
  latency_ms?: number;
  error?: string;
}

export interface HealthReport {
  providers: ProviderHealth[];
  checked_at: string;
}

async function check(llm: LlmConfig, name: LlmProviderName): Promise<ProviderHealth> {
  const settings = settingsOf(llm, name);
  if (!settings) return { name, status: "unconfigured" };
  const started = performance.now();
  try {
    const signal = AbortSignal.timeout(CHECK_TIMEOUT_MS);
    if (name === "voyage") await embedTexts(llm, { provider: name, model: defaultModel(llm, name, "embed")!, settings }, ["health"], undefined, signal);
    else await listModels(llm, name, settings, signal);
    return { name, status: "ok", latency_ms: Math.round(performance.now() - started) };
  } catch (err) {
    return { name, status: "error", latency_ms: Math.round(performance.now() - started), error: (err as Error).message };
  }
}

/** Every provider's health, configured or not. */
export async function providerHealth(llm: LlmConfig): Promise<HealthReport> {
  const checkedAt = new Date().toISOString();
  return { providers: await Promise.all(LLM_PROVIDERS.map((p) => check(llm, p))), checked_at: checkedAt };
}
