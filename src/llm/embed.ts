/** Embeddings of text, and of text and images through a provider that embeds images (Voyage). */
import { embedMany } from "ai";
import type { LlmConfig, LlmProviderName } from "../llm-config.ts";
import { providerFailure } from "./provider-error.ts";
import { type Choice, embeddingModel } from "./providers.ts";
import { deadline } from "./chat.ts";

export const MAX_EMBED_INPUTS = 256;

export interface Embeddings {
  model: string;
  dimensions: number;
  embeddings: number[][];
  /** Tokens the provider counted (0 when it does not say). */
  tokens: number;
}

/** Each provider's option for a shorter vector. */
function dimensionOptions(provider: LlmProviderName, dimensions: number | undefined): Record<string, Record<string, number>> | undefined {
  if (dimensions === undefined) return undefined;
  switch (provider) {
    case "openai":
      return { openai: { dimensions } };
    case "gemini":
      return { google: { outputDimensionality: dimensions } };
    case "ollama":
      return { ollama: { dimensions } };
    case "voyage":
      return { voyage: { outputDimension: dimensions } };
    default:
      return undefined;
  }
}

export async function embedTexts(llm: LlmConfig, choice: Choice, values: string[], dimensions?: number, signal?: AbortSignal): Promise<Embeddings> {
  return run(llm, choice, () =>
    embedMany({
      model: embeddingModel(llm, choice),
      values,
      maxRetries: 0,
      abortSignal: deadline(llm, signal),
      providerOptions: dimensionOptions(choice.provider, dimensions),
    }),
  );
}

export type MultimodalInput = { type: "text"; text: string } | { type: "image"; data?: string; url?: string; mime_type?: string };

/** One embedding per input; images go as base64 data URLs or as URLs the provider fetches itself. */
export async function embedMultimodal(llm: LlmConfig, choice: Choice, inputs: MultimodalInput[], signal?: AbortSignal): Promise<Embeddings> {
  const values = inputs.map((i) => (i.type === "text" ? i.text : ""));
  const content = inputs.map((i) => {
    if (i.type === "text") return null;
    return i.data
      ? [{ type: "image_base64" as const, image_base64: `data:${i.mime_type};base64,${i.data}` }]
      : [{ type: "image_url" as const, image_url: i.url! }];
  });
  return run(llm, choice, () =>
    embedMany({
      model: embeddingModel(llm, choice, true),
      values,
      maxRetries: 0,
      abortSignal: deadline(llm, signal),
      providerOptions: { voyage: { content } },
    }),
  );
}

async function run(llm: LlmConfig, choice: Choice, call: () => Promise<{ embeddings: number[][]; usage: { tokens: number } }>): Promise<Embeddings> {
  try {
    const { embeddings, usage } = await call();
    return { model: choice.model, dimensions: embeddings[0]?.length ?? 0, embeddings, tokens: usage?.tokens ?? 0 };
  } catch (err) {
    throw providerFailure(llm, choice.provider, err, llm.timeout_seconds);
  }
}
