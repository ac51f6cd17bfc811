/** The `llm` section of the configuration: providers with their secrets, defaults, limits. */
import { z } from "zod";

/** Every provider pglens can speak to. Environment names are PGLENS_LLM_<NAME>_API_KEY and _BASE_URL. */
export const LLM_PROVIDERS = ["anthropic", "openai", "gemini", "ollama", "voyage"] as const;
export type LlmProviderName = (typeof LLM_PROVIDERS)[number];

const headerMap = z.record(z.string().regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, "must be an HTTP header name"), z.string());

const providerSettings = z.strictObject({
  api_key: z.string().min(1).optional(),
  base_url: z.url({ protocol: /^https?$/, error: "must be an http(s) URL" }).optional(),
  headers: headerMap.default({}),
});
export type LlmProviderSettings = z.infer<typeof providerSettings>;

const choice = z.strictObject({ provider: z.enum(LLM_PROVIDERS).optional(), model: z.string().min(1).optional() });

const LLM_DEFAULTS = {
  providers: {},
  embedding: {},
  rerank: {},
  timeout_seconds: 120,
  max_tokens: 4096,
  temperature: 0.7,
  overview_summary: true,
  server_analysis: true,
  anomaly_review: true,
};

export const llmConfigSchema = z
  .strictObject({
    /** Default chat provider; absent: the first configured one. */
    provider: z.enum(LLM_PROVIDERS).optional(),
    /** Default chat model; absent: the provider's own default. */
    model: z.string().min(1).optional(),
    providers: z
      .strictObject(
        Object.fromEntries(LLM_PROVIDERS.map((p) => [p, providerSettings.optional()])) as Record<LlmProviderName, z.ZodOptional<typeof providerSettings>>,
      )
      .default({}),
    embedding: choice.default({}),
    rerank: choice.default({}),
    timeout_seconds: z.coerce.number().min(1).max(600).default(120),
    max_tokens: z.coerce.number().int().min(1).max(200_000).default(4096),
    temperature: z.coerce.number().min(0).max(2).default(0.7),
    /** Tokens each user may spend per UTC day across chat and embeddings; absent: no limit. */
    daily_token_limit: z.coerce.number().int().min(1).optional(),
    /** false: the overview comes without an LLM summary, and its snapshot is never sent to an LLM. */
    overview_summary: z.stringbool().or(z.boolean()).default(true),
    /** false: no server analysis is written, and no server's facts are sent to an LLM. */
    server_analysis: z.stringbool().or(z.boolean()).default(true),
    /** false: anomaly candidates are alerted without review, and none is sent to an LLM or embedded. */
    anomaly_review: z.stringbool().or(z.boolean()).default(true),
  })
  .default(LLM_DEFAULTS);
export type LlmConfig = z.infer<typeof llmConfigSchema>;

/** Environment variables (or Workers bindings) of the llm section and the key each one sets. */
export const LLM_ENV_KEYS: Record<string, string[]> = {
  PGLENS_LLM_PROVIDER: ["llm", "provider"],
  PGLENS_LLM_MODEL: ["llm", "model"],
  PGLENS_LLM_EMBEDDING_PROVIDER: ["llm", "embedding", "provider"],
  PGLENS_LLM_EMBEDDING_MODEL: ["llm", "embedding", "model"],
  PGLENS_LLM_RERANK_PROVIDER: ["llm", "rerank", "provider"],
  PGLENS_LLM_RERANK_MODEL: ["llm", "rerank", "model"],
  PGLENS_LLM_TIMEOUT_SECONDS: ["llm", "timeout_seconds"],
  PGLENS_LLM_DAILY_TOKEN_LIMIT: ["llm", "daily_token_limit"],
  PGLENS_LLM_OVERVIEW_SUMMARY: ["llm", "overview_summary"],
  PGLENS_LLM_SERVER_ANALYSIS: ["llm", "server_analysis"],
  PGLENS_LLM_ANOMALY_REVIEW: ["llm", "anomaly_review"],
  ...Object.fromEntries(
    LLM_PROVIDERS.flatMap((p) => [
      [`PGLENS_LLM_${p.toUpperCase()}_API_KEY`, ["llm", "providers", p, "api_key"]],
      [`PGLENS_LLM_${p.toUpperCase()}_BASE_URL`, ["llm", "providers", p, "base_url"]],
    ]),
  ),
};
