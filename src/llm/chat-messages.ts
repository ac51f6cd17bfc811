/**
 * The chat contract's messages (Anthropic-style content blocks, as the predecessor's clients send them)
 * to and from the AI SDK's provider-neutral messages.
 */
import type { FinishReason, LanguageModelUsage, ModelMessage } from "ai";
import { InputError } from "../errors.ts";

export type TextBlock = { type: "text"; text: string };
export type ToolUseBlock = { type: "tool_use"; id: string; name: string; input: Record<string, unknown> };
export type ToolResultBlock = { type: "tool_result"; tool_use_id: string; content: string | TextBlock[]; is_error?: boolean };
export type ContentBlock = TextBlock | ToolUseBlock | ToolResultBlock;
export interface ChatMessage {
  role: "user" | "assistant";
  content: string | ContentBlock[];
}
export type ReplyBlock = TextBlock | ToolUseBlock;

/** Converts the request's messages; a tool_result must answer a tool_use of an earlier assistant message. */
export function toModelMessages(messages: ChatMessage[]): ModelMessage[] {
  const toolNames = new Map<string, string>();
  const out: ModelMessage[] = [];
  messages.forEach((m, i) => {
    if (typeof m.content === "string") {
      out.push({ role: m.role, content: m.content });
      return;
    }
    if (m.role === "assistant") {
      const parts = m.content.map((b) => {
        if (b.type === "text") return { type: "text" as const, text: b.text };
        if (b.type === "tool_use") {
          toolNames.set(b.id, b.name);
          return { type: "tool-call" as const, toolCallId: b.id, toolName: b.name, input: b.input };
        }
        throw new InputError(`messages[${i}]: an assistant message cannot hold a tool_result block`);
      });
      out.push({ role: "assistant", content: parts });
      return;
    }
    const results = m.content.filter((b): b is ToolResultBlock => b.type === "tool_result");
    if (results.length) {
      out.push({
        role: "tool",
        content: results.map((r) => {
          const toolName = toolNames.get(r.tool_use_id);
          if (!toolName) throw new InputError(`messages[${i}]: tool_result for "${r.tool_use_id}" answers no tool_use of an earlier assistant message`);
          const value = typeof r.content === "string" ? r.content : r.content.map((t) => t.text).join("\n");
          return {
            type: "tool-result" as const,
            toolCallId: r.tool_use_id,
            toolName,
            output: r.is_error ? { type: "error-text" as const, value } : { type: "text" as const, value },
          };
        }),
      });
    }
    const texts = m.content
      .filter((b) => b.type !== "tool_result")
      .map((b) => {
        if (b.type === "tool_use") throw new InputError(`messages[${i}]: a user message cannot hold a tool_use block`);
        return { type: "text" as const, text: b.text };
      });
    if (texts.length) out.push({ role: "user", content: texts });
  });
  return out;
}

type ResultPart = { type: string; text?: string; toolCallId?: string; toolName?: string; input?: unknown };

/** The reply's text and tool calls as content blocks (adjacent text joined; reasoning and sources left out). */
export function toReplyBlocks(parts: ReadonlyArray<ResultPart>): ReplyBlock[] {
  const blocks: ReplyBlock[] = [];
  for (const p of parts) {
    if (p.type === "text" && p.text) {
      const last = blocks.at(-1);
      if (last?.type === "text") last.text += p.text;
      else blocks.push({ type: "text", text: p.text });
    } else if (p.type === "tool-call") {
      blocks.push({ type: "tool_use", id: p.toolCallId!, name: p.toolName!, input: (p.input ?? {}) as Record<string, unknown> });
    }
  }
  return blocks;
}

/** Stop reasons in the contract's (Anthropic's) words. */
export function stopReason(reason: FinishReason): string {
  const map: Record<FinishReason, string> = {
    stop: "end_turn",
    "tool-calls": "tool_use",
    length: "max_tokens",
    "content-filter": "refusal",
    error: "error",
    other: "other",
  };
  return map[reason] ?? "other";
}

export interface TokenUsage {
  provider: string;
  model: string;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  cache_read_tokens: number;
  cache_creation_tokens: number;
}

export function tokenUsage(provider: string, model: string, u: LanguageModelUsage): TokenUsage {
  const prompt = u.inputTokens ?? 0;
  const completion = u.outputTokens ?? 0;
  return {
    provider,
    model,
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: u.totalTokens ?? prompt + completion,
    cache_read_tokens: u.inputTokenDetails?.cacheReadTokens ?? 0,
    cache_creation_tokens: u.inputTokenDetails?.cacheWriteTokens ?? 0,
  };
}
