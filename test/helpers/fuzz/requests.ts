import fc from 'fast-check';
import { Concat, Deferred, Fx, Long, type ResolveContext, materialize } from './deferred';
import { COHERENT, KIND_OF_NAME, anyFixtureId, fixturesFor, fx, hintFor } from './hints';
import { type MpCase, decodeMultipart, multipartArb, parseMediaType, serializeMultipart } from './multipart';
import { type JsonSchema, type Operation, type Param, explodes, isArraySchema, resolvePointer, schemaErrors } from './openapi';
import { type SchemaContext, invalidArb, typesOf, validArb } from './schema';

/**
 * One generated request for an operation (path parameters, query, body, a few headers), how it
 * is turned into bytes on the wire, and the document's verdict on those bytes.
 */
export type PathValue = string | Deferred | { raw: string };
export type QueryValue = string | Deferred;

export type BodyCase =
  | { kind: 'none'; contentType?: string }
  | { kind: 'json'; value: unknown; contentType: string }
  | { kind: 'jsonNotUtf8'; value: unknown; contentType: string }
  | { kind: 'text'; text: string | Deferred; contentType?: string }
  | { kind: 'form'; fields: [string, unknown][]; contentType: string }
  | { kind: 'multipart'; mp: MpCase };

export interface Case {
  path: Record<string, PathValue>;
  query: [string, QueryValue][];
  /** Appended after the generated query, as is (malformed escapes, empty pairs). */
  rawQuery: string;
  body: BodyCase;
  headers: Record<string, string>;
  /** For a WebSocket operation: a real upgrade handshake (else a plain GET). */
  upgrade: boolean;
}

export interface Wire {
  method: string;
  /** Path and query, exactly as sent. */
  target: string;
  headers: Record<string, string>;
  body?: Buffer;
  upgrade: boolean;
}

export type Verdict = { kind: 'valid' } | { kind: 'invalid'; reasons: string[] } | { kind: 'unknown'; reasons: string[] };

export const schemaContext: SchemaContext = { resolveRef: resolvePointer, hint: hintFor };
/** Path and query values: no strings of thousands of characters (a request line over 16 KiB is Node's 431, before the server). */
const paramContext: SchemaContext = { ...schemaContext, long: false };

/** Percent-encoding of text as UTF-8; a lone surrogate goes out as U+FFFD (what UTF-8 can carry). */
export const pct = (value: string) => encodeURIComponent(value.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd'));

// ---------------------------------------------------------------------------------------------
// Generation

const MALFORMED_ENCODINGS = ['%', '%zz', '%C0%AF', '%ED%A0%80', '%E0%A4%A', '%%', '%uD800'];

function pathArbs(p: Param): { valid: fc.Arbitrary<PathValue>; invalid: fc.Arbitrary<PathValue> } {
  const kind = KIND_OF_NAME[p.name];
  const fixtures = fixturesFor(p.name);
  const own = fixtures ? [{ weight: 6, arbitrary: fixtures as fc.Arbitrary<PathValue> }] : [];
  const valid = fc.oneof(
    ...own,
    { weight: 2, arbitrary: anyFixtureId as fc.Arbitrary<PathValue> },
    {
      weight: 2,
      arbitrary: validArb(p.schema, { resolveRef: resolvePointer, long: false }, [p.name]).map((v) =>
        v instanceof Deferred ? v : String(v),
      ) as fc.Arbitrary<PathValue>,
    },
  );
  const bad = invalidArb(p.schema, { resolveRef: resolvePointer, long: false }, [p.name]);
  const invalid = fc.oneof(
    ...(bad
      ? [{ weight: 3, arbitrary: bad.map((v) => (v instanceof Deferred ? v : typeof v === 'string' ? v : JSON.stringify(v))) as fc.Arbitrary<PathValue> }]
      : []),
    { weight: 2, arbitrary: fc.constantFrom(...MALFORMED_ENCODINGS).map((raw) => ({ raw })) },
    {
      weight: 1,
      arbitrary: fc.tuple(fx(kind ?? 'server'), fc.constantFrom('%00', '%20', '%2F', '.json', '/', ';x', '%0A')).map(([id, tail]) => new Concat([id, tail])),
    },
    { weight: 1, arbitrary: fc.constantFrom('.', '..', ' ', '\u0000', 'null', '-1', '0', '1e3', "'", '"', '<x>').map((s) => s as PathValue) },
  );
  return { valid, invalid };
}

/** A query parameter's value written as a query string carries it. */
function queryText(v: unknown): QueryValue {
  if (v instanceof Deferred) return v;
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean' || v === null) return String(v);
  return JSON.stringify(v);
}

/** A parameter's value as query pairs: an array repeats the parameter, or is comma-separated (style form, explode false). */
function queryPairs(p: Param, v: unknown): [string, QueryValue][] {
  if (isArraySchema(p.schema) && Array.isArray(v)) {
    if (explodes(p)) return v.map((x) => [p.name, queryText(x)]);
    return [[p.name, new Concat(v.flatMap((x, i) => (i ? [',', queryText(x)] : [queryText(x)])))]];
  }
  return [[p.name, queryText(v)]];
}

function queryArbs(params: Param[]): { valid: fc.Arbitrary<[string, QueryValue][]>; invalid?: fc.Arbitrary<[string, QueryValue][]> } {
  const one = (p: Param) => validArb(p.schema, paramContext, [p.name]).map((v) => queryPairs(p, v));
  const unknown = fc
    .tuple(fc.constantFrom('page', 'cursor', 'callback', 'x', 'limit[]', ''), fc.string({ maxLength: 8 }))
    .map(([k, v]) => [k, v] as [string, QueryValue]);
  const validList = fc
    .tuple(
      ...params.map((p) => (p.required ? one(p) : fc.oneof(fc.constant([] as [string, QueryValue][]), one(p)))),
      fc.oneof({ weight: 6, arbitrary: fc.constant([] as [string, QueryValue][]) }, { weight: 1, arbitrary: unknown.map((e) => [e]) }),
    )
    .map((groups) => groups.flat());
  if (params.length === 0) return { valid: validList };
  const mutations: fc.Arbitrary<[string, QueryValue][]>[] = [];
  for (const p of params) {
    const bad = invalidArb(p.schema, paramContext, [p.name]);
    if (bad) mutations.push(fc.tuple(validList, bad).map(([list, v]) => [...list.filter(([k]) => k !== p.name), ...queryPairs(p, v)]));
    // given twice: the document does not say which counts
    mutations.push(fc.tuple(validList, one(p), one(p)).map(([list, a, b]) => [...list.filter(([k]) => k !== p.name), ...a, ...b]));
    if (p.required) mutations.push(validList.map((list) => list.filter(([k]) => k !== p.name)));
  }
  return { valid: validList, invalid: fc.oneof(...mutations) };
}

const MALFORMED_JSON = [
  '{',
  '{"a":',
  'nul',
  '[',
  '{"content": "x",}',
  "{'name': 'x'}",
  '{"a":1}{"b":2}',
  '\u0000',
  'undefined',
  '{"name": "x" /* c */}',
  '\ufeff{}',
  '{"name": NaN}',
  '{"name": Infinity}',
  '{"name": 1e999}',
  '{"name": "\\ud800"}',
  '{"name": "\\u0000"}',
  '{"__proto__": {"is_admin": true}}',
  '{"constructor": {"prototype": {"x": 1}}}',
  '{"name":"a","name":5}',
  '0',
  '""',
  'true',
  '[]',
  '[{}]',
  'null',
];

function jsonContentTypes(ct: string): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 8, arbitrary: fc.constant(ct) },
    { weight: 1, arbitrary: fc.constantFrom(`${ct}; charset=utf-8`, `${ct};charset=UTF-8`, ct.toUpperCase()) },
  );
}

function bodyArbs(op: Operation): { valid: fc.Arbitrary<BodyCase>; invalid: fc.Arbitrary<BodyCase> } {
  const content = op.body?.content ?? {};
  const valids: { weight: number; arbitrary: fc.Arbitrary<BodyCase> }[] = [];
  const invalids: { weight: number; arbitrary: fc.Arbitrary<BodyCase> }[] = [];
  const documented = Object.keys(content);
  for (const [ct, media] of Object.entries(content)) {
    const schema = media.schema ?? {};
    if (ct === 'application/json') {
      valids.push({
        weight: 2,
        arbitrary: fc
          .tuple(validArb(schema, schemaContext), jsonContentTypes(ct))
          .map(([value, contentType]) => ({ kind: 'json', value, contentType }) as BodyCase),
      });
      const bad = invalidArb(schema, schemaContext);
      if (bad) invalids.push({ weight: 6, arbitrary: bad.map((value) => ({ kind: 'json', value, contentType: ct })) });
      invalids.push({
        weight: 2,
        arbitrary: fc.oneof(fc.constantFrom(...MALFORMED_JSON), fc.string({ maxLength: 20 })).map((text) => ({ kind: 'text', text, contentType: ct })),
      });
      invalids.push({
        weight: 1,
        arbitrary: fc.tuple(fc.integer({ min: 1000, max: 50_000 }), fc.constantFrom('[', '{"a":')).map(([n, open]) => ({
          kind: 'text',
          text: new Concat(open === '[' ? [new Long('[', n), new Long(']', n)] : [new Long(open, n), '1', new Long('}', n)]),
          contentType: ct,
        })),
      });
      // A valid value whose first string carries a byte that is not UTF-8.
      invalids.push({ weight: 1, arbitrary: validArb(schema, schemaContext).map((value) => ({ kind: 'jsonNotUtf8', value, contentType: ct }) as BodyCase) });
    } else if (ct === 'application/x-www-form-urlencoded') {
      const toFields = (value: unknown): [string, unknown][] =>
        value && typeof value === 'object' && !Array.isArray(value) && !(value instanceof Deferred)
          ? Object.entries(value).map(([k, v]) => [k, v instanceof Deferred || typeof v === 'string' ? v : JSON.stringify(v)])
          : [['', JSON.stringify(value)]];
      valids.push({
        weight: 2,
        arbitrary: validArb(schema, schemaContext).map((value) => ({ kind: 'form', fields: toFields(value), contentType: ct }) as BodyCase),
      });
      const bad = invalidArb(schema, schemaContext);
      if (bad) invalids.push({ weight: 4, arbitrary: bad.map((value) => ({ kind: 'form', fields: toFields(value), contentType: ct })) });
      invalids.push({
        weight: 1,
        arbitrary: fc
          .constantFrom('%zz=1', '&&&', '=', 'a', 'username=%E0%A4%A', 'username=a&username=b')
          .map((text) => ({ kind: 'text', text, contentType: ct })),
      });
    } else if (ct === 'multipart/form-data') {
      // Multipart has the most to vary (and the parser the most to get wrong): weighted up.
      const mp = multipartArb(schema, schemaContext).map((m) => ({ kind: 'multipart', mp: m }) as BodyCase);
      valids.push({ weight: 4, arbitrary: mp });
      invalids.push({ weight: 12, arbitrary: mp });
    }
  }
  // A body of a media type the operation does not take, and no body at all.
  const json = fc.jsonValue({ maxDepth: 2 });
  const foreign = fc
    .tuple(
      json,
      fc.constantFrom(
        'text/plain',
        'application/xml',
        'application/json',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
        'application/octet-stream',
        'application/merge-patch+json',
        '',
      ),
    )
    .filter(([, ct]) => !documented.includes(parseMediaType(ct || 'x/x')?.type ?? ''))
    .map(([value, ct]) => ({ kind: 'text', text: JSON.stringify(value) ?? 'null', contentType: ct || undefined }) as BodyCase);
  if (op.body) {
    if (!op.body.required) valids.push({ weight: 1, arbitrary: fc.constant<BodyCase>({ kind: 'none' }) });
    invalids.push({ weight: 2, arbitrary: foreign });
    if (op.body.required) {
      invalids.push({
        weight: 1,
        arbitrary: fc.constantFrom<BodyCase>({ kind: 'none' }, ...documented.map((ct) => ({ kind: 'none', contentType: ct }) as BodyCase)),
      });
    }
  } else {
    valids.push({ weight: 1, arbitrary: fc.constant<BodyCase>({ kind: 'none' }) });
    invalids.push({ weight: 1, arbitrary: foreign });
    invalids.push({ weight: 1, arbitrary: json.map((value) => ({ kind: 'json', value, contentType: 'application/json' }) as BodyCase) });
  }
  return { valid: fc.oneof(...valids), invalid: fc.oneof(...invalids) };
}

const headerArb = fc.oneof(
  { weight: 12, arbitrary: fc.constant({} as Record<string, string>) },
  { weight: 1, arbitrary: fc.constantFrom<Record<string, string>>({ origin: 'http://evil.example' }, { origin: 'null' }, { 'sec-fetch-site': 'cross-site' }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom<Record<string, string>>(
      { range: 'bytes=0-0' },
      { range: 'bytes=5-1' },
      { range: 'bytes=-1' },
      { range: 'bytes=0-1,3-4' },
      { range: 'bytes=abc' },
      { range: 'bytes=99999999999999999999-' },
      { 'if-none-match': '*' },
      { 'if-none-match': '"x"' },
      { 'if-modified-since': 'yesterday' },
      { accept: 'application/xml' },
      { 'accept-encoding': 'gzip, br' },
    ),
  },
);

/** Requests for an operation: mostly valid parts, often one part broken (the verdict is computed later). */
export function caseArb(op: Operation): fc.Arbitrary<Case> {
  const paths = Object.fromEntries(op.pathParams.map((p) => [p.name, pathArbs(p)]));
  const independent = fc.record(Object.fromEntries(op.pathParams.map((p) => [p.name, paths[p.name].valid]))) as fc.Arbitrary<Record<string, PathValue>>;
  // Ids of one thread of the scene (the server's channel and its message...), the rest as usual.
  const threads = COHERENT.filter((t) => op.pathParams.filter((p) => t[p.name]).length >= Math.min(2, op.pathParams.length));
  const coherent = threads.length
    ? (fc.constantFrom(...threads).chain((thread) =>
        fc.record(
          Object.fromEntries(
            op.pathParams.map((p) => {
              const pick = thread[p.name];
              return [p.name, pick ? fc.constant(new Fx(pick[0], pick[1]) as PathValue) : paths[p.name].valid];
            }),
          ),
        ),
      ) as fc.Arbitrary<Record<string, PathValue>>)
    : undefined;
  const validPath = coherent && op.pathParams.length > 1 ? fc.oneof({ weight: 3, arbitrary: coherent }, { weight: 2, arbitrary: independent }) : independent;
  const query = queryArbs(op.queryParams);
  const body = bodyArbs(op);
  const rawQuery = fc.oneof(
    { weight: 15, arbitrary: fc.constant('') },
    { weight: 1, arbitrary: fc.constantFrom('&', '&&=&', '&%zz', '&=x', '&limit', '&%00=%00', '&a=%E0%A4%A') },
  );
  const upgrade = op.upgrade ? fc.oneof({ weight: 5, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }) : fc.constant(false);
  const build = (path: fc.Arbitrary<Record<string, PathValue>>, q: fc.Arbitrary<[string, QueryValue][]>, b: fc.Arbitrary<BodyCase>) =>
    fc.record({ path, query: q, rawQuery, body: b, headers: headerArb, upgrade }) as fc.Arbitrary<Case>;
  const branches: { weight: number; arbitrary: fc.Arbitrary<Case> }[] = [{ weight: 5, arbitrary: build(validPath, query.valid, body.valid) }];
  if (op.pathParams.length) {
    const onePathBad = fc.oneof(
      ...op.pathParams.map(
        (p) =>
          fc.record(Object.fromEntries(op.pathParams.map((q) => [q.name, q.name === p.name ? paths[q.name].invalid : paths[q.name].valid]))) as fc.Arbitrary<
            Record<string, PathValue>
          >,
      ),
    );
    branches.push({ weight: 1, arbitrary: build(onePathBad, query.valid, body.valid) });
  }
  if (query.invalid) branches.push({ weight: 2, arbitrary: build(validPath, query.invalid, body.valid) });
  branches.push({ weight: op.body ? 4 : 1, arbitrary: build(validPath, query.valid, body.invalid) });
  return fc.oneof(...branches);
}

// ---------------------------------------------------------------------------------------------
// Materialization

const encodeSegment = (value: string) => pct(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

export interface Materialized {
  wire: Wire;
  /** The same path with dot segments replaced, for the contract check (which parses with URL). */
  contractPath: string;
  verdict: Verdict;
}

export function materializeCase(op: Operation, c: Case, ctx: ResolveContext, cookie: string | undefined): Materialized {
  let target = '';
  let contractPath = '';
  const segments = op.route.split('/');
  const pathValues: Record<string, { raw: string; decoded?: string }> = {};
  for (const segment of segments.slice(1)) {
    const m = /^\{(.+)\}$/.exec(segment);
    if (!m) {
      target += `/${segment}`;
      contractPath += `/${segment}`;
      continue;
    }
    const v = c.path[m[1]];
    let raw: string;
    if (v && typeof v === 'object' && 'raw' in v) raw = v.raw;
    else raw = encodeSegment(String(materialize(v, ctx)));
    pathValues[m[1]] = { raw };
    target += `/${raw}`;
    contractPath += `/${/^(\.|%2e){1,2}$/i.test(raw) ? 'dot' : raw}`;
  }
  const query = c.query.map(([k, v]) => `${pct(k)}=${pct(String(materialize(v, ctx)))}`).join('&') + c.rawQuery;
  if (query) target += `?${query.replace(/^&/, '')}`;
  const headers: Record<string, string> = { ...c.headers };
  if (cookie) headers.cookie = cookie;
  let body: Buffer | undefined;
  const b = c.body;
  switch (b.kind) {
    case 'none':
      if (b.contentType) headers['content-type'] = b.contentType;
      break;
    case 'json':
      body = Buffer.from(JSON.stringify(materialize(b.value, ctx)) ?? 'null', 'utf8');
      headers['content-type'] = b.contentType;
      break;
    case 'jsonNotUtf8': {
      // The first string value gets a marker (which JSON writes as the escape \u0001), and the
      // escape is swapped for a raw 0xFF byte: the text is JSON but not UTF-8.
      let marked = false;
      const mark = (v: unknown): unknown => {
        if (marked) return v;
        if (typeof v === 'string') {
          marked = true;
          return `${v}\u0001`;
        }
        if (Array.isArray(v)) return v.map(mark);
        if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, mark(x)]));
        return v;
      };
      const text = JSON.stringify(mark(materialize(b.value, ctx))) ?? 'null';
      const at = text.indexOf('\\u0001');
      body =
        at === -1
          ? Buffer.from(text, 'utf8')
          : Buffer.concat([Buffer.from(text.slice(0, at), 'utf8'), Buffer.from([0xff]), Buffer.from(text.slice(at + 6), 'utf8')]);
      headers['content-type'] = b.contentType;
      break;
    }
    case 'text':
      body = Buffer.from(String(materialize(b.text, ctx)), 'utf8');
      if (b.contentType) headers['content-type'] = b.contentType;
      break;
    case 'form':
      body = Buffer.from(b.fields.map(([k, v]) => `${pct(k)}=${pct(String(materialize(v, ctx)))}`).join('&'), 'utf8');
      headers['content-type'] = b.contentType;
      break;
    case 'multipart': {
      const out = serializeMultipart(b.mp, ctx);
      body = out.body;
      headers['content-type'] = out.contentType;
      break;
    }
  }
  const wire: Wire = { method: op.method, target, headers, body, upgrade: c.upgrade };
  return { wire, contractPath: contractPath + (query ? `?${query.replace(/^&/, '')}` : ''), verdict: classify(op, wire) };
}

// ---------------------------------------------------------------------------------------------
// The verdict: the request as the document reads it

/** A query or path string as a value of the parameter's schema: a JSON number, true/false, else the string. */
function coerce(raw: string, schema: JsonSchema): unknown {
  const types = typesOf(schema, { resolveRef: resolvePointer });
  if (types === null || types.has('string')) return raw;
  if ((types.has('integer') || types.has('number')) && /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/.test(raw)) return Number(raw);
  if (types.has('boolean') && (raw === 'true' || raw === 'false')) return raw === 'true';
  if (types.has('null') && raw === 'null') return null;
  return raw;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

export function classify(op: Operation, wire: Wire): Verdict {
  const invalid: string[] = [];
  const unknown: string[] = [];
  const q = wire.target.indexOf('?');
  const pathname = q === -1 ? wire.target : wire.target.slice(0, q);
  const search = q === -1 ? '' : wire.target.slice(q + 1);
  // Path: each parameter decoded as a server must, then held against its schema.
  const routeSegments = op.route.split('/');
  const sent = pathname.split('/');
  if (sent.length !== routeSegments.length) unknown.push('the path has a different number of segments (an encoded slash decoded?)');
  else {
    routeSegments.forEach((segment, i) => {
      const m = /^\{(.+)\}$/.exec(segment);
      if (!m) return;
      const param = op.pathParams.find((p) => p.name === m[1])!;
      if (sent[i] === '') {
        unknown.push(`path ${param.name} is empty: the path names no operation`);
        return;
      }
      let value: string;
      try {
        value = decodeURIComponent(sent[i]);
      } catch {
        invalid.push(`path ${param.name} is not a valid percent-encoding (${sent[i]})`);
        return;
      }
      if (/^\.{1,2}$/.test(value)) unknown.push(`path ${param.name} is a dot segment`);
      const errors = schemaErrors(param.schema, coerce(value, param.schema), `path.${param.name}`);
      if (errors) invalid.push(...errors);
    });
  }
  // Query: documented parameters against their schemas; undocumented ones are allowed.
  const params = new URLSearchParams(search);
  for (const p of op.queryParams) {
    const values = params.getAll(p.name);
    if (values.length === 0) {
      if (p.required) invalid.push(`query ${p.name} is required`);
      continue;
    }
    let value: unknown;
    if (isArraySchema(p.schema)) {
      // Repeated (explode) or comma-separated; a comma list repeated is taken as one list.
      const items = explodes(p) ? values : values.flatMap((v) => v.split(','));
      const itemSchema = typeof p.schema === 'object' && p.schema.items !== undefined ? p.schema.items : {};
      value = items.map((x) => coerce(x, itemSchema));
    } else if (values.length > 1) {
      unknown.push(`query ${p.name} is given ${values.length} times`);
      continue;
    } else value = coerce(values[0], p.schema);
    const errors = schemaErrors(p.schema, value, `query.${p.name}`);
    if (errors) invalid.push(...errors);
  }
  // Body
  const body = wire.body ?? Buffer.alloc(0);
  const contentType = wire.headers['content-type'];
  if (body.length === 0) {
    if (op.body?.required) invalid.push('the request body is required');
  } else if (!op.body) {
    unknown.push('a body on an operation that documents none');
  } else {
    const media = contentType === undefined ? null : parseMediaType(contentType);
    const documented = media ? op.body.content[media.type] : undefined;
    // Register, login and logout also take a browser form, which the document describes in words
    // only: every answer to a form is a redirect, so no schema could say what a bad one gets.
    if (media?.type === 'application/x-www-form-urlencoded' && op.description.includes('A browser form may post')) unknown.push('a browser form');
    else if (!media || !documented) invalid.push(`the media type ${JSON.stringify(contentType ?? null)} is not one the operation takes`);
    else {
      const charset = media.params.get('charset');
      if (charset && !/^utf-?8$/i.test(charset)) unknown.push(`charset ${charset}`);
      const schema = documented.schema ?? {};
      if (media.type === 'application/json') {
        let text: string | undefined;
        try {
          text = utf8.decode(body);
        } catch {
          invalid.push('the JSON body is not UTF-8');
        }
        // RFC 8259 section 8.1: a parser MAY ignore a byte order mark, or refuse it.
        if (body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf) unknown.push('the JSON body starts with a byte order mark');
        else if (text !== undefined) {
          let value: unknown;
          let parsed = true;
          try {
            value = JSON.parse(text);
          } catch {
            parsed = false;
            invalid.push('the body is not JSON');
          }
          if (parsed) {
            const errors = schemaErrors(schema, value, 'body');
            if (errors) invalid.push(...errors);
          }
        }
      } else if (media.type === 'application/x-www-form-urlencoded') {
        const form = new URLSearchParams(body.toString('utf8'));
        const value: Record<string, string> = {};
        for (const key of new Set(form.keys())) {
          const all = form.getAll(key);
          if (all.length > 1) unknown.push(`form field ${key} is given ${all.length} times`);
          value[key] = all[0];
        }
        const errors = schemaErrors(schema, value, 'body');
        if (errors) invalid.push(...errors);
      } else if (media.type === 'multipart/form-data') {
        const decoded = decodeMultipart(contentType!, body, schema);
        if (decoded.ok === false) invalid.push(`multipart: ${decoded.reason}`);
        else if (decoded.ok === 'unknown') unknown.push(`multipart: ${decoded.reason}`);
        else {
          const errors = schemaErrors(schema, decoded.value, 'body');
          if (errors) invalid.push(...errors);
        }
      } else {
        unknown.push(`no reader for ${media.type}`);
      }
    }
  }
  if (invalid.length) return { kind: 'invalid', reasons: invalid };
  if (unknown.length) return { kind: 'unknown', reasons: unknown };
  return { kind: 'valid' };
}
