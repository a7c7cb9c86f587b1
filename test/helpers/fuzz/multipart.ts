import fc from 'fast-check';
import { Deferred, Long, type ResolveContext, materialize } from './deferred';
import { HOSTILE_EXPORTS } from './import-junk';
import type { JsonSchema } from './openapi';
import { type SchemaContext, mergeSchemas, validArb } from './schema';

/**
 * multipart/form-data bodies as data: generated from a request schema (a file part per binary
 * property, repeated parts for arrays, field parts for the rest), then bent: boundaries missing
 * or wrong, parts without Content-Disposition or without a name, empty and repeated names,
 * unknown names, odd file names and headers, empty and junk parts, no closing delimiter.
 *
 * `decodeMultipart` reads such a body strictly (RFC 7578 over RFC 2046) into the object the
 * schema is checked against: that, not how the body was made, decides whether it is valid.
 */
export type Style = 'quoted' | 'raw' | 'token' | 'star';

export interface MpPart {
  /** Content-Disposition: absent, form-data with (or without) name and filename, or another text. */
  disposition:
    | { kind: 'missing' }
    | { kind: 'form-data'; type: string; name?: { value: string; style: Style }; filename?: { value: string; style: Style | 'both' } }
    | { kind: 'text'; value: string };
  contentType?: string;
  headers: [string, string][];
  body: string | Uint8Array | Deferred;
}

export interface MpCase {
  mediaType: string;
  boundary: string;
  /** How the boundary appears in Content-Type: as is, quoted, missing, empty, or another one. */
  header: 'token' | 'quoted' | 'missing' | 'empty' | 'other';
  preamble: string;
  epilogue: string;
  newline: '\r\n' | '\n';
  close: 'proper' | 'missing' | 'no-final-newline' | 'truncated';
  parts: MpPart[];
}

// ---------------------------------------------------------------------------------------------
// Serialization

const escapeQuoted = (v: string) => v.replace(/"/g, '%22').replace(/\r/g, '%0D').replace(/\n/g, '%0A');

function param(key: string, value: string, style: Style): string {
  switch (style) {
    case 'quoted':
      return `${key}="${escapeQuoted(value)}"`;
    case 'raw':
      return `${key}="${value}"`;
    case 'token':
      return `${key}=${value}`;
    case 'star':
      return `${key}*=UTF-8''${encodeURIComponent(value.replace(/[\ud800-\udfff]/g, '\ufffd'))}`;
  }
}

function dispositionHeader(part: MpPart): string | undefined {
  const d = part.disposition;
  if (d.kind === 'missing') return undefined;
  if (d.kind === 'text') return d.value;
  const pieces = [d.type];
  if (d.name) pieces.push(param('name', d.name.value, d.name.style));
  if (d.filename) {
    if (d.filename.style === 'both') pieces.push(param('filename', d.filename.value, 'quoted'), param('filename', d.filename.value, 'star'));
    else pieces.push(param('filename', d.filename.value, d.filename.style));
  }
  return pieces.join('; ');
}

const toBytes = (v: unknown): Buffer => (v instanceof Uint8Array ? Buffer.from(v) : Buffer.from(String(v), 'utf8'));

/** The Content-Type header and the body bytes of a case. */
export function serializeMultipart(mp: MpCase, ctx: ResolveContext): { contentType: string; body: Buffer } {
  const nl = mp.newline;
  const chunks: Buffer[] = [];
  if (mp.preamble) chunks.push(Buffer.from(mp.preamble + nl, 'latin1'));
  for (const part of mp.parts) {
    const lines = [`--${mp.boundary}`];
    const disposition = dispositionHeader(part);
    if (disposition !== undefined) lines.push(`Content-Disposition: ${disposition}`);
    if (part.contentType !== undefined) lines.push(`Content-Type: ${part.contentType}`);
    for (const [k, v] of part.headers) lines.push(`${k}: ${v}`);
    chunks.push(Buffer.from(lines.join(nl) + nl + nl, 'utf8'));
    chunks.push(toBytes(materialize(part.body, ctx)));
    chunks.push(Buffer.from(nl));
  }
  if (mp.close === 'proper') chunks.push(Buffer.from(`--${mp.boundary}--${nl}${mp.epilogue}`, 'latin1'));
  if (mp.close === 'no-final-newline') chunks.push(Buffer.from(`--${mp.boundary}--`, 'latin1'));
  let body = Buffer.concat(chunks);
  if (mp.close === 'truncated') body = body.subarray(0, Math.max(0, body.length - 7));
  const b = mp.boundary;
  const contentType =
    mp.header === 'token'
      ? `${mp.mediaType}; boundary=${b}`
      : mp.header === 'quoted'
        ? `${mp.mediaType}; boundary="${b}"`
        : mp.header === 'missing'
          ? mp.mediaType
          : mp.header === 'empty'
            ? `${mp.mediaType}; boundary=`
            : `${mp.mediaType}; boundary=${b}x`;
  return { contentType, body };
}

// ---------------------------------------------------------------------------------------------
// Strict decoding (for the verdict)

export type Decoded = { ok: true; value: Record<string, unknown> } | { ok: false; reason: string } | { ok: 'unknown'; reason: string };

const TOKEN = /^[!#$%&'*+\-.0-9A-Z^_`a-z|~]+$/;

/** `type/subtype; a=b; c="d"` to its parts; null when malformed. */
export function parseMediaType(header: string): { type: string; params: Map<string, string> } | null {
  const semi = header.indexOf(';');
  const type = (semi === -1 ? header : header.slice(0, semi)).trim().toLowerCase();
  if (!/^[!#$%&'*+\-.0-9a-z^_`|~]+\/[!#$%&'*+\-.0-9a-z^_`|~]+$/.test(type)) return null;
  const params = new Map<string, string>();
  let rest = semi === -1 ? '' : header.slice(semi + 1);
  while (rest.trim()) {
    const m = /^\s*([!#$%&'*+\-.0-9A-Za-z^_`|~]+)\s*=\s*("((?:[^"\\]|\\.)*)"|[^;\s]*)\s*(;|$)/.exec(rest);
    if (!m) return null;
    const key = m[1].toLowerCase();
    const value = m[3] !== undefined ? m[3].replace(/\\(.)/g, '$1') : m[2];
    if (m[3] === undefined && value !== '' && !TOKEN.test(value)) params.set(`${key}!`, value); // not a token: noted
    if (params.has(key)) return null;
    params.set(key, value);
    rest = rest.slice(m[0].length);
  }
  return { type, params };
}

const BCHARS = /^[0-9A-Za-z'()+_,\-./:=? ]{0,69}[0-9A-Za-z'()+_,\-./:=?]$/;

function decodeDisposition(value: string): { type: string; params: Map<string, string> } | null {
  const semi = value.indexOf(';');
  const type = (semi === -1 ? value : value.slice(0, semi)).trim().toLowerCase();
  const params = new Map<string, string>();
  let rest = semi === -1 ? '' : value.slice(semi + 1);
  while (rest.trim()) {
    const m = /^\s*([!#$%&'*+\-.0-9A-Za-z^_`|~]+)\s*=\s*("((?:[^"\\]|\\.)*)"|[^;\s"]*)\s*(;|$)/.exec(rest);
    if (!m) return null;
    const key = m[1].toLowerCase();
    if (params.has(key)) return null;
    // An unquoted value must be a token (RFC 2183): one that is not is noted, and read as is.
    if (m[3] === undefined && !TOKEN.test(m[2])) params.set(`${key}!`, m[2]);
    params.set(key, m[3] !== undefined ? m[3].replace(/\\(.)/g, '$1') : m[2]);
    rest = rest.slice(m[0].length);
  }
  return { type, params };
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The form a multipart body carries, as the schema sees it: each name to its value (a string;
 * a file is a string of bytes), an array for a name the schema types as array or that is repeated.
 */
export function decodeMultipart(contentType: string, body: Buffer, schema: JsonSchema): Decoded {
  const media = parseMediaType(contentType);
  if (!media) return { ok: false, reason: 'Content-Type is malformed' };
  if (media.type !== 'multipart/form-data') return { ok: false, reason: `${media.type} is not multipart/form-data` };
  const boundary = media.params.get('boundary');
  if (boundary === undefined) return { ok: false, reason: 'Content-Type has no boundary' };
  if (boundary === '') return { ok: false, reason: 'the boundary is empty' };
  if (!BCHARS.test(boundary)) return { ok: 'unknown', reason: 'the boundary breaks RFC 2046 (length or characters)' };
  if (media.params.has('boundary!')) return { ok: 'unknown', reason: 'the boundary is not a token and not quoted' };
  const text = body.toString('latin1');
  const dash = `--${boundary}`;
  let at: number;
  if (text.startsWith(dash)) at = 0;
  else {
    const found = text.indexOf(`\r\n${dash}`);
    if (found === -1)
      return text.includes(`\n${dash}`) ? { ok: 'unknown', reason: 'bare LF line breaks' } : { ok: false, reason: 'no delimiter line for the boundary' };
    at = found + 2;
  }
  const parts: { headers: [string, string][]; content: string }[] = [];
  for (;;) {
    at += dash.length;
    if (text.startsWith('--', at)) break; // the close delimiter; the rest is the epilogue
    const eol = text.indexOf('\r\n', at);
    if (eol === -1 || /[^ \t]/.test(text.slice(at, eol))) {
      return text.indexOf('\n', at) !== -1 && !/[^ \t]/.test(text.slice(at, text.indexOf('\n', at)))
        ? { ok: 'unknown', reason: 'bare LF line breaks' }
        : { ok: false, reason: 'a delimiter line is followed by junk' };
    }
    const start = eol + 2;
    const next = text.indexOf(`\r\n${dash}`, start - 2);
    if (next === -1 || next < start - 2) return { ok: false, reason: 'no closing delimiter' };
    const raw = next < start ? '' : text.slice(start, next);
    let headerText = '';
    let content: string;
    if (raw.startsWith('\r\n')) content = raw.slice(2);
    else {
      const split = raw.indexOf('\r\n\r\n');
      if (split === -1) return { ok: false, reason: 'a part has no blank line after its headers' };
      headerText = raw.slice(0, split);
      content = raw.slice(split + 4);
    }
    const headers: [string, string][] = [];
    for (const line of headerText ? headerText.split('\r\n') : []) {
      const colon = line.indexOf(':');
      if (colon <= 0 || !TOKEN.test(line.slice(0, colon)))
        return { ok: false, reason: `a part header line is malformed: ${JSON.stringify(line.slice(0, 40))}` };
      // Header values are visible characters and blanks (RFC 5322, RFC 9110): a NUL or another control is malformed.
      if (/[\u0000-\u0008\u000a-\u001f\u007f]/.test(line)) return { ok: false, reason: 'a part header holds a control character' };
      headers.push([line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim()]);
    }
    parts.push({ headers, content });
    at = next + 2;
  }
  const props: Record<string, any> = typeof schema === 'object' ? (schema.properties ?? {}) : {};
  // No prototype: a field named constructor or toString is a field like any other.
  const form: Record<string, unknown[]> = Object.create(null);
  let unknownReason: string | undefined;
  for (const part of parts) {
    // A part that is not form-data is no field of the form: the document says the server
    // ignores it (RFC 7578 section 4.2 wants a Content-Disposition on every part; a receiver
    // may pass over one without).
    const dispositions = part.headers.filter(([k]) => k === 'content-disposition');
    if (dispositions.length === 0) continue;
    if (dispositions.length > 1) return { ok: 'unknown', reason: 'a part has two Content-Disposition headers' };
    const d = decodeDisposition(Buffer.from(dispositions[0][1], 'latin1').toString('utf8'));
    if (!d || d.type !== 'form-data') continue;
    const name = d.params.get('name');
    // busboy skips some nameless dispositions (`form-data;`) and reports others (`name=""`), which
    // the server refuses: either way not a case the document decides.
    if (name === undefined || name === '') return { ok: 'unknown', reason: 'a part has no name' };
    const loose = [...d.params.keys()].find((k) => k.endsWith('!'));
    if (loose) unknownReason ??= `the ${loose.slice(0, -1)} of a part is neither a token nor quoted`;
    let value: string;
    if (d.params.has('filename') || d.params.has('filename*')) value = part.content;
    else {
      try {
        value = utf8.decode(Buffer.from(part.content, 'latin1'));
      } catch {
        unknownReason = `field ${JSON.stringify(name)} is not UTF-8`;
        value = part.content;
      }
    }
    (form[name] ??= []).push(value);
  }
  const value: Record<string, unknown> = {};
  for (const [name, values] of Object.entries(form)) {
    const sub = props[name];
    const isArray = sub && typeof sub === 'object' && (sub.type === 'array' || (Array.isArray(sub.type) && sub.type.includes('array')));
    value[name] = isArray || values.length > 1 ? values : values[0];
  }
  if (unknownReason) return { ok: 'unknown', reason: unknownReason };
  return { ok: true, value };
}

// ---------------------------------------------------------------------------------------------
// Generation

/** Tiny real images (1x1) and look-alikes, for avatars and image attachments. */
export const SAMPLE_FILES: Record<string, Uint8Array> = {
  png: Buffer.from(
    '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005000201e5270ade0000000049454e44ae426082',
    'hex',
  ),
  gif: Buffer.from('47494638396101000100800000000000ffffff21f90401000000002c00000000010001000002024401003b', 'hex'),
  pngHeaderOnly: Buffer.from('89504e470d0a1a0a', 'hex'),
  jpegHeaderOnly: Buffer.from('ffd8ffe000104a464946', 'hex'),
  svg: Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>'),
  html: Buffer.from('<!doctype html><script>alert(1)</script>'),
  empty: new Uint8Array(0),
};

const fileNameArb = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('a.png', 'photo.jpg', 'notes.txt', 'report.pdf', 'clip.mp4', 'data.bin', 'x') },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 20 }) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '',
      ' ',
      '.',
      '..',
      '../../etc/passwd',
      '..\\..\\boot.ini',
      'C:\\fakepath\\a.png',
      '/abs/path.png',
      'a\u0000b.png',
      'a\r\nX-Injected: 1.png',
      'a"b.png',
      'a;b=c.png',
      '\u202eexe.png',
      'con',
      '😀.png',
      '%2e%2e%2fpasswd',
    ),
  },
  { weight: 1, arbitrary: fc.integer({ min: 256, max: 2000 }).map((n) => 'n'.repeat(n)) },
);

const fileBodyArb: fc.Arbitrary<string | Uint8Array | Deferred> = fc.oneof(
  { weight: 3, arbitrary: fc.uint8Array({ maxLength: 256 }) },
  { weight: 3, arbitrary: fc.constantFrom(...Object.values(SAMPLE_FILES)) },
  { weight: 1, arbitrary: fc.string({ maxLength: 64 }) },
  { weight: 1, arbitrary: fc.integer({ min: 64 * 1024, max: 2 * 1024 * 1024 }).map((n) => new Long('z', n)) },
  // Zips of a few KiB that unpack to a MiB of junk in a channel file (issue 45): for the import's upload.
  { weight: 1, arbitrary: fc.constantFrom(...Object.values(HOSTILE_EXPORTS)) },
);

const partContentType = fc.option(
  fc.constantFrom(
    'application/octet-stream',
    'image/png',
    'image/jpeg',
    'text/plain',
    'text/plain; charset=utf-8',
    'text/html',
    'image/svg+xml',
    '',
    'garbage',
    'multipart/form-data; boundary=inner',
  ),
  { nil: undefined, freq: 3 },
);

const nameStyle = fc.constantFrom<Style>('quoted', 'quoted', 'quoted', 'quoted', 'token', 'raw', 'star');
const fileStyle = fc.constantFrom<Style | 'both'>('quoted', 'quoted', 'quoted', 'star', 'both', 'token', 'raw');

const isBinary = (sub: any) => sub && typeof sub === 'object' && (sub.contentMediaType || sub.format === 'binary' || sub.contentEncoding);

function fieldPart(name: string, body: unknown, style: Style = 'quoted'): MpPart {
  return { disposition: { kind: 'form-data', type: 'form-data', name: { value: name, style } }, headers: [], body: body as MpPart['body'] };
}

function filePart(name: string, filename: string, body: MpPart['body'], contentType?: string): MpPart {
  return {
    disposition: { kind: 'form-data', type: 'form-data', name: { value: name, style: 'quoted' }, filename: { value: filename, style: 'quoted' } },
    contentType: contentType ?? 'application/octet-stream',
    headers: [],
    body,
  };
}

/** The parts a well-formed body for the schema would hold, in a shuffled order. */
function schemaParts(schema: Record<string, any>, ctx: SchemaContext): fc.Arbitrary<MpPart[]> {
  const props: Record<string, any> = schema.properties ?? {};
  const required = new Set<string>(schema.required ?? []);
  const perProp = Object.entries(props).map(([name, sub]) => {
    let parts: fc.Arbitrary<MpPart[]>;
    if (sub.type === 'array') {
      const item = sub.items ?? {};
      const one = isBinary(item)
        ? fc.tuple(fileNameArb, fileBodyArb, partContentType).map(([fn, body, ct]) => filePart(name, fn, body, ct))
        : validArb(item, ctx, [name, '[]']).map((v) => fieldPart(name, typeof v === 'string' || v instanceof Deferred ? v : JSON.stringify(v)));
      parts = fc.array(one, { minLength: required.has(name) ? Math.max(1, sub.minItems ?? 0) : 0, maxLength: Math.max(sub.maxItems ?? 6, 1) });
    } else if (isBinary(sub)) {
      parts = fc.tuple(fileNameArb, fileBodyArb, partContentType).map(([fn, body, ct]) => [filePart(name, fn, body, ct)]);
    } else {
      parts = validArb(sub, ctx, [name]).map((v) => [fieldPart(name, typeof v === 'string' || v instanceof Deferred ? v : JSON.stringify(v))]);
    }
    return required.has(name) ? parts : fc.oneof(parts, fc.constant([] as MpPart[]));
  });
  return fc
    .tuple(...perProp)
    .map((groups) => groups.flat())
    .chain((parts) => (parts.length > 1 ? fc.shuffledSubarray(parts, { minLength: parts.length, maxLength: parts.length }) : fc.constant(parts)));
}

/** One change that may make a body malformed or unexpected. */
function mutatePart(known: string[]): fc.Arbitrary<(parts: MpPart[]) => MpPart[]> {
  const nameArb = fc.oneof(
    fc.constantFrom(
      '',
      ' ',
      'x',
      'Content',
      'attachments[]',
      'attachment',
      'file',
      'avatar',
      'content',
      'reply_to',
      'attachments',
      'a"b',
      'a;b',
      '\u0000',
      'ÄÖ',
      '😀',
    ),
    fc.string({ maxLength: 12 }),
    fc.integer({ min: 101, max: 3000 }).map((n) => 'n'.repeat(n)),
    ...(known.length ? [fc.constantFrom(...known)] : []),
  );
  const at =
    <T>(f: (p: MpPart) => T) =>
    (parts: MpPart[], i: number) =>
      parts.length ? parts.map((p, j) => (j === i % parts.length ? f(p) : p)) : parts;
  return fc.oneof(
    // a part whose Content-Disposition has an empty or missing name (it once stopped the server): weighted up
    {
      weight: 4,
      arbitrary: fc.tuple(fc.nat(), fc.constantFrom<'empty' | 'missing'>('empty', 'missing')).map(
        ([i, how]) =>
          (parts: MpPart[]) =>
            at((p) => {
              const name = how === 'empty' ? { value: '', style: 'quoted' as Style } : undefined;
              return {
                ...p,
                disposition: p.disposition.kind === 'form-data' ? { ...p.disposition, name } : { kind: 'form-data' as const, type: 'form-data', name },
              };
            })(parts, i),
      ),
    },
    // no Content-Disposition at all
    { weight: 2, arbitrary: fc.nat().map((i) => (parts: MpPart[]) => at((p) => ({ ...p, disposition: { kind: 'missing' as const } }))(parts, i)) },
    // another disposition text
    fc
      .tuple(
        fc.nat(),
        fc.constantFrom(
          'attachment; name="content"',
          'inline',
          'form-data',
          'form-data;',
          'form-data; name',
          'form-data; name="a"; name="b"',
          'form-data; name="x',
          'form-data; name=a b',
          'FORM-DATA; NAME="content"',
          'form-data; filename="only.png"',
          'form-data;;name="content"',
        ),
      )
      .map(
        ([i, value]) =>
          (parts: MpPart[]) =>
            at((p) => ({ ...p, disposition: { kind: 'text' as const, value } }))(parts, i),
      ),
    // an unknown or odd name
    fc.tuple(fc.nat(), nameArb, nameStyle).map(
      ([i, value, style]) =>
        (parts: MpPart[]) =>
          at((p) => (p.disposition.kind === 'form-data' ? { ...p, disposition: { ...p.disposition, name: { value, style } } } : p))(parts, i),
    ),
    // a repeated part
    fc.nat().map((i) => (parts: MpPart[]) => (parts.length ? [...parts, parts[i % parts.length]] : parts)),
    // an extra part: a field, a file, or empty
    fc
      .tuple(nameArb, fc.option(fileNameArb, { nil: undefined }), fc.oneof(fc.string({ maxLength: 30 }), fileBodyArb), fc.option(fileStyle, { nil: undefined }))
      .map(([name, filename, body, style]) => (parts: MpPart[]) => [
        ...parts,
        {
          disposition: {
            kind: 'form-data' as const,
            type: 'form-data',
            name: { value: name, style: 'quoted' as Style },
            filename: filename !== undefined ? { value: filename, style: style ?? 'quoted' } : undefined,
          },
          headers: [],
          body,
        },
      ]),
    fc.constant((parts: MpPart[]) => [...parts, { disposition: { kind: 'missing' as const }, headers: [], body: '' }]),
    // a file name, or a file turned into a field and back
    fc.tuple(fc.nat(), fileNameArb, fileStyle).map(
      ([i, value, style]) =>
        (parts: MpPart[]) =>
          at((p) => (p.disposition.kind === 'form-data' ? { ...p, disposition: { ...p.disposition, filename: { value, style } } } : p))(parts, i),
    ),
    fc
      .nat()
      .map(
        (i) => (parts: MpPart[]) =>
          at((p) => (p.disposition.kind === 'form-data' ? { ...p, disposition: { ...p.disposition, filename: undefined } } : p))(parts, i),
      ),
    // part headers: odd, many, long, malformed
    fc
      .tuple(
        fc.nat(),
        fc.oneof(
          fc.constantFrom<[string, string][]>(
            [['Content-Transfer-Encoding', 'base64']],
            [['Content-Type', 'text/plain; charset=utf-16']],
            [['X-Junk', '']],
            [['Content-Length', '999999']],
            [['Content-Disposition', 'form-data; name="content"']],
          ),
          fc.integer({ min: 17, max: 40 }).map((n) => Array.from({ length: n }, (_, k) => [`X-H${k}`, 'v'] as [string, string])),
          fc.integer({ min: 8_000, max: 100_000 }).map((n) => [['X-Long', 'v'.repeat(n)]] as [string, string][]),
          fc.tuple(fc.string({ minLength: 1, maxLength: 10 }), fc.string({ maxLength: 20 })).map(([k, v]) => [[k, v]] as [string, string][]),
        ),
      )
      .map(
        ([i, headers]) =>
          (parts: MpPart[]) =>
            at((p) => ({ ...p, headers: [...p.headers, ...headers] }))(parts, i),
      ),
    // empty body of a part
    fc.nat().map((i) => (parts: MpPart[]) => at((p) => ({ ...p, body: '' }))(parts, i)),
    // drop a part
    fc.nat().map((i) => (parts: MpPart[]) => parts.filter((_, j) => j !== i % Math.max(parts.length, 1))),
  );
}

const boundaryArb = fc.oneof(
  { weight: 6, arbitrary: fc.stringMatching(/^[0-9A-Za-z]{8,30}$/).map((s) => `----fuzz${s}`) },
  { weight: 1, arbitrary: fc.stringMatching(/^[0-9A-Za-z'()+_,\-./:=?]{1,69}[0-9A-Za-z]$/) },
  { weight: 1, arbitrary: fc.constantFrom('a', '-', 'x y', 'content', 'boundary', '--', '"') },
  { weight: 1, arbitrary: fc.integer({ min: 71, max: 300 }).map((n) => 'b'.repeat(n)) },
);

/** A multipart body for a schema: mostly well-formed, often with one or two changes. */
export function multipartArb(schema: JsonSchema, ctx: SchemaContext): fc.Arbitrary<MpCase> {
  const s = typeof schema === 'object' ? schema : {};
  const known = Object.keys(s.properties ?? {});
  // One branch of an anyOf / oneOf at a time (content or attachments), merged with the rest.
  const choice = (['anyOf', 'oneOf'] as const).find((k) => Array.isArray(s[k]) && s[k].length);
  const shapes: Record<string, any>[] = choice
    ? (s[choice] as JsonSchema[]).map((branch) => {
        const { [choice]: _branches, ...rest } = s;
        return mergeSchemas(rest, branch, ctx) as Record<string, any>;
      })
    : [s];
  const wellFormed = fc.constantFrom(...shapes).chain((shape) => schemaParts(shape, ctx));
  const parts = fc.tuple(wellFormed, fc.array(mutatePart(known), { maxLength: 2 })).map(([list, mutations]) => mutations.reduce((acc, m) => m(acc), list));
  const frame = fc.record({
    mediaType: fc.constantFrom(
      'multipart/form-data',
      'multipart/form-data',
      'multipart/form-data',
      'multipart/form-data',
      'Multipart/Form-Data',
      'multipart/mixed',
      'multipart/form-data; charset=utf-8',
      'multipart/related',
    ),
    boundary: boundaryArb,
    header: fc.constantFrom<MpCase['header']>('token', 'token', 'token', 'token', 'token', 'quoted', 'missing', 'empty', 'other'),
    preamble: fc.oneof({ weight: 6, arbitrary: fc.constant('') }, { weight: 1, arbitrary: fc.string({ maxLength: 30 }).filter((p) => !p.includes('--')) }),
    epilogue: fc.oneof({ weight: 6, arbitrary: fc.constant('') }, { weight: 1, arbitrary: fc.string({ maxLength: 30 }) }),
    newline: fc.constantFrom<MpCase['newline']>('\r\n', '\r\n', '\r\n', '\r\n', '\r\n', '\r\n', '\r\n', '\n'),
    close: fc.constantFrom<MpCase['close']>('proper', 'proper', 'proper', 'proper', 'proper', 'proper', 'missing', 'no-final-newline', 'truncated'),
  });
  return fc.tuple(frame, parts).map(([f, p]) => ({ ...f, parts: p }));
}
