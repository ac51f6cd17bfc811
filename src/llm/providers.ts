/**
 * The provider catalogue: what each provider can do, its defaults, and how to build its AI SDK models from
 * the configuration. Keys go only into the request headers the provider packages build.
 */
import { createAnthropic } from "@ai-sdk/anthropic";
import { createGoogleGenerativeAI } from "@ai-sdk/google";
import { createOpenAI } from "@ai-sdk/openai";
import type { EmbeddingModel, LanguageModel, RerankingModel } from "ai";
import { createOllama } from "ollama-ai-provider-v2";
import { createVoyage } from "voyage-ai-provider";
import { InputError } from "../errors.ts";
import { LLM_PROVIDERS, type LlmConfig, type LlmProviderName, type LlmProviderSettings } from "../llm-config.ts";

export type Capability = "chat" | "embed" | "embed_images" | "rerank";

interface ProviderInfo {
  display: string;
  defaultBaseUrl: string;
  capabilities: Capability[];
  /** Usable with a base URL alone (a local or self-hosted server); otherwise a key is needed. */
  keyOptional: boolean;
  defaults: Partial<Record<"chat" | "embed" | "embed_images" | "rerank", string>>;
}

export const PROVIDER_INFO: Record<LlmProviderName, ProviderInfo> = {
  anthropic: {
    display: "Anthropic Claude",
    defaultBaseUrl: "https://api.anthropic.com/v1",
    capabilities: ["chat"],
    keyOptional: false,
    defaults: { chat: "claude-sonnet-4-5" },
  },
  openai: {
    display: "OpenAI",
    defaultBaseUrl: "https://api.openai.com/v1",
    capabilities: ["chat", "embed"],
    keyOptional: true,
    defaults: { chat: "gpt-4.1-mini", embed: "text-embedding-3-small" },
  },
  gemini: {
    display: "Google Gemini",
    defaultBaseUrl: "https://generativelanguage.googleapis.com/v1beta",
    capabilities: ["chat", "embed"],
    keyOptional: false,
    defaults: { chat: "gemini-2.5-flash", embed: "gemini-embedding-001" },
  },
  ollama: {
    display: "Ollama",
    defaultBaseUrl: "http://127.0.0.1:11434",
    capabilities: ["chat", "embed"],
    keyOptional: true,
    defaults: { chat: "llama3.2", embed: "nomic-embed-text" },
  },
  voyage: {
    display: "Voyage AI",
    defaultBaseUrl: "https://api.voyageai.com/v1",
    capabilities: ["embed", "embed_images", "rerank"],
    keyOptional: false,
    defaults: { embed: "voyage-3.5", embed_images: "voyage-multimodal-3", rerank: "rerank-2.5" },
  },
};

/**
 * A model name as providers spell them; anything else never reaches a provider. Some providers put the name
 * in the URL path, so "." and ".." segments (which would lead our key to another endpoint) are refused too.
 */
export const MODEL_NAME = /^(?!.*(?:^|\/)\.{1,2}(?:\/|$))[A-Za-z0-9._:/-]{1,256}$/;

export function settingsOf(llm: LlmConfig, name: LlmProviderName): LlmProviderSettings | undefined {
  const s = llm.providers[name];
  if (!s) return undefined;
  return s.api_key || (PROVIDER_INFO[name].keyOptional && s.base_url) ? s : undefined;
}

export const configuredProviders = (llm: LlmConfig): LlmProviderName[] => LLM_PROVIDERS.filter((p) => settingsOf(llm, p));

export const baseUrlOf = (llm: LlmConfig, name: LlmProviderName) => (llm.providers[name]?.base_url ?? PROVIDER_INFO[name].defaultBaseUrl).replace(/\/+$/, "");

/** The provider a request for `capability` uses when it names none. */
export function defaultProvider(llm: LlmConfig, capability: Capability): LlmProviderName | undefined {
  const chosen = capability === "chat" ? llm.provider : capability === "rerank" ? llm.rerank.provider : llm.embedding.provider;
  if (chosen) return chosen;
  return configuredProviders(llm).find((p) => PROVIDER_INFO[p].capabilities.includes(capability));
}

export function defaultModel(llm: LlmConfig, name: LlmProviderName, capability: Capability): string | undefined {
  const configured = capability === "chat" ? llm.model : capability === "rerank" ? llm.rerank.model : llm.embedding.model;
  if (configured && defaultProvider(llm, capability) === name) return configured;
  return PROVIDER_INFO[name].defaults[capability];
}

export interface Choice {
  provider: LlmProviderName;
  model: string;
  settings: LlmProviderSettings;
}

/** Validates a request's provider and model for one capability, filling in the defaults; 400s say what to set. */
export function choose(llm: LlmConfig, capability: Capability, provider?: string, model?: string): Choice {
  if (provider !== undefined && !(LLM_PROVIDERS as readonly string[]).includes(provider))
    throw new InputError(`unsupported provider "${provider}"; supported: ${LLM_PROVIDERS.join(", ")}`);
  const name = (provider as LlmProviderName | undefined) ?? defaultProvider(llm, capability);
  if (!name)
    throw new InputError(`no LLM provider that can ${describe(capability)} is configured: set llm.providers.<name>.api_key (or PGLENS_LLM_<NAME>_API_KEY)`);
  if (!PROVIDER_INFO[name].capabilities.includes(capability))
    throw new InputError(
      `provider ${name} cannot ${describe(capability)}; providers that can: ${LLM_PROVIDERS.filter((p) => PROVIDER_INFO[p].capabilities.includes(capability)).join(", ")}`,
    );
  const settings = settingsOf(llm, name);
  if (!settings)
    throw new InputError(
      `provider ${name} is not configured: set PGLENS_LLM_${name.toUpperCase()}_${PROVIDER_INFO[name].keyOptional ? "BASE_URL" : "API_KEY"}`,
    );
  const chosenModel = model ?? defaultModel(llm, name, capability);
  if (!chosenModel) throw new InputError(`no default model for ${name}: name one in the request`);
  if (!MODEL_NAME.test(chosenModel)) throw new InputError("model must be 1-256 characters of letters, digits and - . _ : / (no . or .. path segments)");
  return { provider: name, model: chosenModel, settings };
}

function describe(capability: Capability): string {
  return { chat: "chat", embed: "embed text", embed_images: "embed images", rerank: "rerank documents" }[capability];
}

/**
 * Servers without authentication (a local OpenAI-compatible server) get no Authorization header at all,
 * rather than an empty bearer token.
 */
const fetchWithoutEmptyBearer: typeof fetch = (input, init) => {
  const headers = new Headers(init?.headers);
  if (headers.get("authorization")?.trim() === "Bearer") headers.delete("authorization");
  return fetch(input, { ...init, headers });
};

function common(llm: LlmConfig, name: LlmProviderName, settings: LlmProviderSettings) {
  return { baseURL: baseUrlOf(llm, name), headers: settings.headers, fetch: fetchWithoutEmptyBearer };
}

/** The AI SDK chat model for a choice. */
export function chatModel(llm: LlmConfig, c: Choice): LanguageModel {
  const base = common(llm, c.provider, c.settings);
  // An explicit key (possibly empty) everywhere: the packages would otherwise read their own environment variables.
  const apiKey = c.settings.api_key ?? "";
  switch (c.provider) {
    case "anthropic":
      return createAnthropic({ ...base, apiKey })(c.model);
    case "openai":
      return createOpenAI({ ...base, apiKey }).chat(c.model);
    case "gemini":
      return createGoogleGenerativeAI({ ...base, apiKey })(c.model);
    case "ollama":
      return createOllama({ ...ollamaSettings(base, c.settings) }).chat(c.model);
    case "voyage":
      throw new InputError("provider voyage cannot chat");
  }
}

export function embeddingModel(llm: LlmConfig, c: Choice, images = false): EmbeddingModel {
  const base = common(llm, c.provider, c.settings);
  const apiKey = c.settings.api_key ?? "";
  switch (c.provider) {
    case "openai":
      return createOpenAI({ ...base, apiKey }).embedding(c.model);
    case "gemini":
      return createGoogleGenerativeAI({ ...base, apiKey }).embedding(c.model);
    case "ollama":
      return createOllama(ollamaSettings(base, c.settings)).embedding(c.model);
    case "voyage": {
      const voyage = createVoyage({ ...base, apiKey });
      return images ? voyage.multimodalEmbeddingModel(c.model) : voyage.embeddingModel(c.model);
    }
    case "anthropic":
      throw new InputError("provider anthropic cannot embed text");
  }
}

export function rerankingModel(llm: LlmConfig, c: Choice): RerankingModel {
  if (c.provider !== "voyage") throw new InputError(`provider ${c.provider} cannot rerank documents`);
  return createVoyage({ ...common(llm, c.provider, c.settings), apiKey: c.settings.api_key ?? "" }).rerankingModel(c.model);
}

/** Ollama's native API lives under /api; a key (for an Ollama behind an authenticating proxy) goes as a bearer token. */
function ollamaSettings(base: ReturnType<typeof common>, settings: LlmProviderSettings) {
  const headers = settings.api_key ? { authorization: `Bearer ${settings.api_key}`, ...base.headers } : base.headers;
  return { ...base, baseURL: `${base.baseURL}/api`, headers };
}
