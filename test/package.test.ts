/**
 * pglens as people install it: `npm pack` builds the package (compiled JavaScript, no TypeScript compiler at run
 * time), an empty directory installs the tarball from the registry's packages as any user would, and the installed
 * `pglens` answers --version, shows a command's help, and serves the console and the API on the embedded datastore.
 */
import { execFile } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { VERSION } from "../src/version.ts";
import { runCli, startServe } from "./support/cli.ts";
import { freePort } from "./support/postgres.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), "pglens-package-"));
let tarball: string;
let files: string[];
let installed: string;

beforeAll(async () => {
  const packed = await run("npm", ["pack", "--json", "--pack-destination", dir], { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 });
  const [info] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf("[")));
  tarball = join(dir, info.filename);
  files = info.files.map((f: { path: string }) => f.path);
  const app = join(dir, "app");
  await run("mkdir", ["-p", app]);
  writeFileSync(join(app, "package.json"), JSON.stringify({ name: "pglens-user", private: true }));
  // From the npm cache where it has the packages (npm ci filled it), else from the registry.
  await run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", tarball], { cwd: app, maxBuffer: 64 * 1024 * 1024 });
  installed = join(app, "node_modules", ".bin", "pglens");
}, 600_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the npm package", () => {
  it("holds the compiled code and nothing of the workshop", () => {
    expect(files).toContain("bin/pglens.js");
    expect(files).toContain("dist/node/src/cli.js");
    expect(files).toContain("dist/node/src/console/browser/charts.js");
    expect(files).toContain("LICENSE");
    expect(files.filter((f) => /^(src|test|bench|scripts|docs)\//.test(f) || f.endsWith(".ts"))).toEqual([]);
  });

  it("installs without TypeScript tooling and answers --version and a command's help", async () => {
    const modules = readdirSync(join(dir, "app", "node_modules"));
    expect(modules).not.toContain("tsx");
    expect(modules).not.toContain("typescript");
    const version = await runCli(["--version"], {}, undefined, installed);
    expect(version).toMatchObject({ code: 0, stdout: `${VERSION}\n` });
    const help = await runCli(["migrate", "--help"], {}, undefined, installed);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: pglens migrate\n/);
    expect(help.stdout).toContain("PGLENS_DATASTORE_URL");
  }, 60_000);

  it("serves the API, its docs and the console on the embedded datastore", async () => {
    const port = await freePort();
    const { child } = await startServe({ PGLENS_DATA_DIR: join(dir, "data"), PGLENS_DATASTORE_URL: "" }, port, installed);
    try {
      const base = `http://127.0.0.1:${port}`;
      expect(await (await fetch(`${base}/health`)).json()).toMatchObject({ status: "ok", datastore: { driver: "pglite" } });
      for (const path of ["/api/v1/docs/swagger-ui.css", "/console/assets/uplot.js", "/console/assets/charts.js", "/api/v1/openapi.json"])
        expect((await fetch(`${base}${path}`)).status, path).toBe(200);
      expect((await fetch(`${base}/sign-in`)).status).toBe(200);
    } finally {
      child.kill("SIGTERM");
      await once(child, "exit");
    }
  }, 300_000);
});
