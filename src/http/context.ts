import type { DocsAssets } from "./docs-page.ts";
import type { ReplicaSession, ReplicaSet } from "../../drivers/read-replicas.ts";
import type { Driver } from "../../drivers/types.ts";
import type { Principal } from "../auth/principal.ts";
import type { Authority } from "../auth/rbac.ts";
import type { Config } from "../config.ts";
import type { MetricsContextCache } from "../queries/metrics-context.ts";
import type { Logger } from "../log.ts";
import type { Transports } from "../notify/transports.ts";
import type { HealthReport } from "../llm/health.ts";
import type { ModelInfo } from "../llm/models.ts";
import type { Recently } from "../llm/recently.ts";
import type { RecentWriters } from "./recent-writers.ts";

/** How the app reaches the datastore: one shared driver on Node, one per request on Workers. */
export interface Datastore {
  open(): Driver;
  release?(driver: Driver): Promise<void>;
  /** Read replicas (datastore.read_urls). */
  replicas?: ReadReplicas;
}

export interface ReadReplicas {
  set: ReplicaSet;
  /** Callers whose reads stay on the primary until the replicas have their writes. */
  writers: RecentWriters;
}

export interface AppDeps {
  config: Config;
  datastore: Datastore;
  log: Logger;
  /** The caller's network address, for login throttling; each runtime knows where to find it. */
  clientAddress?: (c: import("hono").Context) => string | undefined;
  /** Whether a trusted reverse proxy says the request arrived over HTTPS. */
  forwardedHttps?: (c: import("hono").Context) => boolean;
  /** What this runtime can send notifications with beyond HTTP (email on Node). */
  transports?: Transports;
  /** Told about every request (self-monitoring on Node). */
  observeRequest?: (method: string, route: string, status: number, seconds: number) => void;
  /** The API docs viewer's files (read from the package on Node, inlined in the Workers bundle). */
  docsAssets?: () => Promise<DocsAssets>;
  /** The console's chart library and page scripts by name (likewise; console/assets.ts names them). */
  consoleAssets?: () => Promise<Readonly<Record<string, string>>>;
}

export interface AppEnv {
  Variables: {
    requestId: string;
    config: Config;
    db: Driver;
    replicas?: ReadReplicas;
    /** This request's reads of the replicas (http/read-db.ts), once it made one. */
    replicaSession?: ReplicaSession;
    /** Set by a handler whose request, whatever its method, wrote nothing (MCP calls of read-only tools). */
    wroteNothing?: boolean;
    log: Logger;
    clientAddress: string;
    /** The client reached us over HTTPS (directly, or through a trusted proxy). */
    secureTransport: boolean;
    principal?: Principal;
    /** A credential was presented but is not valid (answers 401 "invalid or expired token"). */
    credentialRejected?: boolean;
    authority?: Authority;
    /** Recently read connection facts of metrics requests (queries/metrics-context.ts). */
    metricsContexts: MetricsContextCache;
    transports: Transports;
    observeRequest?: AppDeps["observeRequest"];
    docsAssets?: AppDeps["docsAssets"];
    consoleAssets?: AppDeps["consoleAssets"];
    /** What the public LLM endpoints answered lately (they must not become load on a provider). */
    llmAnswers: { health: Recently<HealthReport>; models: Recently<ModelInfo[]> };
  };
}
