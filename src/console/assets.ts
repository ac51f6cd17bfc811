/**
 * The console's static files: the chart library from npm and the pages' own scripts. Each runtime supplies their
 * text (AppDeps.consoleAssets): Node reads them once from disk, the Worker from its static assets (worker-assets.ts).
 */
export const CONSOLE_ASSET_PATH = "/console/assets";

const JS = "text/javascript; charset=utf-8";
const CSS = "text/css; charset=utf-8";

/** Name served -> where it comes from: a package file, or (starting with `./`) a file beside this one. */
export const CONSOLE_ASSETS = {
  "uplot.js": { source: "uplot/dist/uPlot.iife.min.js", type: JS },
  "uplot.css": { source: "uplot/dist/uPlot.min.css", type: CSS },
  "charts.js": { source: "./browser/charts.js", type: JS },
  "estate.js": { source: "./browser/estate.js", type: JS },
} as const;

export type ConsoleAssetName = keyof typeof CONSOLE_ASSETS;
export type ConsoleAssets = Record<ConsoleAssetName, string>;

export const assetUrl = (name: ConsoleAssetName) => `${CONSOLE_ASSET_PATH}/${name}`;
