/**
 * Okapi BM25 scores of documents against a query: the reranker of last resort, so /llm/rerank answers
 * even with no rerank provider configured. Pure; terms are lower-cased runs of letters and digits.
 */

const K1 = 1.2;
const B = 0.75;

export const terms = (text: string): string[] => text.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? [];

export function bm25Scores(query: string, documents: string[]): number[] {
  const docs = documents.map(terms);
  const avgLength = docs.reduce((n, d) => n + d.length, 0) / Math.max(docs.length, 1) || 1;
  const queryTerms = [...new Set(terms(query))];
  const docFrequency = new Map(queryTerms.map((t) => [t, docs.filter((d) => d.includes(t)).length]));
  return docs.map((d) => {
    const counts = new Map<string, number>();
    for (const t of d) counts.set(t, (counts.get(t) ?? 0) + 1);
    return queryTerms.reduce((score, t) => {
      const tf = counts.get(t) ?? 0;
      if (tf === 0) return score;
      const df = docFrequency.get(t)!;
      const idf = Math.log(1 + (docs.length - df + 0.5) / (df + 0.5));
      return score + (idf * tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * d.length) / avgLength));
    }, 0);
  });
}
