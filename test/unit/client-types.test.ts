import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import ts from 'typescript';

/**
 * The browser code (static/js) is plain JavaScript, type-checked by `make typecheck` against
 * types made from docs/openapi.json and docs/asyncapi.json (scripts/client-types.mjs,
 * tsconfig.client.json). This makes the types again from the documents as they are, checks every
 * file of static/js with the same configuration, and holds the point of it: code that reads a
 * field an API record or a stream frame does not have fails the check.
 */
const ROOT = path.join(__dirname, '..', '..');
const JS = path.join(ROOT, 'static', 'js');
const types = (name: string) => JSON.stringify(path.join(ROOT, 'types', name));
const store = JSON.stringify(path.join(JS, 'store.js'));

/** Each reads something the documents do not promise: each must fail, naming the field. */
const WRONG: [string, string, string][] = [
  ['a misspelt field of a message record', 'contnet', `/** @param {import(${types('client')}).Message} m */\nexport const text = (m) => m.contnet;`],
  [
    'a field the channel record does not have, read from the store',
    'slowmode',
    `import { findChannel } from ${store};\nexport const slow = findChannel('s', 'c')?.slowmode;`,
  ],
  [
    'the message of a message_deleted frame, which carries only its id',
    'message',
    `import { onEvent } from ${store};\nonEvent('message_deleted', (ev) => ev.message.id);`,
  ],
];
/** The same places, read right: these compile, so the errors above are the fields' own. */
const RIGHT = `import { findChannel, onEvent } from ${store};
/** @param {import(${types('client')}).Message} m */
export const text = (m) => m.content;
export const slow = findChannel('s', 'c')?.slowmode_seconds;
onEvent('message_deleted', (ev) => ev.message_id);
`;

t.test('make typecheck checks every file of static/js, and fails on a wrong field of an API record', async (t) => {
  const made = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'client-types.mjs')], { encoding: 'utf8' });
  t.equal(made.status, 0, `scripts/client-types.mjs makes the types ${made.stderr}`);

  const files = fs.readdirSync(JS).filter((name) => name.endsWith('.js'));
  for (const name of files) t.match(fs.readFileSync(path.join(JS, name), 'utf8'), /^\/\/ @ts-check\n/, `${name} starts with // @ts-check`);

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chat-client-types-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const fixtures = [...WRONG.map(([, , source], i) => [`wrong${i}.js`, source]), ['right.js', RIGHT]];
  for (const [name, source] of fixtures) fs.writeFileSync(path.join(dir, name), `// @ts-check\n${source}\n`);

  const configFile = path.join(ROOT, 'tsconfig.client.json');
  const { config } = ts.readConfigFile(configFile, ts.sys.readFile);
  const parsed = ts.parseJsonConfigFileContent(config, ts.sys, ROOT, undefined, configFile);
  t.same(
    parsed.errors.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')),
    [],
    'tsconfig.client.json reads',
  );
  const program = ts.createProgram([...parsed.fileNames, ...fixtures.map(([name]) => path.join(dir, name))], parsed.options);
  const errors = new Map<string, string[]>();
  for (const d of ts.getPreEmitDiagnostics(program)) {
    const where = d.file ? path.relative(ROOT, d.file.fileName) : '(options)';
    errors.set(where, [...(errors.get(where) ?? []), ts.flattenDiagnosticMessageText(d.messageText, '\n')]);
  }
  const inClient = [...errors].filter(([where]) => !where.includes('chat-client-types-'));
  t.same(inClient, [], 'static/js type-checks without an error');
  t.ok(parsed.fileNames.filter((f) => f.startsWith(JS)).length === files.length, 'the check covers every file of static/js');

  const of = (name: string) => errors.get(path.relative(ROOT, path.join(dir, name))) ?? [];
  t.same(of('right.js'), [], 'reading the fields the documents promise compiles');
  WRONG.forEach(([what, field], i) => {
    const found = of(`wrong${i}.js`);
    t.ok(
      found.some((text) => text.includes(`'${field}'`)),
      `refused: ${what} (${found[0] ?? 'no error'})`,
    );
  });
});
