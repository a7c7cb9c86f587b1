import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';

// The import graph of src/, read from the source text: every `import`, `import type`,
// `export ... from` and `import()` of a relative module is an edge.
const SRC = path.join(__dirname, '..', '..', 'src');
const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

function resolve(from: string, spec: string): string | null {
  if (!spec.startsWith('.')) return null;
  const base = path.resolve(path.dirname(from), spec);
  for (const candidate of [`${base}.ts`, path.join(base, 'index.ts')]) if (fs.existsSync(candidate)) return candidate;
  throw new Error(`${path.relative(SRC, from)} imports ${spec}, which does not exist`);
}

const rel = (file: string) => path.relative(SRC, file);
const graph = new Map<string, string[]>();
for (const file of sourceFiles(SRC)) {
  const text = fs.readFileSync(file, 'utf8');
  const targets = [...text.matchAll(IMPORT)].map((m) => resolve(file, m[1] ?? m[2])).filter((f): f is string => f !== null);
  graph.set(rel(file), [...new Set(targets.map(rel))]);
}

/** Every cycle's members (Tarjan's strongly connected components of more than one file, or a self-import). */
function cycles(edges: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || (edges.get(v) ?? []).includes(v)) found.push(component.sort());
  };
  for (const v of edges.keys()) if (!index.has(v)) visit(v);
  return found;
}

t.test('the cycle finder finds a cycle made of import type edges', async (t) => {
  const sample = new Map([
    ['a.ts', ['b.ts']],
    ['b.ts', ['c.ts']],
    ['c.ts', ['a.ts']],
    ['d.ts', ['a.ts']],
  ]);
  t.same(cycles(sample), [['a.ts', 'b.ts', 'c.ts']]);
  t.same(cycles(new Map([['a.ts', ['b.ts']], ['b.ts', []]])), []);
});

t.test('src/ has no import cycles, import type edges included', async (t) => {
  t.ok(graph.size > 20, `${graph.size} modules read`);
  t.same(cycles(graph), [], 'no strongly connected component of more than one module');
});

t.test('the shared types are a leaf: src/core/types.ts imports nothing of ours', async (t) => {
  t.same(graph.get(path.join('core', 'types.ts')), []);
});

/**
 * The folders are the layers, lowest first: the core (types, database, configuration, time, HTTP,
 * validation), the rules (who may do what, what a standing allows, the limits), the parts (stores
 * and services), the route tables; the entry points and the composition root stand above them
 * all at the top of src/. A file imports its own layer and the ones below, never one above.
 */
const LAYERS = ['core', 'rules', 'parts', 'api'];
const layerOf = (file: string): number => {
  const top = file.split(path.sep)[0];
  return LAYERS.includes(top) ? LAYERS.indexOf(top) : LAYERS.length;
};
const upwardEdges = (edges: Map<string, string[]>): string[] =>
  [...edges].flatMap(([file, targets]) => targets.filter((target) => layerOf(target) > layerOf(file)).map((target) => `${file} -> ${target}`));

t.test('the folder rule finds an import that reaches up a layer', async (t) => {
  const sample = new Map([
    [path.join('core', 'a.ts'), [path.join('core', 'b.ts')]],
    [path.join('rules', 'r.ts'), [path.join('core', 'a.ts')]],
    [path.join('core', 'b.ts'), [path.join('parts', 'p.ts')]],
    ['app.ts', [path.join('api', 'x.ts')]],
  ]);
  t.same(upwardEdges(sample), [`${path.join('core', 'b.ts')} -> ${path.join('parts', 'p.ts')}`]);
});

t.test('the folders are layers: nothing in core/, rules/, parts/ or api/ imports a folder above its own', async (t) => {
  t.ok([...graph.keys()].every((file) => LAYERS.includes(file.split(path.sep)[0]) || !file.includes(path.sep)), 'every file is in a layer or at the top');
  t.same(upwardEdges(graph), []);
});

t.test('the layers read top-down: the route tables are imported by the composition root only, and it by the entry point only', async (t) => {
  for (const [file, targets] of graph) {
    if (file.startsWith(`api${path.sep}`) || file === 'app.ts') continue;
    const intoApi = targets.filter((target) => target.startsWith(`api${path.sep}`));
    t.same(intoApi, [], `${file} does not import src/api/`);
  }
  for (const [file, targets] of graph) {
    if (file === 'server.ts') continue; // the entry point: it starts what app.ts builds
    t.notOk(targets.includes('app.ts'), `${file} does not import the composition root`);
  }
});
