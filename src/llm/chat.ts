/** One chat turn through the AI SDK, whole or as a stream of events; the client runs any tool loop itself. */
import { type ToolSet, generateText, jsonSchema, streamText } from "ai";
import { type ChatMessage, type ReplyBlock, type TokenUsage, stopReason, toModelMessages, toReplyBlocks, tokenUsage } from "./chat-messages.ts";
import type { LlmConfig } from "../llm-config.ts";
import { providerFailure } from "./provider-error.ts";
import { type Choice, chatModel } from "./providers.ts";

export interface ToolSpec {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
}

export interface ChatTurn {
  messages: ChatMessage[];
  tools: ToolSpec[];
  /** The assembled system prompt. */
  system: string;
}

export interface ChatReply {
  content: ReplyBlock[];
  stop_reason: string;
  token_usage: TokenUsage;
}

export type ChatEvent =
  | { event: "message_start"; data: { provider: string; model: string } }
  | { event: "content_delta"; data: { index: number; type: "text"; text: string } }
  | { event: "tool_use"; data: { index: number } & ReplyBlock }
  | { event: "message_end"; data: { stop_reason: string; token_usage: TokenUsage } }
  | { event: "error"; data: { error: string } };

/** The request's deadline joined with the caller's going away. */
export const deadline = (llm: LlmConfig, signal?: AbortSignal) => {
  const timeout = AbortSignal.timeout(llm.timeout_seconds * 1000);
  return signal ? AbortSignal.any([signal, timeout]) : timeout;
};

function callSettings(llm: LlmConfig, choice: Choice, turn: ChatTurn, signal?: AbortSignal) {
  // No execute functions: tool calls come back to the client, which runs them and sends the results.
  const tools: ToolSet = Object.fromEntries(turn.tools.map((t) => [t.name, { description: t.description, inputSchema: jsonSchema(t.inputSchema as never) }]));
  return {
    model: chatModel(llm, choice),
    system: turn.system,
    messages: toModelMessages(turn.messages),
    tools: turn.tools.length ? tools : undefined,
    maxOutputTokens: llm.max_tokens,
    temperature: llm.temperature,
    // A proxy answers with the provider's failure rather than retrying behind the caller's back.
    maxRetries: 0,
    abortSignal: deadline(llm, signal),
  };
}

export async function chat(llm: LlmConfig, choice: Choice, turn: ChatTurn, signal?: AbortSignal): Promise<ChatReply> {
  const settings = callSettings(llm, choice, turn, signal);
  try {
    const result = await generateText(settings);
    return {
      content: toReplyBlocks(result.content),
      stop_reason: stopReason(result.finishReason),
      token_usage: tokenUsage(choice.provider, choice.model, result.totalUsage),
    };
  } catch (err) {
    throw providerFailure(llm, choice.provider, err, llm.timeout_seconds);
  }
}

/**
 * The same turn as events: text deltas as they arrive, each tool call once complete, then the end with the
 * stop reason and usage. A provider failure becomes one `error` event; the stream then ends.
 */
export async function* chatStream(llm: LlmConfig, choice: Choice, turn: ChatTurn, signal?: AbortSignal): AsyncGenerator<ChatEvent> {
  const settings = callSettings(llm, choice, turn, signal);
  yield { event: "message_start", data: { provider: choice.provider, model: choice.model } };
  let index = -1;
  let inText = false;
  try {
    const result = streamText({ ...settings, onError: () => {} });
    for await (const part of result.fullStream) {
      if (part.type === "text-delta") {
        if (!part.text) continue;
        if (!inText) index++;
        inText = true;
        yield { event: "content_delta", data: { index, type: "text", text: part.text } };
      } else if (part.type === "tool-call") {
        inText = false;
        index++;
        yield {
          event: "tool_use",
          data: { index, type: "tool_use", id: part.toolCallId, name: part.toolName, input: (part.input ?? {}) as Record<string, unknown> },
        };
      } else if (part.type === "error") {
        throw part.error;
      } else if (part.type === "abort") {
        // The caller left (nothing more to say), or the deadline passed.
        if (signal?.aborted) return;
        throw Object.assign(new Error("deadline passed"), { name: "TimeoutError" });
      } else if (part.type === "finish") {
        yield {
          event: "message_end",
          data: { stop_reason: stopReason(part.finishReason), token_usage: tokenUsage(choice.provider, choice.model, part.totalUsage) },
        };
      }
    }
  } catch (err) {
    if (signal?.aborted) return;
    yield { event: "error", data: { error: providerFailure(llm, choice.provider, err, llm.timeout_seconds).message } };
  }
}
