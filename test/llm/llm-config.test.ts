/** The llm configuration section: YAML keys, PGLENS_LLM_* variables (and Workers bindings), defaults, errors that never quote a secret. */
import { describe, expect, it } from "vitest";
import { ConfigError, configFromBindings, resolveConfig } from "../../src/config.ts";
import { redact } from "../../src/llm/provider-error.ts";

describe("llm configuration", () => {
  it("has the documented defaults", () => {
    const { llm } = resolveConfig({}, {});
    expect(llm).toEqual({
      providers: {},
      embedding: {},
      rerank: {},
      timeout_seconds: 120,
      max_tokens: 4096,
      temperature: 0.7,
      overview_summary: true,
      server_analysis: true,
      anomaly_review: true,
    });
  });

  it("takes every provider's key and base URL, the defaults and the limits from environment variables", () => {
    const env = {
      PGLENS_LLM_PROVIDER: "gemini",
      PGLENS_LLM_MODEL: "gemini-2.5-pro",
      PGLENS_LLM_ANTHROPIC_API_KEY: "a-key",
      PGLENS_LLM_OPENAI_BASE_URL: "http://localhost:8000/v1",
      PGLENS_LLM_GEMINI_API_KEY: "g-key",
      PGLENS_LLM_OLLAMA_BASE_URL: "http://gpu-box:11434",
      PGLENS_LLM_VOYAGE_API_KEY: "v-key",
      PGLENS_LLM_EMBEDDING_PROVIDER: "voyage",
      PGLENS_LLM_EMBEDDING_MODEL: "voyage-3.5-lite",
      PGLENS_LLM_RERANK_PROVIDER: "voyage",
      PGLENS_LLM_RERANK_MODEL: "rerank-2.5-lite",
      PGLENS_LLM_TIMEOUT_SECONDS: "30",
      PGLENS_LLM_DAILY_TOKEN_LIMIT: "100000",
      PGLENS_LLM_OVERVIEW_SUMMARY: "false",
      PGLENS_LLM_SERVER_ANALYSIS: "false",
      PGLENS_LLM_ANOMALY_REVIEW: "false",
    };
    const fromEnv = resolveConfig({}, env).llm;
    expect(fromEnv).toEqual({
      provider: "gemini",
      model: "gemini-2.5-pro",
      providers: {
        anthropic: { api_key: "a-key", headers: {} },
        openai: { base_url: "http://localhost:8000/v1", headers: {} },
        gemini: { api_key: "g-key", headers: {} },
        ollama: { base_url: "http://gpu-box:11434", headers: {} },
        voyage: { api_key: "v-key", headers: {} },
      },
      embedding: { provider: "voyage", model: "voyage-3.5-lite" },
      rerank: { provider: "voyage", model: "rerank-2.5-lite" },
      timeout_seconds: 30,
      max_tokens: 4096,
      temperature: 0.7,
      daily_token_limit: 100000,
      overview_summary: false,
      server_analysis: false,
      anomaly_review: false,
    });
    // Workers: the same names as bindings.
    expect(configFromBindings(env).llm).toEqual(fromEnv);
  });

  it("overlays variables on the file's per-provider headers", () => {
    const { llm } = resolveConfig(
      { llm: { providers: { openai: { base_url: "http://a/v1", headers: { "X-Team": "dba" } } } } },
      { PGLENS_LLM_OPENAI_API_KEY: "k" },
    );
    expect(llm.providers.openai).toEqual({ base_url: "http://a/v1", api_key: "k", headers: { "X-Team": "dba" } });
  });

  it("names the offending key and variable without quoting the value", () => {
    const secret = "sk-not-a-url-but-a-secret-0123";
    try {
      resolveConfig({}, { PGLENS_LLM_OPENAI_BASE_URL: secret, PGLENS_LLM_PROVIDER: "cohere" });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      const message = (err as Error).message;
      expect(message).toContain("`llm.providers.openai.base_url` (from PGLENS_LLM_OPENAI_BASE_URL): must be an http(s) URL");
      expect(message).toContain("`llm.provider` (from PGLENS_LLM_PROVIDER)");
      expect(message).not.toContain(secret);
    }
    expect(() => resolveConfig({ llm: { providers: { mistral: { api_key: "x" } } } }, {})).toThrow("`llm.providers.mistral`: unknown key");
  });
});

describe("redacting secrets from provider messages", () => {
  const { llm } = resolveConfig({ llm: { providers: { openai: { api_key: "sk-proj-abcdef0123456789", headers: { "X-Token": "header-secret-value" } } } } }, {});

  it("cuts out keys, masked quotes of them and custom header values", () => {
    expect(redact(llm, "Incorrect API key provided: sk-proj-abcdef0123456789.")).toBe("Incorrect API key provided: [redacted].");
    expect(redact(llm, "Incorrect API key provided: sk-pro**********6789. See docs")).toBe("Incorrect API key provided: [redacted] See docs");
    expect(redact(llm, "bad header header-secret-value")).toBe("bad header [redacted]");
    expect(redact(llm, "model not found")).toBe("model not found");
  });
});
