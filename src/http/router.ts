import { HttpError } from './errors';

/**
 * A route table scanned in order. Patterns are literal segments and `:name` parameters.
 * A parameter whose name ends in `_id` must be a UUID: anything else is a 400 before a
 * handler (and so any SQL) runs.
 */
export interface Compiled<R> {
  route: R;
  method: string;
  regex: RegExp;
  names: string[];
}

export type Match<R> =
  | { route: R; params: Record<string, string> }
  | { allow: string[] }
  | null;

/** A request target split at the first `?`: the path routes, the query never reaches a log line. */
export function splitUrl(rawUrl: string | undefined): { pathname: string; search: string } {
  const url = rawUrl ?? '/';
  const q = url.indexOf('?');
  return q === -1 ? { pathname: url, search: '' } : { pathname: url.slice(0, q), search: url.slice(q + 1) };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (value: unknown): value is string => typeof value === 'string' && UUID.test(value);

export function compile<R extends { method: string; path: string }>(routes: R[]): Compiled<R>[] {
  return routes.map((route) => {
    const names: string[] = [];
    const source = route.path
      .split('/')
      .map((segment) => {
        if (!segment.startsWith(':')) return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
        names.push(segment.slice(1));
        return '([^/]+)';
      })
      .join('/');
    return { route, method: route.method, regex: new RegExp(`^${source}$`), names };
  });
}

export function match<R>(table: Compiled<R>[], method: string, pathname: string): Match<R> {
  const allow: string[] = [];
  for (const entry of table) {
    const found = entry.regex.exec(pathname);
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
