// Runs only the canary, with the suite's global setup (where exit codes have been lost before).
import { defineConfig } from "vitest/config";
import suite from "../../vitest.config.ts";

export default defineConfig({ ...suite, test: { ...suite.test, include: ["test/canary/*.canary.ts"] } });
