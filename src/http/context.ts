import type { Driver } from "../../drivers/types.ts";
import type { Config } from "../config.ts";
import type { Logger } from "../log.ts";

/** How the app reaches the datastore: one shared driver on Node, one per request on Workers. */
export interface Datastore {
  open(): Driver;
  release?(driver: Driver): Promise<void>;
}

export interface AppDeps {
  config: Config;
  datastore: Datastore;
  log: Logger;
}

export interface AppEnv {
  Variables: {
    requestId: string;
    config: Config;
    db: Driver;
    log: Logger;
  };
}
