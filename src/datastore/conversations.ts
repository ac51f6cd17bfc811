/**
 * Conversations, always read and written through their owner: every statement names the user, so another
 * user's conversation is simply not found.
 */
import type { Queryable } from "../../drivers/types.ts";
import { type StoredMessage, conversationPreview, conversationTitle, newConversationId } from "../vocabulary/conversation-text.ts";

export interface ConversationRow {
  id: string;
  user_id: number;
  title: string;
  provider: string | null;
  model: string | null;
  connection: string | null;
  messages: StoredMessage[];
  created_at: Date;
  updated_at: Date;
}

export interface ConversationFields {
  provider?: string;
  model?: string;
  connection?: string;
  messages: StoredMessage[];
}

export async function listConversations(db: Queryable, userId: number, limit: number, offset: number) {
  const rows = await db.query<ConversationRow>("SELECT * FROM conversations WHERE user_id = $1 ORDER BY updated_at DESC, id DESC LIMIT $2 OFFSET $3", [
    userId,
    limit,
    offset,
  ]);
  return rows.map((r) => ({
    id: r.id,
    title: r.title,
    connection: r.connection,
    created_at: r.created_at,
    updated_at: r.updated_at,
    preview: conversationPreview(r.messages),
  }));
}

export async function createConversation(db: Queryable, userId: number, f: ConversationFields): Promise<ConversationRow> {
  const [row] = await db.query<ConversationRow>(
    "INSERT INTO conversations (id, user_id, title, provider, model, connection, messages) VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb) RETURNING *",
    [newConversationId(), userId, conversationTitle(f.messages), f.provider ?? null, f.model ?? null, f.connection ?? null, JSON.stringify(f.messages)],
  );
  return row;
}

export async function getConversation(db: Queryable, userId: number, id: string): Promise<ConversationRow | undefined> {
  const [row] = await db.query<ConversationRow>("SELECT * FROM conversations WHERE id = $1 AND user_id = $2", [id, userId]);
  return row;
}

/** Full replace of the content; the title stays as the owner left it. */
export async function replaceConversation(db: Queryable, userId: number, id: string, f: ConversationFields): Promise<ConversationRow | undefined> {
  const [row] = await db.query<ConversationRow>(
    "UPDATE conversations SET provider = $3, model = $4, connection = $5, messages = $6::jsonb, updated_at = now() WHERE id = $1 AND user_id = $2 RETURNING *",
    [id, userId, f.provider ?? null, f.model ?? null, f.connection ?? null, JSON.stringify(f.messages)],
  );
  return row;
}

export async function renameConversation(db: Queryable, userId: number, id: string, title: string): Promise<boolean> {
  const rows = await db.query("UPDATE conversations SET title = $3, updated_at = now() WHERE id = $1 AND user_id = $2 RETURNING id", [id, userId, title]);
  return rows.length > 0;
}

export async function deleteConversation(db: Queryable, userId: number, id: string): Promise<boolean> {
  return (await db.query("DELETE FROM conversations WHERE id = $1 AND user_id = $2 RETURNING id", [id, userId])).length > 0;
}

export async function deleteAllConversations(db: Queryable, userId: number): Promise<number> {
  return (await db.query("DELETE FROM conversations WHERE user_id = $1 RETURNING id", [userId])).length;
}
