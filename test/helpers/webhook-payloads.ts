import fs from 'node:fs';
import path from 'node:path';
import type { Test } from 'tap';
import { checkEmbeds } from '../../src/core/embed';
import type { IncomingMessage } from '../../src/parts/integrations/formats/common';

/**
 * Each payload format's tests sit beside its fixtures, as Zulip keeps zerver/webhooks/<name>/:
 * test/webhooks/<format>/<format>.test.ts and test/webhooks/<format>/fixtures/<name>.json (real
 * payloads from each service's documentation). The translators are src/parts/integrations/formats/.
 */
export const FORMATS = ['discord', 'slack', 'github'] as const;
export type Format = (typeof FORMATS)[number];

const fixtureDir = (format: Format) => path.join(__dirname, '..', 'webhooks', format, 'fixtures');

/** A fixture, read afresh (a copy the caller may change). */
export function readFixture(format: Format, name: string): Record<string, unknown> {
  return JSON.parse(fs.readFileSync(path.join(fixtureDir(format), `${name}.json`), 'utf8'));
}

/** A deep copy of a fixture with one change made at a path of keys (undefined: the key removed). */
export function changedFixture(format: Format, name: string, keys: string[], value: unknown): Record<string, unknown> {
  const copy = readFixture(format, name);
  let at = copy as Record<string, unknown>;
  for (const key of keys.slice(0, -1)) at = at[key] as Record<string, unknown>;
  if (value === undefined) delete at[keys[keys.length - 1]];
  else at[keys[keys.length - 1]] = value;
  return copy;
}

/** A format's fixture names, in order. */
export const fixtureNames = (format: Format): string[] =>
  fs
    .readdirSync(fixtureDir(format))
    .filter((file) => file.endsWith('.json'))
    .map((file) => file.replace(/\.json$/, ''))
    .sort();

/** One format's fixtures by name, as its tests read them. */
export const fixturesOf = (format: Format) => ({
  fixture: (name: string) => readFixture(format, name),
  changed: (name: string, keys: string[], value: unknown) => changedFixture(format, name, keys, value),
});

/** What a translator's 400 looks like to t.throws. */
export const bad = (message: string | RegExp) => ({ status: 400, message });

/** Each case's translation is the message expected (named by the case), and its embeds pass checkEmbeds unchanged. */
export function expectTranslations(t: Test, cases: [name: string, translate: () => IncomingMessage | null, expected: IncomingMessage][]): void {
  for (const [name, translate, expected] of cases) {
    const got = translate();
    t.strictSame(got, expected, name);
    t.strictSame(checkEmbeds(got?.embeds), got?.embeds, `${name}: its embeds pass checkEmbeds unchanged`);
  }
}
