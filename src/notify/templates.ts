/**
 * Notification templates: Mustache (logic-less; renders without eval, so it runs on Workers too) over the
 * alert's variables. A template that does not parse is refused when the channel is saved.
 */
import Mustache from "mustache";
import { InputError } from "../errors.ts";

export interface AlertView {
  AlertID: number;
  AlertTitle: string;
  AlertDescription: string;
  Severity: string;
  SeverityColor: string;
  SeverityEmoji: string;
  Status: string;
  TriggeredAt: string;
  ClearedAt: string;
  Duration: string;
  MetricName: string;
  MetricValue: string;
  /** The value with its unit (`900 s`, `93.2%`, `1.5 GiB`). */
  MetricValueText: string;
  ThresholdValue: string;
  ThresholdText: string;
  Operator: string;
  Unit: string;
  /** Clears: why it cleared, and the value that cleared it (MetricValue keeps the value it fired with). */
  ClearReason: string;
  ClearValue: string;
  ClearValueText: string;
  ServerName: string;
  ServerHost: string;
  ServerPort: number | string;
  DatabaseName: string;
  ReminderCount: number;
  Timestamp: string;
  EventType: string;
  /** A channel test's sample alert. */
  IsTest: boolean;
  /** The alert's page in pglens (public_url), or "". */
  AlertURL: string;
}

export function checkTemplate(template: string | null | undefined, field: string): void {
  if (!template) return;
  try {
    Mustache.parse(template);
  } catch (err) {
    throw new InputError(`${field}: the template does not parse: ${(err as Error).message}`);
  }
}

const jsonEscape = (value: unknown) => JSON.stringify(String(value)).slice(1, -1);
const asIs = (value: unknown) => String(value);
const htmlEscape = (value: unknown) => String(value).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

/** `json`: values escaped for a JSON string (webhook bodies); `text`: as they are; `html`: HTML-escaped. */
export function render(template: string, view: AlertView, mode: "json" | "text" | "html"): string {
  return Mustache.render(template, view, {}, { escape: mode === "json" ? jsonEscape : mode === "html" ? htmlEscape : asIs });
}
