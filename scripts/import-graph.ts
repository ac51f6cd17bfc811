// The shape of src/ from its imports: circles between files and between folders, imports that point from a
// lower layer to a higher one, and files over 400 lines. `npm run check:layers` prints it; test/layout.test.ts holds the line.
import { readFileSync, readdirSync, statSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const SRC = join(ROOT, "src");

/** Folders of src/ from the bottom up; a file may import its own layer or lower ones. Root files are the app's edges. */
export const LAYERS: readonly string[][] = [
  ["(leaf)"],
  ["probes", "metrics", "vocabulary", "blackouts", "clusters"],
  ["datastore", "samples"],
  ["auth", "timeline", "monitored", "queries", "llm"],
  ["notify", "alerts", "ai", "collector"],
  ["http", "mcp", "console", "routes", "cli"],
  ["(entry)"],
];
/** Root files everything may use (no imports of their own from folders), and the entry points. */
const LEAF_FILES = [
  "errors.ts",
  "log.ts",
  "version.ts",
  "expiring-cache.ts",
  "each-limited.ts",
  "group-by.ts",
  "config.ts",
  "config-file.ts",
  "trusted-proxies.ts",
  "embedded-secret.ts",
  "llm-config.ts",
];

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : /\.tsx?$/.test(name) ? [path] : [];
  });
}

const folderOf = (file: string) => {
  const rel = relative(SRC, file);
  if (!rel.includes("/")) return LEAF_FILES.includes(rel) ? "(leaf)" : "(entry)";
  return rel.split("/")[0];
};
const layerOf = (folder: string) => LAYERS.findIndex((l) => l.includes(folder));

export function importGraph() {
  const files = filesUnder(SRC);
  const edges = new Map<string, string[]>();
  for (const file of files) {
    const text = readFileSync(file, "utf8");
    const targets = [...text.matchAll(/(?:from|import)\s*\(?\s*["'](\.{1,2}\/[^"']+)["']/g)]
      .map((m) => normalize(join(dirname(file), m[1])))
      .filter((t) => t.startsWith(SRC));
    edges.set(file, [...new Set(targets)]);
  }
  return { files, edges };
}

/** Strongly connected groups of more than one node (Tarjan). */
function circles(nodes: string[], next: (n: string) => string[]): string[][] {
  let index = 0;
  const at = new Map<string, number>(),
    low = new Map<string, number>(),
    stack: string[] = [],
    on = new Set<string>(),
    found: string[][] = [];
  const visit = (n: string) => {
    at.set(n, index);
    low.set(n, index++);
    stack.push(n);
    on.add(n);
    for (const m of next(n)) {
      if (!at.has(m)) {
        visit(m);
        low.set(n, Math.min(low.get(n)!, low.get(m)!));
      } else if (on.has(m)) low.set(n, Math.min(low.get(n)!, at.get(m)!));
    }
    if (low.get(n) === at.get(n)) {
      const group: string[] = [];
      let m: string;
      do {
        m = stack.pop()!;
        on.delete(m);
        group.push(m);
      } while (m !== n);
      if (group.length > 1) found.push(group.sort());
    }
  };
  for (const n of nodes) if (!at.has(n)) visit(n);
  return found;
}

export function layout() {
  const { files, edges } = importGraph();
  const rel = (f: string) => relative(ROOT, f);
  const fileCircles = circles(files, (f) => (edges.get(f) ?? []).filter((t) => edges.has(t))).map((g) => g.map(rel));
  const folders = [...new Set(files.map(folderOf))];
  const folderEdges = new Map(folders.map((d) => [d, new Set<string>()]));
  const upward: string[] = [];
  for (const [from, targets] of edges) {
    for (const to of targets) {
      const [a, b] = [folderOf(from), folderOf(to)];
      if (a !== b) folderEdges.get(a)!.add(b);
      if (layerOf(b) > layerOf(a)) upward.push(`${rel(from)} -> ${rel(to)}`);
    }
  }
  const folderCircles = circles(folders, (d) => [...folderEdges.get(d)!]);
  const unplaced = folders.filter((d) => layerOf(d) < 0);
  const long = files.map((f) => ({ f: rel(f), lines: readFileSync(f, "utf8").split("\n").length })).filter((x) => x.lines > 400);
  return { fileCircles, folderCircles, upward, unplaced, long };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const l = layout();
  console.log(`file circles: ${l.fileCircles.length}`);
  for (const c of l.fileCircles) console.log(`  ${c.join(" <-> ")}`);
  console.log(`folder circles: ${l.folderCircles.length}`);
  for (const c of l.folderCircles) console.log(`  ${c.join(" <-> ")}`);
  console.log(`imports pointing up: ${l.upward.length}`);
  for (const u of l.upward) console.log(`  ${u}`);
  if (l.unplaced.length) console.log(`folders without a layer: ${l.unplaced.join(", ")}`);
  console.log(`files over 400 lines: ${l.long.length}`);
  for (const x of l.long) console.log(`  ${x.f} (${x.lines})`);
}
