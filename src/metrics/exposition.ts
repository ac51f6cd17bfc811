/**
 * The Prometheus text exposition format (0.0.4) and OpenMetrics 1.0, for metric families whose samples carry
 * their own timestamps (the time pglens sampled, not the scrape time). Pure: families in, text out.
 */

export type ExpositionFormat = "prometheus" | "openmetrics";

export const CONTENT_TYPES: Record<ExpositionFormat, string> = {
  prometheus: "text/plain; version=0.0.4; charset=utf-8",
  openmetrics: "application/openmetrics-text; version=1.0.0; charset=utf-8",
};

export interface Sample {
  labels: Readonly<Record<string, string>>;
  value: number;
  /** Epoch ms; absent: the scrape's time. */
  timestampMs?: number;
}

export interface Family {
  /** The family name; a counter's without `_total` (its samples get the suffix). */
  name: string;
  type: "counter" | "gauge";
  help: string;
  samples: readonly Sample[];
}

/** The format a scraper asks for: OpenMetrics when its Accept header names it. */
export function negotiate(accept: string | undefined): ExpositionFormat {
  return accept?.includes("application/openmetrics-text") ? "openmetrics" : "prometheus";
}

const escapeLabel = (v: string) => v.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');
const escapeHelp = (v: string, format: ExpositionFormat) => (format === "openmetrics" ? escapeLabel(v) : v.replace(/\\/g, "\\\\").replace(/\n/g, "\\n"));

function number(v: number): string {
  if (Number.isNaN(v)) return "NaN";
  if (v === Number.POSITIVE_INFINITY) return "+Inf";
  if (v === Number.NEGATIVE_INFINITY) return "-Inf";
  return String(v);
}

/** A metric or label name as the format allows: [a-zA-Z_:][a-zA-Z0-9_:]*, other characters become `_`. */
export const metricName = (name: string) => name.replace(/[^a-zA-Z0-9_:]/g, "_").replace(/^([0-9])/, "_$1");

/** One family: HELP, TYPE and its samples; empty when it has none. */
export function renderFamily(f: Family, format: ExpositionFormat): string {
  if (f.samples.length === 0) return "";
  const sampleName = f.type === "counter" ? `${f.name}_total` : f.name;
  // The text format names a counter's family as its samples; OpenMetrics without the _total suffix.
  const family = format === "openmetrics" ? f.name : sampleName;
  const lines = [`# HELP ${family} ${escapeHelp(f.help, format)}`, `# TYPE ${family} ${f.type}`];
  for (const s of f.samples) {
    const labels = Object.entries(s.labels)
      .map(([k, v]) => `${k}="${escapeLabel(v)}"`)
      .join(",");
    const at = s.timestampMs === undefined ? "" : ` ${format === "openmetrics" ? number(s.timestampMs / 1000) : Math.round(s.timestampMs)}`;
    lines.push(`${sampleName}${labels ? `{${labels}}` : ""} ${number(s.value)}${at}`);
  }
  return `${lines.join("\n")}\n`;
}

/** What ends a document: OpenMetrics requires `# EOF`. */
export const documentEnd = (format: ExpositionFormat) => (format === "openmetrics" ? "# EOF\n" : "");
