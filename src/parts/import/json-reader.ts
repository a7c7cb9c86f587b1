import { StringDecoder } from 'node:string_decoder';
import { Kind, type TSchema } from '@sinclair/typebox';

// stream-json's tokenizer (a package of ES modules: required by its exported path, typed by its
// declaration file): a few hundred lines of well-tested state machine that hands over a string in
// pieces, so a string nobody keeps is never built. JSON.parse builds every value of a file first.
const { jsonParser } = require('stream-json/core/parser.js') as typeof import('stream-json/src/core/parser.js');
type Token = import('stream-json/src/core/parser.js').Token;
/** What the tokenizer is handed at the end of its input (stream-chain's `none`). */
const END = Symbol.for('object-stream.none') as never;

/**
 * A JSON file read against a TypeBox schema, keeping only what the schema names (untrusted input:
 * an upload's channel files, docs/security.md "Import memory"). Memory follows what is kept, never
 * what the file holds:
 *
 * - a key the schema does not name is skipped with all its value, and none of it is built: its
 *   strings pass through the tokenizer in pieces and are dropped;
 * - a kept value is refused as soon as it cannot fit: a value of the wrong type, an array past the
 *   schema's `maxItems`, a string past its `maxLength`, more than MAX_KEPT_CHARS kept in one item;
 *   every kept string and array of a schema read here has a bound (boundedOrThrow, at load);
 * - one array of the root (the channel file's `messages`) is handed over item by item, never held
 *   whole.
 *
 * What is kept is then checked by the caller against the full schema (TypeBox), which gives the
 * precise reason for anything else (a pattern, a missing field). Keys are matched as own names of
 * the schema's properties, so `__proto__` and its kind are skipped like any unknown key.
 */

/** Kept characters (plus a few per value) in one item of the streamed array, or in the rest of the file. */
export const MAX_KEPT_CHARS = 16 * 1024 * 1024;
/** Nesting deeper than this is refused by the tokenizer (the schema itself nests about ten deep). */
const MAX_DEPTH = 100;
/** A key or a number longer than this (none the schema names is) is refused. */
const MAX_PACKED_CHARS = 4096;

/** A file that is not JSON (`json`), or not of the schema's shape: the path of the first value that does not fit. */
export class JsonRefusal extends Error {
  constructor(
    readonly kind: 'json' | 'shape',
    message: string,
  ) {
    super(message);
  }
}

export interface ReadOptions {
  /** The root's property whose array items go to onItem one by one. */
  streamed: string;
  /** Each item of the streamed array, once whole. Without it, the array is skipped unread. */
  onItem?(item: unknown, index: number): void;
  /** Asked when the streamed property begins: true ends the reading there (what came before is enough). */
  enough?(root: Record<string, unknown>): boolean;
  /** Filled in as the file is read: the values kept, and those skipped (every value inside a skipped one counts). */
  counts?: { kept: number; skipped: number };
}

type Shape = 'object' | 'array' | 'string' | 'number' | 'boolean' | 'null';
const SHAPES: Record<string, Shape> = {
  Object: 'object',
  Array: 'array',
  String: 'string',
  Number: 'number',
  Integer: 'number',
  Boolean: 'boolean',
  Null: 'null',
};

/** The part of `schema` that takes a value of this shape (the first of a union's that does), or null. */
function part(schema: TSchema, shape: Shape): TSchema | null {
  if (schema[Kind] === 'Union') {
    for (const member of schema.anyOf as TSchema[]) {
      const found = part(member, shape);
      if (found) return found;
    }
    return null;
  }
  return SHAPES[schema[Kind]] === shape ? schema : null;
}

/** The shapes a schema takes, in words. */
const describe = (schema: TSchema): string => (schema[Kind] === 'Union' ? (schema.anyOf as TSchema[]).map(describe).join(' or ') : SHAPES[schema[Kind]]);

/**
 * Throws unless every string and array of `schema` has a bound (the streamed array of the root
 * aside), and it uses only the kinds read here: a schema that would let a reader keep without
 * limit fails at start-up, not under an attack.
 */
export function boundedOrThrow(schema: TSchema, streamed: string, path = ''): void {
  const kind = schema[Kind] as string;
  if (kind === 'Union') for (const member of schema.anyOf as TSchema[]) boundedOrThrow(member, streamed, path);
  else if (kind === 'Object')
    for (const [key, value] of Object.entries(schema.properties as Record<string, TSchema>)) boundedOrThrow(value, streamed, `${path}/${key}`);
  else if (kind === 'Array') {
    if (schema.maxItems === undefined && path !== `/${streamed}`) throw new Error(`${path}: an array with no maxItems`);
    boundedOrThrow(schema.items as TSchema, streamed, `${path}/0`);
  } else if (kind === 'String') {
    if (schema.maxLength === undefined) throw new Error(`${path}: a string with no maxLength`);
  } else if (!SHAPES[kind]) throw new Error(`${path}: a schema of kind ${kind} cannot be read`);
}

/**
 * A string of its own: the tokenizer's pieces are slices of the text it was handed, and V8 keeps
 * all of that text alive for as long as a slice of 13 characters or more is (a name kept for the
 * whole read would hold 64 KiB of file). Flattening a concatenation copies it.
 */
const own = (piece: string) => (piece.length < 13 ? piece : (' ' + piece).slice(1));

/** An object or array being built. */
interface Frame {
  schema: TSchema;
  value: Record<string, unknown> | unknown[];
  /** An object's current key, and the schema of its value (null: not kept). */
  key: string;
  next: TSchema | null;
  /** An array's items so far. */
  count: number;
  /** The streamed array: its items go to onItem. */
  streamed: boolean;
}

/** Reads `input` (UTF-8 pieces) against `schema`, an object schema: the root as kept (the streamed array left empty). */
export async function readJson(input: AsyncIterable<Buffer>, schema: TSchema, options: ReadOptions): Promise<Record<string, unknown>> {
  const tokenizer = jsonParser({
    packKeys: true,
    streamKeys: false,
    packStrings: false,
    streamStrings: true,
    packNumbers: true,
    streamNumbers: false,
    maxDepth: MAX_DEPTH,
    maxPackedLength: MAX_PACKED_CHARS,
  });
  const stack: Frame[] = [];
  let root: Record<string, unknown> | undefined;
  /** Inside a value not kept: its depth of objects and arrays, or a string. */
  let skipDepth = 0;
  let skipString = false;
  /** A kept string being read. */
  let text: { max: number; pieces: string[]; length: number } | null = null;
  /** Characters kept in the current item of the streamed array (or outside it), and outside it. */
  let kept = 0;
  let keptOutside = 0;
  let stopped = false;

  /**
   * The path of the value held by the first `depth` frames (the slot being read: all of them),
   * written out only for a refusal: building it for every value halved the reading's speed.
   */
  const pathAt = (depth = stack.length) => {
    let path = '';
    for (let i = 0; i < depth; i++) path += `/${Array.isArray(stack[i].value) ? stack[i].count : stack[i].key}`;
    return path;
  };
  const refuse = (path: string, reason: string) => new JsonRefusal('shape', `${path || '/'}: ${reason}`);

  /** Counts kept characters, refusing past the cap (the value being read is the one refused). */
  const keep = (chars: number) => {
    kept += chars + 8;
    if (kept > MAX_KEPT_CHARS) throw refuse(pathAt(), `more than ${MAX_KEPT_CHARS} characters of fields the importer reads in one item`);
  };

  /** The schema of the next value (null: skipped). */
  const slot = (): TSchema | null => {
    const top = stack.at(-1);
    if (!top) return schema;
    return Array.isArray(top.value) ? (top.schema.items as TSchema) : top.next;
  };

  /** A value is whole: into its parent (or it is the root). */
  const place = (value: unknown) => {
    const top = stack.at(-1);
    if (!top) {
      root = value as Record<string, unknown>;
      return;
    }
    if (!Array.isArray(top.value)) {
      top.value[top.key] = value;
      return;
    }
    if (top.streamed) {
      options.onItem!(value, top.count);
      kept = keptOutside;
    } else top.value.push(value);
    top.count++;
  };

  /** A value not kept is over: an item of an array still counts. */
  const skipped = () => {
    const top = stack.at(-1);
    if (top && Array.isArray(top.value)) top.count++;
  };

  const counts = options.counts ?? { kept: 0, skipped: 0 };
  const begin = (token: Token) => {
    const wanted = slot();
    const opens = token.name === 'startObject' || token.name === 'startArray';
    if (wanted === null) {
      counts.skipped++;
      if (opens) skipDepth = 1;
      else if (token.name === 'startString') skipString = true;
      else skipped();
      return;
    }
    const shape: Shape =
      token.name === 'startObject'
        ? 'object'
        : token.name === 'startArray'
          ? 'array'
          : token.name === 'startString'
            ? 'string'
            : token.name === 'numberValue'
              ? 'number'
              : token.name === 'nullValue'
                ? 'null'
                : 'boolean';
    const fits = part(wanted, shape);
    if (!fits) throw refuse(pathAt(), `Expected ${describe(wanted)}, not ${shape}`);
    counts.kept++;
    const parent = stack.at(-1);
    if (parent?.streamed) {
      keptOutside = kept;
      kept = 0;
    } else if (parent && Array.isArray(parent.value) && parent.count >= (parent.schema.maxItems as number)) {
      throw refuse(pathAt(stack.length - 1), `Expected array length to be less or equal to ${parent.schema.maxItems}`);
    }
    if (opens) {
      keep(0);
      const streamed = stack.length === 1 && !Array.isArray(stack[0].value) && stack[0].key === options.streamed;
      if (streamed && !options.onItem) {
        skipDepth = 1;
        return;
      }
      stack.push({ schema: fits, value: shape === 'array' ? [] : {}, key: '', next: null, count: 0, streamed });
    } else if (shape === 'string') {
      text = { max: fits.maxLength as number, pieces: [], length: 0 };
    } else {
      const value = shape === 'number' ? Number((token as { value: string }).value) : (token as { value: unknown }).value;
      keep(0);
      place(value);
    }
  };

  const take = (token: Token) => {
    if (skipDepth > 0) {
      if (token.name === 'startObject' || token.name === 'startArray') {
        skipDepth++;
        counts.skipped++;
      } else if ((token.name === 'endObject' || token.name === 'endArray') && --skipDepth === 0) skipped();
      else if (token.name !== 'stringChunk' && token.name !== 'endString') counts.skipped++;
      return;
    }
    if (skipString) {
      if (token.name === 'endString') {
        skipString = false;
        skipped();
      }
      return;
    }
    if (text) {
      if (token.name === 'stringChunk') {
        text.length += token.value.length;
        if (text.length > text.max) throw refuse(pathAt(), `Expected string length less or equal to ${text.max}`);
        if (kept + text.length > MAX_KEPT_CHARS) keep(text.length);
        text.pieces.push(token.value);
      } else if (token.name === 'endString') {
        const { pieces, length } = text;
        text = null;
        keep(length);
        place(pieces.length === 1 ? own(pieces[0]) : pieces.join(''));
      }
      return;
    }
    switch (token.name) {
      case 'keyValue': {
        const top = stack.at(-1)!;
        const properties = top.schema.properties as Record<string, TSchema>;
        top.key = token.value;
        top.next = Object.hasOwn(properties, token.value) ? properties[token.value] : null;
        if (stack.length === 1 && token.value === options.streamed && options.enough?.(top.value as Record<string, unknown>)) stopped = true;
        return;
      }
      case 'endObject':
      case 'endArray': {
        const frame = stack.pop()!;
        place(frame.streamed ? [] : frame.value);
        return;
      }
      case 'startObject':
      case 'startArray':
      case 'startString':
      case 'numberValue':
      case 'nullValue':
      case 'trueValue':
      case 'falseValue':
        begin(token);
        return;
      default:
        // startKey/endKey and the like: not sent with these options.
        return;
    }
  };

  const feed = (piece: string | typeof END) => {
    let tokens;
    try {
      tokens = tokenizer(piece);
    } catch (err) {
      throw new JsonRefusal('json', (err as Error).message.replace(/^parser: /, ''));
    }
    if (typeof tokens === 'symbol') return;
    for (const token of (tokens as { values: Token[] }).values) {
      take(token);
      if (stopped) return;
    }
  };

  const decoder = new StringDecoder('utf8');
  let first = true;
  for await (const chunk of input) {
    let piece = decoder.write(chunk);
    if (first && piece.length > 0) {
      // A byte-order mark some editors write is not JSON: it is dropped.
      if (piece.charCodeAt(0) === 0xfeff) piece = piece.slice(1);
      first = false;
    }
    feed(piece);
    if (stopped) break;
  }
  if (!stopped) {
    feed(decoder.end());
    feed(END);
    if (root === undefined) throw new JsonRefusal('json', 'the file ends before its value does');
  }
  if (stopped) return stack[0].value as Record<string, unknown>;
  if (typeof root !== 'object' || root === null || Array.isArray(root)) throw refuse('', `Expected ${describe(schema)}`);
  return root;
}
