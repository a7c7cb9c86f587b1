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
  t.same(
    cycles(
      new Map([
        ['a.ts', ['b.ts']],
        ['b.ts', []],
      ]),
    ),
    [],
  );
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
  t.ok(
    [...graph.keys()].every((file) => LAYERS.includes(file.split(path.sep)[0]) || !file.includes(path.sep)),
    'every file is in a layer or at the top',
  );
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

/**
 * Inside src/parts/, the areas are layers too, lowest first: the data directory's backups (they
 * need no part); delivery (the hub, the event catalogue, frames), which every part that announces
 * stands on; community (servers, channels, members, the directory); messages (stored in
 * community's channels and conversations); accounts (erasing and exporting an account reach into
 * both); voice; live (the sockets, presence, `ready`: the sidebar shows them all); push (a message
 * to the people not looking); integrations; import; cluster (a core's sockets on gateways); and
 * services.ts, the list of every part. A file in parts/ imports its own area and the ones below,
 * never one above; what a lower area must know of a higher one it asks through a small interface
 * of its own, which src/app.ts answers (the hub's Membership, members' PresenceOf). A new area
 * has no place until it is given one here.
 */
const AREAS = ['backup', 'delivery', 'community', 'messages', 'accounts', 'voice', 'live', 'push', 'integrations', 'import', 'cluster', 'services'];
/** The area of a file in parts/: its folder, or the name of a file that stands alone there; null outside parts/. */
const areaOf = (file: string): string | null => {
  const [top, area, ...rest] = file.split(path.sep);
  if (top !== 'parts') return null;
  return rest.length > 0 ? area : area.replace(/\.ts$/, '');
};
const unplacedAreas = (edges: Map<string, string[]>): string[] =>
  [...new Set([...edges.keys()].map(areaOf))].filter((area): area is string => area !== null && !AREAS.includes(area)).sort();
const upwardAreaEdges = (edges: Map<string, string[]>): string[] =>
  [...edges].flatMap(([file, targets]) => {
    const from = areaOf(file);
    // An area not in the order is unplacedAreas()'s to report.
    if (from === null || !AREAS.includes(from)) return [];
    return targets.filter((target) => areaOf(target) !== null && AREAS.indexOf(areaOf(target)!) > AREAS.indexOf(from)).map((target) => `${file} -> ${target}`);
  });

t.test('the area rule finds an import that reaches up an area of parts/, and an area it cannot place', async (t) => {
  const p = (...names: string[]) => path.join('parts', ...names);
  const sample = new Map([
    [p('messages', 'store.ts'), [p('delivery', 'hub.ts'), p('messages', 'unread.ts'), path.join('core', 'db.ts')]],
    [p('messages', 'unread.ts'), [p('community', 'directory.ts')]],
    [p('community', 'members.ts'), [p('live', 'presence.ts')]],
    [p('services.ts'), [p('messages', 'store.ts'), p('live', 'presence.ts')]],
    [p('live', 'presence.ts'), [p('delivery', 'hub.ts')]],
    [p('delivery', 'hub.ts'), []],
    [p('threads', 'threads.ts'), [p('messages', 'store.ts')]],
    [path.join('api', 'x.ts'), [p('services.ts')]],
  ]);
  t.same(upwardAreaEdges(sample), [`${p('community', 'members.ts')} -> ${p('live', 'presence.ts')}`]);
  t.same(unplacedAreas(sample), ['threads']);
});

t.test('the areas of parts/ are layers: each is placed in the order, and none imports an area above its own', async (t) => {
  t.same(unplacedAreas(graph), [], `every area of parts/ is one of: ${AREAS.join(', ')}`);
  t.same(upwardAreaEdges(graph), []);
});
