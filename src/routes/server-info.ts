import { createRoute, z } from "@hono/zod-openapi";
import { openAlertTitles } from "../datastore/alerts.ts";
import { readableConnection } from "../auth/connection-access.ts";
import { serverInfo } from "../queries/server-info.ts";
import { analyseServer } from "../ai/server-analysis.ts";
import { USER, authority, guarded } from "../http/access.ts";
import { PathId, json, queryFlag } from "../http/params.ts";
import { payer } from "../http/payer.ts";
import { newRouter } from "../http/router.ts";
import { ScalarOrNull, errorResponses } from "../http/schemas.ts";
import { readDb } from "../http/read-db.ts";

/** One stored figure of a system probe. */
const Figure = ScalarOrNull;
const Section = <T extends z.ZodType>(shape: T) =>
  z.object({ collected_at: z.string().nullable().openapi({ description: "When these figures were collected; null when never" }), data: shape });

const ServerInfo = z
  .object({
    connection_id: z.number().int(),
    name: z.string(),
    postgresql: Section(
      z.object({
        version: z.string().nullable(),
        cluster_name: z.string().nullable(),
        data_directory: z.string().nullable(),
        role: z.enum(["primary", "standby"]).nullable(),
        standby_count: z.number().int(),
      }),
    ),
    uptime: Section(z.object({ started_at: z.string().nullable(), uptime_seconds: z.number().nullable() })),
    databases: Section(z.array(z.object({ name: z.string(), size_bytes: z.number().nullable(), xid_age: z.number().nullable() }))),
    extensions: Section(
      z
        .array(
          z.object({
            name: z.string(),
            version: z.string().nullable(),
            databases: z.array(z.string()).openapi({ description: "The databases it is installed in at this version" }),
          }),
        )
        .openapi({ description: "Each extension once per installed version (two entries when databases differ in version)" }),
    ),
    key_settings: Section(z.array(z.object({ name: z.string(), setting: z.string().nullable(), unit: z.string().nullable() }))),
    system: z.object({
      memory: Section(z.record(z.string(), Figure).nullable()),
      cpu: Section(z.record(z.string(), Figure).nullable()),
      load: Section(z.record(z.string(), Figure).nullable()),
      disks: Section(z.array(z.record(z.string(), Figure))),
    }),
  })
  .openapi("ServerInfo");

const route = guarded(
  USER,
  createRoute({
    method: "get",
    path: "/api/v1/server-info/{connection_id}",
    tags: ["Server information"],
    summary: "What the datastore knows about a server, each part with the time it was collected",
    request: { params: z.object({ connection_id: PathId.openapi({ param: { name: "connection_id", in: "path" } }) }) },
    responses: { 200: json(ServerInfo, "Server information"), ...errorResponses(400, 401, 404) },
  }),
);

export const serverInfoRoutes = newRouter().openapi(route, async (c) => {
  const { connection_id: id } = c.req.valid("param");
  return c.json(await serverInfo(readDb(c), await readableConnection(c.get("db"), id, await authority(c))), 200);
});

const analysisRoute = guarded(
  USER,
  createRoute({
    method: "get",
    path: "/api/v1/server-info/{connection_id}/ai-analysis",
    tags: ["Server information"],
    summary: "An LLM's reading of the server: its databases, settings and active alerts, with next steps",
    description:
      "Written again only when the server restarts or its key settings, databases or extensions change; `refresh=true` forces a new one, charged to your daily LLM token budget and allowed once a minute per server (429 with Retry-After sooner). Without an LLM configured, `analysis` is null and `llm` is `unconfigured`; before the collector has sampled the server, `status` is `no_data`.",
    request: {
      params: z.object({ connection_id: PathId.openapi({ param: { name: "connection_id", in: "path" } }) }),
      query: z.object({ refresh: queryFlag("true: write a new analysis now (once a minute per server, charged to your LLM token budget)") }),
    },
    responses: {
      200: json(
        z
          .object({
            connection_id: z.number().int(),
            status: z.enum(["ready", "generating", "no_data"]),
            analysis: z.string().nullable(),
            databases: z
              .record(z.string(), z.string())
              .openapi({ description: "Database name -> what it is likely for, as the LLM read it; written and cached with the analysis" }),
            generated_at: z.string().nullable(),
            llm: z.enum(["configured", "unconfigured", "disabled"]).openapi({ description: "disabled: llm.server_analysis is false" }),
          })
          .openapi("ServerAnalysis"),
        "The analysis",
      ),
      ...errorResponses(400, 401, 404, 429, 502, 504),
    },
  }),
);

export const serverAnalysisRoutes = newRouter().openapi(analysisRoute, async (c) => {
  const { connection_id: id } = c.req.valid("param");
  const db = c.get("db");
  const info = await serverInfo(db, await readableConnection(db, id, await authority(c)));
  const result = await analyseServer(
    db,
    c.get("config").llm,
    c.get("log"),
    info,
    await openAlertTitles(db, id),
    c.req.valid("query").refresh ? payer(c) : undefined,
  );
  return c.json(result, 200);
});
