/** What a conversation's list entry shows: a title and a preview, both from its first plain user message. */

export interface StoredMessage {
  role: string;
  content: unknown;
  [extra: string]: unknown;
}

const TITLE_LIMIT = 50;
const PREVIEW_LIMIT = 100;

const firstUserText = (messages: StoredMessage[]) =>
  messages.find((m) => m.role === "user" && typeof m.content === "string" && m.content.trim())?.content as string | undefined;

const clip = (text: string, limit: number) => {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > limit ? `${flat.slice(0, limit - 3)}...` : flat;
};

export function conversationTitle(messages: StoredMessage[]): string {
  const text = firstUserText(messages);
  return text ? clip(text, TITLE_LIMIT) : "New conversation";
}

export function conversationPreview(messages: StoredMessage[]): string {
  const text = firstUserText(messages);
  return text ? clip(text, PREVIEW_LIMIT) : "";
}

/** `conv_<unix nanoseconds>_<16 hex>`: sortable by creation, unguessable. */
export function newConversationId(now = Date.now()): string {
  const hex = [...crypto.getRandomValues(new Uint8Array(8))].map((b) => b.toString(16).padStart(2, "0")).join("");
  return `conv_${BigInt(now) * 1_000_000n}_${hex}`;
}
