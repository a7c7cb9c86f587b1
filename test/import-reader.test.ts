// Issue 45, item 1: a channel file is read against the format's schema, keeping only what it names
// (src/parts/import/json-reader.ts). What the schema ignores is never built; a kept value that
// cannot fit is refused as soon as it is seen, with the path of the value.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { Type } from '@sinclair/typebox';
import { HOSTILE_EXPORTS } from './helpers/fuzz/import-junk';
import { ImportError, openExport } from '../src/parts/import/export-files';
import { planDiscordImport, readChannel, scanExport } from '../src/parts/import/discord-plan';
import { channelFile, message, writeExport } from './helpers/discord-export';
import { JsonRefusal, MAX_KEPT_CHARS, boundedOrThrow, readJson } from '../src/parts/import/json-reader';
import { CHANNEL_FILE } from '../src/parts/import/discord-format';

const SCHEMA = Type.Object({
  name: Type.String({ maxLength: 10 }),
  tags: Type.Optional(Type.Array(Type.String({ maxLength: 5 }), { maxItems: 3 })),
  note: Type.Optional(Type.Union([Type.String({ maxLength: 100 }), Type.Null()])),
  items: Type.Array(Type.Object({ n: Type.Number(), big: Type.Optional(Type.String({ maxLength: MAX_KEPT_CHARS * 2 })) })),
});

/** Reads `text` in pieces of `size` characters: the root, and the streamed items. */
async function read(text: string, size = 7) {
  async function* pieces() {
    const bytes = Buffer.from(text);
    for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
  }
  const items: unknown[] = [];
  const root = await readJson(pieces(), SCHEMA, { streamed: 'items', onItem: (item) => items.push(item) });
  return { root, items };
}

const refused = (kind: 'json' | 'shape', message: RegExp) => ({ constructor: JsonRefusal, kind, message });

t.test('keeps what the schema names, item by item, in pieces of any size (multi-byte characters split too)', async (t) => {
  const text =
    '\ufeff{"junk": [[], {"a": "b"}, "x"], "name": "zoë ☃", "__proto__": {"polluted": true}, "items": [{"n": 1, "extra": [1, 2]}, {"n": 2.5}], "note": null}';
  for (const size of [1, 2, 3, 7, 1000]) {
    const { root, items } = await read(text, size);
    t.same(root, { name: 'zoë ☃', items: [], note: null }, `pieces of ${size} bytes: unknown keys skipped, a byte-order mark dropped`);
    t.same(items, [{ n: 1 }, { n: 2.5 }]);
    t.equal(({} as Record<string, unknown>).polluted, undefined, 'no prototype touched');
  }
});

t.test('refuses a kept value that cannot fit at once, with its path', async (t) => {
  const cases: [string, ReturnType<typeof refused>][] = [
    ['{"name": "' + 'x'.repeat(11) + '"', refused('shape', /^\/name: Expected string length less or equal to 10$/)],
    ['{"name": "a", "tags": ["a", "b", "c", "d"', refused('shape', /^\/tags: Expected array length to be less or equal to 3$/)],
    ['{"name": "a", "tags": [[]', refused('shape', /^\/tags\/0: Expected string, not array$/)],
    ['{"name": "a", "note": 5,', refused('shape', /^\/note: Expected string or null, not number$/)],
    ['{"name": "a", "items": [{"n": "1"}', refused('shape', /^\/items\/0\/n: Expected number, not string$/)],
    ['[1, 2]', refused('shape', /^\/: Expected object, not array$/)],
    ['{"name": "a", "items": [{"n": 1, "big": "' + 'x'.repeat(MAX_KEPT_CHARS + 1), refused('shape', /^\/items\/0\/big: more than \d+ characters/)],
  ];
  // Each is refused before the file ends: none of these texts is whole JSON.
  for (const [text, expected] of cases) await t.rejects(read(text, 4096), expected, text.slice(0, 50));
});

t.test('refuses what is not JSON, too deep, or cut short', async (t) => {
  await t.rejects(read('{"name": "a",, }'), refused('json', /./));
  await t.rejects(read('{"junk": ' + '['.repeat(200)), refused('json', /depth/), 'nesting past the bound, even where the schema ignores it');
  await t.rejects(read('{"' + 'k'.repeat(10_000) + '": 1}', 4096), refused('json', /maxPackedLength/), 'a key longer than any the schema names');
  await t.rejects(read('{"name": "a"'), refused('json', /ends before its value does|expected/i));
  await t.rejects(read(''), refused('json', /expected a value/));
});

t.test('every string and array of the channel file has a bound (else the reader refuses to start)', async (t) => {
  t.doesNotThrow(() => boundedOrThrow(CHANNEL_FILE, 'messages'));
  t.throws(() => boundedOrThrow(Type.Object({ a: Type.String() }), 'items'), /\/a: a string with no maxLength/);
  t.throws(() => boundedOrThrow(Type.Object({ a: Type.Array(Type.Number()) }), 'items'), /\/a: an array with no maxItems/);
  t.throws(() => boundedOrThrow(Type.Object({ a: Type.Any() }), 'items'), /kind Any cannot be read/);
});

t.test("the fuzzer's hostile exports: each refused at once with its reason, or checked where the junk is ignored", async (t) => {
  const expected: Record<string, RegExp | null> = {
    ignoredField: null,
    keptArray: /\/messages\/0\/mentions\/0: Expected object, not array/,
    pastMaxItems: /\/messages\/0\/mentions: Expected array length to be less or equal to 1000/,
    longKeptString: /\/messages\/0\/content: Expected string length less or equal to 100000/,
    deep: /not JSON \(JSON nesting depth exceeds maxDepth/,
    notAnObject: /not a DiscordChatExporter channel file: \/: Expected object, not array/,
  };
  t.same(Object.keys(HOSTILE_EXPORTS).sort(), Object.keys(expected).sort());
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hostile-exports-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  for (const [what, zip] of Object.entries(HOSTILE_EXPORTS)) {
    t.ok(zip.length < 64 * 1024, `${what}: ${zip.length} bytes zipped`);
    const file = path.join(dir, `${what}.zip`);
    fs.writeFileSync(file, zip);
    const files = await openExport(file);
    try {
      if (expected[what] === null) t.equal((await planDiscordImport(files)).channels[0].messages, 1, `${what}: checked`);
      else await t.rejects(planDiscordImport(files), { constructor: ImportError, message: expected[what]! }, what);
    } finally {
      files.close();
    }
  }
});

t.test('the import reads whole only the files the dry run found plain; the rest it streams again, with the same messages', async (t) => {
  const messages = (prefix: string) => [1, 2, 3].map((n) => message({ content: `${prefix} ${n}` }));
  const plain = channelFile({ id: '810000000000000001', type: 'GuildTextChat', name: 'plain', messages: messages('plain') });
  // The same shape, each message carrying a field the schema ignores with far more values than it keeps.
  const junk = channelFile({
    id: '810000000000000002',
    type: 'GuildTextChat',
    name: 'junk',
    messages: messages('junk').map((m) => ({ ...m, padding: Array.from({ length: 200 }, () => []) })),
  });
  const dir = writeExport({ 'plain.json': plain, 'junk.json': junk });
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const files = await openExport(dir);
  t.teardown(() => files.close());
  const scan = await scanExport(files);
  const entry = (name: string) => scan.channels.find((c) => c.channel.name === name)!;
  t.same([...entry('plain').plain], ['plain.json'], 'a file of what the schema names: read whole by the import');
  t.same([...entry('junk').plain], [], 'a file of mostly ignored values: streamed again');
  for (const name of ['plain', 'junk']) {
    const { messages: read } = await readChannel(files, entry(name));
    t.same(
      read.map((m) => m.content),
      [`${name} 1`, `${name} 2`, `${name} 3`],
      `${name}: every message, in order`,
    );
  }
  t.notOk('padding' in (await readChannel(files, entry('junk'))).messages[0], 'streamed: nothing the schema ignores is kept');
});
