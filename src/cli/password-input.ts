/** Reads a password without putting it on the command line: a file, standard input, or a silent prompt. */
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { Writable } from "node:stream";
import { UsageError } from "./usage-error.ts";

async function prompt(question: string): Promise<string> {
  let muted = false;
  const output = new Writable({
    write(chunk, _enc, done) {
      if (!muted) process.stderr.write(chunk);
      done();
    },
  });
  const rl = createInterface({ input: process.stdin, output, terminal: true });
  process.stderr.write(question);
  muted = true;
  const answer = await new Promise<string>((resolve) => rl.question("", resolve));
  rl.close();
  process.stderr.write("\n");
  return answer;
}

async function firstLineOfStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8").split(/\r?\n/)[0] ?? "";
}

export async function readPassword(options: { file?: string; argv?: string }): Promise<string> {
  if (options.argv !== undefined) {
    console.error("warning: a password given with --password can be read from the shell history and the process list; prefer --password-file");
    return options.argv;
  }
  if (options.file === "-") return firstLineOfStdin();
  if (options.file) {
    const text = readFileSync(options.file, "utf8").replace(/\r?\n$/, "");
    if (!text) throw new UsageError(`--password-file ${options.file} is empty`);
    return text;
  }
  if (!process.stdin.isTTY) return firstLineOfStdin();
  const first = await prompt("password: ");
  if ((await prompt("again: ")) !== first) throw new UsageError("the two passwords differ");
  return first;
}
