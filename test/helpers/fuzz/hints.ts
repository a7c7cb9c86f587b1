import fc from 'fast-check';
import { Concat, Fx } from './deferred';

/**
 * The fuzzer's dictionary: real fixture ids (resolved per scene, see world.ts), fixture
 * usernames and plausible texts, offered beside the generic values of the schema so that
 * generated requests get past the first checks into the handlers.
 */

/** How many fixtures of each kind a scene holds (world.ts fills them in this order). */
export const FIXTURE_COUNTS = {
  /** the scene's server, the outsider's server, a deleted server */
  server: 3,
  /** general and random of the server, general of the outsider's server, a deleted channel, a thread of general, a forum with a post */
  channel: 6,
  /** a forum post (a thread of the forum) */
  thread: 1,
  /** the forum's tags: plain, moderated */
  tag: 2,
  /** owner's (with an attachment, pinned), member's, outsider's (other server), DM, group, deleted */
  message: 6,
  /** in the owner's channel message, in the DM message */
  attachment: 2,
  /** DM of owner and member, group of owner, member and peer */
  conversation: 2,
  /** the server's role "regulars" */
  role: 1,
  /** the server's category "Projects" (holding random, whose overwrites follow it) */
  category: 1,
  /** owner's and member's invite to the server, the outsider's to theirs */
  invite: 3,
  report: 1,
  /** outsider to owner, pending */
  friendRequest: 1,
  /** a warning of the target user */
  warning: 1,
  /** an entry of the server's audit log */
  audit: 1,
  /** the owner's import of a small Discord export, checked (not started) */
  import: 1,
  /** a webhook of the server's general channel, and the token of its URL */
  webhook: 1,
  webhookToken: 1,
  /** a custom emoji of the server */
  emoji: 1,
  /** a sticker of the server */
  sticker: 1,
  /** an AutoMod rule of the server (a keyword rule that blocks a word no one writes) */
  automodRule: 1,
  /** a poll of the server's general channel (a message), and its first answer */
  poll: 1,
  pollAnswer: 1,
  /** the owner's bot, a member of the server */
  bot: 1,
  /** owner, member, outsider, peer, target, admin, spare */
  user: 7,
  username: 7,
  roleName: 1,
  /** the caller's own session, another of the caller's sessions, someone else's */
  session: 3,
  /** the spare user's password (a throwaway caller's own) */
  password: 1,
  /** the OpenID Provider the world's server trusts (its id, "test") */
  provider: 1,
  /** the owner's identity at that provider */
  identity: 1,
  /** the owner's passkey */
  passkey: 1,
} as const;
export type FixtureKind = keyof typeof FIXTURE_COUNTS;

export const fx = (kind: FixtureKind) => fc.integer({ min: 0, max: FIXTURE_COUNTS[kind] - 1 }).map((i) => new Fx(kind, i));

const ID_KINDS: FixtureKind[] = [
  'server',
  'channel',
  'thread',
  'tag',
  'message',
  'attachment',
  'conversation',
  'role',
  'category',
  'report',
  'friendRequest',
  'warning',
  'audit',
  'import',
  'webhook',
  'emoji',
  'automodRule',
  'bot',
  'user',
  'session',
  'identity',
  'passkey',
];
/** Any real id of any kind (a channel id where a server id belongs...). */
export const anyFixtureId = fc.constantFrom(...ID_KINDS).chain((kind) => fx(kind));

/**
 * What a `target_id` names: a role, the server (everyone) or a member in an overwrite; a server,
 * channel or conversation in a notification setting.
 */
const TARGET_KINDS: FixtureKind[] = ['role', 'server', 'user', 'channel', 'thread', 'conversation'];

/** Real ids of what a parameter or field of this name takes, or undefined. */
export function fixturesFor(name: string): fc.Arbitrary<Fx> | undefined {
  if (name === 'target_id') return fc.constantFrom(...TARGET_KINDS).chain((kind) => fx(kind));
  const kind = KIND_OF_NAME[name];
  return kind ? fx(kind) : undefined;
}

/** The fixture kind a path parameter (or a uuid field) names. */
export const KIND_OF_NAME: Record<string, FixtureKind> = {
  server_id: 'server',
  channel_id: 'channel',
  message_id: 'message',
  attachment_id: 'attachment',
  conversation_id: 'conversation',
  role_id: 'role',
  target_id: 'role',
  category_id: 'category',
  token: 'invite',
  report_id: 'report',
  request_id: 'friendRequest',
  warning_id: 'warning',
  import_id: 'import',
  webhook_id: 'webhook',
  // Discord's own webhook paths name their ids as Discord does (src/api/webhooks.ts discordRoutes).
  hook: 'webhook',
  message: 'message',
  emoji_id: 'emoji',
  answer_id: 'pollAnswer',
  sticker_id: 'sticker',
  rule_id: 'automodRule',
  bot_id: 'bot',
  user_id: 'user',
  author_id: 'user',
  session_id: 'session',
  provider: 'provider',
  identity_id: 'identity',
  passkey_id: 'passkey',
  reply_to: 'message',
  before: 'message',
  after: 'message',
  around: 'message',
  target: 'message',
  applied_tags: 'tag',
  // An onboarding's answers (PUT …/onboarding): the roles they give, the channels they show.
  role_ids: 'role',
  channel_ids: 'channel',
  default_channel_ids: 'channel',
};

/**
 * Path parameters that belong together in a scene (a channel of that server, a message of that
 * channel...): drawn independently they rarely match, and most requests would stop at a 404.
 */
export const COHERENT: Partial<Record<string, [FixtureKind, number]>>[] = [
  {
    server_id: ['server', 0],
    channel_id: ['channel', 0],
    message_id: ['message', 0],
    role_id: ['role', 0],
    token: ['invite', 0],
    attachment_id: ['attachment', 0],
    category_id: ['category', 0],
  },
  { server_id: ['server', 0], channel_id: ['channel', 0], message_id: ['message', 1], token: ['invite', 1] },
  { server_id: ['server', 0], channel_id: ['channel', 1], emoji_id: ['emoji', 0], sticker_id: ['sticker', 0], rule_id: ['automodRule', 0] },
  { server_id: ['server', 0], channel_id: ['channel', 0], message_id: ['poll', 0], answer_id: ['pollAnswer', 0] },
  // A thread of general (started from the member's message), the forum, and its post.
  { server_id: ['server', 0], channel_id: ['channel', 4], user_id: ['user', 1] },
  { server_id: ['server', 0], channel_id: ['channel', 5] },
  { server_id: ['server', 0], channel_id: ['thread', 0], user_id: ['user', 1] },
  { server_id: ['server', 1], channel_id: ['channel', 2], message_id: ['message', 2], token: ['invite', 2] },
  { conversation_id: ['conversation', 0], message_id: ['message', 3], attachment_id: ['attachment', 1] },
  { conversation_id: ['conversation', 1], message_id: ['message', 4] },
  { webhook_id: ['webhook', 0], token: ['webhookToken', 0] },
  { hook: ['webhook', 0], token: ['webhookToken', 0], message: ['message', 0] },
];

const words = fc.lorem({ maxCount: 4 });
const username = fc.oneof({ weight: 3, arbitrary: fx('username') }, { weight: 1, arbitrary: fc.stringMatching(/^[A-Za-z0-9_-]{3,32}$/) });
const mention = fc.tuple(fc.constantFrom('hi @', '@', 'ping @', 'cc @'), fx('username')).map(([pre, u]) => new Concat([pre, u]));

const texts = fc.oneof(
  { weight: 4, arbitrary: words },
  { weight: 2, arbitrary: mention },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '@everyone look',
      '@here',
      '**bold** _it_ `code` ~~s~~',
      '```js\nalert(1)\n```',
      '[link](javascript:alert(1))',
      '<script>alert(1)</script>',
      '<img src=x onerror=alert(1)>',
      'https://example.com/a?b=c#d',
      '||spoiler||',
      '> quote\n> more',
      '# heading',
      ':thumbsup: :+1:',
      'hello world',
      'hello',
    ),
  },
);

/** Plausible values by the property (or parameter) name a location ends with. */
export function hintFor(path: string[], schema: Record<string, any>): fc.Arbitrary<unknown> | undefined {
  const name = [...path].reverse().find((p) => p !== '[]' && p !== '*');
  if (!name) return undefined;
  const isString = schema.type === 'string' || (Array.isArray(schema.type) && schema.type.includes('string'));
  if (schema.format === 'uuid') {
    const own = fixturesFor(name);
    return own ? fc.oneof({ weight: 4, arbitrary: own }, { weight: 1, arbitrary: anyFixtureId }) : anyFixtureId;
  }
  if (!isString) return undefined;
  switch (name) {
    case 'username':
    case 'usernames':
      return username;
    case 'password':
    case 'current_password':
    case 'new_password':
      return fc.oneof(fx('password'), fc.string({ minLength: 8, maxLength: 72 }), fc.constant('correct horse'));
    case 'code':
      return fc.oneof(fc.stringMatching(/^\d{6}$/), fc.stringMatching(/^[a-z0-9]{4}-[a-z0-9]{4}$/), fc.stringMatching(/^[A-Z2-7]{8,16}$/));
    case 'provider_id':
      return fc.oneof({ weight: 4, arbitrary: fx('provider') }, { weight: 1, arbitrary: fc.stringMatching(/^[a-z0-9][a-z0-9_-]{0,31}$/) });
    case 'return_to':
      return fc.constantFrom('/', '/account', '/invites/AbCdEfGhIjKlMnOp', '/?server=x', '//evil.example', '/\\evil', 'https://evil.example/');
    case 'email':
      return fc.oneof(fc.emailAddress(), fc.constantFrom('a@example.com', 'A@EXAMPLE.COM', 'a+b@example.com'));
    case 'token':
      return fc.oneof(fx('invite'), fc.stringMatching(/^[A-Za-z0-9_-]{16,64}$/));
    case 'emoji':
      return fc.constantFrom('👍', '❤️', '😀', '🎉', '👍🏽', '🏳️‍🌈', '🇫🇷', ':thumbsup:', 'thumbsup', ':+1:', 'a', '❤');
    case 'content':
      return texts;
    case 'role':
      return fc.oneof(fx('roleName'), words);
    case 'name':
    case 'topic':
    case 'description':
    case 'reason':
    case 'display_name':
      return fc.oneof(words, fc.string({ unit: 'grapheme', minLength: 1, maxLength: 24 }), fc.constantFrom('general', 'regulars', 'mods'));
    case 'q':
      return fc.oneof(fc.constantFrom('hello', 'hel*', '"hello world"', 'hello -world', 'hi', 'a*', '*', '"', '-', 'NEAR(a b)', 'hello OR world'), words);
    case 'has':
      // A string parameter takes the comma list; an item of an array parameter, one word.
      return path[path.length - 1] === '[]'
        ? fc.constantFrom('attachment', 'image', 'video', 'audio', 'file', 'link')
        : fc.subarray(['attachment', 'image', 'video', 'audio', 'file', 'link'], { minLength: 1, maxLength: 3 }).map((a) => a.join(','));
    case 'prefix':
      return fc.constantFrom('fz', 'FZ', '', '_', '%', 'a');
    case 'v':
      return fc.nat().map(String);
    default:
      return undefined;
  }
}
