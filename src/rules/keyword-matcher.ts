/**
 * AutoMod's keyword filter (issue 53), matched as Discord matches it
 * (https://discord.com/developers/docs/resources/auto-moderation "Keyword Matching Strategies"):
 *
 * 1. a keyword is a whole word (or words) in any letter case: `cat` matches "Cat!" and not
 *    "category" or "bobcat";
 * 2. `cat*` is a prefix: "category" too; `*cat` a suffix: "bobcat" too; `*cat*` anywhere in a word;
 * 3. an allow-list entry (the same syntax) exempts a match that lies inside one of its own matches:
 *    with `*cat*` and the allow list `category`, "category" passes and "concatenate" does not.
 *
 * Every keyword of a rule goes into one Aho–Corasick automaton, built once when the rule changes:
 * a message is read once, character by character, whatever the number of keywords (not a loop
 * per keyword per message), and a match is checked only at its two ends (is the character next
 * to it part of a word?). No pattern a user writes is ever a regular expression, so none can
 * backtrack. Positions are UTF-16 units of the lower-cased text, the same for keyword and text.
 */

/** A keyword of a rule, as stored (`*` only as its first or last character). */
export interface CompiledKeyword {
  /** The keyword as the moderator wrote it (what a match reports). */
  source: string;
  /** Its text without the stars, lower-cased. */
  text: string;
  /** A word boundary is needed before it (no leading `*`) / after it (no trailing `*`). */
  wholeStart: boolean;
  wholeEnd: boolean;
}

export interface KeywordMatcher {
  /** The first keyword found in `content` that no allow-list entry covers; null when none. */
  find(content: string): string | null;
}

/** A letter, a digit (any script) or `_`: what a word is made of. */
const WORD = /[\p{L}\p{N}\p{M}_]/u;
const isWordAt = (text: string, i: number): boolean => i >= 0 && i < text.length && WORD.test(text[i]);

export function parseKeyword(source: string): CompiledKeyword {
  const wholeStart = !source.startsWith('*');
  const wholeEnd = !source.endsWith('*') || source.length === 1;
  const text = source.slice(wholeStart ? 0 : 1, wholeEnd ? source.length : source.length - 1).toLowerCase();
  return { source, text, wholeStart, wholeEnd };
}

/**
 * One automaton over many keywords: for each end position in a text, the keywords ending there.
 * Compact, as a rule may hold 1 000 keywords of 60 characters (60 000 states): one map of every
 * transition (keyed by state and UTF-16 unit) and typed arrays per state, rather than a map and
 * two lists for each state (about 94 MB and half a second for a server's six full rules before).
 */
interface Automaton {
  /** Every transition: `state * UNITS + unit` to the next state. */
  edges: Map<number, number>;
  fail: Int32Array;
  /** The nearest state on the failure chain (itself excluded) where a keyword ends; 0 for none. */
  outLink: Int32Array;
  /** The keywords that end in a state (indices), only for states where one does. */
  own: Map<number, number[]>;
  keywords: CompiledKeyword[];
}

const UNITS = 0x10000;

function build(keywords: CompiledKeyword[]): Automaton {
  const edges = new Map<number, number>();
  const own = new Map<number, number[]>();
  // Per state: its parent, the unit leading to it and its depth (0 for the root), for the breadth-first pass.
  const parent: number[] = [0];
  const unit: number[] = [0];
  const depth: number[] = [0];
  keywords.forEach((k, index) => {
    let state = 0;
    for (let i = 0; i < k.text.length; i++) {
      const c = k.text.charCodeAt(i);
      let to = edges.get(state * UNITS + c);
      if (to === undefined) {
        to = parent.length;
        parent.push(state);
        unit.push(c);
        depth.push(depth[state] + 1);
        edges.set(state * UNITS + c, to);
      }
      state = to;
    }
    const list = own.get(state);
    if (list) list.push(index);
    else own.set(state, [index]);
  });
  const states = parent.length;
  // Breadth first (states by depth): a state's failure link is the longest proper suffix of its
  // path that is a state; its output link the nearest state on that chain where a keyword ends.
  const order = Array.from({ length: states - 1 }, (_, i) => i + 1).sort((x, y) => depth[x] - depth[y]);
  const fail = new Int32Array(states);
  const outLink = new Int32Array(states);
  for (const to of order) {
    const from = parent[to];
    const c = unit[to];
    if (from !== 0) {
      let f = fail[from];
      while (f !== 0 && !edges.has(f * UNITS + c)) f = fail[f];
      fail[to] = edges.get(f * UNITS + c) ?? 0;
    }
    const f = fail[to];
    outLink[to] = own.has(f) ? f : outLink[f];
  }
  return { edges, fail, outLink, own, keywords };
}

/** Calls `hit(start, end)` (end exclusive) for each whole match of a keyword in `text` (already lower-cased); stops when it returns true. */
function scan(a: Automaton, text: string, hit: (keyword: CompiledKeyword, start: number, end: number) => boolean): void {
  let state = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    let to = a.edges.get(state * UNITS + c);
    while (to === undefined && state !== 0) {
      state = a.fail[state];
      to = a.edges.get(state * UNITS + c);
    }
    state = to ?? 0;
    for (let o = a.own.has(state) ? state : a.outLink[state]; o !== 0; o = a.outLink[o]) {
      for (const index of a.own.get(o)!) {
        const k = a.keywords[index];
        const start = i + 1 - k.text.length;
        if (k.wholeStart && isWordAt(text, start - 1)) continue;
        if (k.wholeEnd && isWordAt(text, i + 1)) continue;
        if (hit(k, start, i + 1)) return;
      }
    }
  }
}

export function compileKeywords(keywords: readonly string[], allowList: readonly string[] = []): KeywordMatcher {
  const parsed = keywords.map(parseKeyword).filter((k) => k.text.length > 0);
  const allowed = allowList.map(parseKeyword).filter((k) => k.text.length > 0);
  const words = build(parsed);
  const exceptions = allowed.length > 0 ? build(allowed) : null;
  return {
    find(content) {
      if (parsed.length === 0 || content.length === 0) return null;
      const text = content.toLowerCase();
      let spans: [number, number][] | null = null;
      let found: string | null = null;
      scan(words, text, (k, start, end) => {
        if (exceptions) {
          if (spans === null) {
            const list: [number, number][] = [];
            scan(exceptions, text, (_, s, e) => (list.push([s, e]), false));
            spans = list;
          }
          if (spans.some(([s, e]) => s <= start && end <= e)) return false;
        }
        found = k.source;
        return true;
      });
      return found;
    },
  };
}
