import { healthRoutes } from "./health.ts";

/** Every route module of the API, mounted at the root by createApp. */
export const ROUTE_MODULES = [healthRoutes];
