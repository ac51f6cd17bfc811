/** The caller as the payer of an LLM call (their daily token budget). */
import type { Context } from "hono";
import type { Payer } from "../llm/usage.ts";
import type { AppEnv } from "./context.ts";

export const payer = (c: Context<AppEnv>): Payer => ({ db: c.get("db"), log: c.get("log"), llm: c.get("config").llm, user: c.get("principal")! });
