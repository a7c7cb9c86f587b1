import { HttpError } from './errors';

/**
 * A route table scanned in order. Patterns are literal segments and `:name` parameters.
 * A parameter whose name ends in `_id` must be a UUID: anything else is a 400 before a
 * handler (and so any SQL) runs. A path is first matched with the ids as UUIDs only, so a
 * literal segment is never taken for an id (`PATCH /api/conversations/dm` is 405 with the
 * methods of that path, not a 400 about conversation_id).
 */
export interface Compiled<R> {
  route: R;
  method: string;
  /** `_id` parameters match UUIDs only. */
  regex: RegExp;
  /** Any parameter matches any segment: finds the route whose id is malformed. */
  loose: RegExp;
  names: string[];
  /**
   * The pattern's segments, a parameter as null. A cheap first test before the regexes: a path
   * of another length, or with another literal segment, cannot match (parameters never match a
   * `/`), so most routes are passed over with a few string comparisons.
   */
  segments: (string | null)[];
}

export type Match<R> = { route: R; params: Record<string, string> } | { allow: string[] } | null;

/** A request target split at the first `?`: the path routes, the query never reaches a log line. */
export function splitUrl(rawUrl: string | undefined): { pathname: string; search: string } {
  const url = rawUrl ?? '/';
  const q = url.indexOf('?');
  return q === -1 ? { pathname: url, search: '' } : { pathname: url.slice(0, q), search: url.slice(q + 1) };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (value: unknown): value is string => typeof value === 'string' && UUID.test(value);

const UUID_SEGMENT = '([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})';

export function compile<R extends { method: string; path: string }>(routes: R[]): Compiled<R>[] {
  return routes.map((route) => {
    const names: string[] = [];
    const segments = route.path.split('/');
    const source = (strict: boolean) =>
      segments
        .map((segment) => {
          if (!segment.startsWith(':')) return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
          if (strict) names.push(segment.slice(1));
          return strict && segment.endsWith('_id') ? UUID_SEGMENT : '([^/]+)';
        })
        .join('/');
    return {
      route,
      method: route.method,
      regex: new RegExp(`^${source(true)}$`),
      loose: new RegExp(`^${source(false)}$`),
      names,
      segments: segments.map((segment) => (segment.startsWith(':') ? null : segment)),
    };
  });
}

export function match<R>(table: Compiled<R>[], method: string, pathname: string): Match<R> {
  const parts = pathname.split('/');
  return matchWith(table, method, pathname, parts, 'regex') ?? matchWith(table, method, pathname, parts, 'loose');
}

/** Whether a path's segments could match the pattern's: same length, same literal segments. */
function fits(segments: (string | null)[], parts: string[]): boolean {
  if (segments.length !== parts.length) return false;
  for (let i = 0; i < segments.length; i++) if (segments[i] !== null && segments[i] !== parts[i]) return false;
  return true;
}

function matchWith<R>(table: Compiled<R>[], method: string, pathname: string, parts: string[], pattern: 'regex' | 'loose'): Match<R> {
  const allow: string[] = [];
  for (const entry of table) {
    if (!fits(entry.segments, parts)) continue;
    const found = entry[pattern].exec(pathname);
    if (!found) continue;
    if (entry.method !== method && !(method === 'HEAD' && entry.method === 'GET')) {
      allow.push(entry.method);
      continue;
    }
    const params: Record<string, string> = {};
    entry.names.forEach((name, i) => {
      let value: string;
      try {
        value = decodeURIComponent(found[i + 1]);
      } catch {
        throw new HttpError(400, `malformed path parameter ${name}`);
      }
      if (name.endsWith('_id') && !isUuid(value)) throw new HttpError(400, `${name} must be a UUID`);
      params[name] = name.endsWith('_id') ? value.toLowerCase() : value;
    });
    return { route: entry.route, params };
  }
  return allow.length ? { allow: [...new Set(allow)] } : null;
}
