import fc from 'fast-check';
import { Long } from './deferred';
import type { JsonSchema } from './openapi';

/**
 * JSON Schema (the subset docs/openapi.json uses) to fast-check arbitraries.
 *
 * `validArb` aims at values the schema accepts; `invalidArb` at values it rejects (a dropped
 * required property, a wrong type, out of range, too long or short, a pattern or format
 * broken, an extra property where additionalProperties is false, a value outside an enum,
 * null where null is not allowed). Neither is trusted: whether a value is valid is decided by
 * Ajv against the document (requests.ts), never by which of the two made it.
 *
 * Supported: type (a name or a list), enum, const, properties / required /
 * additionalProperties, minLength / maxLength, pattern, minimum / maximum (and the exclusive
 * forms), multipleOf, items / prefixItems / minItems / maxItems / uniqueItems, anyOf / oneOf /
 * allOf, $ref to the document, format uuid / email / date-time / date / binary / byte / uri.
 */
export interface SchemaContext {
  resolveRef(ref: string): JsonSchema;
  /**
   * Extra values for a location (the property names leading to it): the fuzzer's dictionary
   * of real fixture ids, usernames and plausible texts. Mixed with the generic values.
   */
  hint?(path: string[], schema: Record<string, any>): fc.Arbitrary<unknown> | undefined;
  /** Strings of thousands of characters where no maxLength forbids them (default true). */
  long?: boolean;
}

type S = Record<string, any>;
type Weighted = { weight: number; arbitrary: fc.Arbitrary<unknown> };

const MAX_DEPTH = 8;
const SAFE = Number.MAX_SAFE_INTEGER;
const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

function deref(schema: JsonSchema, ctx: SchemaContext): JsonSchema {
  let current = schema;
  for (let i = 0; typeof current === 'object' && current && typeof current.$ref === 'string' && i < 32; i++) {
    const { $ref, ...rest } = current;
    const target = ctx.resolveRef($ref);
    // Siblings of $ref (2020-12 allows them) are merged over the target.
    current = Object.keys(rest).length && typeof target === 'object' ? { ...target, ...rest } : target;
  }
  return current;
}

const isEmptySchema = (s: S) =>
  !Object.keys(s).some(
    (k) =>
      ![
        'description',
        'title',
        'examples',
        'example',
        'default',
        '$comment',
        'deprecated',
        'readOnly',
        'writeOnly',
        'contentMediaType',
        'contentEncoding',
      ].includes(k),
  );

/** The JSON types a schema admits at its top level; null when any type may pass. */
export function typesOf(schema: JsonSchema, ctx: SchemaContext, depth = 0): Set<string> | null {
  const s = deref(schema, ctx);
  if (s === true) return null;
  if (s === false) return new Set();
  if (depth > MAX_DEPTH) return null;
  const typeOfValue = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : Number.isInteger(v) ? 'integer' : typeof v);
  let types: Set<string> | null = null;
  const meet = (other: Set<string> | null) => {
    if (other === null) return;
    if (types === null) types = new Set(other);
    else types = new Set([...types].filter((t) => other.has(t) || (t === 'integer' && other.has('number'))));
  };
  if (s.type !== undefined) {
    const list: string[] = Array.isArray(s.type) ? s.type : [s.type];
    meet(new Set(list));
  }
  if (s.const !== undefined) meet(new Set([typeOfValue(s.const)]));
  if (Array.isArray(s.enum)) meet(new Set(s.enum.map(typeOfValue)));
  for (const key of ['anyOf', 'oneOf'] as const) {
    if (!Array.isArray(s[key])) continue;
    const branches: (Set<string> | null)[] = s[key].map((b: JsonSchema) => typesOf(b, ctx, depth + 1));
    if (branches.some((b) => b === null)) continue;
    meet(new Set(branches.flatMap((b) => [...(b ?? [])])));
  }
  if (Array.isArray(s.allOf)) for (const b of s.allOf) meet(typesOf(b, ctx, depth + 1));
  return types;
}

// ---------------------------------------------------------------------------------------------
// Values of every JSON type, for wrong types and free-form schemas.

const smallJson = fc.jsonValue({ maxDepth: 2 });
const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: smallJson },
  { weight: 1, arbitrary: fc.constantFrom<unknown>(null, true, false, 0, -1, 1.5, '', ' ', [], {}, [null], { a: null }) },
);

const valuesOfType: Record<string, fc.Arbitrary<unknown>> = {
  null: fc.constant(null),
  boolean: fc.boolean(),
  integer: fc.oneof(fc.integer({ min: -1000, max: 1000 }), fc.constantFrom(0, -1, INT32_MAX, INT32_MIN, SAFE, -SAFE)),
  number: fc.oneof(
    fc.double({ noNaN: true, noDefaultInfinity: true }).filter((n) => !Number.isInteger(n)),
    fc.constantFrom(0.5, -0.5, 1e-300, 1.7976931348623157e308, 2 ** 53 + 0.5),
  ),
  string: fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom('', '1', '0', 'true', 'false', 'null', '[]', '{}', 'NaN')),
  array: fc.oneof(fc.array(smallJson, { maxLength: 3 }), fc.constant([])),
  object: fc.oneof(
    fc.dictionary(
      fc.string({ maxLength: 8 }).filter((k) => k !== '__proto__'),
      smallJson,
      { maxKeys: 3 },
    ),
    fc.constant({}),
  ),
};

function wrongTypeArb(types: Set<string>): fc.Arbitrary<unknown> | undefined {
  const wrong = Object.keys(valuesOfType).filter((t) => {
    if (t === 'number') return !types.has('number'); // a non-integer number
    if (t === 'integer') return !types.has('integer') && !types.has('number');
    return !types.has(t);
  });
  if (wrong.length === 0) return undefined;
  // null where it is not allowed is the most common slip of a client: weighted up.
  return fc.oneof(...wrong.map((t) => ({ weight: t === 'null' ? 3 : 1, arbitrary: valuesOfType[t] })));
}

// ---------------------------------------------------------------------------------------------
// Strings

/** Code-point length, as JSON Schema (and Ajv) count it. */
export const codePoints = (value: string) => {
  let n = 0;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < value.length) {
      const d = value.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
};

function formatArb(format: string): fc.Arbitrary<string> | undefined {
  switch (format) {
    case 'uuid':
      return fc.oneof(
        { weight: 6, arbitrary: fc.uuid() },
        { weight: 1, arbitrary: fc.uuid().map((u) => u.toUpperCase()) },
        { weight: 1, arbitrary: fc.constantFrom('00000000-0000-0000-0000-000000000000', 'ffffffff-ffff-ffff-ffff-ffffffffffff') },
      );
    case 'email':
      return fc.emailAddress();
    case 'date-time':
      return fc.date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('2200-01-01T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString());
    case 'date':
      return fc
        .date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('2200-01-01T00:00:00Z'), noInvalidDate: true })
        .map((d) => d.toISOString().slice(0, 10));
    case 'uri':
      return fc.webUrl();
    case 'byte':
      return fc.base64String({ maxLength: 64 });
    default:
      return undefined; // binary, password and unknown formats constrain nothing
  }
}

const badUuid = fc.oneof(
  fc.uuid().map((u) => u.replace(/-/g, '')),
  fc.uuid().map((u) => `${u}0`),
  fc.uuid().map((u) => u.slice(1)),
  fc.uuid().map((u) => `{${u}}`),
  fc.uuid().map((u) => `${u.slice(0, -1)}g`),
  fc.uuid().map((u) => ` ${u}`),
  fc.uuid().map((u) => `${u}\n`),
  fc.uuid().map((u) => u.replace(/-/g, '_')),
  fc.constantFrom('', '0', 'null', 'undefined', '../etc/passwd', "1' OR '1'='1", '\u0000'),
  fc.string({ maxLength: 40 }),
);

function badFormatArb(format: string): fc.Arbitrary<unknown> | undefined {
  switch (format) {
    case 'uuid':
      // Not "urn:uuid:<uuid>": ajv-formats accepts that prefix, the router does not; a difference
      // of readings of RFC 4122, not a defect, left out so it does not drown the findings.
      return badUuid;
    case 'email':
      return fc.oneof(
        fc.emailAddress().map((e) => e.replace('@', '')),
        fc.emailAddress().map((e) => `${e}@`),
        fc.emailAddress().map((e) => `<${e}>`),
        fc.constantFrom('', '@', 'a@', '@b.c', 'a b@c.d', 'a@b@c', 'a@[300.0.0.1]'),
        fc.string({ maxLength: 20 }),
      );
    case 'date-time':
      return fc.oneof(
        fc.date({ noInvalidDate: true }).map((d) => d.toString()),
        fc.date({ noInvalidDate: true }).map((d) => String(d.getTime())),
        fc.constantFrom('', '2026-13-01T00:00:00Z', '2026-02-30T00:00:00Z', '2026-01-01', '2026-01-01T25:00:00Z', 'yesterday'),
        fc.string({ maxLength: 30 }),
      );
    case 'date':
      return fc.constantFrom('', '2026-13-01', '2026-1-1', '01/01/2026', 'today');
    case 'uri':
      return fc.constantFrom('', 'not a uri', '://', 'http//x');
    default:
      return undefined;
  }
}

/** Text of `min`..`max` code points in several alphabets, whitespace and control characters included. */
function lengthBoundedString(min: number, max: number | undefined, long: boolean): fc.Arbitrary<unknown> {
  const cap = max ?? Math.max(min + 32, 32);
  const arbs: Weighted[] = [
    { weight: 4, arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: min, maxLength: cap }) },
    { weight: 2, arbitrary: fc.string({ unit: 'grapheme-composite', minLength: min, maxLength: cap }) },
    { weight: 2, arbitrary: fc.string({ unit: 'binary', minLength: min, maxLength: cap }) },
    {
      weight: 1,
      arbitrary: fc.string({
        unit: fc.constantFrom(' ', '\t', '\n', '\r', '\u00a0', '\u200b', '\u3000', '\u202e', '\ufeff'),
        minLength: min,
        maxLength: Math.max(min, Math.min(cap, 6)),
      }),
    },
  ];
  // Lone surrogates are strings too (JSON can carry them as \ud800 escapes).
  if (min <= 1 && cap >= 1) arbs.push({ weight: 1, arbitrary: fc.constantFrom('\ud800', '\udfff') });
  if (min <= 3 && cap >= 3) arbs.push({ weight: 1, arbitrary: fc.constantFrom('a\udc00b', '\u0000\u0001', '😀') });
  if (max !== undefined) {
    arbs.push({ weight: 1, arbitrary: fc.constantFrom('a', 'é', '😀', '字').map((u) => u.repeat(max)) });
    if (min > 0) arbs.push({ weight: 1, arbitrary: fc.constantFrom('a', '😀').map((u) => u.repeat(min)) });
  }
  const longMin = Math.max(min, 200);
  const longMax = Math.min(max ?? 100_000, 100_000);
  if (long && longMax >= longMin) {
    arbs.push({
      weight: 1,
      arbitrary: fc
        .tuple(fc.constantFrom('a', 'é', '😀', ' ', '字', '<'), fc.integer({ min: longMin, max: longMax }))
        .map(([unit, count]) => new Long(unit, count)),
    });
  }
  return fc.oneof(...arbs);
}

/** A pattern as JSON Schema reads it: ECMA-262, with the u flag (as Ajv compiles it). */
export function patternRegExp(pattern: string): RegExp {
  try {
    return new RegExp(pattern, 'u');
  } catch {
    return new RegExp(pattern);
  }
}

/** The index of the `]` that closes the character class opening at `i` (escapes skipped). */
function classEnd(source: string, i: number): number {
  let j = i + 1;
  while (j < source.length && source[j] !== ']') j += source[j] === '\\' ? 2 : 1;
  return j;
}

/** The source with every lookaround group, (?=...), (?!...), (?<=...), (?<!...), taken out. */
export function withoutLookarounds(source: string): string {
  let out = '';
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === '\\') {
      out += source.slice(i, i + 2);
      i++;
      continue;
    }
    if (c === '[') {
      // a class: copied up to its closing bracket
      const j = classEnd(source, i);
      out += source.slice(i, j + 1);
      i = j;
      continue;
    }
    if (c === '(' && /^\(\?(=|!|<=|<!)/.test(source.slice(i))) {
      let depth = 0;
      let j = i;
      for (; j < source.length; j++) {
        if (source[j] === '\\') j++;
        else if (source[j] === '[') j = classEnd(source, j);
        else if (source[j] === '(') depth++;
        else if (source[j] === ')' && --depth === 0) break;
      }
      i = j;
      continue;
    }
    out += c;
  }
  return out;
}

/** Characters a negated class is drawn from: ASCII, controls, Latin-1, several scripts, odd spaces, bidi marks, combining marks, emoji, astral. */
const ALPHABET = [
  ...Array.from({ length: 0x5f }, (_, i) => 0x20 + i),
  0x00,
  0x01,
  0x09,
  0x0a,
  0x0b,
  0x0d,
  0x1f,
  0x7f,
  0x85,
  0x9f,
  0xa0,
  0xad,
  0xdf,
  0xe9,
  0xff,
  0x0151,
  0x0301,
  0x03bb,
  0x0436,
  0x05d0,
  0x0628,
  0x061c,
  0x0915,
  0x1680,
  0x2003,
  0x200b,
  0x200e,
  0x2028,
  0x202e,
  0x2060,
  0x2066,
  0x20e3,
  0x2764,
  0x3000,
  0x3042,
  0x4e2d,
  0x5b57,
  0xd55c,
  0xe000,
  0xfe0f,
  0xfeff,
  0xfffd,
  0x1d400,
  0x1f44d,
  0x1f600,
  0x1f3f3,
  0x10ffff,
].map((c) => String.fromCodePoint(c));

/**
 * Every negated class [^...] of the source as a positive class of the ALPHABET characters it
 * admits (JavaScript's own regex engine decides): fast-check draws a negated class from a small
 * alphabet and filters, and never ends on [^\u0000-\u007f].
 */
export function positiveClasses(source: string): string {
  let out = '';
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === '\\') {
      out += source.slice(i, i + 2);
      i++;
      continue;
    }
    if (c !== '[') {
      out += c;
      continue;
    }
    const j = classEnd(source, i);
    const cls = source.slice(i, j + 1);
    i = j;
    if (!cls.startsWith('[^')) {
      out += cls;
      continue;
    }
    let test: RegExp;
    try {
      test = new RegExp(`^${cls}$`, 'u');
    } catch {
      out += cls;
      continue;
    }
    const kept = ALPHABET.filter((ch) => test.test(ch));
    // \uXXXX for the BMP (fast-check reads it, not \u{...}); astral characters as they are.
    const spell = (ch: string) => (ch.length === 1 ? `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}` : ch);
    out += kept.length ? `[${kept.map(spell).join('')}]` : cls;
  }
  return out;
}

/**
 * Strings matching a pattern, from fc.stringMatching over the pattern with its lookarounds
 * (which fast-check does not implement) taken out and its negated classes made positive, kept
 * when the whole pattern matches. undefined when that cannot be built or rarely matches.
 */
export function patternArb(pattern: string, maxLength?: number): fc.Arbitrary<string> | undefined {
  const re = patternRegExp(pattern);
  const constraints = maxLength !== undefined ? { maxLength } : {};
  const prepared = positiveClasses(withoutLookarounds(pattern));
  let arb: fc.Arbitrary<string>;
  try {
    arb = fc.stringMatching(new RegExp(prepared, 'u'), constraints);
  } catch {
    return undefined;
  }
  // Check that enough of them match, or the filter would spin.
  const probe = fc.sample(arb, { numRuns: 50, seed: 1 }).filter((v) => re.test(v)).length;
  return probe >= 5 ? arb.filter((v) => re.test(v)) : undefined;
}

function stringArb(s: S, ctx: SchemaContext): fc.Arbitrary<unknown> {
  const min = s.minLength ?? 0;
  const max: number | undefined = s.maxLength;
  const others: RegExp[] = (s['x-fuzz-patterns'] ?? []).map(patternRegExp);
  const fits = (v: string) => {
    const n = codePoints(v);
    return n >= min && (max === undefined || n <= max) && others.every((re) => re.test(v));
  };
  if (typeof s.pattern === 'string') {
    const matching = patternArb(s.pattern, max !== undefined ? Math.max(max, min) : undefined);
    if (matching) return min > 0 || max !== undefined || others.length ? matching.filter(fits) : matching;
    // A pattern fast-check cannot read: plain text, which Ajv will judge.
    return lengthBoundedString(min, max, ctx.long !== false);
  }
  const formatted = typeof s.format === 'string' ? formatArb(s.format) : undefined;
  if (formatted) return min > 0 || max !== undefined ? formatted.filter(fits) : formatted;
  return lengthBoundedString(min, max, ctx.long !== false);
}

// ---------------------------------------------------------------------------------------------
// Numbers

function bounds(s: S, integer: boolean): { lo: number; hi: number } {
  let lo = -SAFE;
  let hi = SAFE;
  if (typeof s.minimum === 'number') lo = Math.max(lo, s.minimum);
  if (typeof s.exclusiveMinimum === 'number')
    lo = Math.max(lo, integer ? Math.floor(s.exclusiveMinimum) + 1 : s.exclusiveMinimum + Number.EPSILON * Math.max(1, Math.abs(s.exclusiveMinimum)));
  if (typeof s.maximum === 'number') hi = Math.min(hi, s.maximum);
  if (typeof s.exclusiveMaximum === 'number')
    hi = Math.min(hi, integer ? Math.ceil(s.exclusiveMaximum) - 1 : s.exclusiveMaximum - Number.EPSILON * Math.max(1, Math.abs(s.exclusiveMaximum)));
  if (integer) {
    lo = Math.ceil(lo);
    hi = Math.floor(hi);
  }
  return { lo, hi };
}

function integerIn(lo: number, hi: number): fc.Arbitrary<number> {
  if (lo >= INT32_MIN && hi <= INT32_MAX) return fc.integer({ min: lo, max: hi });
  const arbs: fc.Arbitrary<number>[] = [fc.maxSafeInteger().filter((n) => n >= lo && n <= hi)];
  const smallLo = Math.max(lo, -1000);
  const smallHi = Math.min(hi, 1000);
  if (smallLo <= smallHi) arbs.unshift(fc.integer({ min: smallLo, max: smallHi }));
  return fc.oneof(...arbs);
}

function integerArb(s: S): fc.Arbitrary<unknown> {
  const { lo, hi } = bounds(s, true);
  if (lo > hi) return fc.constant(lo); // unsatisfiable; Ajv will say so
  const edges = [lo, hi, lo + 1, hi - 1, 0, 1, -1].filter((n) => n >= lo && n <= hi && Number.isSafeInteger(n));
  let arb: fc.Arbitrary<number> = fc.oneof({ weight: 4, arbitrary: integerIn(lo, hi) }, { weight: 1, arbitrary: fc.constantFrom(...edges) });
  if (typeof s.multipleOf === 'number' && s.multipleOf > 0) {
    const m = s.multipleOf;
    arb = integerIn(Math.ceil(lo / m), Math.floor(hi / m)).map((k) => k * m);
  }
  return arb;
}

function numberArb(s: S): fc.Arbitrary<unknown> {
  const { lo, hi } = bounds(s, false);
  if (lo > hi) return fc.constant(lo);
  const doubles = fc.double({ min: lo, max: hi, noNaN: true, noDefaultInfinity: true });
  const ints = Math.ceil(lo) <= Math.floor(hi) ? [integerArb({ ...s, minimum: Math.ceil(lo), maximum: Math.floor(hi) })] : [];
  return fc.oneof(doubles, ...ints);
}

// ---------------------------------------------------------------------------------------------
// Arrays and objects

function arrayArb(s: S, ctx: SchemaContext, path: string[], depth: number): fc.Arbitrary<unknown> {
  const min = s.minItems ?? 0;
  const max = s.maxItems ?? Math.max(min + 4, 4);
  const prefix: JsonSchema[] = Array.isArray(s.prefixItems) ? s.prefixItems : [];
  const rest: JsonSchema = s.items ?? (prefix.length ? true : true);
  const item = s.items === false ? undefined : validArb(rest === true ? {} : rest, ctx, [...path, '[]'], depth + 1);
  const head = prefix.map((p, i) => validArb(p, ctx, [...path, String(i)], depth + 1));
  const tailMin = Math.max(0, min - head.length);
  const tailMax = Math.max(tailMin, max - head.length);
  const tail = item
    ? s.uniqueItems
      ? fc.uniqueArray(item, { minLength: tailMin, maxLength: tailMax, selector: (v) => JSON.stringify(v) })
      : fc.array(item, { minLength: tailMin, maxLength: tailMax })
    : fc.constant([]);
  const arr = fc.tuple(fc.tuple(...head), tail).map(([h, t]) => [...h, ...t]);
  // Without a maxItems, now and then many items (caps the document may not state).
  if (s.maxItems === undefined && item && !s.uniqueItems) {
    return fc.oneof({ weight: 5, arbitrary: arr }, { weight: 1, arbitrary: fc.array(item, { minLength: Math.max(min, 20), maxLength: Math.max(min, 40) }) });
  }
  return arr;
}

const extraKey = (known: string[]) =>
  fc
    .oneof(fc.string({ minLength: 1, maxLength: 12 }), fc.constantFrom('id', 'user_id', 'admin', 'is_admin', 'owner_id', 'constructor', 'toString', ''))
    .filter((k) => !known.includes(k) && k !== '__proto__');

function objectArb(s: S, ctx: SchemaContext, path: string[], depth: number): fc.Arbitrary<unknown> {
  const props: Record<string, JsonSchema> = s.properties ?? {};
  const required: string[] = Array.isArray(s.required) ? s.required : [];
  const model: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [name, sub] of Object.entries(props)) model[name] = validArb(sub, ctx, [...path, name], depth + 1);
  for (const name of required) if (!(name in model)) model[name] = anyJson;
  const known = Object.keys(model);
  const base = fc.record(model, { requiredKeys: required.filter((k) => k in model) }) as fc.Arbitrary<Record<string, unknown>>;
  const ap = s.additionalProperties;
  const withExtras = (values: fc.Arbitrary<unknown>) =>
    fc.tuple(base, fc.array(fc.tuple(extraKey(known), values), { minLength: 1, maxLength: 3 })).map(([obj, extras]) => {
      const out: Record<string, unknown> = { ...obj };
      for (const [k, v] of extras) out[k] = v;
      return out;
    });
  let arb: fc.Arbitrary<Record<string, unknown>> = base;
  if (ap === false) arb = base;
  else if (ap && typeof ap === 'object')
    arb = fc.oneof({ weight: 3, arbitrary: base }, { weight: 1, arbitrary: withExtras(validArb(ap, ctx, [...path, '*'], depth + 1)) });
  else arb = fc.oneof({ weight: 5, arbitrary: base }, { weight: 1, arbitrary: withExtras(anyJson) });
  if (typeof s.minProperties === 'number' || typeof s.maxProperties === 'number') {
    arb = arb.filter((o) => {
      const n = Object.keys(o).length;
      return n >= (s.minProperties ?? 0) && n <= (s.maxProperties ?? Infinity);
    });
  }
  return arb;
}

/**
 * A schema both `a` and `b` describe (what allOf means, and what one branch of an anyOf or
 * oneOf means beside the keywords around it): properties merged one by one, required joined,
 * bounds tightened, types intersected; a second pattern is kept in x-fuzz-patterns and
 * checked on generated strings.
 */
export function mergeSchemas(a: JsonSchema, b: JsonSchema, ctx: SchemaContext): JsonSchema {
  const x = deref(a, ctx);
  const y = deref(b, ctx);
  if (x === true) return y;
  if (y === true) return x;
  if (x === false || y === false) return false;
  const out: S = { ...x };
  for (const [k, v] of Object.entries(y)) {
    const mine = out[k];
    if (mine === undefined) {
      out[k] = v;
      continue;
    }
    switch (k) {
      case 'properties': {
        const merged: Record<string, JsonSchema> = { ...mine };
        for (const [name, sub] of Object.entries(v as Record<string, JsonSchema>)) merged[name] = name in merged ? mergeSchemas(merged[name], sub, ctx) : sub;
        out.properties = merged;
        break;
      }
      case 'required':
        out.required = [...new Set([...mine, ...v])];
        break;
      case 'minLength':
      case 'minItems':
      case 'minProperties':
      case 'minimum':
      case 'exclusiveMinimum':
        out[k] = Math.max(mine, v);
        break;
      case 'maxLength':
      case 'maxItems':
      case 'maxProperties':
      case 'maximum':
      case 'exclusiveMaximum':
        out[k] = Math.min(mine, v);
        break;
      case 'type': {
        const left: string[] = Array.isArray(mine) ? mine : [mine];
        const right: string[] = Array.isArray(v) ? v : [v];
        const both = left
          .filter((t) => right.includes(t) || (t === 'integer' && right.includes('number')))
          .concat(right.filter((t) => t === 'integer' && left.includes('number')));
        out.type = both.length === 1 ? both[0] : [...new Set(both)];
        break;
      }
      case 'pattern':
        if (mine !== v) out['x-fuzz-patterns'] = [...(out['x-fuzz-patterns'] ?? []), mine];
        out.pattern = v;
        break;
      case 'additionalProperties':
        out[k] = mine === false || v === false ? false : v;
        break;
      case 'items':
        out.items = mergeSchemas(mine, v, ctx);
        break;
      case 'allOf':
        out.allOf = [...mine, ...v];
        break;
      default:
        out[k] = v;
    }
  }
  return out;
}

function mergeAllOf(s: S, ctx: SchemaContext): S {
  const { allOf, ...own } = s;
  return (allOf as JsonSchema[]).reduce<JsonSchema>((acc, part) => mergeSchemas(acc, part, ctx), own) as S;
}

// ---------------------------------------------------------------------------------------------

/** Values meant to pass `schema`, mixed with the context's hints at named locations. */
export function validArb(schema: JsonSchema, ctx: SchemaContext, path: string[] = [], depth = 0): fc.Arbitrary<unknown> {
  const s = deref(schema, ctx);
  if (s === true) return anyJson;
  if (s === false) return anyJson; // nothing passes; Ajv will say so
  if (depth > MAX_DEPTH) return fc.constant(null);
  const base = validBase(s, ctx, path, depth);
  const hint = ctx.hint?.(path, s);
  return hint ? fc.oneof({ weight: 3, arbitrary: hint }, { weight: 2, arbitrary: base }) : base;
}

function validBase(s: S, ctx: SchemaContext, path: string[], depth: number): fc.Arbitrary<unknown> {
  if (s.const !== undefined) return fc.constant(s.const);
  if (Array.isArray(s.enum)) return fc.constantFrom(...s.enum);
  if (Array.isArray(s.allOf)) return validArb(mergeAllOf(s, ctx), ctx, path, depth + 1);
  for (const key of ['anyOf', 'oneOf'] as const) {
    if (Array.isArray(s[key]) && s[key].length) {
      const { [key]: branches, ...rest } = s;
      return fc.oneof(...(branches as JsonSchema[]).map((b) => validArb(mergeSchemas(rest, b, ctx), ctx, path, depth + 1)));
    }
  }
  if (Array.isArray(s.type)) {
    if (s.type.length === 0) return anyJson;
    return fc.oneof(...s.type.map((t: string) => validBase({ ...s, type: t }, ctx, path, depth)));
  }
  const type: string | undefined =
    s.type ??
    (s.properties || s.required || s.additionalProperties !== undefined
      ? 'object'
      : s.items || s.prefixItems
        ? 'array'
        : s.minLength !== undefined || s.maxLength !== undefined || s.pattern || s.format
          ? 'string'
          : s.minimum !== undefined || s.maximum !== undefined
            ? 'number'
            : undefined);
  switch (type) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer':
      return integerArb(s);
    case 'number':
      return numberArb(s);
    case 'string':
      return stringArb(s, ctx);
    case 'array':
      return arrayArb(s, ctx, path, depth);
    case 'object':
      return objectArb(s, ctx, path, depth);
    default:
      return isEmptySchema(s) ? anyJson : anyJson;
  }
}

/** Values meant to fail `schema`, each one mutation away from a valid value; undefined when nothing can fail it. */
export function invalidArb(schema: JsonSchema, ctx: SchemaContext, path: string[] = [], depth = 0): fc.Arbitrary<unknown> | undefined {
  const s = deref(schema, ctx);
  if (s === true) return undefined;
  if (s === false) return anyJson;
  if (depth > MAX_DEPTH) return undefined;
  const plain: SchemaContext = { ...ctx, hint: undefined };
  const cands: Weighted[] = [];
  const types = typesOf(s, ctx);
  if (types) {
    const wrong = wrongTypeArb(types);
    if (wrong) cands.push({ weight: 3, arbitrary: wrong });
  }
  if (s.const !== undefined) {
    cands.push({ weight: 2, arbitrary: anyJson.filter((v) => JSON.stringify(v) !== JSON.stringify(s.const)) });
  }
  if (Array.isArray(s.enum)) {
    const inEnum = new Set(s.enum.map((v: unknown) => JSON.stringify(v)));
    const strings = s.enum.filter((v: unknown): v is string => typeof v === 'string');
    const near = strings.length
      ? fc
          .tuple(
            fc.constantFrom(...strings),
            fc.constantFrom<(v: string) => string>(
              (v) => v.toUpperCase(),
              (v) => ` ${v}`,
              (v) => `${v} `,
              (v) => v.slice(1),
              (v) => `${v}s`,
              (v) => `${v}\u0000`,
            ),
          )
          .map(([v, f]) => f(v))
      : anyJson;
    cands.push({ weight: 3, arbitrary: fc.oneof(near, fc.string({ maxLength: 10 }), fc.constant('')).filter((v) => !inEnum.has(JSON.stringify(v))) });
  }
  if (Array.isArray(s.allOf)) {
    const inner = invalidArb(mergeAllOf(s, ctx), ctx, path, depth + 1);
    if (inner) cands.push({ weight: 3, arbitrary: inner });
  }
  for (const key of ['anyOf', 'oneOf'] as const) {
    if (!Array.isArray(s[key])) continue;
    for (const branch of s[key] as JsonSchema[]) {
      const inner = invalidArb(branch, ctx, path, depth + 1);
      if (inner) cands.push({ weight: 1, arbitrary: inner });
    }
  }
  const declared: string[] = Array.isArray(s.type) ? s.type : s.type ? [s.type] : [];
  const looksLike = (t: string) =>
    declared.includes(t) ||
    (!declared.length &&
      ((t === 'object' && s.properties) ||
        (t === 'string' && (s.pattern || s.format || s.minLength !== undefined || s.maxLength !== undefined)) ||
        (t === 'array' && s.items)));

  if (looksLike('string')) {
    const min = s.minLength ?? 0;
    if (min > 0) cands.push({ weight: 3, arbitrary: fc.string({ maxLength: min - 1 }).filter((v) => codePoints(v) < min) });
    if (typeof s.maxLength === 'number') {
      const max = s.maxLength;
      cands.push({
        weight: 3,
        arbitrary: fc.oneof(
          fc.constantFrom('a', 'é', '😀', ' ').map((u) => u.repeat(max + 1)),
          fc.integer({ min: max + 1, max: max + 5000 }).map((n) => new Long('x', n)),
        ),
      });
    }
    if (typeof s.pattern === 'string') {
      const re = patternRegExp(s.pattern);
      cands.push({ weight: 3, arbitrary: fc.oneof(fc.string({ maxLength: 40 }), fc.string({ unit: 'binary', maxLength: 40 })).filter((v) => !re.test(v)) });
    }
    if (typeof s.format === 'string') {
      const bad = badFormatArb(s.format);
      if (bad) cands.push({ weight: 4, arbitrary: bad });
    }
  }
  if (looksLike('integer') || looksLike('number')) {
    const integer = declared.includes('integer') && !declared.includes('number');
    const { lo, hi } = bounds(s, integer);
    if (lo > -SAFE) cands.push({ weight: 3, arbitrary: fc.constantFrom(lo - 1, lo - 1000, -SAFE, lo - 0.5).filter((n) => n < lo) });
    if (hi < SAFE) cands.push({ weight: 3, arbitrary: fc.constantFrom(hi + 1, hi + 1000, SAFE, hi + 0.5, 1e300).filter((n) => n > hi) });
    if (integer) cands.push({ weight: 2, arbitrary: fc.constantFrom(0.5, 1.5, lo + 0.5, -0.5, 1.0000001).filter((n) => !Number.isInteger(n)) });
  }
  if (looksLike('array')) {
    const min = s.minItems ?? 0;
    const item = s.items !== undefined && typeof s.items !== 'boolean' ? s.items : undefined;
    const itemValid = item ? validArb(item, plain, [...path, '[]'], depth + 1) : anyJson;
    if (min > 0) cands.push({ weight: 3, arbitrary: fc.array(itemValid, { maxLength: min - 1 }) });
    if (typeof s.maxItems === 'number') cands.push({ weight: 3, arbitrary: fc.array(itemValid, { minLength: s.maxItems + 1, maxLength: s.maxItems + 3 }) });
    if (item) {
      const badItem = invalidArb(item, ctx, [...path, '[]'], depth + 1);
      if (badItem) {
        cands.push({
          weight: 3,
          arbitrary: fc
            .tuple(fc.array(itemValid, { minLength: Math.max(0, min - 1), maxLength: Math.max(0, min - 1) + 2 }), badItem, fc.nat())
            .map(([items, bad, at]) => {
              const out = [...items];
              out.splice(at % (out.length + 1), 0, bad);
              return out;
            }),
        });
      }
    }
    if (s.uniqueItems) cands.push({ weight: 2, arbitrary: itemValid.map((v) => [v, v]) });
  }
  if (looksLike('object')) {
    const props: Record<string, JsonSchema> = s.properties ?? {};
    const required: string[] = Array.isArray(s.required) ? s.required : [];
    const valid = objectArb(
      { ...s, additionalProperties: s.additionalProperties === undefined ? false : s.additionalProperties },
      plain,
      path,
      depth,
    ) as fc.Arbitrary<Record<string, unknown>>;
    if (required.length) {
      cands.push({
        weight: 4,
        arbitrary: fc.tuple(valid, fc.constantFrom(...required)).map(([obj, drop]) => {
          const out = { ...obj };
          delete out[drop];
          return out;
        }),
      });
    }
    const badProps = Object.entries(props)
      .map(([name, sub]) => [name, invalidArb(sub, ctx, [...path, name], depth + 1)] as const)
      .filter((e): e is readonly [string, fc.Arbitrary<unknown>] => e[1] !== undefined);
    if (badProps.length) {
      cands.push({
        weight: 5,
        arbitrary: fc.oneof(...badProps.map(([name, bad]) => fc.tuple(valid, bad).map(([obj, v]) => ({ ...obj, [name]: v })))),
      });
    }
    if (s.additionalProperties === false) {
      cands.push({
        weight: 3,
        arbitrary: fc.tuple(valid, extraKey(Object.keys(props)), anyJson).map(([obj, k, v]) => ({ ...obj, [k]: v })),
      });
    } else if (s.additionalProperties && typeof s.additionalProperties === 'object') {
      const badExtra = invalidArb(s.additionalProperties, ctx, [...path, '*'], depth + 1);
      if (badExtra) cands.push({ weight: 2, arbitrary: fc.tuple(valid, extraKey(Object.keys(props)), badExtra).map(([obj, k, v]) => ({ ...obj, [k]: v })) });
    }
  }
  return cands.length ? fc.oneof(...cands) : undefined;
}
