#!/usr/bin/env node
// The installed package runs its compiled JavaScript (dist/node/, built by `npm run build` before packing); a
// source checkout, where src/ is present, runs the TypeScript itself through tsx (a development dependency).
import { existsSync } from "node:fs";

const source = new URL("../src/cli.ts", import.meta.url);
if (existsSync(source)) {
  const { register } = await import("tsx/esm/api");
  register();
  await import(source.href);
} else {
  await import("../dist/node/src/cli.js");
}
