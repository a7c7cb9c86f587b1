import type { IncomingMessage } from 'node:http';
import type { Body } from '../types';
import { HttpError } from './errors';

export const MAX_JSON_BYTES = 1024 * 1024;
export const MAX_FORM_BYTES = 64 * 1024;

export function mediaType(req: IncomingMessage): string {
  return (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
}

/**
 * A JSON or form body must arrive whole within this long. Headers already have a 15 s
 * deadline; without one for the body, a client dribbling a byte every few seconds into a
 * declared Content-Length holds a connection for the whole request timeout (15 minutes).
 * Uploads keep the long timeout: they are read only after authentication.
 */
export const BODY_DEADLINE_MS = 30_000;

/**
 * Reads at most `limit` bytes within `deadlineMs`: a larger declared or streamed body is 413
 * without reading it all, a late one 408, an interrupted one 400 (the client is gone: an
 * ordinary event, not an error of ours).
 */
export function readRaw(req: IncomingMessage, limit: number, deadlineMs = BODY_DEADLINE_MS): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    return Promise.reject(new HttpError(413, `request body is larger than ${limit} bytes`, { Connection: 'close' }));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const settle = (err: HttpError | null) => {
      clearTimeout(timer);
      req.off('data', onData).off('end', onEnd).off('error', onInterrupted).off('close', onClose);
      if (err) {
        // Nothing more is read: the answer goes out with Connection: close.
        req.pause();
        reject(err);
      } else {
        resolve(Buffer.concat(chunks));
      }
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) return settle(new HttpError(413, `request body is larger than ${limit} bytes`, { Connection: 'close' }));
      chunks.push(chunk);
    };
    const onEnd = () => settle(null);
    const onInterrupted = () => settle(new HttpError(400, 'the request body was interrupted', { Connection: 'close' }));
    const onClose = () => {
      if (!req.readableEnded) onInterrupted();
    };
    const timer = setTimeout(
      () => settle(new HttpError(408, `the request body did not arrive within ${Math.round(deadlineMs / 1000)} s`, { Connection: 'close' })),
      deadlineMs,
    );
    req.on('data', onData).on('end', onEnd).on('error', onInterrupted).on('close', onClose);
  });
}

// Keys that could reach a prototype if an object were ever merged; dropped at parse time.
const POISON_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** Objects and arrays nest at most this deep: no field of the API nests more than a few levels. */
export const MAX_JSON_DEPTH = 64;

/** A body is UTF-8 (RFC 8259 section 8.1 for JSON; forms as browsers send them): other bytes are 400, never U+FFFD. */
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });
export function decodeUtf8(raw: Buffer, what: string): string {
  try {
    return utf8.decode(raw);
  } catch {
    throw new HttpError(400, `${what} is not valid UTF-8`);
  }
}

/** The deepest nesting of objects and arrays in a JSON text (brackets inside strings do not count). */
function nesting(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // a backslash escapes the next character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) deepest = Math.max(deepest, ++depth);
    else if (c === 0x7d || c === 0x5d) depth--;
  }
  return deepest;
}

export function parseJsonObject(text: string): Body {
  // The parser (and its reviver) recurse: a body of a million brackets would be a stack overflow.
  if (nesting(text) > MAX_JSON_DEPTH) throw new HttpError(400, `JSON body nests deeper than ${MAX_JSON_DEPTH} levels`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new HttpError(400, 'malformed JSON body');
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    throw new HttpError(400, 'JSON body must be an object');
  }
  return withoutPrototypes(value) as Body;
}

/**
 * Every object of a parsed JSON value rebuilt without a prototype and without POISON_KEYS
 * (JSON.parse makes `__proto__` an own property, never the prototype). A walk after the parse
 * rather than a reviver: a reviver costs about four times the parse of a small body.
 */
function withoutPrototypes(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = withoutPrototypes(value[i]);
    return value;
  }
  const bare: Record<string, unknown> = Object.create(null);
  for (const key of Object.keys(value)) if (!POISON_KEYS.has(key)) bare[key] = withoutPrototypes((value as Record<string, unknown>)[key]);
  return bare;
}

export async function readJson(req: IncomingMessage, deadlineMs = BODY_DEADLINE_MS): Promise<Body> {
  if (mediaType(req) !== 'application/json') {
    throw new HttpError(415, 'Content-Type must be application/json');
  }
  const raw = await readRaw(req, MAX_JSON_BYTES, deadlineMs);
  return parseJsonObject(decodeUtf8(raw, 'JSON body'));
}

export async function readForm(req: IncomingMessage, deadlineMs = BODY_DEADLINE_MS): Promise<Body> {
  const raw = await readRaw(req, MAX_FORM_BYTES, deadlineMs);
  const body: Body = Object.create(null);
  for (const [key, value] of new URLSearchParams(decodeUtf8(raw, 'form body'))) {
    if (!POISON_KEYS.has(key)) body[key] = value;
  }
  return body;
}
