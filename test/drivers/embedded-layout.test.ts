/**
 * The embedded datastore's directory: PGlite's files in db/, the generated secret and admin password in a
 * private secrets/ directory; an install from before that layout is moved in place with its data and
 * secrets intact.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { openDriver } from "../../drivers/open.ts";
import { openPglite } from "../../drivers/pglite.ts";
import { embeddedSecret } from "../../src/embedded-secret.ts";

const dirs: string[] = [];
const fresh = (prefix: string) => {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
};
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

it("keeps the database in db/ and the secrets in a private secrets/ directory", async () => {
  const dir = fresh("pglens-layout-");
  const db = await openDriver({ dataDir: dir });
  const secret = embeddedSecret(dir);
  await db.close();
  expect(readdirSync(dir).sort()).toEqual(["db", "secrets"]);
  expect(readdirSync(join(dir, "db"))).toContain("PG_VERSION");
  expect(statSync(join(dir, "secrets")).mode & 0o777).toBe(0o700);
  expect(statSync(join(dir, "secrets", "secret")).mode & 0o777).toBe(0o600);
  expect(embeddedSecret(dir)).toBe(secret); // generated once
  const open = (path: string): string[] =>
    readdirSync(path).flatMap((e) => {
      const p = join(path, e);
      const st = statSync(p);
      return [...(st.mode & 0o077 ? [`${p} ${(st.mode & 0o777).toString(8)}`] : []), ...(st.isDirectory() ? open(p) : [])];
    });
  expect(open(dir)).toEqual([]); // PGlite's own files included: nothing readable or writable by group or others
});

it("moves an install of the old layout in place, data and secrets intact", async () => {
  const dir = fresh("pglens-old-layout-");
  const old = await openPglite(dir); // PGlite's files at the top, as before
  await old.query("CREATE TABLE kept (note text)");
  await old.query("INSERT INTO kept VALUES ('still here')");
  await old.close();
  writeFileSync(join(dir, "secret"), "the old secret\n", { mode: 0o600 });
  writeFileSync(join(dir, "initial-admin-password"), "old password\n", { mode: 0o600 });

  const db = await openDriver({ dataDir: dir });
  expect(await db.query("SELECT note FROM kept")).toEqual([{ note: "still here" }]);
  await db.close();
  expect(readdirSync(dir).sort()).toEqual(["db", "secrets"]);
  expect(embeddedSecret(dir)).toBe("the old secret");
  expect(readFileSync(join(dir, "secrets", "initial-admin-password"), "utf8")).toBe("old password\n");
});
