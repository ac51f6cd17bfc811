/** Workers: the docs viewer's files, inlined into the bundle by scripts/build-worker.ts. */
declare module "pglens:docs-assets" {
  const assets: import("./http/docs-page.ts").DocsAssets;
  export default assets;
}

/** Workers: the console's files, inlined into the bundle by scripts/build-worker.ts. */
declare module "pglens:console-assets" {
  const assets: import("./console/assets.ts").ConsoleAssets;
  export default assets;
}
