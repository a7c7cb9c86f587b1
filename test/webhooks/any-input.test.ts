import fc from 'fast-check';
import t from 'tap';
import { checkEmbeds } from '../../src/core/embed';
import { HttpError } from '../../src/core/http/errors';
import type { IncomingMessage } from '../../src/parts/integrations/formats/common';
import { fromDiscord } from '../../src/parts/integrations/formats/discord';
import { fromGitHub } from '../../src/parts/integrations/formats/github';
import { fromSlack } from '../../src/parts/integrations/formats/slack';
import { FORMATS, bad, changedFixture, fixtureNames, readFixture } from '../helpers/webhook-payloads';

// What every format's translator holds to, whatever it is given: arbitrary values, and the
// fixtures of all of them (test/webhooks/<format>/fixtures) broken in one place.
const GITHUB_EVENTS = ['ping', 'push', 'pull_request', 'issues', 'issue_comment', 'release', 'workflow_run'];

t.test('every translator answers 400 to a body that is not a JSON object', async (t) => {
  const translators: [string, (body: unknown) => unknown][] = [
    ['fromDiscord', fromDiscord],
    ['fromSlack', fromSlack],
    ...GITHUB_EVENTS.concat('star').map((event): [string, (body: unknown) => unknown] => [`fromGitHub ${event}`, (body) => fromGitHub(event, body)]),
  ];
  for (const [name, translate] of translators) {
    for (const body of [null, undefined, [], [{}], 'x', 5, true]) {
      t.throws(() => translate(body), bad(/must be a JSON object$/), `${name} ${JSON.stringify(body)}`);
    }
  }
});

// --- Property: total on arbitrary input ---------------------------------------------------------

/** Keys the translators read, so that arbitrary objects reach past the first check now and then. */
const KNOWN_KEYS = [
  'content',
  'embeds',
  'username',
  'avatar_url',
  'allowed_mentions',
  'parse',
  'users',
  'roles',
  'title',
  'description',
  'url',
  'timestamp',
  'color',
  'footer',
  'text',
  'author',
  'name',
  'fields',
  'value',
  'inline',
  'image',
  'thumbnail',
  'blocks',
  'attachments',
  'type',
  'elements',
  'pretext',
  'fallback',
  'title_link',
  'short',
  'ts',
  'icon_url',
  'mrkdwn',
  'action',
  'repository',
  'full_name',
  'sender',
  'login',
  'html_url',
  'zen',
  'ref',
  'compare',
  'commits',
  'id',
  'message',
  'pull_request',
  'number',
  'issue',
  'comment',
  'body',
  'release',
  'tag_name',
  'workflow_run',
  'conclusion',
  'head_branch',
  'merged',
  'deleted',
  'created',
  '__proto__',
  'constructor',
];
const key = fc.oneof(fc.constantFrom(...KNOWN_KEYS), fc.string());
const anything = fc.anything({
  key,
  maxDepth: 4,
  withNullPrototype: true,
  withBoxedValues: true,
  withSparseArray: true,
  withObjectString: true,
  withDate: true,
  withMap: true,
  withBigInt: true,
  stringUnit: 'binary',
});
const json = fc.json({ maxDepth: 4 }).map((text) => JSON.parse(text) as unknown);

/** Every path into a fixture, so a property can break a real payload in one place at a time. */
function paths(value: unknown, prefix: string[] = []): string[][] {
  if (value === null || typeof value !== 'object') return [prefix];
  return [prefix, ...Object.entries(value).flatMap(([k, v]) => paths(v, [...prefix, k]))].filter((p) => p.length > 0);
}
const FIXTURE_NAMES = FORMATS.flatMap((format) => fixtureNames(format).map((name) => [format, name] as const));
const brokenFixture = fc
  .constantFrom(...FIXTURE_NAMES)
  .chain(([format, name]) => fc.tuple(fc.constant([format, name] as const), fc.constantFrom(...paths(readFixture(format, name))), fc.oneof(anything, json)))
  .map(([[format, name], keys, value]) => changedFixture(format, name, keys, value) as unknown);

const TRANSLATORS: [string, (body: unknown) => IncomingMessage | null][] = [
  ['fromDiscord', fromDiscord],
  ['fromSlack', fromSlack],
  ...[...GITHUB_EVENTS, 'star'].map((event): [string, (body: unknown) => IncomingMessage | null] => [`fromGitHub ${event}`, (body) => fromGitHub(event, body)]),
];

/** A result is a message we can post, or null (GitHub only); anything thrown is a 400 HttpError. */
function totalOn(translate: (body: unknown) => IncomingMessage | null, body: unknown): boolean {
  let result: IncomingMessage | null;
  try {
    result = translate(body);
  } catch (err) {
    if (err instanceof HttpError && err.status === 400 && err.message.length > 0) return true;
    throw err;
  }
  if (result === null) return true;
  const embeds = checkEmbeds(result.embeds);
  if (JSON.stringify(embeds) !== JSON.stringify(result.embeds)) throw new Error('embeds changed by checkEmbeds');
  if (typeof result.content !== 'string' || [...result.content].length > 4000) throw new Error('content out of bounds');
  return result.content.trim() !== '' || result.embeds.length > 0;
}

t.test('every translator returns a valid message or throws a 400, on any input', async (t) => {
  for (const [name, translate] of TRANSLATORS) {
    for (const [label, arbitrary] of [
      ['fc.json()', json],
      ['fc.anything()', anything],
      ['a fixture broken in one place', brokenFixture],
    ] as const) {
      fc.assert(
        fc.property(arbitrary, (body) => totalOn(translate, body)),
        { numRuns: 300, seed: 42 },
      );
      t.pass(`${name} on ${label}`);
    }
  }
});
