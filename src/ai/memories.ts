/**
 * Storing and recalling memories, with vectors when both an embedding provider and pgvector are there, and
 * words otherwise. Embedding is best effort: a provider failure stores the memory without a vector.
 */
import type { Queryable } from "../../drivers/types.ts";
import { type MemoryRow, type NewMemory, type RecallQuery, hasEmbeddings, recallMemories, storeMemory } from "../datastore/memories.ts";
import { embedTexts } from "../llm/embed.ts";
import type { LlmConfig } from "../llm-config.ts";
import { defaultProvider, choose } from "../llm/providers.ts";

export const MAX_MEMORY_LENGTH = 4000;

/** Embeds one text with the default embedding provider; undefined when there is none or it fails. */
async function embedding(llm: LlmConfig, text: string): Promise<{ vector?: number[]; note: string }> {
  if (!defaultProvider(llm, "embed")) return { note: "no embedding provider is configured: found by words" };
  try {
    const choice = choose(llm, "embed");
    const { embeddings } = await embedTexts(llm, choice, [text]);
    return { vector: embeddings[0], note: `embedded with ${choice.provider}/${choice.model}` };
  } catch (err) {
    return { note: `not embedded (${(err as Error).message}): found by words` };
  }
}

export async function rememberMemory(db: Queryable, llm: LlmConfig, m: Omit<NewMemory, "embedding">): Promise<{ memory: MemoryRow; note: string }> {
  const vectors = await hasEmbeddings(db);
  const { vector, note } = vectors ? await embedding(llm, m.content) : { vector: undefined, note: "the datastore has no pgvector: found by words" };
  return { memory: await storeMemory(db, { ...m, embedding: vector }, vectors), note };
}

export async function recall(db: Queryable, llm: LlmConfig, userId: number, q: Omit<RecallQuery, "embedding">) {
  const vector = (await hasEmbeddings(db)) ? (await embedding(llm, q.text)).vector : undefined;
  return { method: vector ? "meaning" : "words", memories: await recallMemories(db, userId, { ...q, embedding: vector }) };
}
