#!/usr/bin/env node
// Runs the TypeScript sources directly: Node 20 cannot strip types by itself.
import { register } from "tsx/esm/api";

register();
await import("../src/cli.ts");
