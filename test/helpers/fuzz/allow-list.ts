import fs from 'node:fs';
import path from 'node:path';

/**
 * Rules the document states only in words: each operation lists them under `x-rules-in-prose`
 * (and the document's root lists those of every operation), with words of the server's refusal.
 * Input that breaks such a rule is valid for the schema, and a 400 that says so is not a defect; any other 400 for input the schema allows is reported. The list is read from
 * docs/openapi.json, so it cannot drift from what the document promises.
 */
export interface Allowance {
  /** "METHOD /path", or "*" for a rule of every operation. */
  op: string;
  rule: string;
  refusal: string;
}

interface Prose {
  rule: string;
  refusal: string;
}
const document = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', '..', 'docs', 'openapi.json'), 'utf8')) as {
  'x-rules-in-prose'?: Prose[];
  paths: Record<string, Record<string, { 'x-rules-in-prose'?: Prose[] }>>;
};

export const PROSE_ALLOW_LIST: Allowance[] = [
  ...(document['x-rules-in-prose'] ?? []).map((p) => ({ op: '*', ...p })),
  ...Object.entries(document.paths).flatMap(([route, ops]) =>
    Object.entries(ops).flatMap(([method, op]) => (op['x-rules-in-prose'] ?? []).map((p) => ({ op: `${method.toUpperCase()} ${route}`, ...p }))),
  ),
];

/** How many refusals each entry excused in this process (an entry that excuses none may be stale). */
export const allowanceUse = new Map<Allowance, number>();

export function allowanceFor(op: string, status: number, text: string): Allowance | undefined {
  if (status !== 400) return undefined;
  const found = PROSE_ALLOW_LIST.find((a) => (a.op === op || a.op === '*') && text.includes(a.refusal));
  if (found) allowanceUse.set(found, (allowanceUse.get(found) ?? 0) + 1);
  return found;
}
