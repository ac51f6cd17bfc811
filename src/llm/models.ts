/**
 * Live model lists. The AI SDK does not list models, so these few GETs are written here, one per provider's
 * API; a failure says which provider answered what, with secrets cut out.
 */
import { InputError } from "../errors.ts";
import type { LlmConfig, LlmProviderName, LlmProviderSettings } from "../llm-config.ts";
import { LlmProviderError, providerFailure, redact } from "./provider-error.ts";
import { baseUrlOf } from "./providers.ts";

export interface ModelInfo {
  name: string;
  description?: string;
}

/** Models that cannot chat (embedding, speech, image, moderation) are left out of OpenAI's list. */
const NOT_CHAT = /(embed|whisper|tts|dall-e|audio|image|moderation|transcribe)/i;

export async function listModels(llm: LlmConfig, provider: LlmProviderName, settings: LlmProviderSettings, signal: AbortSignal): Promise<ModelInfo[]> {
  const base = baseUrlOf(llm, provider);
  const key = settings.api_key;
  const bearer: Record<string, string> = key ? { authorization: `Bearer ${key}` } : {};
  switch (provider) {
    case "anthropic": {
      const body = await getJson(
        llm,
        provider,
        `${base}/models?limit=1000`,
        { "x-api-key": key ?? "", "anthropic-version": "2023-06-01", ...settings.headers },
        signal,
      );
      return (body.data ?? []).map((m: { id: string; display_name?: string }) => ({ name: m.id, description: m.display_name }));
    }
    case "openai": {
      const body = await getJson(llm, provider, `${base}/models`, { ...bearer, ...settings.headers }, signal);
      return (body.data ?? []).filter((m: { id: string }) => !NOT_CHAT.test(m.id)).map((m: { id: string }) => ({ name: m.id }));
    }
    case "gemini": {
      const body = await getJson(llm, provider, `${base}/models?pageSize=1000`, { "x-goog-api-key": key ?? "", ...settings.headers }, signal);
      return (body.models ?? [])
        .filter((m: { supportedGenerationMethods?: string[] }) => m.supportedGenerationMethods?.includes("generateContent"))
        .map((m: { name: string; displayName?: string }) => ({ name: m.name.replace(/^models\//, ""), description: m.displayName }));
    }
    case "ollama": {
      const body = await getJson(llm, provider, `${base}/api/tags`, { ...bearer, ...settings.headers }, signal);
      return (body.models ?? []).map((m: { name: string }) => ({ name: m.name }));
    }
    case "voyage":
      throw new InputError("voyage publishes no model list; name a model from its documentation (defaults: voyage-3.5, voyage-multimodal-3, rerank-2.5)");
  }
}

/** GET a provider endpoint as JSON (loosely typed: each caller reads the few fields it needs). */
// biome-ignore lint/suspicious/noExplicitAny: each caller reads the few fields it needs from a provider's own shape
async function getJson(llm: LlmConfig, provider: LlmProviderName, url: string, headers: Record<string, string>, signal: AbortSignal): Promise<any> {
  let res: Response;
  try {
    res = await fetch(url, { headers, signal });
  } catch (err) {
    throw providerFailure(
      llm,
      provider,
      Object.assign(new Error(`${provider} could not be reached`), { cause: err, name: (err as Error).name === "TimeoutError" ? "TimeoutError" : "Error" }),
      llm.timeout_seconds,
    );
  }
  const text = await res.text();
  if (!res.ok) throw new LlmProviderError(provider, 502, redact(llm, `${provider} answered HTTP ${res.status}: ${errorMessage(text)}`));
  try {
    return JSON.parse(text);
  } catch {
    throw new LlmProviderError(provider, 502, `${provider} answered with something that is not JSON`);
  }
}

function errorMessage(body: string): string {
  try {
    const parsed = JSON.parse(body);
    const e = parsed.error ?? parsed.message ?? parsed;
    const message = typeof e === "string" ? e : (e.message ?? JSON.stringify(e));
    return String(message).slice(0, 300);
  } catch {
    return body.slice(0, 300) || "(empty body)";
  }
}
