import type { IncomingMessage } from 'node:http';
import type { Body } from '../types';
import { HttpError } from './errors';

export const MAX_JSON_BYTES = 1024 * 1024;
export const MAX_FORM_BYTES = 64 * 1024;

export function mediaType(req: IncomingMessage): string {
  return (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
}

/** Reads at most `limit` bytes; a larger declared or streamed body is 413 without reading it all. */
export async function readRaw(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    throw new HttpError(413, `request body is larger than ${limit} bytes`, { Connection: 'close' });
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) {
      throw new HttpError(413, `request body is larger than ${limit} bytes`, { Connection: 'close' });
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

// Keys that could reach a prototype if an object were ever merged; dropped at parse time.
const POISON_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

export function parseJsonObject(text: string): Body {
  let value: unknown;
  try {
    value = JSON.parse(text, (key, v) => {
      if (POISON_KEYS.has(key)) return undefined;
      if (v && typeof v === 'object' && !Array.isArray(v)) return Object.assign(Object.create(null), v);
      return v;
    });
  } catch {
    throw new HttpError(400, 'malformed JSON body');
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    throw new HttpError(400, 'JSON body must be an object');
  }
  return value as Body;
}

export async function readJson(req: IncomingMessage): Promise<Body> {
  if (mediaType(req) !== 'application/json') {
    throw new HttpError(415, 'Content-Type must be application/json');
  }
  const raw = await readRaw(req, MAX_JSON_BYTES);
  return parseJsonObject(raw.toString('utf8'));
}

export async function readForm(req: IncomingMessage): Promise<Body> {
  const raw = await readRaw(req, MAX_FORM_BYTES);
  const body: Body = Object.create(null);
  for (const [key, value] of new URLSearchParams(raw.toString('utf8'))) {
    if (!POISON_KEYS.has(key)) body[key] = value;
  }
  return body;
}
