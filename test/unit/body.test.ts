import { Readable } from 'node:stream';
import type { IncomingMessage } from 'node:http';
import t from 'tap';
import { MAX_JSON_BYTES, MAX_JSON_DEPTH, decodeUtf8, mediaType, parseJsonObject, readForm, readJson, readRaw } from '../../src/core/http/body';

/** A request stand-in: headers plus a body stream, which is all the readers use. */
const request = (headers: Record<string, string>, chunks: (string | Buffer)[] = []): IncomingMessage =>
  Object.assign(Readable.from(chunks.map((c) => Buffer.from(c))), { headers }) as unknown as IncomingMessage;

t.test('parseJsonObject returns objects without a prototype, all the way down', async (t) => {
  const body = parseJsonObject('{"a": 1, "nested": {"b": [{"c": true}]}}');
  t.equal(Object.getPrototypeOf(body), null);
  t.equal(Object.getPrototypeOf(body.nested), null);
  t.equal(Object.getPrototypeOf((body.nested as { b: object[] }).b[0]), null);
  t.ok(Array.isArray((body.nested as { b: unknown }).b), 'arrays stay arrays');
  t.equal(body.a, 1);
});

t.test('parseJsonObject drops keys that could reach a prototype', async (t) => {
  const body = parseJsonObject('{"__proto__": {"polluted": 1}, "constructor": {"prototype": {"polluted": 1}}, "prototype": 1, "ok": {"__proto__": 2}}');
  t.same(Object.keys(body), ['ok']);
  t.same(Object.keys(body.ok as object), []);
  t.equal(({} as Record<string, unknown>).polluted, undefined);
  t.equal(body.toString, undefined, 'nothing is inherited');
});

t.test('parseJsonObject refuses everything that is not one object with 400', async (t) => {
  const cases: [string, RegExp][] = [
    ['', /malformed/],
    ['{', /malformed/],
    ["{'a': 1}", /malformed/],
    ['{"a": 1} {"b": 2}', /malformed/],
    ['[]', /must be an object/],
    ['[1, 2]', /must be an object/],
    ['"x"', /must be an object/],
    ['1', /must be an object/],
    ['null', /must be an object/],
    ['false', /must be an object/],
  ];
  for (const [text, message] of cases) t.throws(() => parseJsonObject(text), { status: 400, message }, JSON.stringify(text));
});

t.test('mediaType ignores parameters and case', async (t) => {
  t.equal(mediaType(request({ 'content-type': 'Application/JSON; charset=utf-8' })), 'application/json');
  t.equal(mediaType(request({})), '');
});

t.test('readRaw refuses a declared length over the cap before reading anything', async (t) => {
  const req = request({ 'content-length': '11' }, ['12345678901']);
  await t.rejects(readRaw(req, 10), { status: 413, message: /larger than 10 bytes/, headers: { Connection: 'close' } });
  t.equal(req.readableDidRead, false, 'no byte was read');
});

t.test('readRaw stops a stream that grows past the cap', async (t) => {
  const req = request({}, ['12345', '67890', 'x', 'never reached']);
  await t.rejects(readRaw(req, 10), { status: 413, message: /larger than 10 bytes/, headers: { Connection: 'close' } });
});

t.test('readRaw returns a body at the cap', async (t) => {
  const raw = await readRaw(request({ 'content-length': '10' }, ['12345', '67890']), 10);
  t.equal(raw.toString(), '1234567890');
});

t.test('readJson needs application/json and the cap is 1 MiB', async (t) => {
  t.equal(MAX_JSON_BYTES, 1024 * 1024);
  await t.rejects(readJson(request({ 'content-type': 'text/plain' }, ['{}'])), { status: 415, message: /application\/json/ });
  const body = await readJson(request({ 'content-type': 'application/json' }, ['{"a":', '"b"}']));
  t.same({ ...body }, { a: 'b' });
});

t.test('readForm reads url-encoded fields into a prototype-free object', async (t) => {
  const body = await readForm(request({}, ['username=al%20ice&password=p%26ss&__proto__=x&constructor=y']));
  t.equal(Object.getPrototypeOf(body), null);
  t.same({ ...body }, { username: 'al ice', password: 'p&ss' });
});

t.test('a JSON body nests at most MAX_JSON_DEPTH levels; brackets inside strings do not count', async (t) => {
  const nest = (depth: number) => `{"a":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`;
  t.same(Object.keys(parseJsonObject(nest(MAX_JSON_DEPTH))), ['a'], `${MAX_JSON_DEPTH} levels parse`);
  t.throws(() => parseJsonObject(nest(MAX_JSON_DEPTH + 1)), { status: 400, message: /nests deeper than 64 levels/ });
  t.throws(() => parseJsonObject(`{"a":${'['.repeat(200_000)}`), { status: 400, message: /nests deeper/ }, 'a bracket flood is refused, not a stack overflow');
  t.equal(parseJsonObject(`{"a":"${'[{'.repeat(500)}\\"}"}`).a, `${'[{'.repeat(500)}"}`, 'brackets and escaped quotes in strings are text');
});

t.test('a JSON or form body that is not UTF-8 is 400, never stored as U+FFFD', async (t) => {
  const bad = Buffer.concat([Buffer.from('{"name":"nulla'), Buffer.from([0xff]), Buffer.from('"}')]);
  await t.rejects(readJson(request({ 'content-type': 'application/json' }, [bad])), { status: 400, message: /JSON body is not valid UTF-8/ });
  await t.rejects(readForm(request({}, [Buffer.from([0x61, 0x3d, 0xc3])])), { status: 400, message: /form body is not valid UTF-8/ });
  t.same(await readJson(request({ 'content-type': 'application/json' }, ['\ufeff{"a":"é"}'])), { a: 'é' }, 'a byte-order mark is passed over');
  t.equal(decodeUtf8(Buffer.from('😀'), 'x'), '😀');
});
