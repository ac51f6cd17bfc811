/** Small constructors that keep the probe files readable: one line per stored column. */
import type { ProbeColumn } from "./types.ts";

export const dim = (name: string, description: string, type = "text"): ProbeColumn => ({ name, type, kind: "dimension", description });
export const gauge = (name: string, description: string, type = "bigint"): ProbeColumn => ({ name, type, kind: "gauge", description });
export const counter = (name: string, description: string, type = "bigint"): ProbeColumn => ({ name, type, kind: "counter", description });
export const timeMs = (name: string, description: string): ProbeColumn => ({ name, type: "double precision", kind: "time_ms", description });
export const sessionMs = (name: string, description: string): ProbeColumn => ({ name, type: "double precision", kind: "session_ms", description });
export const watermark = (name: string, description: string): ProbeColumn => ({ name, type: "double precision", kind: "watermark", description });
export const ratio = (name: string, description: string, type = "double precision"): ProbeColumn => ({ name, type, kind: "ratio", description });
export const marker = (name: string, description = "When these statistics were last reset"): ProbeColumn => ({
  name,
  type: "timestamp with time zone",
  kind: "marker",
  description,
});
export const timestamp = (name: string, description: string): ProbeColumn => dim(name, description, "timestamp with time zone");

/** Marks every cumulative column as reset by `markerName`, except those listed in `overrides`. */
export function withResets(columns: ProbeColumn[], markerName: string, overrides: Record<string, string> = {}): ProbeColumn[] {
  return columns.map((c) => (c.kind === "counter" || c.kind === "time_ms" || c.kind === "session_ms" ? { ...c, resetBy: overrides[c.name] ?? markerName } : c));
}
