import type { ProbeDefinition } from "../../probes/types.ts";

/** A numbered schema change; statements run in order inside one transaction. */
export interface Migration {
  version: number;
  name: string;
  statements: readonly string[];
  /** The part of `statements` that acts on each probe's tables, for the given probes (see probes-at.ts). */
  forProbes?: (probes: readonly ProbeDefinition[]) => string[];
}
