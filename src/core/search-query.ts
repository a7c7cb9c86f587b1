/**
 * The search query language (docs/api.md "Search"): words, "exact phrases", a trailing `*` for
 * a prefix, `-` to exclude. User text never reaches FTS5 as syntax: the query is parsed into
 * tokens here, and the MATCH expression is built from those tokens alone, each one quoted.
 */
import { badRequest } from './http/errors';

export const MAX_QUERY_CHARS = 256;
/** Words and phrases one query may hold: keeps every MATCH expression small. */
export const MAX_TERMS = 32;

/** One search term: a word or a phrase, as the folded tokens the index holds. */
export interface Term {
  tokens: string[];
  /** The last token matches as a prefix (`word*`). */
  prefix: boolean;
  /** `-word`: messages holding it are left out. */
  exclude: boolean;
}

/**
 * The characters the index's tokenizer (unicode61) keeps in a token: letters, digits, private
 * use, and the combining marks it folds away. Everything else separates tokens, so `AND`, `NEAR(`,
 * `:`, `^` and `(` are words or separators here, never operators.
 */
const TOKEN = /[\p{L}\p{N}\p{Co}\p{M}]+/gu;

/** Case and diacritics folded as `unicode61 remove_diacritics 2` folds them (close enough to mark matches). */
export function fold(token: string): string {
  return token.toLowerCase().normalize('NFD').replace(/\p{M}/gu, '');
}

/** The tokens of a text with their UTF-16 offsets, folded. */
export function tokenize(text: string): { token: string; start: number; end: number }[] {
  const out: { token: string; start: number; end: number }[] = [];
  for (const m of text.matchAll(TOKEN)) {
    const token = fold(m[0]);
    if (token !== '') out.push({ token, start: m.index, end: m.index + m[0].length });
  }
  return out;
}

/** Parses `q`; 400 with a plain reason for anything that is not a query. */
export function parseQuery(q: string | null): Term[] {
  if (q === null || q.trim() === '') throw badRequest('q must not be empty');
  if ([...q].length > MAX_QUERY_CHARS) throw badRequest(`q must be at most ${MAX_QUERY_CHARS} characters`);
  const terms: Term[] = [];
  let i = 0;
  while (i < q.length) {
    if (/\s/.test(q[i])) {
      i++;
      continue;
    }
    const exclude = q[i] === '-';
    if (exclude) i++;
    let raw: string;
    let prefix = false;
    if (q[i] === '"') {
      const close = q.indexOf('"', i + 1);
      if (close === -1) throw badRequest('q has an unbalanced " (close the phrase)');
      raw = q.slice(i + 1, close);
      i = close + 1;
      if (q[i] === '*') {
        prefix = true;
        i++;
      }
    } else {
      const start = i;
      while (i < q.length && !/\s/.test(q[i]) && q[i] !== '"') i++;
      raw = q.slice(start, i);
      prefix = raw.endsWith('*');
    }
    const tokens = tokenize(raw).map((t) => t.token);
    if (tokens.length > 0) terms.push({ tokens, prefix, exclude });
  }
  if (terms.length > MAX_TERMS) throw badRequest(`q may hold at most ${MAX_TERMS} words and phrases`);
  if (!terms.some((t) => !t.exclude)) throw badRequest('q has nothing to search for (add a word that is not excluded)');
  return terms;
}

/**
 * The FTS5 MATCH expression: every included term, then NOT each excluded one. Tokens are made
 * of letters and digits only, so quoting them is all the escaping they need.
 */
export function matchExpression(terms: Term[]): string {
  const phrase = (t: Term) => `"${t.tokens.join(' ')}"${t.prefix ? ' *' : ''}`;
  const included = terms.filter((t) => !t.exclude).map(phrase);
  const excluded = terms.filter((t) => t.exclude).map(phrase);
  return [`(${included.join(' AND ')})`, ...excluded].join(' NOT ');
}

/**
 * Where the included terms occur in `content`: `[start, end]` pairs in UTF-16 code units,
 * sorted, overlapping runs merged.
 */
export function highlight(content: string, terms: Term[]): [number, number][] {
  const tokens = tokenize(content);
  const ranges: [number, number][] = [];
  for (const term of terms) {
    if (term.exclude) continue;
    const n = term.tokens.length;
    for (let i = 0; i + n <= tokens.length; i++) {
      const matches = term.tokens.every((want, k) => {
        const have = tokens[i + k].token;
        return term.prefix && k === n - 1 ? have.startsWith(want) : have === want;
      });
      if (matches) ranges.push([tokens[i].start, tokens[i + n - 1].end]);
    }
  }
  ranges.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const merged: [number, number][] = [];
  for (const r of ranges) {
    const last = merged[merged.length - 1];
    if (last && r[0] <= last[1]) last[1] = Math.max(last[1], r[1]);
    else merged.push([r[0], r[1]]);
  }
  return merged;
}
