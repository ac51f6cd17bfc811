/** GET /api/v1/docs: the API described by /api/v1/openapi.json, browsable. Public, as the document is. */
import { PUBLIC, declareAccess, requireAccess } from "../http/access.ts";
import { DOCS_FILES, DOCS_HTML, DOCS_INIT_JS, DOCS_PATH } from "../http/docs-page.ts";
import { ApiError } from "../http/errors.ts";
import { newRouter } from "../http/router.ts";

const ASSET_PATH = `${DOCS_PATH}/:file`;
const DAY_SECONDS = 86_400;

export const docsRoutes = newRouter();

docsRoutes.get(DOCS_PATH, requireAccess(declareAccess("GET", DOCS_PATH, PUBLIC)), (c) => c.html(DOCS_HTML));

docsRoutes.get(ASSET_PATH, requireAccess(declareAccess("GET", ASSET_PATH, PUBLIC)), async (c) => {
  const file = c.req.param("file");
  if (file === "init.js") return c.body(DOCS_INIT_JS, 200, { "content-type": "text/javascript; charset=utf-8" });
  if (!Object.hasOwn(DOCS_FILES, file)) throw new ApiError(404, `no such file of the API docs viewer: ${file}`);
  const load = c.get("docsAssets");
  if (!load) throw new ApiError(404, "this build of pglens does not include the API docs viewer; the OpenAPI document is at /api/v1/openapi.json");
  const name = file as keyof typeof DOCS_FILES;
  const assets = await load();
  return c.body(assets[name], 200, { "content-type": DOCS_FILES[name], "cache-control": `public, max-age=${DAY_SECONDS}` });
});
