/** NDJSON import through the sample writer: all or nothing, in one transaction. */
import type { Driver } from "../../drivers/types.ts";
import { findProbe } from "../probes/index.ts";
import { type SampleRow, SampleError, writeSamplesIn } from "../samples/sample-writer.ts";

export interface ImportOptions {
  connectionId: number;
  probe: string;
  /** One JSON object per line: `collected_at` plus column values; blank lines are skipped. */
  lines: AsyncIterable<string>;
  batchSize?: number;
  onProgress?: (rowsSoFar: number) => void;
}

export async function importSamples(db: Driver, options: ImportOptions): Promise<number> {
  const batchSize = options.batchSize ?? 5000;
  if (!findProbe(options.probe)) throw new SampleError(`unknown probe \`${options.probe}\`; pglens openapi or list_probes shows the probes`);
  // Take the iterator before the first await: a readline source drops lines emitted while nobody iterates.
  const iterator = options.lines[Symbol.asyncIterator]();
  const lines = { [Symbol.asyncIterator]: () => iterator };
  return db.transaction(async (tx) => {
    let written = 0;
    let lineNumber = 0;
    let batch: SampleRow[] = [];
    let lineOf: number[] = [];
    const flush = async () => {
      if (batch.length === 0) return;
      const lines = lineOf;
      written += await writeSamplesIn(
        tx,
        { connectionId: options.connectionId, probe: options.probe, rows: batch, describeRow: (i) => `line ${lines[i]}` },
        written,
      );
      batch = [];
      lineOf = [];
      options.onProgress?.(written);
    };
    for await (const line of lines) {
      lineNumber++;
      if (line.trim() === "") continue;
      try {
        batch.push(JSON.parse(line));
        lineOf.push(lineNumber);
      } catch (err) {
        throw new SampleError(`line ${lineNumber}: not valid JSON (${(err as Error).message})`);
      }
      if (batch.length >= batchSize) await flush();
    }
    await flush();
    return written;
  });
}
