/** The API docs page: Swagger UI over /api/v1/openapi.json, its files served by pglens itself (no CDN). */
export const DOCS_PATH = "/api/v1/docs";

/** The viewer's files, from the swagger-ui-dist package; each runtime supplies them (AppDeps.docsAssets). */
export const DOCS_FILES = { "swagger-ui.css": "text/css; charset=utf-8", "swagger-ui-bundle.js": "text/javascript; charset=utf-8" } as const;
export type DocsAssets = Record<keyof typeof DOCS_FILES, string>;

/** Starts the viewer; a file of its own rather than an inline script, so a strict Content-Security-Policy can allow it. */
export const DOCS_INIT_JS = `window.ui = SwaggerUIBundle({ url: "/api/v1/openapi.json", dom_id: "#swagger-ui", deepLinking: true });\n`;

export const DOCS_HTML = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>pglens API</title>
  <link rel="stylesheet" href="${DOCS_PATH}/swagger-ui.css">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="${DOCS_PATH}/swagger-ui-bundle.js"></script>
  <script src="${DOCS_PATH}/init.js"></script>
</body>
</html>
`;
