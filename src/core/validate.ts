import { badRequest } from './http/errors';
import type { Body, Ctx } from './types';
import { isUuid } from './http/router';

/** Field readers for request bodies: each returns the typed value or throws a 400 naming the field. */

// Control characters other than tab and newline have no place in names or messages.
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * A text field. Its length (in code points) and its characters are judged as sent, so the rule
 * is the one docs/openapi.json states (maxLength, a pattern); surrounding spaces are then
 * trimmed (unless `trim: false`) for the emptiness test and for storage.
 */
export function text(body: Body, key: string, opts: { min?: number; max: number; trim?: boolean; multiline?: boolean }): string {
  const raw = body[key];
  if (typeof raw !== 'string') throw badRequest(`${key} must be a string`);
  if ([...raw].length > opts.max) throw badRequest(`${key} must be at most ${opts.max} characters`);
  // A lone surrogate cannot be stored as UTF-8: it would come back as U+FFFD.
  if (LONE_SURROGATE.test(raw)) throw badRequest(`${key} is not valid Unicode text`);
  if (CONTROL.test(raw) || (!opts.multiline && /[\r\n\t]/.test(raw))) {
    throw badRequest(`${key} contains control characters`);
  }
  const value = opts.trim === false ? raw : raw.trim();
  const min = opts.min ?? 1;
  if ([...value].length < min) throw badRequest(min === 1 ? `${key} must not be empty` : `${key} must be at least ${min} characters`);
  return value;
}

export function bool(body: Body, key: string): boolean {
  const value = body[key];
  if (typeof value !== 'boolean') throw badRequest(`${key} must be true or false`);
  return value;
}

export function integer(body: Body, key: string, min: number, max: number): number {
  const value = body[key];
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw badRequest(`${key} must be an integer from ${min} to ${max}`);
  }
  return value;
}

export function uuid(body: Body, key: string): string {
  const value = body[key];
  if (!isUuid(value)) throw badRequest(`${key} must be a UUID`);
  return value.toLowerCase();
}

export function oneOf<T extends string>(body: Body, key: string, allowed: readonly T[]): T {
  const value = body[key];
  if (typeof value !== 'string' || !allowed.includes(value as T)) {
    throw badRequest(`${key} must be one of ${allowed.join(', ')}`);
  }
  return value as T;
}

export function stringArray(body: Body, key: string, min: number, max: number): string[] {
  const value = body[key];
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) {
    throw badRequest(`${key} must be an array of strings`);
  }
  if (value.length < min || value.length > max) {
    throw badRequest(min === max ? `${key} must hold exactly ${min}` : `${key} must hold ${min} to ${max} entries`);
  }
  return value as string[];
}

/** An array of names from `allowed` (each at most once counts; order does not matter). */
export function subsetOf<T extends string>(body: Body, key: string, allowed: readonly T[]): T[] {
  const value = body[key];
  if (!Array.isArray(value) || value.length > allowed.length * 2) throw badRequest(`${key} must be an array of: ${allowed.join(', ')}`);
  for (const name of value) {
    // Not String(name): a JSON object here has no prototype, so no way to become a string.
    const shown = typeof name === 'string' ? JSON.stringify(name.slice(0, 40)) : `(${name === null ? 'null' : Array.isArray(name) ? 'array' : typeof name})`;
    if (typeof name !== 'string' || !allowed.includes(name as T)) throw badRequest(`${key}: unknown name ${shown}; one of ${allowed.join(', ')}`);
  }
  return [...new Set(value as T[])];
}

/** Paging query: `?limit=` defaults to 50, at most 100. */
export function limitParam(query: URLSearchParams, fallback = 50, max = 100): number {
  const raw = query.get('limit');
  if (raw === null) return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || value < 1 || value > max) throw badRequest(`limit must be an integer from 1 to ${max}`);
  return value;
}

/** An optional id in the query: absent is null; present, it must be a UUID (an empty value too is refused). */
export function uuidParam(query: URLSearchParams, key: string): string | null {
  const raw = query.get(key);
  if (raw === null) return null;
  if (!isUuid(raw)) throw badRequest(`${key} must be a UUID`);
  return raw.toLowerCase();
}

/** A reason stored with an audit entry, in characters. */
export const MAX_AUDIT_REASON_CHARS = 512;

/**
 * The `X-Audit-Log-Reason` header as sent: printable ASCII (clients percent-encode anything
 * else), at most MAX_AUDIT_REASON_HEADER_CHARS, room for 512 characters of any script encoded.
 * Checked by the request pipeline on every request that carries it, so a bad one is always 400.
 */
export const AUDIT_REASON_HEADER = /^[\u0020-\u007e]*$/;
export const MAX_AUDIT_REASON_HEADER_CHARS = 6144;

export function checkAuditReasonHeader(req: Pick<Ctx['req'], 'headers'>): void {
  const raw = req.headers['x-audit-log-reason'];
  if (raw === undefined) return;
  if (Array.isArray(raw) || !AUDIT_REASON_HEADER.test(raw)) throw badRequest('X-Audit-Log-Reason must be printable ASCII: percent-encode other characters');
  if (raw.length > MAX_AUDIT_REASON_HEADER_CHARS) throw badRequest(`X-Audit-Log-Reason must be at most ${MAX_AUDIT_REASON_HEADER_CHARS} characters as sent`);
}

/**
 * The reason an owner or moderator gave, as stored with the entry: percent-encoded text decoded
 * (text that does not decode is kept as sent), line breaks and other controls as spaces,
 * trimmed, and cut at MAX_AUDIT_REASON_CHARS. Null when none was given.
 */
export function auditReason(ctx: Pick<Ctx, 'req'>): string | null {
  const raw = ctx.req.headers['x-audit-log-reason'];
  if (typeof raw !== 'string') return null;
  let text = raw;
  try {
    text = decodeURIComponent(raw);
  } catch {
    // A stray % in a plain reason: kept as written.
  }
  text = text.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
  return [...text].slice(0, MAX_AUDIT_REASON_CHARS).join('') || null;
}
