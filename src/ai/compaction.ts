/**
 * Chat history compaction, pure: keep the first message (the anchor), the most recent ones and the important
 * ones from the middle, within a token budget, never splitting a tool call from its result; say in one
 * summary message what was left out. Token counts are estimates (characters / 4 with weights), not a
 * tokenizer's: good enough to stay clear of a context limit.
 */

export type Block = { type: string; text?: string; id?: string; name?: string; input?: unknown; tool_use_id?: string; content?: unknown };
export interface CompactMessage {
  role: string;
  content: string | Block[];
  [extra: string]: unknown;
}

export const TOKEN_COUNTERS = ["generic", "openai", "anthropic", "ollama"] as const;
export type TokenCounter = (typeof TOKEN_COUNTERS)[number];

export interface CompactionOptions {
  maxTokens: number;
  recentWindow: number;
  keepAnchors: boolean;
  preserveToolResults: boolean;
  preserveSchemaInfo: boolean;
  enableSummarization: boolean;
  minImportantMessages: number;
  tokenCounter: TokenCounter;
}

export const DEFAULT_OPTIONS: CompactionOptions = {
  maxTokens: 100_000,
  recentWindow: 10,
  keepAnchors: false,
  preserveToolResults: true,
  preserveSchemaInfo: true,
  enableSummarization: true,
  minImportantMessages: 3,
  tokenCounter: "generic",
};

const PER_MESSAGE = 10;
/** Tokenizers differ: these scale the generic estimate per provider family. */
const COUNTER_SCALE: Record<TokenCounter, number> = { generic: 1, openai: 1, anthropic: 1.1, ollama: 1.05 };
const SQL = /\b(select|insert|update|delete|create|alter|from|where|join)\b/i;
/** Text that holds a statement, not just the word "from": where table names are looked for. */
const SQL_STATEMENT = /\b(select\s.+\sfrom|insert\s+into|update\s+\S+\s+set|delete\s+from|(create|alter|drop|truncate)\s+table)\b/is;
const JSONISH = /^\s*[[{]/;
const CODE = /```|[{};]\s*$/m;

export function messageText(m: CompactMessage): string {
  if (typeof m.content === "string") return m.content;
  return m.content
    .map((b) => {
      if (b.type === "text") return b.text ?? "";
      if (b.type === "tool_use") return `${b.name ?? ""} ${JSON.stringify(b.input ?? {})}`;
      if (b.type === "tool_result") return typeof b.content === "string" ? b.content : JSON.stringify(b.content ?? "");
      return JSON.stringify(b);
    })
    .join("\n");
}

export function estimateTokens(m: CompactMessage, counter: TokenCounter = "generic"): number {
  const text = messageText(m);
  const weight = SQL.test(text) ? 1.2 : JSONISH.test(text) ? 1.15 : CODE.test(text) ? 1.1 : 1;
  // Rounded first: 100 * 1.1 is 110.00000000000001 in floating point.
  return Math.ceil(Math.round((text.length / 4) * weight * COUNTER_SCALE[counter] * 1000) / 1000) + PER_MESSAGE;
}

const blocks = (m: CompactMessage) => (typeof m.content === "string" ? [] : m.content);
const toolUseIds = (m: CompactMessage) => blocks(m).flatMap((b) => (b.type === "tool_use" && b.id ? [b.id] : []));
const toolResultIds = (m: CompactMessage) => blocks(m).flatMap((b) => (b.type === "tool_result" && b.tool_use_id ? [b.tool_use_id] : []));

export type MessageClass = "anchor" | "important" | "contextual" | "routine" | "transient";

/** How much a message matters to what follows, by what it holds. */
export function classify(m: CompactMessage, o: CompactionOptions): { cls: MessageClass; importance: number } {
  const text = messageText(m);
  if (o.preserveToolResults && (toolUseIds(m).length || toolResultIds(m).length)) return { cls: "important", importance: 0.8 };
  if (o.preserveSchemaInfo && /\b(create table|alter table|primary key|foreign key|column|schema|index on)\b/i.test(text))
    return { cls: "important", importance: 0.75 };
  // Anchors (errors, rules, things to remember) rank just below the keep-always line: keep_anchors decides.
  if (/\b(error|failed|exception|must|always|never|remember)\b/i.test(text)) return { cls: "anchor", importance: 0.65 };
  if (text.trim().length < 20) return { cls: "transient", importance: 0.1 };
  if (m.role === "user") return { cls: "contextual", importance: text.includes("?") ? 0.6 : 0.5 };
  return { cls: text.length > 400 ? "contextual" : "routine", importance: text.length > 400 ? 0.5 : 0.3 };
}

/**
 * Messages that must be kept or dropped together: a tool call and the message(s) answering it. Each unit
 * lists its message indices in order.
 */
export function units(messages: CompactMessage[]): number[][] {
  const parent = messages.map((_, i) => i);
  const find = (i: number): number => (parent[i] === i ? i : (parent[i] = find(parent[i])));
  const callAt = new Map<string, number>();
  messages.forEach((m, i) => {
    for (const id of toolResultIds(m)) {
      const at = callAt.get(id);
      if (at !== undefined) parent[find(i)] = find(at);
    }
    for (const id of toolUseIds(m)) callAt.set(id, i);
  });
  const groups = new Map<number, number[]>();
  messages.forEach((_, i) => {
    const root = find(i);
    groups.set(root, [...(groups.get(root) ?? []), i]);
  });
  return [...groups.values()].sort((a, b) => a[0] - b[0]);
}

export interface CompactionSummary {
  topics: string[];
  tables: string[];
  tools: string[];
  description: string;
}

export interface CompactionResult {
  messages: CompactMessage[];
  summary: CompactionSummary | null;
  token_estimate: number;
  compaction_info: {
    original_count: number;
    compacted_count: number;
    dropped_count: number;
    anchor_count: number;
    tokens_saved: number;
    compression_ratio: number;
  };
}

export function summarize(dropped: CompactMessage[]): CompactionSummary {
  const unique = (xs: string[], n: number) => [...new Set(xs)].slice(0, n);
  const topics = unique(
    dropped
      .filter((m) => m.role === "user")
      .map(messageText)
      .filter((t) => t.trim().split(/\s+/).length >= 5)
      .map((t) => t.trim().split(/\s+/).slice(0, 5).join(" ")),
    5,
  );
  const tables = unique(
    dropped
      .map(messageText)
      .filter((t) => SQL_STATEMENT.test(t))
      .flatMap((t) =>
        [...t.matchAll(/\b(?:from|join|into|update|(?:create|alter|drop|truncate)\s+table(?:\s+if\s+(?:not\s+)?exists)?)\s+([A-Za-z_][\w.]*)/gi)].map((x) =>
          x[1].toLowerCase(),
        ),
      ),
    10,
  );
  const tools = unique(
    dropped.flatMap((m) => blocks(m).flatMap((b) => (b.type === "tool_use" && b.name ? [b.name] : []))),
    10,
  );
  const parts = [
    topics.length ? `Topics: ${topics.join("; ")}` : "",
    tables.length ? `Tables: ${tables.join(", ")}` : "",
    tools.length ? `Tools used: ${tools.join(", ")}` : "",
  ].filter(Boolean);
  return { topics, tables, tools, description: `[Compressed context: ${[...parts, `${dropped.length} messages compressed`].join(". ")}]` };
}

export function compact(messages: CompactMessage[], o: CompactionOptions = DEFAULT_OPTIONS): CompactionResult {
  const cost = messages.map((m) => estimateTokens(m, o.tokenCounter));
  const total = cost.reduce((a, b) => a + b, 0);
  const n = messages.length;
  const unchanged = (): CompactionResult => ({
    messages,
    summary: null,
    token_estimate: total,
    compaction_info: { original_count: n, compacted_count: n, dropped_count: 0, anchor_count: n ? 1 : 0, tokens_saved: 0, compression_ratio: 1 },
  });
  if (n <= o.recentWindow + 1 || total <= o.maxTokens) return unchanged();

  const all = units(messages);
  const unitOf = new Map<number, number[]>();
  for (const u of all) for (const i of u) unitOf.set(i, u);
  const weight = (u: number[]) => u.reduce((s, i) => s + cost[i], 0);
  const classes = messages.map((m) => classify(m, o));
  const importance = (u: number[]) => Math.max(...u.map((i) => classes[i].importance));
  const isImportant = (u: number[]) =>
    u.some((i) => classes[i].cls === "important" || (o.keepAnchors && classes[i].cls === "anchor") || classes[i].importance >= 0.7);

  // Priority order: the first and last messages' units; the recent window, newest first; the middle's
  // important units, most important first; then others topping up to min_important. Lower priorities are
  // the first to go when the budget is short.
  const mandatory = [...new Set([unitOf.get(0)!, unitOf.get(n - 1)!])];
  const recentStart = Math.max(1, n - o.recentWindow);
  const taken = new Set(mandatory);
  const recent = [
    ...new Set(
      messages
        .map((_, i) => i)
        .filter((i) => i >= recentStart)
        .reverse()
        .map((i) => unitOf.get(i)!),
    ),
  ].filter((u) => !taken.has(u));
  for (const u of recent) taken.add(u);
  const middle = all.filter((u) => !taken.has(u)).sort((a, b) => importance(b) - importance(a) || b[0] - a[0]);
  const important = middle.filter(isImportant);
  const topUp = middle
    .filter((u) => !isImportant(u) && u.some((i) => classes[i].cls !== "transient"))
    .slice(0, Math.max(0, o.minImportantMessages - important.reduce((s, u) => s + u.length, 0)));
  const optional = [...recent, ...important, ...topUp];

  // Take optional units while they fit beside the mandatory ones, leaving room for the summary (its size
  // as if everything optional were dropped: its lists are bounded, so that is about as long as it gets).
  const reserve = o.enableSummarization
    ? estimateTokens({ role: "assistant", content: summarize(messages.filter((_, i) => !mandatory.some((u) => u.includes(i)))).description }, o.tokenCounter)
    : 0;
  let used = mandatory.reduce((s, u) => s + weight(u), 0);
  const kept = new Set<number>(mandatory.flat());
  for (const u of optional) {
    if (used + weight(u) + reserve > o.maxTokens) continue;
    used += weight(u);
    for (const i of u) kept.add(i);
  }

  const dropped = messages.filter((_, i) => !kept.has(i));
  const out = messages.filter((_, i) => kept.has(i));
  let summary: CompactionSummary | null = null;
  if (dropped.length && o.enableSummarization) {
    summary = summarize(dropped);
    const note: CompactMessage = { role: "assistant", content: summary.description };
    const noteCost = estimateTokens(note, o.tokenCounter);
    // After the anchor, unless the anchor's unit continues there (a tool call and its answer stay adjacent).
    if (used + noteCost <= o.maxTokens && !(n > 1 && kept.has(1) && unitOf.get(1) === unitOf.get(0))) {
      out.splice(1, 0, note);
      used += noteCost;
    }
  }
  return {
    messages: out,
    summary,
    token_estimate: used,
    compaction_info: {
      original_count: n,
      compacted_count: out.length,
      dropped_count: dropped.length,
      anchor_count: 1,
      tokens_saved: total - used,
      compression_ratio: Math.round((used / total) * 1000) / 1000,
    },
  };
}
