/**
 * Memories. A caller sees its own user memories and every system memory; it changes its own, and system
 * ones only with store_system_memory (checked by the caller of these functions).
 */
import type { Queryable } from "../../drivers/types.ts";
import { hasVectorColumn, vectorLiteral } from "./vectors.ts";

export const MEMORY_SCOPES = ["user", "system"] as const;
export type MemoryScope = (typeof MEMORY_SCOPES)[number];

export interface MemoryRow {
  id: number;
  scope: MemoryScope;
  user_id: number | null;
  created_by: string;
  category: string;
  content: string;
  pinned: boolean;
  model_name: string | null;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = "id, scope, user_id, created_by, category, content, pinned, model_name, created_at, updated_at";
/** Rows the caller ($1) may see. */
const VISIBLE = "(scope = 'system' OR user_id = $1)";

export interface NewMemory {
  scope: MemoryScope;
  userId: number;
  username: string;
  category: string;
  content: string;
  pinned: boolean;
  modelName?: string;
  embedding?: number[];
}

/** Whether this datastore stores vectors (pgvector was available when memories were created). */
export const hasEmbeddings = (db: Queryable) => hasVectorColumn(db, "memories");

export async function storeMemory(db: Queryable, m: NewMemory, withEmbedding: boolean): Promise<MemoryRow> {
  const params = [m.scope, m.scope === "user" ? m.userId : null, m.username, m.category, m.content, m.pinned, m.modelName ?? null];
  const embedding = withEmbedding && m.embedding ? vectorLiteral(m.embedding) : undefined;
  const [row] = await db.query<MemoryRow>(
    embedding === undefined
      ? `INSERT INTO memories (scope, user_id, created_by, category, content, pinned, model_name) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${COLUMNS}`
      : `INSERT INTO memories (scope, user_id, created_by, category, content, pinned, model_name, embedding) VALUES ($1, $2, $3, $4, $5, $6, $7, $8::vector) RETURNING ${COLUMNS}`,
    embedding === undefined ? params : [...params, embedding],
  );
  return row;
}

export async function listMemories(db: Queryable, userId: number, o: { category?: string; limit: number }): Promise<MemoryRow[]> {
  return db.query<MemoryRow>(
    `SELECT ${COLUMNS} FROM memories WHERE ${VISIBLE} AND ($2::text IS NULL OR category = $2) ORDER BY updated_at DESC, id DESC LIMIT $3`,
    [userId, o.category ?? null, o.limit],
  );
}

export async function getVisibleMemory(db: Queryable, userId: number, id: number): Promise<MemoryRow | undefined> {
  const [row] = await db.query<MemoryRow>(`SELECT ${COLUMNS} FROM memories WHERE id = $2 AND ${VISIBLE}`, [userId, id]);
  return row;
}

export async function setPinned(db: Queryable, id: number, pinned: boolean): Promise<void> {
  await db.query("UPDATE memories SET pinned = $2, updated_at = now() WHERE id = $1", [id, pinned]);
}

export async function deleteMemory(db: Queryable, id: number): Promise<void> {
  await db.query("DELETE FROM memories WHERE id = $1", [id]);
}

/** The pinned memories a chat's system prompt carries: the caller's and the system's, newest first. */
export async function pinnedMemories(db: Queryable, userId: number, limit: number): Promise<MemoryRow[]> {
  return db.query<MemoryRow>(`SELECT ${COLUMNS} FROM memories WHERE ${VISIBLE} AND pinned ORDER BY updated_at DESC, id DESC LIMIT $2`, [userId, limit]);
}

export interface RecallQuery {
  text: string;
  category?: string;
  scope?: MemoryScope;
  limit: number;
  /** The query's embedding: search by meaning among memories with a vector of the same length. */
  embedding?: number[];
}

/**
 * Memories that match a query, best first: by cosine distance when the query has an embedding, else by
 * text rank (any of its words, 'simple' dictionary). Pinned memories come along whether or not they match.
 */
export async function recallMemories(
  db: Queryable,
  userId: number,
  q: RecallQuery,
): Promise<Array<MemoryRow & { score: number | null; pinned_only: boolean }>> {
  const filters = "AND ($2::text IS NULL OR category = $2) AND ($3::text IS NULL OR scope = $3)";
  const matches = q.embedding
    ? await db.query<MemoryRow & { score: number }>(
        `SELECT ${COLUMNS}, 1 - (embedding <=> $4::vector) AS score FROM memories
          WHERE ${VISIBLE} ${filters} AND embedding IS NOT NULL AND vector_dims(embedding) = $5
          ORDER BY embedding <=> $4::vector LIMIT $6`,
        [userId, q.category ?? null, q.scope ?? null, vectorLiteral(q.embedding), q.embedding.length, q.limit],
      )
    : await db.query<MemoryRow & { score: number }>(
        `SELECT ${COLUMNS}, ts_rank(to_tsvector('simple', content), query) AS score
           FROM memories, to_tsquery('simple', $4) AS query
          WHERE ${VISIBLE} ${filters} AND to_tsvector('simple', content) @@ query
          ORDER BY score DESC, updated_at DESC LIMIT $5`,
        [userId, q.category ?? null, q.scope ?? null, anyWord(q.text), q.limit],
      );
  const seen = new Set(matches.map((m) => m.id));
  const pinned = (await pinnedMemories(db, userId, 20)).filter((m) => !seen.has(m.id));
  return [...matches.map((m) => ({ ...m, score: Number(m.score), pinned_only: false })), ...pinned.map((m) => ({ ...m, score: null, pinned_only: true }))];
}

/** A tsquery matching any word of the text; words are letters and digits only, so nothing else reaches the parser. */
function anyWord(text: string): string {
  const words = (text.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? []).slice(0, 32);
  return words.length ? words.join(" | ") : "''";
}
