/** Which methods a path accepts, from the app's own route table: the basis of 405 and `Allow`. */
interface RouteEntry {
  method: string;
  path: string;
}

function pathPattern(path: string): RegExp {
  const parts = path.split("/").map((segment) => {
    if (segment === "*") return ".*";
    const param = /^:[\w]+(?:\{(.+)\})?(\?)?$/.exec(segment);
    if (param) return param[1] ? `(?:${param[1]})` : "[^/]+";
    return segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  });
  return new RegExp(`^${parts.join("/")}/?$`);
}

export function allowedMethodsLookup(routes: readonly RouteEntry[]): (path: string) => string[] {
  let table: Array<{ pattern: RegExp; method: string }> | undefined;
  return (path) => {
    table ??= routes.filter((r) => r.method !== "ALL").map((r) => ({ pattern: pathPattern(r.path), method: r.method }));
    const methods = new Set(table.filter((r) => r.pattern.test(path)).map((r) => r.method));
    if (methods.has("GET")) methods.add("HEAD");
    if (methods.size > 0) methods.add("OPTIONS");
    return [...methods].sort();
  };
}
