/** A real Chromium for console tests: Debian's chromium-headless-shell (installed by .ci/run), driven by playwright-core. */
import { existsSync } from "node:fs";
import { type Browser, chromium } from "playwright-core";

export const CHROMIUM = ["/usr/bin/chromium-headless-shell", "/usr/lib/chromium/chromium-headless-shell", "/usr/bin/chromium"].find((p) => existsSync(p));

export async function launchBrowser(): Promise<Browser> {
  if (!CHROMIUM) throw new Error("no Chromium found: install Debian's chromium-headless-shell (`.ci/run` does)");
  // As root and on a machine without network: no sandbox, no background traffic.
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}
