/** Reads a whole server-sent event stream into its events (comments dropped, data parsed as JSON). */
export interface SseEvent {
  event: string;
  data: any;
}

export function parseSse(text: string): SseEvent[] {
  return text
    .split(/\n\n/)
    .map((block) => block.split("\n").filter((l) => l && !l.startsWith(":")))
    .filter((lines) => lines.length)
    .map((lines) => ({
      event:
        lines
          .find((l) => l.startsWith("event:"))
          ?.slice(6)
          .trim() ?? "message",
      data: JSON.parse(
        lines
          .filter((l) => l.startsWith("data:"))
          .map((l) => l.slice(5).trim())
          .join("\n"),
      ),
    }));
}

export async function readSse(res: Response): Promise<SseEvent[]> {
  return parseSse(await res.text());
}
