// `npm run build` (and `npm pack`, through prepack): compiles src/ and drivers/ to JavaScript in dist/node/, which
// the installed package runs, and copies beside it the files the code reads at run time (the console's scripts).
import { execFileSync } from "node:child_process";
import { cpSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
export const PACKAGE_OUT = fileURLToPath(new URL("../dist/node", import.meta.url));

export function buildPackage() {
  rmSync(PACKAGE_OUT, { recursive: true, force: true });
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  execFileSync(process.execPath, [tsc, "-p", "tsconfig.build.json"], { cwd: ROOT, stdio: "inherit" });
  cpSync(`${ROOT}/src/console/browser`, `${PACKAGE_OUT}/src/console/browser`, { recursive: true });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const started = Date.now();
  buildPackage();
  console.log(`compiled to ${PACKAGE_OUT} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}
