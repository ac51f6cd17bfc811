/** Documents ordered by relevance to a query: a provider's reranker when one is configured, else BM25. */
import { rerank } from "ai";
import { bm25Scores } from "./bm25.ts";
import { deadline } from "./chat.ts";
import type { LlmConfig } from "../llm-config.ts";
import { providerFailure } from "./provider-error.ts";
import { type Choice, rerankingModel } from "./providers.ts";

export const MAX_RERANK_DOCUMENTS = 1000;

export interface Ranked {
  index: number;
  score: number;
  document: string;
}

export interface Reranking {
  /** `<provider>/<model>`, or `bm25` for the local fallback. */
  method: string;
  results: Ranked[];
}

export function rerankLocally(query: string, documents: string[], topN = documents.length): Reranking {
  const scores = bm25Scores(query, documents);
  const results = documents.map((document, index) => ({ index, score: scores[index], document }));
  // Stable: equal scores keep the documents' order.
  results.sort((a, b) => b.score - a.score || a.index - b.index);
  return { method: "bm25", results: results.slice(0, topN) };
}

export async function rerankWithProvider(
  llm: LlmConfig,
  choice: Choice,
  query: string,
  documents: string[],
  topN?: number,
  signal?: AbortSignal,
): Promise<Reranking> {
  try {
    const { ranking } = await rerank({ model: rerankingModel(llm, choice), query, documents, topN, maxRetries: 0, abortSignal: deadline(llm, signal) });
    return { method: `${choice.provider}/${choice.model}`, results: ranking.map((r) => ({ index: r.originalIndex, score: r.score, document: r.document })) };
  } catch (err) {
    throw providerFailure(llm, choice.provider, err, llm.timeout_seconds);
  }
}
