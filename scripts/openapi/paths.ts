/** Every route of the route table (src/api/, and the WebSocket upgrades), as OpenAPI operations. */
import {
  type OpSpec,
  type Prose,
  type Schema,
  rule,
  withText,
  arr,
  binary,
  bool,
  email,
  emoji,
  emojiName,
  input,
  inviteToken,
  nullable,
  oneOf,
  password,
  ref,
  searchWords,
  str,
  text,
  username,
  uuid,
} from './dsl';
import { FLAG_NAMES } from './schemas';
import { signInOperations } from './sign-in';
import { AUTO_ARCHIVE_MINUTES, FORUM_SORTS, LISTED_CHANNEL_TYPES } from '../../src/core/records';
import { DEFAULT_VOICE_BITRATE, MAX_VOICE_BITRATE, MAX_VOICE_USER_LIMIT, MIN_VOICE_BITRATE, ONBOARDING_LIMITS } from '../../src/rules/sizes';

/** A JSON body whose every field may be left out (a PATCH): what is absent stays. */
const everyOptional = (props: Record<string, Schema>) => input(props, Object.keys(props));

/** A role members take themselves carries no power (src/api/servers.ts requirePowerless). */
const SELF_ASSIGNABLE_POWERLESS = rule(
  "a self-assignable role has neither full_server_admin nor a power flag (the moderators', manage_threads, manage_emojis, the voice moderators', mention_everyone)",
  'a self-assignable role carries no power',
);

/** A role's colour: 0xRRGGBB as an integer, or null for none. */
const ROLE_COLOR = {
  anyOf: [{ type: 'integer', minimum: 0, maximum: 0xffffff }, { type: 'null' }],
  description: '0xRRGGBB as an integer (0 to 16777215), or null for none',
};

type Ops = [method: string, path: string, spec: OpSpec][];

const PLAIN_GET =
  'A WebSocket upgrade (RFC 6455): send `Connection: Upgrade`, `Upgrade: websocket` and the handshake headers. ' +
  'A plain GET without them answers 426 with `Upgrade: websocket`; the other refusals are plain HTTP answers before any socket exists.';

const json = (status: number, schema: ReturnType<typeof ref>, description?: string) => ({ status, json: schema, description });
const empty = (description: string) => ({ status: 204, kind: 'empty' as const, description });
const redirect = (description: string) => ({ status: 303, kind: 'redirect' as const, description });
const credentials = input({ username, password });
const sessionCookie = 'always: app_session=<token>; HttpOnly; SameSite=Lax; Path=/; Max-Age=<seconds> (and Secure with an https BASE_URL): the session';
const clearedCookie = { 'Set-Cookie': 'always: app_session=; Max-Age=0 and app_device=; Max-Age=0: the session cookie and the remembered device removed' };
const deviceCookie =
  'app_device=<secret>; HttpOnly; SameSite=Strict; Path=/api/session; Max-Age=<seconds> (and Secure with an https BASE_URL): a remembered device, sent only to POST /api/session/resume';
const remember = {
  type: ['boolean', 'string'],
  enum: [true, false, 'on', 'off', 'true', 'false', '1', '0', ''],
  description:
    '"remember this device": also sets the app_device cookie, which signs this browser in again after a restart (POST /api/session/resume). A form checkbox sends "on".',
};
const currentPassword = { ...str, description: 'the current password: a session cookie alone cannot make this change' };
const paging = {
  before: { ...uuid, description: 'a message id: the page before it, newest first (404 when this room has no such message)' },
  after: { ...uuid, description: 'a message id: the messages after it, oldest first (catching up)' },
  around: { ...uuid, description: 'a message id: the page centred on it, newest first (jumping to a search result)' },
  limit: { type: 'integer', minimum: 1, maximum: 100, description: 'default 50' },
};
const ONE_CURSOR = rule('at most one of before, after and around', 'use one of before, after and around');
const adminPaging = {
  limit: { type: 'integer', minimum: 1, maximum: 100, description: 'with limit or offset: one page, X-Total-Count and Link; without both: every row' },
  offset: { type: 'integer', minimum: 0, maximum: 999_999_999 },
};
const pageHeaders = { 'X-Total-Count': 'rows matching (paged answers only)', Link: '<...>; rel="next" while more rows exist (paged answers only)' };
const MAX_CONTENT = 4000;
/** `reply_to`: a message of the same room; empty or null is none. */
const replyTo: Schema = { anyOf: [uuid, { type: 'string', const: '' }, { type: 'null' }] };
/** A poll a message brings (issue 50; src/api/messages.ts readPoll). */
const pollInput: Schema = input(
  {
    question: text(300),
    answers: { type: 'array', minItems: 2, maxItems: 10, items: input({ text: text(55), emoji: nullable(emoji) }, ['emoji']) },
    duration_hours: { type: 'integer', minimum: 1, maximum: 768, description: 'it ends this many hours after it was sent' },
    allow_multiselect: { ...bool, description: 'a voter may choose several answers (default false: one, a vote for another moves it)' },
  },
  ['allow_multiselect'],
);
/** Content may be blank (or absent) only beside a poll or embeds: a rule in prose (MESSAGE_PROSE). */
const messageBody: Schema = input(
  {
    content: text(MAX_CONTENT, { multiline: true, blank: true }),
    reply_to: replyTo,
    embeds: {
      anyOf: [{ type: 'array', maxItems: 10, items: ref('EmbedInput') }, { type: 'null' }],
      description: "a bot's cards, as a webhook sends them (a person's message has none: 400); null is none",
    },
    poll: { anyOf: [pollInput, { type: 'null' }], description: 'a poll (JSON only; send_polls); null is none' },
    sticker_ids: {
      anyOf: [{ type: 'array', maxItems: 3, uniqueItems: true, items: uuid }, { type: 'null' }],
      description: 'stickers of servers the author is in (JSON only; 400 for one that does not exist, 403 for one of another server); null is none',
    },
  },
  ['content', 'reply_to', 'embeds', 'poll', 'sticker_ids'],
);
/** The parts of a multipart message: content or at least one file. */
const messageParts: Schema = {
  type: 'object',
  properties: {
    content: text(MAX_CONTENT, { multiline: true, blank: true }),
    reply_to: { anyOf: [uuid, { type: 'string', const: '' }] },
    attachments: { type: 'array', maxItems: 5, items: binary, description: 'files of at most 25 MiB each' },
  },
  additionalProperties: false,
  anyOf: [
    { required: ['content'], properties: { content: text(MAX_CONTENT, { multiline: true }) } },
    { required: ['attachments'], properties: { attachments: { minItems: 1 } } },
  ],
};
/** The rules of a body of one file (src/core/http/multipart.ts receiveFile) no schema states. */
const oneFilePart = (field: string): Prose[] => [
  rule(`${field} is one file part (with a filename)`, `send only the file ${field}`),
  rule(`${field} is one file part (with a filename)`, 'unexpected field'),
  rule(`${field} is one file part (with a filename)`, 'unexpected file field'),
  rule(`${field} is one file part (with a filename)`, 'no file'),
  rule(`${field} is one file part (with a filename)`, 'send one file'),
  rule("a part's headers at most 16 lines of at most 80 KiB in all", 'malformed multipart body'),
];
/** The rules of multipart parts (RFC 7578) no schema states; a part without a form-data Content-Disposition is ignored. */
const PARTS_PROSE = [
  rule('content and reply_to are plain fields, each given once', 'unexpected file field'),
  rule('files are parts with a filename, in the field attachments', 'unexpected field'),
  rule('each field once', 'content is given twice'),
  rule('each field once', 'reply_to is given twice'),
  rule('at most 2 fields', 'too many fields'),
  rule("a part's headers at most 16 lines of at most 80 KiB in all", 'malformed multipart body'),
  rule('a field is UTF-8 (or another charset its part names that the server decodes: latin1, utf-16le)', 'could not be read'),
];
/** A webhook URL's secret: 43 base64url characters (32 random bytes). */
const webhookToken: Schema = { type: 'string', pattern: '^[A-Za-z0-9_-]{1,128}$', description: 'the secret of the webhook URL' };
const httpUrl: Schema = { type: 'string', maxLength: 2048, pattern: '^https?://', description: 'an http or https URL, shown as a link (never fetched)' };
/** Discord's execute-webhook payload (src/parts/integrations/formats/discord.ts fromDiscord). */
const DISCORD_PAYLOAD: Schema = input(
  {
    content: text(2000, { multiline: true, blank: true }),
    username: text(80),
    avatar_url: httpUrl,
    tts: { type: 'boolean', description: 'ignored' },
    embeds: { type: 'array', maxItems: 10, items: ref('EmbedInput') },
    allowed_mentions: input({ parse: { type: 'array', items: oneOf('users', 'roles', 'everyone') }, users: arr(str), roles: arr(str) }, [
      'parse',
      'users',
      'roles',
    ]),
  },
  ['content', 'username', 'avatar_url', 'tts', 'embeds', 'allowed_mentions'],
);
const WEBHOOK_PARTS: Schema = {
  type: 'object',
  properties: {
    payload_json: { type: 'string', description: 'the JSON payload, as Discord takes it with files' },
    content: text(2000, { multiline: true, blank: true }),
    username: text(80),
    avatar_url: httpUrl,
    attachments: { type: 'array', maxItems: 5, items: binary, description: 'files of at most 25 MiB each, any field name' },
  },
};
/** Slack's incoming-webhook payload (fromSlack). */
const SLACK_PAYLOAD: Schema = input(
  {
    text: { description: 'mrkdwn text (a string; a value of another type is ignored, as any field here)' },
    username: { description: 'the name shown for this message' },
    icon_url: { description: 'an avatar link, shown, never loaded' },
    attachments: { description: 'legacy attachments: each becomes an embed' },
    blocks: { description: 'Block Kit blocks: sections, headers, context and dividers become text' },
  },
  ['text', 'username', 'icon_url', 'attachments', 'blocks'],
);
const AVATAR_PROSE: Prose[] = [
  rule('avatar must be a PNG, JPEG, GIF or WebP image that can be read', 'the avatar '),
  rule('avatar holds at most 24 000 000 pixels, and at most 32 a byte of the file past 4 000 000 (16-bit images count twice)', 'may hold at most'),
  ...oneFilePart('avatar'),
];
/** Discord's rate-limit headers, on every answer of Discord's own paths (src/api/webhooks.ts rateHeaders). */
const DISCORD_RATE_HEADERS = {
  'X-RateLimit-Limit': "the webhook's burst (5)",
  'X-RateLimit-Remaining': 'calls left before a 429',
  'X-RateLimit-Reset': 'when the bucket is full again, in epoch seconds',
  'X-RateLimit-Reset-After': 'seconds until the bucket is full again',
  'X-RateLimit-Bucket': "the bucket's name (the webhook's id)",
};
/** The webhook's own messages and the webhook itself on Discord's paths (docs/integrations.md "Discord's paths"), ids as Discord's libraries send them. */
function discordWebhookPaths(D: string): Ops {
  const hookPath = { hook: withText(str, "the webhook's id (a UUID here)"), token: webhookToken };
  const messagePath = { ...hookPath, message: withText(str, "the message's id (a UUID here)") };
  const threadId = { thread_id: { ...uuid, description: 'a thread of the webhook’s channel' } };
  const common = { tag: 'Integrations', auth: 'none' as const, discordErrors: true };
  return [
    [
      'GET',
      D,
      {
        ...common,
        summary: "Discord's get-webhook-with-token: the webhook as Discord shows it, without its token",
        path: hookPath,
        ok: [json(200, ref('DiscordWebhook'))],
        errors: [401, 429],
      },
    ],
    [
      'POST',
      D,
      {
        ...common,
        summary:
          "Discord's execute-webhook at Discord's path (what discord.js and @discordjs/rest call): as POST /api/webhooks/{webhook_id}/{token}, into the thread thread_id names; 204, or 200 the message as Discord shapes it with wait=true (and always for a message with files, as Discord does). Errors are Discord's JSON; every answer carries X-RateLimit-*",
        path: hookPath,
        query: { wait: { type: 'string', enum: ['true', 'false'], description: 'answer with the message' }, ...threadId },
        body: { kind: 'json', schema: DISCORD_PAYLOAD, multipart: WEBHOOK_PARTS },
        prose: [WEBHOOK_THREAD_PROSE, ...WEBHOOK_PROSE],
        ok: [
          { ...json(200, ref('DiscordMessage'), 'with wait=true, or files'), headers: DISCORD_RATE_HEADERS },
          { ...empty('posted'), headers: DISCORD_RATE_HEADERS },
        ],
        errors: [401, 429],
      },
    ],
    [
      'GET',
      `${D}/messages/{message}`,
      {
        ...common,
        summary: "One of the webhook's own messages, as Discord shapes it (404 for any other)",
        path: messagePath,
        query: threadId,
        prose: [WEBHOOK_THREAD_PROSE],
        ok: [json(200, ref('DiscordMessage'))],
        errors: [401, 429],
      },
    ],
    [
      'PATCH',
      `${D}/messages/{message}`,
      {
        ...common,
        summary:
          "Edit one of the webhook's own messages: content and embeds, each kept when absent and cleared by null (a message keeps some text, a card or a file)",
        path: messagePath,
        query: threadId,
        body: {
          kind: 'json',
          schema: input(
            { content: nullable(text(2000, { multiline: true, blank: true })), embeds: nullable({ type: 'array', maxItems: 10, items: ref('EmbedInput') }) },
            ['content', 'embeds'],
          ),
        },
        prose: [rule('give content or embeds', 'give content or embeds'), WEBHOOK_THREAD_PROSE, ...WEBHOOK_PROSE],
        ok: [{ ...json(200, ref('DiscordMessage'), 'the message edited'), headers: DISCORD_RATE_HEADERS }],
        errors: [401, 429],
      },
    ],
    [
      'DELETE',
      `${D}/messages/{message}`,
      {
        ...common,
        summary: "Delete one of the webhook's own messages (its files with it)",
        path: messagePath,
        query: threadId,
        prose: [WEBHOOK_THREAD_PROSE],
        ok: [{ ...empty('deleted'), headers: DISCORD_RATE_HEADERS }],
        errors: [401, 429],
      },
    ],
  ];
}

/** An execute call's thread_id (src/api/webhooks.ts threadOf). */
const WEBHOOK_THREAD_PROSE: Prose = rule("thread_id names a thread of the webhook's channel", 'thread_id names no thread');

/** An image of a custom emoji or a sticker (src/core/images.ts encodeImage) and its text fields (receiveForm). */
const imageProse = (what: string, fields: string): Prose[] => [
  rule(`the image must be a PNG, JPEG, GIF or WebP image that can be read`, `${what} `),
  rule(
    'the image holds at most 24 000 000 pixels (every frame counted), and at most 32 a byte of the file past 4 000 000 (16-bit images count twice)',
    'may hold at most',
  ),
  rule(`image is one file part (with a filename), beside the plain fields ${fields}`, 'send only the file image'),
  rule(`image is one file part (with a filename), beside the plain fields ${fields}`, 'unexpected field'),
  rule(`image is one file part (with a filename), beside the plain fields ${fields}`, 'unexpected file field'),
  rule(`image is one file part (with a filename), beside the plain fields ${fields}`, 'no file'),
  rule(`image is one file part (with a filename), beside the plain fields ${fields}`, 'send one file'),
  rule('each field once, of at most 1024 bytes', 'is given twice'),
  rule('each field once, of at most 1024 bytes', 'is too long'),
  rule("a part's headers at most 16 lines of at most 80 KiB in all", 'malformed multipart body'),
];
const WEBHOOK_PROSE: Prose[] = [
  rule('a Slack message needs text, blocks or attachments', 'a Slack message needs'),
  rule('allowed_mentions lists at most 100 ids of printable text, and a kind in parse is not also listed by id', 'allowed_mentions'),
  rule('payload_json holds the JSON payload', 'malformed JSON body'),
  rule('a multipart text field (payload_json, content, username, avatar_url) is at most 64 KiB', 'is too long'),
  rule('a webhook message needs content or an embed (or a file)', 'needs content or an embed'),
  rule('embeds hold at most 6000 characters of text in all, 25 fields each', 'embeds'),
  rule('URLs are http or https', 'must be an http or https URL'),
  ...PARTS_PROSE,
];
const MESSAGE_PROSE: Prose[] = [
  rule('content is not blank unless the message carries files, embeds, a poll or stickers', 'content must not be empty'),
  rule('sticker_ids names live stickers, each once', 'sticker_ids names'),
  rule("a poll answer's emoji is one Unicode emoji or the :shortcode: of one, as a reaction's", 'emoji must be a single emoji'),
  rule('a forum takes posts (POST …/threads), not messages', 'a forum takes posts'),
  rule('reply_to must name a message of the same room', 'reply_to must name a message in this'),
  rule("embeds are a bot's: a person's message carries none", 'embeds are sent by bots and webhooks'),
  rule('embeds hold at most 6000 characters of text in all, 25 fields each', 'embeds'),
  rule('URLs are http or https', 'must be an http or https URL'),
  rule('a message needs content or a file', 'content must not be empty unless the message has attachments'),
  ...PARTS_PROSE,
];
const emojiBody = input({ emoji });
const EMOJI_PROSE = [
  rule(
    'emoji must be one Unicode emoji (UTS #51: a pictograph with its modifiers, a flag, a keycap, or a ZWJ sequence of them) or the :shortcode: of one, at most 32 UTF-16 code units',
    'emoji must be a single emoji',
  ),
];
const name = text(100);
/** A question's or an answer's id in an onboarding (src/parts/community/onboarding.ts): the server makes one when it is left out. */
const ONBOARDING_ID: Schema = { type: 'string', pattern: '^[A-Za-z0-9_-]{1,36}$(?!\\u000a)' };
/** A voice channel's settings (src/rules/sizes.ts). */
const VOICE_FIELDS: Record<string, Schema> = {
  user_limit: {
    type: 'integer',
    minimum: 0,
    maximum: MAX_VOICE_USER_LIMIT,
    description: 'a voice channel only: at most this many people in it at once; 0 (the default): no limit',
  },
  bitrate: {
    type: 'integer',
    minimum: MIN_VOICE_BITRATE,
    maximum: MAX_VOICE_BITRATE,
    description: `a voice channel only: the audio bitrate its people send, bits per second (${DEFAULT_VOICE_BITRATE} by default)`,
  },
};
const VOICE_ONLY_RULE = rule('user_limit and bitrate are for voice channels only', 'is for voice channels only');
/** A list of channel permission names (src/rules/channel-permissions.ts). */
const FLAG_INPUT: Schema = {
  type: 'array',
  items: { type: 'string', enum: FLAG_NAMES },
  maxItems: FLAG_NAMES.length * 2,
  description: 'channel permission names; each counts once',
};

// Threads and forums (src/api/threads.ts, src/api/channels.ts).
const autoArchive = { ...oneOf(...AUTO_ARCHIVE_MINUTES), description: 'minutes without a message before it archives by itself (default 1440)' };
const forumTagInput = input(
  {
    id: { ...uuid, description: 'a tag of this forum, kept; leave out for a new one' },
    name: text(20),
    emoji: { anyOf: [emoji, { type: 'null' }] },
    moderated: { ...bool, description: 'only those with manage_threads apply it' },
  },
  ['id', 'emoji', 'moderated'],
);
const forumSettings = {
  available_tags: {
    type: 'array',
    maxItems: 20,
    items: forumTagInput,
    description: "a forum's tags (the whole list: a tag left out is removed, and taken off its posts)",
  },
  default_reaction: { anyOf: [emoji, { type: 'null' }], description: "a forum's first reaction offered on its posts, or null" },
  default_sort: oneOf(...FORUM_SORTS),
};
const FORUM_PROSE: Prose[] = [
  rule('available_tags, default_reaction and default_sort are a forum’s', 'only a forum has it'),
  rule('tag names are unique in a forum, in any letter case', 'available_tags: two tags named'),
  rule('a tag is listed once', 'available_tags: a tag is listed twice'),
  rule('a tag id names a tag of this forum', 'this forum has no such tag'),
  ...EMOJI_PROSE.map((p) => rule(p.rule, 'must be null or a single emoji')),
  rule('default_reaction is one emoji', 'default_reaction must be null or a single emoji'),
];
const appliedTagIds = {
  type: 'array',
  maxItems: 5,
  items: uuid,
  description: "ids of the forum's available_tags, each once (a moderated one: manage_threads)",
};
const TAG_PROSE: Prose[] = [
  rule("applied_tags name tags of the post's forum", 'applied_tags: this forum has no tag'),
  rule('only a forum post carries tags', 'applied_tags: only a forum post carries tags'),
];
const THREAD_PROSE: Prose[] = [
  rule('a thread has no threads of its own', 'a thread has no threads of its own'),
  rule('a voice channel has no threads', 'a voice channel has no threads'),
  rule('a private thread starts from no message', 'a private thread starts from no message'),
  rule('a forum post starts from no message and is not private', 'a forum post'),
  rule('content and applied_tags are a forum post’s', 'content and applied_tags are a forum post'),
  rule('files come with a forum post', 'files come with a forum post'),
  rule('a server holds at most 1000 active threads', 'a server may have at most'),
  rule('a forum post needs content or a file', 'content must not be empty unless the message has attachments'),
  ...TAG_PROSE,
  ...PARTS_PROSE,
];

/** The overwrites of a channel or a category (manage_roles there). */
function overwriteOps(base: string, what: 'channel' | 'category'): Ops {
  const body = input({ allow: FLAG_INPUT, deny: FLAG_INPUT }, ['allow', 'deny']);
  const both = rule('a flag cannot be both allowed and denied', 'cannot be both allowed and denied');
  const cap = rule(`a ${what} holds at most 100 overwrites`, `a ${what} may have at most`);
  const threadsFollow = what === 'channel' ? [rule("a thread follows its parent's overwrites", 'a thread follows its parent')] : [];
  const followed = what === 'channel' ? "; a synced channel lists its category's" : '';
  const detached = what === 'channel' ? "; a synced channel first takes its category's overwrites as its own" : '';
  return [
    [
      'GET',
      `${base}/overwrites`,
      {
        tag: 'Servers',
        summary: `The permission overwrites of a ${what}${followed} (manage_roles)`,
        auth: 'user',
        ok: [json(200, arr(ref('Overwrite')))],
      },
    ],
    [
      'PUT',
      `${base}/overwrites/{target_id}`,
      {
        tag: 'Servers',
        summary: `Set what everyone (target_id: the server's id), a role or a member may do in a ${what}${detached} (manage_roles)`,
        auth: 'user',
        body: { kind: 'json', schema: body },
        audited: true,
        prose: [both, cap, ...threadsFollow],
        ok: [json(200, ref('Overwrite'))],
      },
    ],
    [
      'DELETE',
      `${base}/overwrites/{target_id}`,
      {
        tag: 'Servers',
        summary: `Remove an overwrite of a ${what}: that target inherits again${detached} (manage_roles)`,
        auth: 'user',
        audited: true,
        ...(threadsFollow.length ? { prose: threadsFollow } : {}),
        ok: [empty('removed')],
      },
    ],
  ];
}
const reason = text(1000, { multiline: true });
/** Characters that reorder or hide text, refused in display names (src/api/accounts.ts). */
const DIRECTION_CONTROLS = '\\u0080-\\u009f\\u061c\\u200b\\u200e\\u200f\\u202a-\\u202e\\u2060\\u2066-\\u2069\\ufeff';

/** The message routes of one scope (channel, legacy server messages, conversation). */
function messageOps(base: string, tag: string, what: string, full: boolean): Ops {
  const ops: Ops = [
    [
      'GET',
      base,
      {
        tag,
        summary: `List ${what} messages (newest first; before/after/around cursors)`,
        auth: 'user',
        query: paging,
        prose: [ONE_CURSOR],
        ok: [json(200, arr(ref('Message')))],
      },
    ],
    [
      'POST',
      base,
      {
        tag,
        summary: `Send a ${what} message (JSON, or multipart with up to 5 attachments of 25 MiB)`,
        auth: 'user',
        body: { kind: 'message', schema: messageBody, multipart: messageParts },
        prose: MESSAGE_PROSE,
        ok: [json(201, ref('Message'))],
        errors: [429],
      },
    ],
  ];
  if (!full) return ops;
  const item = `${base}/{message_id}`;
  return [
    ...ops,
    [
      'PUT',
      item,
      {
        tag,
        summary: 'Edit a message (author only)',
        auth: 'user',
        body: { kind: 'json', schema: input({ content: text(MAX_CONTENT, { multiline: true, blank: true }) }) },
        prose: [
          rule('content may be blank only when the message has attachments', 'content must not be empty unless the message has attachments'),
          // Editing is writing there: a forum takes none (issue 49).
          ...(what === 'channel' ? [rule('a forum takes posts, not messages', 'a forum takes posts')] : []),
        ],
        ok: [json(200, ref('Message'))],
      },
    ],
    [
      'PATCH',
      item,
      {
        tag,
        summary:
          "Remove a message's link previews for good: an edit fetches none again; its own embeds (a webhook's, a bot's) stay (author, or a moderator of the container)",
        auth: 'user',
        body: { kind: 'json', schema: input({ suppress_embeds: { type: 'boolean', const: true } }) },
        ok: [json(200, ref('Message'))],
      },
    ],
    [
      'DELETE',
      item,
      { tag, summary: 'Delete a message (author, or a moderator of the container)', auth: 'user', audited: tag === 'Messages', ok: [empty('deleted')] },
    ],
    [
      'GET',
      `${item}/history`,
      { tag, summary: 'Every version of a message (author, moderators, site administrators)', auth: 'user', ok: [json(200, ref('MessageHistory'))] },
    ],
    [
      'PUT',
      `${item}/reactions`,
      {
        tag,
        summary: "Add the caller's reaction",
        auth: 'user',
        body: { kind: 'json', schema: emojiBody },
        prose: [
          ...EMOJI_PROSE,
          rule('a message holds at most 20 different emoji', 'a message may carry at most'),
          rule('one person reacts to a message with at most 10 emoji', 'you may react to one message with at most'),
        ],
        ok: [json(200, ref('Message'))],
        errors: [429],
      },
    ],
    [
      'DELETE',
      `${item}/reactions`,
      {
        tag,
        summary: "Remove the caller's reaction",
        auth: 'user',
        body: { kind: 'json', schema: emojiBody },
        prose: EMOJI_PROSE,
        ok: [json(200, ref('Message'))],
        errors: [429],
      },
    ],
    [
      'PUT',
      `${item}/reactions/{emoji}`,
      {
        tag,
        summary:
          "Add the caller's reaction, the emoji in the path: a Unicode emoji or :shortcode: (percent-encoded), or a custom emoji as name:id (its id decides; it must exist, and the caller be a member of its server: 403 otherwise)",
        auth: 'user',
        path: { emoji: REACTION_PATH },
        prose: [
          ...EMOJI_PROSE,
          rule('a custom emoji named by name:id exists', 'no such custom emoji'),
          rule('a message holds at most 20 different emoji', 'a message may carry at most'),
          rule('one person reacts to a message with at most 10 emoji', 'you may react to one message with at most'),
        ],
        ok: [json(200, ref('Message'))],
        errors: [429],
      },
    ],
    ...pollOperations(tag, item),
    [
      'DELETE',
      `${item}/reactions/{emoji}`,
      {
        tag,
        summary: "Remove the caller's reaction, the emoji in the path (a custom one as name:id, even once deleted)",
        auth: 'user',
        path: { emoji: REACTION_PATH },
        prose: EMOJI_PROSE,
        ok: [json(200, ref('Message'))],
        errors: [429],
      },
    ],
  ];
}

/** A message's poll (issue 50): votes, voters, the end. */
function pollOperations(tag: string, item: string): [string, string, OpSpec][] {
  const answer = `${item}/poll/answers/{answer_id}`;
  const ended = rule('a poll takes votes until it ends', 'this poll has ended');
  return [
    [
      'PUT',
      `${answer}/votes/@me`,
      {
        tag,
        summary:
          "Vote for an answer (idempotent; one answer unless allow_multiselect: a vote for another moves it); 200 the message. 404: no poll or no such answer; 409: it has ended. Shares the reactions' rate limit",
        auth: 'user',
        ok: [json(200, ref('Message'))],
        errors: [409, 429],
      },
    ],
    [
      'DELETE',
      `${answer}/votes/@me`,
      {
        tag,
        summary: "Take the caller's vote back (idempotent); 200 the message; 409 once ended",
        auth: 'user',
        ok: [json(200, ref('Message'))],
        errors: [409, 429],
      },
    ],
    [
      'GET',
      `${answer}/voters`,
      {
        tag,
        summary: 'Who voted for an answer, by user id',
        auth: 'user',
        query: {
          after: { ...uuid, description: 'a user id: the voters after it' },
          limit: { type: 'integer', minimum: 1, maximum: 100, description: 'default 25' },
        },
        ok: [json(200, arr(ref('UserRef')))],
      },
    ],
    [
      'POST',
      `${item}/poll/end`,
      {
        tag,
        summary:
          'End a poll early (its author): the results are frozen and announced by a message of its author replying to it; 200 the message; 409 once ended',
        auth: 'user',
        prose: [ended],
        ok: [json(200, ref('Message'))],
        errors: [409],
      },
    ],
  ];
}

/** A reaction's emoji in a path: a Unicode emoji or :shortcode:, or a custom emoji's name:id. */
const REACTION_PATH: Schema = {
  anyOf: [emoji, { type: 'string', pattern: '^[A-Za-z0-9_]{2,32}:[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$' }],
};

/** Issue 18: a DM has no name or members to manage (400). */
const DM_UNCHANGED = rule('only a group chat is renamed or changes members: a DM is refused', 'a DM cannot be changed');

/** Marking a channel or conversation read, and saying one is typing there. */
function liveOps(base: string, tag: string, what: string): Ops {
  const audited = what === 'channel';
  return [
    ['GET', `${base}/pins`, { tag, summary: `The ${what}'s pinned messages`, auth: 'user', ok: [json(200, arr(ref('Message')))] }],
    [
      'PUT',
      `${base}/pins/{message_id}`,
      {
        tag,
        summary: `Pin a message (at most 50 per ${what}: 400 past it)`,
        auth: 'user',
        audited,
        prose: [rule(`a ${what} holds at most 50 pinned messages`, `a ${what} may have at most`)],
        ok: [json(200, ref('Message'))],
      },
    ],
    ['DELETE', `${base}/pins/{message_id}`, { tag, summary: 'Unpin a message', auth: 'user', audited, ok: [json(200, ref('Message'))] }],
    [
      'PUT',
      `${base}/read`,
      {
        tag,
        summary: `Mark the ${what} read up to a message (forward only; 400 for a message not in it, or one the caller may not read)`,
        auth: 'user',
        body: { kind: 'json', schema: input({ message_id: uuid }) },
        prose: [rule(`message_id must name a message of this ${what} that the caller may read`, 'message_id must name a message of this')],
        ok: [json(200, ref('ReadState'))],
      },
    ],
    [
      'POST',
      `${base}/typing`,
      {
        tag,
        summary: `Tell the ${what}'s other members you are typing`,
        auth: 'user',
        ...(what === 'channel' ? { prose: [rule('a forum takes posts, not messages', 'a forum takes posts')] } : {}),
        ok: [empty('sent (or a no-op within 3 s of the last)')],
      },
    ],
  ];
}

export const operations: Ops = [
  [
    'GET',
    '/healthz',
    {
      tag: 'Accounts',
      summary: 'Health check: 200 once the database answers; with voice set up, whether Janus answers, its rooms and the people in voice',
      auth: 'none',
      ok: [
        json(200, {
          type: 'object',
          properties: {
            ok: { type: 'boolean', const: true },
            voice: {
              type: 'object',
              description: 'only with JANUS_URL set',
              properties: { janus: oneOf('up', 'down'), rooms: { type: 'integer', minimum: 0 }, participants: { type: 'integer', minimum: 0 } },
              required: ['janus', 'rooms', 'participants'],
              additionalProperties: false,
            },
          },
          required: ['ok'],
          additionalProperties: false,
        }),
      ],
    },
  ],
  ['GET', '/api/openapi.json', { tag: 'Accounts', summary: 'This document', auth: 'none', ok: [json(200, { type: 'object' })] }],

  // Accounts (src/api/accounts.ts)
  [
    'POST',
    '/api/register',
    {
      tag: 'Accounts',
      summary: 'Register',
      auth: 'none',
      body: { kind: 'form', schema: credentials },
      ok: [json(201, ref('Registered')), redirect('a browser form: /?registered=1, or /?error=<code>')],
      errors: [409, 429],
    },
  ],
  [
    'POST',
    '/api/login',
    {
      tag: 'Accounts',
      summary: 'Log in: sets the app_session cookie (with two-factor sign-in on, send code too)',
      auth: 'none',
      body: {
        kind: 'form',
        schema: input(
          {
            username: str,
            password: str,
            code: {
              ...str,
              description:
                'a current TOTP code or an unused recovery code (ignored while two-factor sign-in is off); an account without a password signs in with an empty password and a recovery code',
            },
            remember,
          },
          ['code', 'remember'],
        ),
      },
      ok: [
        { ...json(200, ref('LoggedIn')), headers: { 'Set-Cookie': `${sessionCookie}; with remember, also ${deviceCookie}` } },
        {
          ...redirect('a browser form: /?logged_in=1, /account/warnings, or /?error=<code>'),
          headers: { 'Set-Cookie': 'the app_session cookie, when signed in' },
        },
      ],
      errors: [401, 429],
    },
  ],
  [
    'POST',
    '/api/session/resume',
    {
      tag: 'Accounts',
      summary:
        'A remembered browser signs in again without its password or a code (after a restart): the app_device cookie opens a new session and is replaced by the next secret. 401 (and the cookie cleared) when it holds none that works; a secret used before ends every remembered device of the account',
      auth: 'none',
      ok: [{ ...json(200, ref('LoggedIn')), headers: { 'Set-Cookie': `${sessionCookie}; and ${deviceCookie}` } }],
      errors: [401, 429],
    },
  ],
  [
    'POST',
    '/api/logout',
    {
      tag: 'Accounts',
      summary: 'Log out: ends this session and its remembered device',
      auth: 'account',
      body: { kind: 'form', schema: input({}), optional: true },
      ok: [
        { ...empty('signed out'), headers: clearedCookie },
        { ...redirect('a browser form: /'), headers: clearedCookie },
      ],
    },
  ],
  ['GET', '/api/users/me', { tag: 'Accounts', summary: 'Who is signed in', auth: 'user', ok: [json(200, ref('UserRef'))] }],
  ['GET', '/api/users/{user_id}', { tag: 'Accounts', summary: 'Look a user up', auth: 'user', ok: [json(200, ref('UserRef'))] }],
  ['GET', '/api/account', { tag: 'Accounts', summary: 'The account status record (suspended accounts too)', auth: 'account', ok: [json(200, ref('Account'))] }],
  [
    'PATCH',
    '/api/account',
    {
      tag: 'Accounts',
      summary: 'Set or clear the display name (1 to 32 characters, any script)',
      auth: 'user',
      body: { kind: 'json', schema: input({ display_name: nullable(text(32, { refused: DIRECTION_CONTROLS })) }) },
      ok: [json(200, ref('Account'))],
    },
  ],
  [
    'DELETE',
    '/api/account',
    {
      tag: 'Accounts',
      summary: 'Delete the account (password, and a code with two-factor sign-in on)',
      auth: 'account',
      body: { kind: 'json', schema: input({ password: str, code: str }, ['code']) },
      ok: [{ ...empty('deleted; the session cookie is cleared'), headers: clearedCookie }],
      errors: [409, 429],
    },
  ],
  [
    'PUT',
    '/api/account/password',
    {
      tag: 'Accounts',
      summary: 'Change the password; every other session and every remembered device ends',
      auth: 'account',
      body: { kind: 'json', schema: input({ current_password: str, new_password: password }) },
      ok: [empty('changed')],
      errors: [429],
    },
  ],
  [
    'GET',
    '/api/account/sessions',
    {
      tag: 'Accounts',
      summary: 'The sign-ins of the account, most recently used first: each remembered device, and each live session of a browser not remembered',
      auth: 'account',
      ok: [json(200, arr(ref('Session')))],
    },
  ],
  [
    'DELETE',
    '/api/account/sessions',
    { tag: 'Accounts', summary: 'End every session and remembered device but this one', auth: 'account', ok: [empty('ended')] },
  ],
  [
    'DELETE',
    '/api/account/sessions/{session_id}',
    { tag: 'Accounts', summary: 'End one session, or one remembered device and the session it opened', auth: 'account', ok: [empty('ended')] },
  ],
  [
    'POST',
    '/api/account/2fa/setup',
    {
      tag: 'Accounts',
      summary: 'Start two-factor setup: a new TOTP secret (the current password; 403 when wrong)',
      auth: 'account',
      body: { kind: 'json', schema: input({ current_password: currentPassword }) },
      ok: [json(200, ref('TwoFactorSetup'))],
      errors: [409, 429],
    },
  ],
  [
    'POST',
    '/api/account/2fa/enable',
    {
      tag: 'Accounts',
      summary:
        'Turn two-factor sign-in on with the current password and a code from the new secret (403 for either wrong); every other session and every remembered device ends',
      auth: 'account',
      body: { kind: 'json', schema: input({ code: str, current_password: currentPassword }) },
      ok: [json(200, ref('RecoveryCodes'))],
      errors: [409, 429],
    },
  ],
  [
    'DELETE',
    '/api/account/2fa',
    {
      tag: 'Accounts',
      summary: 'Turn two-factor sign-in off with the current password and a current or recovery code; every remembered device ends',
      auth: 'account',
      body: { kind: 'json', schema: input({ code: str, current_password: currentPassword }) },
      ok: [empty('off')],
      errors: [409, 429],
    },
  ],
  [
    'POST',
    '/api/account/2fa/recovery-codes',
    {
      tag: 'Accounts',
      summary: 'A new set of recovery codes in place of the old ones, with the current password and a current or recovery code',
      auth: 'account',
      body: { kind: 'json', schema: input({ code: str, current_password: currentPassword }) },
      ok: [json(200, ref('RecoveryCodes'))],
      errors: [409, 429],
    },
  ],
  ...signInOperations,
  [
    'PUT',
    '/api/account/avatar',
    {
      tag: 'Accounts',
      summary:
        'Set the avatar: one PNG, JPEG, GIF or WebP of at most 8 MiB and 24 megapixels (and 32 pixels a byte past 4 megapixels; 16-bit images count twice), re-encoded to 256x256 WebP. 429: past 5 uploads in a burst (then one every 20 s), or while another of the same user is in progress; 503 with Retry-After: the decoders are busy',
      auth: 'user',
      body: { kind: 'multipart', schema: { type: 'object', properties: { avatar: binary }, required: ['avatar'], additionalProperties: false } },
      prose: [...AVATAR_PROSE],
      ok: [json(200, ref('AvatarSet'))],
      errors: [429],
    },
  ],
  ['DELETE', '/api/account/avatar', { tag: 'Accounts', summary: 'Remove the avatar', auth: 'user', ok: [empty('removed')] }],
  [
    'GET',
    '/avatars/{user_id}',
    {
      tag: 'Accounts',
      summary: 'An avatar (WebP, cached for a year: the URL carries ?v=)',
      auth: 'none',
      query: { v: { ...str, description: 'the version; any value serves the current image' } },
      ok: [{ status: 200, kind: 'file', description: 'image/webp' }],
    },
  ],
  [
    'GET',
    '/api/media/{sig}/{url}',
    {
      tag: 'Messages',
      summary:
        "A remote image through our media proxy: the proxy_url of an embed's image or thumbnail, or a webhook message's webhook_avatar_proxy_url, re-encoded to WebP (at most 1024 px a side) and cached for a year. 403: not signed by this server (unsigned or altered); 404: it could not be fetched under the fetch rules; 415: not a PNG, JPEG, GIF or WebP image (SVG never)",
      auth: 'user',
      path: {
        sig: { type: 'string', description: 'the HMAC of the URL, 32 base64url characters' },
        url: { type: 'string', description: 'the remote URL in base64url' },
      },
      errors: [415],
      ok: [{ status: 200, kind: 'file', description: 'image/webp' }],
    },
  ],
  [
    'POST',
    '/api/account/export',
    {
      tag: 'Accounts',
      summary: 'Start an export of the account (a zip of JSON and uploaded files)',
      auth: 'account',
      ok: [json(202, ref('ExportStatus'))],
      errors: [409, 429],
    },
  ],
  ['GET', '/api/account/export', { tag: 'Accounts', summary: 'How the export goes', auth: 'account', ok: [json(200, ref('ExportStatus'))] }],
  [
    'GET',
    '/api/account/export/file',
    {
      tag: 'Accounts',
      summary: 'Download the finished export',
      auth: 'account',
      ok: [{ status: 200, kind: 'file', description: 'application/zip' }],
      errors: [404],
    },
  ],
  [
    'PUT',
    '/api/account/presence',
    {
      tag: 'Accounts',
      summary: 'Choose online, idle, dnd or invisible',
      auth: 'user',
      body: { kind: 'json', schema: input({ status: oneOf('online', 'idle', 'dnd', 'invisible') }) },
      ok: [json(200, ref('Presence'))],
    },
  ],

  // Email (src/api/email.ts)
  [
    'PUT',
    '/api/account/email',
    {
      tag: 'Email',
      summary:
        'Set the email address and mail a verification link; an address in place of a different one needs the current password (400 without it, 403 when wrong)',
      auth: 'user',
      body: { kind: 'json', schema: input({ email, current_password: currentPassword }, ['current_password']) },
      prose: [rule('current_password is required when the account already has a different address', 'current_password is required')],
      ok: [json(200, ref('EmailStatus'))],
      errors: [403, 409, 429],
    },
  ],
  [
    'GET',
    '/api/verify-email',
    {
      tag: 'Email',
      summary: 'Verify the address a link was sent to',
      auth: 'none',
      query: { token: { ...str, minLength: 1, required: true, description: 'the token of the emailed link' } },
      prose: [rule('the token must be one that was mailed, unused and not expired', 'this verification link')],
      ok: [
        json(200, ref('EmailStatus')),
        redirect(
          'a browser (Accept: text/html): /email-verified when verified, /email-verified?error=used, expired, conflict or missing when the link did not work (the page words the code)',
        ),
      ],
      errors: [409],
    },
  ],
  [
    'POST',
    '/api/password-reset/request',
    {
      tag: 'Email',
      summary: 'Mail a reset link to a verified address (always 202)',
      auth: 'none',
      body: { kind: 'json', schema: input({ email }) },
      ok: [json(202, ref('Ok'))],
      errors: [429],
    },
  ],
  [
    'POST',
    '/api/password-reset',
    {
      tag: 'Email',
      summary: 'Set a new password with an emailed token',
      auth: 'none',
      body: { kind: 'json', schema: input({ token: { ...str, minLength: 1 }, password }) },
      prose: [rule('the token must be one that was mailed, unused and not expired', 'this reset link')],
      ok: [empty('the password is set; every session of the account ended')],
    },
  ],

  // Servers (src/api/servers.ts)
  [
    'POST',
    '/api/servers',
    {
      tag: 'Servers',
      summary: 'Create a server (with a "general" channel)',
      auth: 'user',
      body: { kind: 'json', schema: input({ name }) },
      ok: [json(201, ref('Server'))],
      errors: [429],
    },
  ],
  [
    'GET',
    '/api/servers',
    {
      tag: 'Servers',
      summary: 'The servers the caller belongs to, with unread and mention counts',
      auth: 'user',
      ok: [json(200, arr(ref('ServerWithUnread')))],
    },
  ],
  ['GET', '/api/servers/{server_id}', { tag: 'Servers', summary: 'One server (members)', auth: 'user', ok: [json(200, ref('Server'))] }],
  [
    'PATCH',
    '/api/servers/{server_id}',
    {
      tag: 'Servers',
      summary:
        'Rename or describe a server, set what everyone may do in its channels (also manage_roles, and only flags one holds), turn its link previews on or off, or set its raid protection: verification level, two-factor for moderators (changed only by someone with two-factor on), join-rate threshold and action, paused invites, paused joins (false: resume) (manage_server)',
      auth: 'user',
      body: {
        kind: 'json',
        schema: everyOptional({
          name,
          description: text(1000, { multiline: true, blank: true }),
          permissions: FLAG_INPUT,
          link_previews: bool,
          verification_level: { type: 'integer', enum: [0, 1, 2, 3], description: 'docs/moderation.md "Verification levels"' },
          two_factor_for_moderators: bool,
          join_rate_threshold: { type: 'integer', minimum: 0, maximum: 1000, description: 'joins per minute; 0: off' },
          join_rate_action: { type: 'string', enum: ['pause', 'alert'] },
          invites_paused: bool,
          joins_paused: bool,
        }),
      },
      audited: true,
      ok: [json(200, ref('Server'))],
    },
  ],
  ['DELETE', '/api/servers/{server_id}', { tag: 'Servers', summary: 'Delete a server and everything in it (owner)', auth: 'user', ok: [empty('deleted')] }],
  ['GET', '/api/imports', { tag: 'Imports', summary: "The caller's imports from Discord, newest first", auth: 'user', ok: [json(200, arr(ref('Import')))] }],
  [
    'POST',
    '/api/imports',
    {
      tag: 'Imports',
      summary:
        'Upload a zip of a DiscordChatExporter export and check it: the import, with its dry run (status checked); nothing is written until it starts. Checks run one at a time. 400: the export is refused, with the reason (docs/import.md); 413: past IMPORT_MAX_MB; 429: past 3 uploads, then one an hour, or while another upload of the caller is being received or checked; 503: 8 uploads are pending on the server (both with Retry-After, before the body is read)',
      auth: 'user',
      query: { server_name: { ...text(100), description: "the new server's name (the Discord server's by default)" } },
      body: { kind: 'multipart', schema: { type: 'object', properties: { export: binary }, required: ['export'], additionalProperties: false } },
      prose: [rule('export is a zip of a DiscordChatExporter JSON export', 'cannot import'), ...oneFilePart('export')],
      ok: [json(201, ref('Import'))],
      errors: [413, 429],
    },
  ],
  ['GET', '/api/imports/{import_id}', { tag: 'Imports', summary: 'One import of the caller, with its progress', auth: 'user', ok: [json(200, ref('Import'))] }],
  [
    'POST',
    '/api/imports/{import_id}/start',
    {
      tag: 'Imports',
      summary:
        'Start a checked import into a new server (the caller owns it); it runs on while the progress is read. 409: not checked, or another import is running',
      auth: 'user',
      body: {
        kind: 'json',
        optional: true,
        schema: input(
          {
            system: { type: 'string', enum: ['lines', 'skip'], description: 'system lines (joins, pins): lines in italics (default) or left out' },
            package_claims: { ...bool, description: 'let people claim their history with their Discord data package (default false: a package is not signed)' },
          },
          ['system', 'package_claims'],
        ),
      },
      ok: [json(202, ref('Import'))],
      errors: [409],
    },
  ],
  [
    'DELETE',
    '/api/imports/{import_id}',
    {
      tag: 'Imports',
      summary: 'Discard an import that is not running, with its upload (a server it made stays). 409: running',
      auth: 'user',
      ok: [empty('discarded')],
      errors: [409],
    },
  ],
  [
    'GET',
    '/api/servers/{server_id}/imported-people',
    {
      tag: 'Imports',
      summary: 'The placeholder accounts of the people imported into a server, with their claim codes (manage_server)',
      auth: 'user',
      ok: [json(200, arr(ref('ImportedPerson')))],
    },
  ],
  [
    'GET',
    '/api/account/claims',
    {
      tag: 'Imports',
      summary:
        'The imported histories the caller claimed, oldest claim first, in servers they are still in (what POST /api/account/imported-messages may hide or erase); hidden: its messages are on a nameless "Former member"',
      auth: 'user',
      ok: [json(200, arr(ref('MyClaim')))],
    },
  ],
  [
    'POST',
    '/api/account/claims',
    {
      tag: 'Imports',
      summary:
        "Claim imported history with a claim code: the placeholder's messages, reactions, mentions and roles become the caller's, who joins its server. 404: no such code; 409: used; 403: banned from that server",
      auth: 'user',
      body: { kind: 'json', schema: input({ code: { ...text(64), description: 'ABCD-EFGH-JKMN, any letter case' } }) },
      ok: [json(200, ref('Claimed'))],
      errors: [404, 409, 429],
    },
  ],
  [
    'POST',
    '/api/account/claims/discord-package',
    {
      tag: 'Imports',
      summary:
        'Read a Discord data package (a zip of at most 1 GiB; only its Account/user.json is read) and list the servers holding an unclaimed history of that Discord id whose import allows package claims: nothing is claimed or joined (claimed is empty); the caller chooses with /choose within 15 minutes. 404: none',
      auth: 'user',
      body: { kind: 'multipart', schema: { type: 'object', properties: { package: binary }, required: ['package'], additionalProperties: false } },
      prose: [
        rule('package is a zip holding Account/user.json with a Discord id', 'not a Discord data package'),
        rule('package is a zip holding Account/user.json with a Discord id', 'Account/user.json'),
        ...oneFilePart('package'),
      ],
      ok: [json(200, ref('PackageClaim'))],
      errors: [404, 413, 429],
    },
  ],
  [
    'POST',
    '/api/account/claims/discord-package/choose',
    {
      tag: 'Imports',
      summary:
        "Claim the histories of the caller's data package (read in the last 15 minutes) in the servers chosen from its list: they join those servers only. 404: no package read lately, or a server not in its list",
      auth: 'user',
      body: {
        kind: 'json',
        schema: input({ server_ids: { type: 'array', items: uuid, minItems: 1, maxItems: 100, description: 'servers from the list the package answered' } }),
      },
      prose: [rule('server_ids is a list of 1 to 100 server ids', 'server_ids must be a list')],
      ok: [json(200, ref('Claimed'))],
      errors: [404],
    },
  ],
  [
    'POST',
    '/api/account/imported-messages',
    {
      tag: 'Imports',
      summary:
        "Hide (back to the placeholder, made nameless) or erase (deleted) the caller's imported messages in a server. 404: the caller claimed no history there",
      auth: 'user',
      body: { kind: 'json', schema: input({ server_id: uuid, action: { type: 'string', enum: ['hide', 'erase'] } }) },
      ok: [json(200, ref('ImportedMessages'))],
      errors: [404],
    },
  ],
  [
    'GET',
    '/api/servers/{server_id}/export',
    {
      tag: 'Servers',
      summary: 'Export the whole server as DiscordChatExporter JSON with its files, a zip the importer reads back (owner; 403 to other members)',
      auth: 'user',
      ok: [
        {
          status: 200,
          kind: 'file',
          description:
            'application/zip, streamed as it is made: one JSON file per channel (per 10 000 messages), attachments in <file>_Files/, avatars in avatars_Files/ (docs/api.md "Exporting a server")',
        },
      ],
      errors: [429],
    },
  ],
  [
    'PUT',
    '/api/servers/{server_id}/owner',
    {
      tag: 'Servers',
      summary: 'Transfer ownership to a member (owner; 409 to oneself or to a bot)',
      auth: 'user',
      body: { kind: 'json', schema: input({ user_id: uuid }) },
      audited: true,
      ok: [json(200, ref('Server'))],
      errors: [409],
    },
  ],
  [
    'GET',
    '/api/servers/{server_id}/channels',
    { tag: 'Servers', summary: "The channels of a server, with the caller's read state", auth: 'user', ok: [json(200, arr(ref('ChannelWithState')))] },
  ],
  [
    'POST',
    '/api/servers/{server_id}/channels',
    {
      tag: 'Servers',
      summary: 'Create a channel (manage_channels)',
      auth: 'user',
      body: {
        kind: 'json',
        schema: input(
          {
            name,
            type: { ...oneOf(...LISTED_CHANNEL_TYPES), description: "'text' by default; a thread is made with POST …/channels/{channel_id}/threads" },
            topic: { ...text(1024, { multiline: true, blank: true }), description: "what it is about; a forum's: its post guidelines" },
            ...forumSettings,
            ...VOICE_FIELDS,
          },
          ['type', 'topic', 'available_tags', 'default_reaction', 'default_sort', 'user_limit', 'bitrate'],
        ),
      },
      audited: true,
      prose: [rule('a server holds at most 500 channels', 'a server may have at most'), ...FORUM_PROSE, VOICE_ONLY_RULE],
      ok: [json(201, ref('Channel'))],
      errors: [409, 429],
    },
  ],
  ['GET', '/api/servers/{server_id}/members', { tag: 'Servers', summary: 'Members with their roles', auth: 'user', ok: [json(200, arr(ref('Member')))] }],
  [
    'DELETE',
    '/api/servers/{server_id}/members/{user_id}',
    {
      tag: 'Servers',
      summary: 'Leave, or remove a member (kick_members, below one in the hierarchy; 409 for the owner leaving)',
      auth: 'user',
      audited: true,
      ok: [empty('removed')],
      errors: [409],
    },
  ],
  [
    'GET',
    '/api/servers/{server_id}/emojis',
    { tag: 'Emoji', summary: "The server's custom emoji, oldest first (members)", auth: 'user', ok: [json(200, arr(ref('Emoji')))] },
  ],
  [
    'POST',
    '/api/servers/{server_id}/emojis',
    {
      tag: 'Emoji',
      summary:
        'Add a custom emoji (manage_emojis): its name and one PNG, JPEG, GIF or WebP image of at most 1 MiB, drawn at 128x128 (an animated GIF or WebP stays animated) and at most 256 KiB so drawn (413 past either). 409: the name is taken in the server (whatever its case), or the slots are full (100 static and 100 animated); 429: past 5 image uploads in a burst, or while another of the same user is in progress; 503 with Retry-After: the image decoders are busy',
      auth: 'user',
      body: {
        kind: 'multipart',
        schema: { type: 'object', properties: { name: emojiName, image: binary }, required: ['name', 'image'], additionalProperties: false },
      },
      prose: [rule('name is 2 to 32 letters, digits or underscores', 'name must be'), ...imageProse('the emoji', 'name')],
      ok: [json(201, ref('Emoji'))],
      errors: [409, 413, 429],
    },
  ],
  [
    'PATCH',
    '/api/servers/{server_id}/emojis/{emoji_id}',
    {
      tag: 'Emoji',
      summary: 'Rename a custom emoji (manage_emojis); 409 when the name is taken',
      auth: 'user',
      body: { kind: 'json', schema: input({ name: emojiName }) },
      ok: [json(200, ref('Emoji'))],
      errors: [409],
    },
  ],
  [
    'DELETE',
    '/api/servers/{server_id}/emojis/{emoji_id}',
    {
      tag: 'Emoji',
      summary: 'Delete a custom emoji (manage_emojis): messages and reactions that used it show :name: as text',
      auth: 'user',
      ok: [empty('deleted')],
    },
  ],
  [
    'GET',
    '/api/servers/{server_id}/stickers',
    { tag: 'Emoji', summary: "The server's stickers, oldest first (members)", auth: 'user', ok: [json(200, arr(ref('Sticker')))] },
  ],
  [
    'POST',
    '/api/servers/{server_id}/stickers',
    {
      tag: 'Emoji',
      summary:
        'Add a sticker (manage_emojis): name, description, tags (the Unicode emoji it stands for) and one PNG, APNG (its first frame), GIF or WebP image of at most 512 KiB, drawn at 320x320 (an animated GIF or WebP stays animated) and at most 512 KiB so drawn (413 past either). 409: 30 stickers already; 429 and 503 as for emoji',
      auth: 'user',
      body: {
        kind: 'multipart',
        schema: {
          type: 'object',
          properties: {
            name: text(30),
            description: text(100, { blank: true }),
            tags: emoji,
            image: binary,
          },
          required: ['name', 'tags', 'image'],
          additionalProperties: false,
        },
      },
      prose: [
        rule('name is 2 to 30 characters', 'name must be'),
        rule('description at most 100 characters', 'description must be'),
        rule('tags is one Unicode emoji or its :shortcode:', 'tags must be'),
        ...imageProse('the sticker', 'name, description and tags'),
      ],
      ok: [json(201, ref('Sticker'))],
      errors: [409, 413, 429],
    },
  ],
  [
    'PATCH',
    '/api/servers/{server_id}/stickers/{sticker_id}',
    {
      tag: 'Emoji',
      summary: 'Change a sticker (manage_emojis)',
      auth: 'user',
      body: {
        kind: 'json',
        schema: input({ name: text(30), description: text(100, { blank: true }), tags: emoji }, ['name', 'description', 'tags']),
      },
      prose: [
        rule('at least one of name, description and tags', 'give name, description or tags'),
        rule('name is 2 to 30 characters', 'name must be'),
        rule('description at most 100 characters', 'description must be'),
        rule('tags is one Unicode emoji or its :shortcode:', 'tags must be'),
      ],
      ok: [json(200, ref('Sticker'))],
    },
  ],
  [
    'DELETE',
    '/api/servers/{server_id}/stickers/{sticker_id}',
    { tag: 'Emoji', summary: 'Delete a sticker (manage_emojis): messages that carried it show its name', auth: 'user', ok: [empty('deleted')] },
  ],
  [
    'GET',
    '/stickers/{sticker_id}',
    {
      tag: 'Emoji',
      summary: "A sticker's image (WebP, animated or not; cached for a year)",
      auth: 'none',
      ok: [{ status: 200, kind: 'file', description: 'image/webp' }],
    },
  ],
  [
    'GET',
    '/emojis/{emoji_id}',
    {
      tag: 'Emoji',
      summary: "A custom emoji's image (WebP, animated or not; cached for a year: an emoji's image never changes)",
      auth: 'none',
      ok: [{ status: 200, kind: 'file', description: 'image/webp' }],
    },
  ],
  [
    'GET',
    '/api/servers/{server_id}/onboarding',
    {
      tag: 'Servers',
      summary: "A server's membership screening: rules, questions, default channels (any member, a pending one too; channels the caller does not see left out)",
      auth: 'user',
      ok: [json(200, ref('Onboarding'))],
    },
  ],
  [
    'PUT',
    '/api/servers/{server_id}/onboarding',
    {
      tag: 'Servers',
      summary:
        "Set a server's membership screening (manage_server). 403: an answer gives a role with powers (full_server_admin, a moderator's flag), one not below the caller's highest role, or a flag the caller lacks. Off: every pending member is let in",
      auth: 'user',
      body: {
        kind: 'json',
        schema: input(
          {
            enabled: bool,
            rules: { type: 'array', maxItems: ONBOARDING_LIMITS.rules, items: text(ONBOARDING_LIMITS.ruleChars) },
            questions: {
              type: 'array',
              maxItems: ONBOARDING_LIMITS.questions,
              items: input(
                {
                  id: ONBOARDING_ID,
                  title: text(ONBOARDING_LIMITS.questionChars),
                  required: bool,
                  single_select: bool,
                  answers: {
                    type: 'array',
                    minItems: 1,
                    maxItems: ONBOARDING_LIMITS.answers,
                    items: input(
                      {
                        id: ONBOARDING_ID,
                        title: text(ONBOARDING_LIMITS.answerChars),
                        role_ids: { type: 'array', maxItems: ONBOARDING_LIMITS.answerTargets, items: uuid },
                        channel_ids: { type: 'array', maxItems: ONBOARDING_LIMITS.answerTargets, items: uuid },
                      },
                      ['id', 'role_ids', 'channel_ids'],
                    ),
                  },
                },
                ['id', 'required', 'single_select'],
              ),
            },
            default_channel_ids: { type: 'array', maxItems: ONBOARDING_LIMITS.defaultChannels, items: uuid },
          },
          ['rules', 'questions', 'default_channel_ids'],
        ),
      },
      audited: true,
      prose: [
        rule('role_ids name roles of this server', 'role_ids: no role'),
        rule('channel_ids and default_channel_ids name channels of this server the caller sees', 'channel_ids: no channel'),
        rule('questions and the answers of one question have distinct ids', 'two share one id'),
        rule('an onboarding turned on has a rule or a question', 'an onboarding turned on needs'),
      ],
      ok: [json(200, ref('Onboarding'))],
    },
  ],
  [
    'POST',
    '/api/servers/{server_id}/onboarding/accept',
    {
      tag: 'Servers',
      summary:
        "A pending member accepts the server's rules with their answers: the answers' roles are given, pending ends (member_updated). 400: a required question unanswered, two answers to a single-select one, or the caller is not pending",
      auth: 'user',
      body: {
        kind: 'json',
        schema: input(
          {
            answers: {
              type: 'object',
              maxProperties: ONBOARDING_LIMITS.questions,
              additionalProperties: { type: 'array', maxItems: ONBOARDING_LIMITS.answers, items: str },
              description: 'question id -> the ids of the answers picked',
            },
          },
          ['answers'],
        ),
      },
      prose: [
        rule('answers name questions and answers of the onboarding', 'answers: no'),
        rule('every required question has an answer, a single-select one at most one', 'answers: the question'),
        rule('only a pending member accepts', 'you are not waiting'),
      ],
      ok: [json(200, ref('OnboardingAccepted'))],
    },
  ],
  ['GET', '/api/servers/{server_id}/roles', { tag: 'Servers', summary: 'The roles of a server', auth: 'user', ok: [json(200, arr(ref('Role')))] }],
  [
    'POST',
    '/api/servers/{server_id}/roles',
    {
      tag: 'Servers',
      summary: 'Create a role, placed last (owner)',
      auth: 'user',
      body: {
        kind: 'json',
        schema: input({ name, full_server_admin: bool, color: ROLE_COLOR, hoist: bool, mentionable: bool, permissions: FLAG_INPUT, self_assignable: bool }, [
          'full_server_admin',
          'color',
          'hoist',
          'mentionable',
          'permissions',
          'self_assignable',
        ]),
      },
      audited: true,
      prose: [rule('a server holds at most 250 roles', 'a server may have at most'), SELF_ASSIGNABLE_POWERLESS],
      ok: [json(201, ref('Role'))],
      errors: [409, 429],
    },
  ],
  [
    'PATCH',
    '/api/servers/{server_id}/roles/{role_id}',
    {
      tag: 'Servers',
      summary: "Rename, recolour, move or change a role (manage_roles, a role below one's highest; only flags one holds; full_server_admin: the owner)",
      auth: 'user',
      body: {
        kind: 'json',
        schema: input(
          {
            name,
            full_server_admin: bool,
            color: ROLE_COLOR,
            hoist: bool,
            mentionable: bool,
            permissions: FLAG_INPUT,
            position: { type: 'integer', minimum: 0, maximum: 250, description: '0 is first; past the end is last' },
            self_assignable: bool,
          },
          ['name', 'full_server_admin', 'color', 'hoist', 'mentionable', 'permissions', 'position', 'self_assignable'],
        ),
      },
      audited: true,
      prose: [SELF_ASSIGNABLE_POWERLESS],
      ok: [json(200, ref('Role'))],
      errors: [409],
    },
  ],
  [
    'DELETE',
    '/api/servers/{server_id}/roles/{role_id}',
    {
      tag: 'Servers',
      summary: "Delete a role; its holders lose it (manage_roles, a role below one's highest)",
      auth: 'user',
      audited: true,
      ok: [empty('deleted')],
    },
  ],
  [
    'PATCH',
    '/api/servers/{server_id}/channels/{channel_id}',
    {
      tag: 'Servers',
      summary:
        "Rename, describe, move, slow or categorise a channel, or set a forum's tags (manage_channels in it); a thread: rename, archive, lock, retag it (its owner while unlocked, manage_threads)",
      auth: 'user',
      body: {
        kind: 'json',
        schema: input(
          {
            name,
            topic: text(1024, { multiline: true, blank: true }),
            position: { type: 'integer', minimum: 0, maximum: 500, description: '0 is first; past the end is last' },
            slowmode_seconds: { type: 'integer', minimum: 0, maximum: 21600 },
            category_id: { ...nullable(uuid), description: 'a category of this server (404 otherwise), or null for none' },
            permissions_synced: {
              ...bool,
              description:
                "true: drop the channel's own overwrites and follow its category's (400 without a category); false: keep what it followed as its own",
            },
            ...forumSettings,
            ...VOICE_FIELDS,
            archived: { ...bool, description: "a thread's: archived (its owner or manage_threads; a locked one: manage_threads)" },
            locked: { ...bool, description: "a thread's: only manage_threads writes in it (manage_threads)" },
            auto_archive_minutes: { ...autoArchive, description: "a thread's" },
            applied_tags: appliedTagIds,
          },
          [
            'name',
            'topic',
            'position',
            'slowmode_seconds',
            'category_id',
            'permissions_synced',
            'available_tags',
            'default_reaction',
            'default_sort',
            'user_limit',
            'bitrate',
            'archived',
            'locked',
            'auto_archive_minutes',
            'applied_tags',
          ],
        ),
      },
      audited: true,
      prose: [
        rule('permissions_synced true needs a category', 'permissions_synced: the channel has no category'),
        rule('archived, locked, auto_archive_minutes and applied_tags are a thread’s', "are a thread's"),
        rule('a thread takes name, archived, locked, auto_archive_minutes and applied_tags', 'a thread takes name'),
        ...FORUM_PROSE,
        ...TAG_PROSE,
        VOICE_ONLY_RULE,
      ],
      ok: [{ status: 200, json: { anyOf: [ref('Channel'), ref('Thread')] }, description: 'the channel, or the thread' }],
      errors: [409],
    },
  ],
  ...overwriteOps('/api/servers/{server_id}/channels/{channel_id}', 'channel'),
  ...overwriteOps('/api/servers/{server_id}/categories/{category_id}', 'category'),
  [
    'GET',
    '/api/servers/{server_id}/categories',
    { tag: 'Servers', summary: 'The categories of a server, in position order', auth: 'user', ok: [json(200, arr(ref('Category')))] },
  ],
  [
    'POST',
    '/api/servers/{server_id}/categories',
    {
      tag: 'Servers',
      summary: 'Create a category, placed last (manage_channels)',
      auth: 'user',
      body: { kind: 'json', schema: input({ name }) },
      audited: true,
      prose: [rule('a server holds at most 50 categories', 'a server may have at most')],
      ok: [json(201, ref('Category'))],
      errors: [429],
    },
  ],
  [
    'PATCH',
    '/api/servers/{server_id}/categories/{category_id}',
    {
      tag: 'Servers',
      summary: 'Rename or move a category (manage_channels)',
      auth: 'user',
      body: {
        kind: 'json',
        schema: input({ name, position: { type: 'integer', minimum: 0, maximum: 50, description: '0 is first; past the end is last' } }, ['name', 'position']),
      },
      audited: true,
      ok: [json(200, ref('Category'))],
    },
  ],
  [
    'DELETE',
    '/api/servers/{server_id}/categories/{category_id}',
    {
      tag: 'Servers',
      summary: 'Delete a category; its channels stay, under none (manage_channels)',
      auth: 'user',
      audited: true,
      ok: [empty('deleted')],
    },
  ],
  [
    'DELETE',
    '/api/servers/{server_id}/channels/{channel_id}',
    {
      tag: 'Servers',
      summary: 'Delete a channel, its threads and their messages (manage_channels in it); a thread with its messages (manage_threads)',
      auth: 'user',
      audited: true,
      ok: [empty('deleted')],
    },
  ],
  [
    'POST',
    '/api/servers/{server_id}/channels/{channel_id}/threads',
    {
      tag: 'Servers',
      summary:
        'Start a thread in a text channel, from one of its messages (create_public_threads) or alone (private: create_private_threads); in a forum, a post: its thread and first message, JSON or multipart with files (send_messages)',
      auth: 'user',
      body: {
        kind: 'message',
        schema: input(
          {
            name,
            message_id: { ...uuid, description: 'a message of this channel to start it from (one thread a message: 409)' },
            private: { ...bool, description: 'seen only by its members and manage_threads; starts from no message' },
            auto_archive_minutes: autoArchive,
            content: { ...text(MAX_CONTENT, { multiline: true, blank: true }), description: "a forum post's first message" },
            applied_tags: appliedTagIds,
          },
          ['message_id', 'private', 'auto_archive_minutes', 'content', 'applied_tags'],
        ),
        multipart: {
          type: 'object',
          properties: {
            name,
            content: text(MAX_CONTENT, { multiline: true, blank: true }),
            applied_tags: { type: 'string', maxLength: 200, description: 'tag ids separated by commas' },
            auto_archive_minutes: { type: 'string', enum: AUTO_ARCHIVE_MINUTES.map(String) },
            attachments: { type: 'array', maxItems: 5, items: binary, description: 'files of at most 25 MiB each' },
          },
          required: ['name'],
          additionalProperties: false,
        },
      },
      prose: THREAD_PROSE,
      ok: [{ status: 201, json: { anyOf: [ref('Thread'), ref('ForumPost')] }, description: 'the thread (a forum post: with its first message)' }],
      errors: [409, 429],
    },
  ],
  [
    'GET',
    '/api/servers/{server_id}/channels/{channel_id}/threads',
    {
      tag: 'Servers',
      summary: "A channel's active threads (latest activity first), or with archived=true its archived ones (latest archived first, paged by before)",
      auth: 'user',
      query: {
        archived: { type: 'string', enum: ['true', 'false'] },
        before: { ...uuid, description: 'an archived thread of this channel: the page after it (404 otherwise)' },
        limit: { type: 'integer', minimum: 1, maximum: 100, description: 'archived: default 50' },
      },
      prose: [
        rule('a thread has no threads of its own', 'a thread has no threads of its own'),
        rule('a voice channel has no threads', 'a voice channel has no threads'),
        rule('before pages archived threads', 'before pages archived threads'),
      ],
      ok: [json(200, arr(ref('ListedThread')))],
    },
  ],
  [
    'GET',
    '/api/servers/{server_id}/channels/{channel_id}/members',
    { tag: 'Servers', summary: "A thread's members (who follow it), first joined first", auth: 'user', ok: [json(200, arr(ref('ThreadMember')))] },
  ],
  [
    'PUT',
    '/api/servers/{server_id}/channels/{channel_id}/members/@me',
    { tag: 'Servers', summary: 'Follow (join) a thread', auth: 'user', ok: [empty('a member of it (already or now)')] },
  ],
  [
    'DELETE',
    '/api/servers/{server_id}/channels/{channel_id}/members/@me',
    { tag: 'Servers', summary: 'Leave a thread (a private one is then gone, unless one manages threads)', auth: 'user', ok: [empty('not a member of it')] },
  ],
  [
    'PUT',
    '/api/servers/{server_id}/channels/{channel_id}/members/{user_id}',
    {
      tag: 'Servers',
      summary: "Add a member of the server who sees the thread's channel (whoever may write in the thread)",
      auth: 'user',
      ok: [empty('a member of it (already or now)')],
    },
  ],
  [
    'DELETE',
    '/api/servers/{server_id}/channels/{channel_id}/members/{user_id}',
    {
      tag: 'Servers',
      summary: 'Remove a member of a thread (manage_threads, or the owner of a private thread)',
      auth: 'user',
      ok: [empty('removed')],
    },
  ],
  [
    'GET',
    '/api/servers/{server_id}/invites',
    { tag: 'Servers', summary: "Live invites: all (manage_server) or one's own (members)", auth: 'user', ok: [json(200, arr(ref('Invite')))] },
  ],
  [
    'DELETE',
    '/api/invites/{token}',
    {
      tag: 'Servers',
      summary: 'Revoke an invite (its creator, or manage_server)',
      auth: 'user',
      path: { token: inviteToken },
      audited: true,
      ok: [empty('revoked')],
    },
  ],
  ['GET', '/api/servers/{server_id}/bans', { tag: 'Servers', summary: 'The bans (ban_members)', auth: 'user', ok: [json(200, arr(ref('Ban')))] }],
  [
    'PUT',
    '/api/servers/{server_id}/bans/{user_id}',
    {
      tag: 'Servers',
      summary: 'Ban a user: removed, and refused by invites until unbanned (ban_members, below one in the hierarchy)',
      auth: 'user',
      body: { kind: 'json', schema: input({ reason: nullable(text(512, { multiline: true })) }, ['reason']), optional: true },
      audited: true,
      ok: [empty('banned')],
      errors: [409],
    },
  ],
  [
    'DELETE',
    '/api/servers/{server_id}/bans/{user_id}',
    { tag: 'Servers', summary: 'Lift a ban (ban_members)', auth: 'user', audited: true, ok: [empty('unbanned')], errors: [409] },
  ],
  [
    'PUT',
    '/api/servers/{server_id}/members/{user_id}/timeout',
    {
      tag: 'Servers',
      summary: 'Time a member out: they may read, not write (moderate_members, below one in the hierarchy)',
      auth: 'user',
      body: { kind: 'json', schema: input({ seconds: { type: 'integer', minimum: 60, maximum: 2419200 } }) },
      audited: true,
      ok: [json(200, ref('Member'))],
      errors: [409],
    },
  ],
  [
    'DELETE',
    '/api/servers/{server_id}/members/{user_id}/timeout',
    {
      tag: 'Servers',
      summary: 'End a timeout (moderate_members, below one in the hierarchy)',
      auth: 'user',
      audited: true,
      ok: [json(200, ref('Member'))],
      errors: [409],
    },
  ],
  [
    'PATCH',
    '/api/servers/{server_id}/members/{user_id}/voice',
    {
      tag: 'Servers',
      summary: 'Server mute, server deafen, move to another voice channel or disconnect a member in voice',
      description:
        'Any of mute (mute_members), deaf (deafen_members), channel_id (move_members; null disconnects), each held in the voice channel the member is in (and move_members in the one they go to, where they need connect); a mute or deafen of a member not in voice: the owner and full server administrators. A server mute stops their audio at the media server. Never the owner but by the owner. 400 channel_id when they are not in voice; 503 "voice is not set up on this server" without JANUS_URL',
      auth: 'user',
      body: {
        kind: 'json',
        schema: input({ mute: bool, deaf: bool, channel_id: nullable(uuid) }, ['mute', 'deaf', 'channel_id']),
      },
      prose: [rule('at least one of mute, deaf and channel_id', 'give mute, deaf or channel_id')],
      audited: true,
      ok: [empty('changed')],
      errors: [503],
    },
  ],
  [
    'GET',
    '/api/servers/{server_id}/audit-log',
    {
      tag: 'Servers',
      summary: 'What the owner and moderators did, newest first (view_audit_log)',
      auth: 'user',
      query: {
        before: { ...uuid, description: 'an entry id: the entries before it (404 for one not in this log)' },
        limit: { type: 'integer', minimum: 1, maximum: 100, description: 'default 50' },
      },
      ok: [json(200, arr(ref('AuditEntry')))],
    },
  ],
  ...automodOps('/api/servers/{server_id}/automod/rules'),
  [
    'PUT',
    '/api/servers/{server_id}/members/{user_id}/role',
    {
      tag: 'Servers',
      summary: 'Give a member a role by name, beside those they hold, or null to take them all (owner)',
      auth: 'user',
      body: { kind: 'json', schema: input({ role: nullable(name) }) },
      audited: true,
      ok: [json(200, ref('Member'))],
    },
  ],
  [
    'PUT',
    '/api/servers/{server_id}/members/@me/roles/{role_id}',
    {
      tag: 'Servers',
      summary:
        'Take a self-assignable role (any member; docs/moderation.md "Self-assigned roles"): 200 the member, unchanged if held already; 403 for a role not self-assignable, with a power, or placed above a role with a power',
      auth: 'user',
      audited: true,
      ok: [json(200, ref('Member'))],
    },
  ],
  [
    'DELETE',
    '/api/servers/{server_id}/members/@me/roles/{role_id}',
    {
      tag: 'Servers',
      summary: 'Drop a self-assignable role (any member): 200 the member; 404 when not held; 403 as for taking it',
      auth: 'user',
      audited: true,
      ok: [json(200, ref('Member'))],
    },
  ],
  [
    'DELETE',
    '/api/servers/{server_id}/members/{user_id}/roles/{role_id}',
    {
      tag: 'Servers',
      summary: 'Take one role from a member (owner; 404 when they do not hold it)',
      auth: 'user',
      audited: true,
      ok: [json(200, ref('Member'))],
    },
  ],
  [
    'POST',
    '/api/servers/{server_id}/invites',
    {
      tag: 'Servers',
      summary: 'Create an invite (any member); optionally limited in uses and time',
      auth: 'user',
      body: {
        kind: 'json',
        schema: input(
          {
            max_uses: nullable({ type: 'integer', minimum: 1, maximum: 1000, description: 'null or absent: unlimited' }),
            expires_in_seconds: nullable({ type: 'integer', minimum: 300, maximum: 604800, description: 'null or absent: seven days' }),
          },
          ['max_uses', 'expires_in_seconds'],
        ),
        optional: true,
      },
      prose: [rule('a server holds at most 1 000 live invites', 'a server may have at most')],
      ok: [json(201, ref('Invite'))],
      errors: [429],
    },
  ],
  [
    'GET',
    '/api/invites/{token}',
    { tag: 'Servers', summary: 'What an invite leads to', auth: 'none', path: { token: inviteToken }, ok: [json(200, ref('InviteInfo'))] },
  ],
  [
    'POST',
    '/api/invites/{token}/accept',
    { tag: 'Servers', summary: 'Join a server by invite', auth: 'user', path: { token: inviteToken }, ok: [json(200, ref('Joined'))] },
  ],
  [
    'GET',
    '/invites/{token}',
    { tag: 'Servers', summary: 'The invite page (browser)', auth: 'none', ok: [{ status: 200, kind: 'html', description: 'the page' }] },
  ],

  // Read state and typing (src/api/messages.ts)
  ...liveOps('/api/servers/{server_id}/channels/{channel_id}', 'Messages', 'channel'),
  ...liveOps('/api/conversations/{conversation_id}', 'Conversations', 'conversation'),

  // Messages (src/api/messages.ts)
  ...messageOps('/api/servers/{server_id}/channels/{channel_id}/messages', 'Messages', 'channel', true),
  ...messageOps('/api/servers/{server_id}/messages', 'Messages', 'legacy server (the first channel)', false),
  ...messageOps('/api/conversations/{conversation_id}/messages', 'Conversations', 'conversation', true),

  // Friends (src/api/friends.ts)
  [
    'POST',
    '/api/friends/requests',
    {
      tag: 'Friends',
      summary: 'Send a friend request by username',
      auth: 'user',
      body: { kind: 'json', schema: input({ username }) },
      prose: [rule('not to oneself', 'you cannot send a friend request to yourself')],
      ok: [json(201, ref('FriendRequest'))],
      errors: [404, 409, 429],
    },
  ],
  [
    'GET',
    '/api/friends/requests',
    {
      tag: 'Friends',
      summary: 'Pending requests: incoming (default) or outgoing',
      auth: 'user',
      query: { direction: oneOf('incoming', 'outgoing') },
      ok: [json(200, arr(ref('FriendRequest')))],
    },
  ],
  [
    'POST',
    '/api/friends/requests/{request_id}/accept',
    { tag: 'Friends', summary: 'Accept a request (its addressee)', auth: 'user', ok: [json(200, ref('Friend'))] },
  ],
  [
    'POST',
    '/api/friends/requests/{request_id}/reject',
    { tag: 'Friends', summary: 'Reject a request (its addressee)', auth: 'user', ok: [empty('rejected and deleted')] },
  ],
  ['GET', '/api/friends', { tag: 'Friends', summary: 'Friends, by username, with presence', auth: 'user', ok: [json(200, arr(ref('FriendWithPresence')))] }],
  ['DELETE', '/api/friends/{user_id}', { tag: 'Friends', summary: 'Remove a friend', auth: 'user', ok: [empty('no longer friends')] }],
  ['GET', '/api/blocks', { tag: 'Friends', summary: 'The users the caller blocked', auth: 'user', ok: [json(200, arr(ref('Block')))] }],
  [
    'PUT',
    '/api/users/{user_id}/block',
    {
      tag: 'Friends',
      summary: 'Block a user: no friendship, DM or group between the two (409 for oneself)',
      auth: 'user',
      ok: [empty('blocked')],
      errors: [409],
    },
  ],
  ['DELETE', '/api/users/{user_id}/block', { tag: 'Friends', summary: 'Unblock a user', auth: 'user', ok: [empty('unblocked')] }],

  // Conversations (src/api/conversations.ts)
  [
    'GET',
    '/api/conversations',
    {
      tag: 'Conversations',
      summary: 'DMs and groups, most recent activity first, with read state',
      auth: 'user',
      ok: [json(200, arr(ref('ConversationWithState')))],
    },
  ],
  [
    'POST',
    '/api/conversations/dm',
    {
      tag: 'Conversations',
      summary: 'Open (or reuse) the DM with a friend',
      auth: 'user',
      body: { kind: 'json', schema: input({ usernames: { type: 'array', minItems: 1, maxItems: 1, items: username } }) },
      prose: [rule("the one name must be a friend's", 'is not your friend'), rule("not one's own", 'list the other members only')],
      ok: [json(201, ref('Conversation'), 'created'), json(200, ref('Conversation'), 'the existing DM')],
      errors: [404],
    },
  ],
  [
    'POST',
    '/api/conversations/group',
    {
      tag: 'Conversations',
      summary: 'Create a group chat with 1 to 25 friends',
      auth: 'user',
      body: {
        kind: 'json',
        schema: input({ name, usernames: { type: 'array', minItems: 1, maxItems: 25, items: username, description: 'a name given twice counts once' } }),
      },
      prose: [rule("every name must be a friend's", 'is not your friend'), rule("not one's own", 'list the other members only')],
      ok: [json(201, ref('Conversation'))],
      errors: [404],
    },
  ],
  [
    'GET',
    '/api/conversations/{conversation_id}',
    { tag: 'Conversations', summary: 'One conversation (members)', auth: 'user', ok: [json(200, ref('Conversation'))] },
  ],
  [
    'PATCH',
    '/api/conversations/{conversation_id}',
    {
      tag: 'Conversations',
      summary: 'Rename a group (any member; 400 for a DM)',
      auth: 'user',
      body: { kind: 'json', schema: input({ name }) },
      prose: [DM_UNCHANGED],
      ok: [json(200, ref('Conversation'))],
    },
  ],
  [
    'PUT',
    '/api/conversations/{conversation_id}/members/{user_id}',
    {
      tag: 'Conversations',
      summary: 'Add a friend to a group (at most 26 people: 409 past it; 403 for someone not a friend; 400 for a DM)',
      auth: 'user',
      prose: [DM_UNCHANGED],
      ok: [json(200, ref('Conversation'))],
      errors: [409],
    },
  ],
  [
    'DELETE',
    '/api/conversations/{conversation_id}/members/{user_id}',
    {
      tag: 'Conversations',
      summary: 'Leave a group, or (its creator) remove someone (400 for a DM)',
      auth: 'user',
      prose: [DM_UNCHANGED],
      ok: [empty('removed')],
    },
  ],

  // Attachments (src/api/uploads.ts)
  [
    'GET',
    '/uploads/{attachment_id}',
    {
      tag: 'Attachments',
      summary: 'Download an attachment (members of its server or conversation); single byte ranges',
      auth: 'user',
      ok: [
        { status: 200, kind: 'file', description: 'the file: inline for images, audio and video, else a download' },
        { status: 206, kind: 'file', description: 'one byte range' },
        { status: 304, kind: 'not-modified', description: 'If-None-Match matched the ETag' },
      ],
      errors: [416],
    },
  ],

  // Search (src/api/search.ts)
  [
    'GET',
    '/api/search',
    {
      tag: 'Search',
      summary: 'Search the messages the caller can see now, newest first',
      auth: 'user',
      query: {
        q: { ...searchWords, required: true, description: 'words, "phrases", prefix*, -exclusions; 1 to 256 characters' },
        server_id: uuid,
        channel_id: { ...uuid, description: 'a channel or a thread (only its own messages)' },
        conversation_id: uuid,
        author_id: uuid,
        has: {
          type: 'array',
          minItems: 1,
          items: oneOf('attachment', 'image', 'video', 'audio', 'file', 'link'),
          style: 'form',
          explode: false,
          description: 'comma-separated (or the parameter repeated): every one must hold',
        },
        before: { ...uuid, description: 'a message id: results older than it (404 for one the caller cannot see)' },
        after: { ...uuid, description: 'a message id: results newer than it' },
        limit: { type: 'integer', minimum: 1, maximum: 50, description: 'default 25' },
      },
      prose: [
        rule('q needs balanced double quotes', 'q has an unbalanced'),
        rule('q needs a word that is not excluded', 'q has nothing to search for'),
        rule('q holds at most 32 words and phrases', 'q may hold at most'),
        rule('conversation_id cannot be combined with server_id or channel_id', 'use conversation_id or server_id and channel_id, not both'),
      ],
      ok: [json(200, ref('SearchResults'))],
      errors: [404, 429],
    },
  ],

  // WebSocket upgrades (src/parts/live/sockets.ts)
  [
    'GET',
    '/api/ws',
    {
      tag: 'WebSocket',
      summary: 'The user stream: ready, then every event the user can see (WebSocket upgrade)',
      auth: 'user',
      query: {
        compress: {
          ...oneOf('gzip'),
          description: 'gzip: a `ready` of 16 KiB or more comes as one binary frame holding its JSON compressed with gzip (every other frame stays text)',
        },
      },
      ok: [
        {
          status: 101,
          kind: 'websocket',
          description: 'switching to the WebSocket protocol; the first frame is `ready`, each frame is `{"event": ...}` (docs/api.md "The user stream")',
        },
      ],
      description: PLAIN_GET,
      errors: [400, 429],
    },
  ],
  [
    'GET',
    '/api/voice/ws',
    {
      tag: 'WebSocket',
      summary: "The voice socket: a tab's signaling for one voice call (WebSocket upgrade)",
      auth: 'user',
      ok: [
        {
          status: 101,
          kind: 'websocket',
          description:
            'switching to the WebSocket protocol; the client sends `{"op": ...}` frames (join, publish, answer, candidate, state, leave), the server `{"event": ...}` ones (docs/api.md "Voice", docs/asyncapi.json)',
        },
      ],
      description: `${PLAIN_GET}; 503 "voice is not set up on this server" without JANUS_URL; 501 on a gateway (voice sockets are the core's)`,
      errors: [429, 501, 503],
    },
  ],
  [
    'GET',
    '/api/channels/{channel_id}/ws',
    {
      tag: 'WebSocket',
      summary: 'Live events of a channel (WebSocket upgrade)',
      auth: 'user',
      ok: [{ status: 101, kind: 'websocket', description: 'switching to the WebSocket protocol; events are JSON text frames (docs/api.md "WebSocket")' }],
      description: PLAIN_GET,
      errors: [429],
    },
  ],
  [
    'GET',
    '/api/conversations/{conversation_id}/ws',
    {
      tag: 'WebSocket',
      summary: 'Live events of a conversation (WebSocket upgrade)',
      auth: 'user',
      ok: [{ status: 101, kind: 'websocket', description: 'switching to the WebSocket protocol; events are JSON text frames (docs/api.md "WebSocket")' }],
      description: PLAIN_GET,
      errors: [429],
    },
  ],

  // Moderation (src/api/moderation.ts)
  [
    'POST',
    '/api/reports',
    {
      tag: 'Moderation',
      summary: 'Report a user, a server or a message',
      auth: 'user',
      body: { kind: 'json', schema: input({ type: oneOf('user', 'server', 'server_message', 'conversation_message'), target: uuid, reason }) },
      prose: [rule('a user report cannot name oneself', 'you cannot report yourself')],
      ok: [json(201, ref('Report')), json(200, ref('Report'), 'the same reporter already has a pending report of this target: that one')],
      errors: [404, 429],
    },
  ],
  [
    'GET',
    '/api/admin/reports',
    {
      tag: 'Moderation',
      summary: 'Every report, pending first, newest first',
      auth: 'admin',
      query: { status: oneOf('pending', 'resolved'), ...adminPaging },
      ok: [{ status: 200, json: arr(ref('Report')), headers: pageHeaders }],
    },
  ],
  [
    'GET',
    '/api/admin/reports/{report_id}',
    { tag: 'Moderation', summary: 'One report with its context', auth: 'admin', ok: [json(200, ref('ReportWithContext'))] },
  ],
  ['DELETE', '/api/admin/messages/{message_id}', { tag: 'Moderation', summary: 'Delete any message', auth: 'admin', audited: true, ok: [empty('deleted')] }],
  [
    'PUT',
    '/api/admin/reports/{report_id}',
    {
      tag: 'Moderation',
      summary: "Set a report's status",
      auth: 'admin',
      body: { kind: 'json', schema: input({ status: oneOf('pending', 'resolved') }) },
      ok: [json(200, ref('Report'))],
    },
  ],
  ['GET', '/api/admin/me', { tag: 'Moderation', summary: 'Check administrator access', auth: 'admin', ok: [json(200, ref('AdminMe'))] }],
  [
    'GET',
    '/api/admin/users',
    {
      tag: 'Moderation',
      summary: 'Users with standing, administrator flag, warnings and kind (person, bot, webhook, placeholder)',
      auth: 'admin',
      query: {
        prefix: { ...str, description: 'username prefix, any case' },
        claimed: { type: 'string', enum: ['show', 'hide'], description: 'hide: leave out placeholders whose history was claimed (default show)' },
        ...adminPaging,
      },
      ok: [{ status: 200, json: arr(ref('AdminUser')), headers: pageHeaders }],
    },
  ],
  [
    'GET',
    '/api/admin/warnings',
    {
      tag: 'Moderation',
      summary: 'Every warning, newest first',
      auth: 'admin',
      query: adminPaging,
      ok: [{ status: 200, json: arr(ref('AdminWarning')), headers: pageHeaders }],
    },
  ],
  [
    'POST',
    '/api/admin/users/{user_id}/warnings',
    {
      tag: 'Moderation',
      summary: 'Warn a user (standing follows the warning count)',
      auth: 'admin',
      body: { kind: 'json', schema: input({ reason }) },
      ok: [json(201, ref('WarningIssued'))],
    },
  ],
  [
    'DELETE',
    '/api/admin/warnings/{warning_id}',
    { tag: 'Moderation', summary: 'Remove a warning (standing recalculated)', auth: 'admin', ok: [json(200, ref('StandingOf'))] },
  ],
  [
    'PUT',
    '/api/admin/users/{user_id}/standing',
    {
      tag: 'Moderation',
      summary: "Set a user's standing (0 to 4)",
      auth: 'admin',
      body: { kind: 'json', schema: input({ standing: { type: 'integer', minimum: 0, maximum: 4 } }) },
      ok: [json(200, ref('AdminUserRecord'))],
    },
  ],
  // Notifications (src/api/notifications.ts)
  [
    'GET',
    '/api/account/notifications',
    {
      tag: 'Notifications',
      summary:
        "The caller's notification settings: servers, then channels, then conversations (what has none inherits: a channel its server's; otherwise all messages, not muted)",
      auth: 'user',
      ok: [json(200, arr(ref('NotificationSetting')))],
    },
  ],
  [
    'PUT',
    '/api/account/notifications/{target_id}',
    {
      tag: 'Notifications',
      summary:
        "Set the caller's notification setting for a server, channel or conversation they see (404 otherwise); their other streams get notification_settings",
      auth: 'user',
      body: {
        kind: 'json',
        schema: input(
          {
            level: oneOf('all', 'mentions', 'nothing'),
            muted_until: { anyOf: [{ type: 'string', format: 'date-time' }, { type: 'null' }] },
            suppress_everyone: bool,
            suppress_roles: bool,
          },
          ['muted_until', 'suppress_everyone', 'suppress_roles'],
        ),
      },
      prose: [
        rule('suppress_everyone and suppress_roles can be true only for a server', 'applies to a server'),
        rule('muted_until is a time with its zone, such as 2026-11-28T18:00:00Z', 'muted_until must be'),
      ],
      ok: [json(200, ref('NotificationSetting'))],
      errors: [404],
    },
  ],
  [
    'DELETE',
    '/api/account/notifications/{target_id}',
    {
      tag: 'Notifications',
      summary: 'Back to inheriting (204 whether or not a setting was there); 404 for what the caller does not see',
      auth: 'user',
      ok: [empty('inheriting')],
    },
  ],
  [
    'POST',
    '/api/servers/{server_id}/read',
    {
      tag: 'Notifications',
      summary: 'Mark every channel of the server the caller sees read up to its newest message; their other streams get read for each that moved',
      auth: 'user',
      ok: [json(200, arr(ref('ReadState')), 'the read state of every channel the caller sees there')],
      errors: [429],
    },
  ],
  [
    'POST',
    '/api/account/read-all',
    {
      tag: 'Notifications',
      summary: 'Mark every channel and conversation of the caller read; their other streams get read for each that moved',
      auth: 'user',
      ok: [empty('all read')],
      errors: [429],
    },
  ],

  // Message links (src/api/links.ts)
  [
    'GET',
    '/channels/@me/{conversation_id}/{message_id}',
    {
      tag: 'Notifications',
      summary:
        'A link to a message of a DM or group: the app page, which opens the conversation around it for its members and says "You cannot see this message" to anyone else (the page is the same whatever the ids)',
      auth: 'none',
      ok: [{ status: 200, kind: 'html', description: 'the app page' }],
    },
  ],
  [
    'GET',
    '/channels/{server_id}/{channel_id}/{message_id}',
    {
      tag: 'Notifications',
      summary:
        'A link to a channel message: the app page, which opens the channel around it for whoever sees it and says "You cannot see this message" to anyone else (the page is the same whatever the ids)',
      auth: 'none',
      ok: [{ status: 200, kind: 'html', description: 'the app page' }],
    },
  ],

  // The installable app (src/api/web-app.ts)
  [
    'GET',
    '/manifest.webmanifest',
    {
      tag: 'App',
      summary:
        'The web app manifest every page links: the app named after INSTANCE_NAME, standalone, its icons (made by the build), the Direct messages and Search shortcuts, and the share target. No-cache with an ETag',
      auth: 'none',
      ok: [
        { status: 200, json: ref('WebAppManifest'), mediaType: 'application/manifest+json', headers: { ETag: 'always: the strong validator of the manifest' } },
        { status: 304, kind: 'not-modified', description: 'If-None-Match named the current ETag' },
      ],
    },
  ],
  [
    'GET',
    '/share',
    {
      tag: 'App',
      summary:
        'The app page, which opens a "Share to…" picker of channels and conversations for what another app shared (kept by the service worker from the share target\'s POST to this address, or given as ?title=&text=&url=), then the chosen room with the composer filled in. A POST here is taken by the service worker; one that reaches the server is 405',
      auth: 'none',
      query: {
        title: { ...str, description: 'a title to share' },
        text: { ...str, description: 'text to share' },
        url: { ...str, description: 'a link to share' },
      },
      ok: [{ status: 200, kind: 'html', description: 'the app page' }],
    },
  ],

  // Push (src/api/push.ts)
  [
    'GET',
    '/api/push/key',
    {
      tag: 'Notifications',
      summary: "The server's VAPID public key (base64url): a browser's applicationServerKey for PushManager.subscribe",
      auth: 'none',
      ok: [json(200, ref('PushKey'))],
    },
  ],
  [
    'GET',
    '/api/account/push-subscriptions',
    {
      tag: 'Notifications',
      summary: "The caller's push subscriptions, one per browser that allowed notifications, newest first",
      auth: 'user',
      ok: [json(200, arr(ref('PushSubscription')))],
    },
  ],
  [
    'POST',
    '/api/account/push-subscriptions',
    {
      tag: 'Notifications',
      summary:
        'Subscribe this browser to pushes: its PushSubscription JSON. The endpoint must be an https URL whose host resolves to public addresses only; the subscription ends with this session (sign-out, revocation, a password change) or its remembered device, and when the push service answers 404 or 410. The same endpoint again replaces the old one; a user holds at most 10 (the oldest goes)',
      auth: 'user',
      body: {
        kind: 'json',
        schema: input(
          {
            endpoint: { type: 'string', format: 'uri', maxLength: 2048 },
            keys: input({
              p256dh: { type: 'string', pattern: '^[A-Za-z0-9_-]{87}$', description: 'base64url of the uncompressed P-256 point (65 bytes)' },
              auth: { type: 'string', pattern: '^[A-Za-z0-9_-]{22}$', description: 'base64url of 16 bytes' },
            }),
            show_text: withText(bool, 'pushes to this device carry the message text (default false: room and sender only)'),
            expirationTime: { anyOf: [{ type: 'number' }, { type: 'null' }], description: "the browser's, ignored" },
          },
          ['show_text', 'expirationTime'],
        ),
      },
      prose: [
        rule('the endpoint is https and its host resolves to public addresses only', 'endpoint:'),
        rule('keys.p256dh is an uncompressed point: its first byte is 4', 'keys.p256dh must be'),
      ],
      ok: [json(201, ref('PushSubscription'))],
      errors: [429],
    },
  ],
  [
    'PATCH',
    '/api/account/push-subscriptions/{subscription_id}',
    {
      tag: 'Notifications',
      summary: 'Choose whether pushes to that device carry the message text',
      auth: 'user',
      body: { kind: 'json', schema: input({ show_text: bool }) },
      ok: [json(200, ref('PushSubscription'))],
      errors: [404],
    },
  ],
  [
    'DELETE',
    '/api/account/push-subscriptions/{subscription_id}',
    { tag: 'Notifications', summary: "End one of the caller's push subscriptions", auth: 'user', ok: [empty('ended')], errors: [404] },
  ],

  // Bots (src/api/bots.ts): accounts that sign in with Authorization: Bot <token>
  ['GET', '/api/bots', { tag: 'Integrations', summary: "The caller's bots, oldest first, without tokens", auth: 'user', ok: [json(200, arr(ref('Bot')))] }],
  [
    'POST',
    '/api/bots',
    {
      tag: 'Integrations',
      summary:
        'Make a bot: a user with bot true that signs in with its token (Authorization: Bot <token>), shown this once. The name is a username (taken names 409); at most 10 bots a person',
      auth: 'user',
      body: { kind: 'json', schema: input({ name: username }) },
      ok: [json(201, ref('BotWithToken'))],
      errors: [409, 429],
    },
  ],
  [
    'DELETE',
    '/api/bots/{bot_id}',
    {
      tag: 'Integrations',
      summary:
        "Delete one of the caller's bots: it leaves every server, its token stops, its messages stay (as deleted-user). 409 while it owns a server (only a server it came to own before transfers to bots were refused: it gives it back with its token)",
      auth: 'user',
      ok: [empty('deleted')],
      errors: [409],
    },
  ],
  [
    'POST',
    '/api/bots/{bot_id}/token',
    {
      tag: 'Integrations',
      summary: "A new token for one of the caller's bots: the old one stops at once and its sockets close",
      auth: 'user',
      ok: [json(200, ref('BotToken'))],
    },
  ],
  [
    'PUT',
    '/api/bots/{bot_id}/avatar',
    {
      tag: 'Integrations',
      summary: "Set a bot's avatar, as PUT /api/account/avatar",
      auth: 'user',
      body: { kind: 'multipart', schema: { type: 'object', properties: { avatar: binary }, required: ['avatar'] } },
      prose: AVATAR_PROSE,
      ok: [json(200, ref('AvatarSet'))],
      errors: [429, 503],
    },
  ],
  [
    'POST',
    '/api/servers/{server_id}/bots',
    {
      tag: 'Integrations',
      summary: 'Add a bot to the server by its name (manage_server); 200 whether it joined now or was a member',
      auth: 'user',
      body: { kind: 'json', schema: input({ username }) },
      ok: [json(200, ref('BotAdded'))],
      errors: [404],
    },
  ],

  // Webhooks (src/api/webhooks.ts)
  [
    'GET',
    '/api/servers/{server_id}/channels/{channel_id}/webhooks',
    {
      tag: 'Integrations',
      summary: "The channel's webhooks, oldest first, without tokens (manage_webhooks in it)",
      auth: 'user',
      ok: [json(200, arr(ref('Webhook')))],
    },
  ],
  [
    'POST',
    '/api/servers/{server_id}/channels/{channel_id}/webhooks',
    {
      tag: 'Integrations',
      summary:
        'Make a webhook that posts into the channel (manage_webhooks in it): its token and URL are shown this once; at most 15 a channel and 100 a server (409); in the audit log',
      auth: 'user',
      body: { kind: 'json', schema: input({ name: text(80) }) },
      prose: [rule('a webhook posts into a text channel', 'a webhook posts into a text channel')],
      ok: [json(201, ref('WebhookWithToken'))],
      errors: [409, 429],
    },
  ],
  [
    'PATCH',
    '/api/webhooks/{webhook_id}',
    {
      tag: 'Integrations',
      summary:
        'Rename a webhook, set or clear its signing secret (github_secret: while set, every call on every route must carry X-Hub-Signature-256), or make a new token (the old URL stops at once; the answer then carries the new token and URL); in the audit log',
      auth: 'user',
      body: {
        kind: 'json',
        schema: input(
          { name: text(80), github_secret: { anyOf: [{ type: 'string', minLength: 1, maxLength: 256 }, { type: 'null' }] }, regenerate_token: bool },
          ['name', 'github_secret', 'regenerate_token'],
        ),
      },
      prose: [
        rule('at least one of name, github_secret and regenerate_token', 'give name, github_secret or regenerate_token'),
        rule('github_secret is printable text', 'github_secret contains control characters'),
      ],
      ok: [json(200, { anyOf: [ref('Webhook'), ref('WebhookWithToken')] } as Schema)],
    },
  ],
  [
    'DELETE',
    '/api/webhooks/{webhook_id}',
    {
      tag: 'Integrations',
      summary: 'Delete a webhook; its messages stay, shown under its name, unless delete_messages=true; in the audit log',
      auth: 'user',
      query: { delete_messages: { type: 'string', enum: ['true', 'false'], description: 'also delete every message it posted' } },
      ok: [empty('deleted')],
    },
  ],
  [
    'POST',
    '/api/webhooks/{webhook_id}/{token}',
    {
      tag: 'Integrations',
      summary:
        "Post through a webhook, in Discord's execute-webhook format (content, username, avatar_url, embeds, allowed_mentions; tts ignored), as JSON or as multipart with files and payload_json, into the thread thread_id names (a thread of the webhook's channel). 204, or 200 the message with wait=true (and always for a message with files, as Discord does). With a secret set, X-Hub-Signature-256 (the HMAC-SHA256 of the whole body) must match (401). 5 calls per 2 s per webhook, 30 a minute per channel, spent only by calls that post",
      auth: 'none',
      path: { token: webhookToken },
      query: {
        wait: { type: 'string', enum: ['true', 'false'], description: 'answer with the message' },
        thread_id: { ...uuid, description: 'a thread of the webhook’s channel' },
      },
      body: { kind: 'json', schema: DISCORD_PAYLOAD, multipart: WEBHOOK_PARTS },
      prose: [WEBHOOK_THREAD_PROSE, ...WEBHOOK_PROSE],
      ok: [json(200, ref('Message'), 'with wait=true, or files'), empty('posted')],
      errors: [401, 429],
    },
  ],
  [
    'POST',
    '/api/webhooks/{webhook_id}/{token}/slack',
    {
      tag: 'Integrations',
      summary:
        "Post through a webhook in Slack's incoming-webhook format (text, attachments, blocks: with text, text is the message and the blocks a card under it), as JSON or a form with payload: 200 ok. With a secret set, X-Hub-Signature-256 must match (401)",
      auth: 'none',
      path: { token: webhookToken },
      body: { kind: 'json', schema: SLACK_PAYLOAD },
      prose: WEBHOOK_PROSE,
      ok: [{ status: 200, kind: 'text' as const, description: 'ok, as Slack answers' }],
      errors: [401, 429],
    },
  ],
  [
    'POST',
    '/api/webhooks/{webhook_id}/{token}/github',
    {
      tag: 'Integrations',
      summary:
        'A GitHub webhook delivery (X-GitHub-Event: push, pull_request, issues, issue_comment, release, workflow_run, ping make a message; other events and actions, and deliveries without what their card needs (any field may be null or missing), are accepted and skipped): 204. With a secret set, X-Hub-Signature-256 must match (401). A delivery taken in the last 24 hours (the same X-GitHub-Delivery, or the same signed body) is answered 200 and not posted again',
      auth: 'none',
      path: { token: webhookToken },
      body: { kind: 'json', schema: { type: 'object' } },
      prose: [rule('the X-GitHub-Event header names the event', 'X-GitHub-Event'), ...WEBHOOK_PROSE],
      ok: [empty('received'), { status: 200, kind: 'text' as const, description: 'a delivery taken before: not posted again' }],
      errors: [401, 429],
    },
  ],
  ...[6, 7, 8, 9, 10].flatMap((v) => discordWebhookPaths(`/api/v${v}/webhooks/{hook}/{token}`)),

  // Cluster (src/api/cluster.ts): a core's answers to its gateways, docs/scaling.md
  [
    'POST',
    '/api/cluster/sockets',
    {
      tag: 'Cluster',
      summary:
        "A gateway opens a socket: the upgrade request's path and headers (cookie, origin, host, sec-fetch-site, user-agent), authorized as an upgrade made to the core. 200 the user stream's ready frame, 204 a room socket, or the upgrade's own refusal. Needs the X-Gateway-Key the core keeps in Redis (403 without); 404 from a server with no gateways (ROLE=all)",
      auth: 'none',
      body: {
        kind: 'json',
        schema: input({
          gateway: uuid,
          socket: { type: 'integer', minimum: 1, maximum: 2 ** 31 - 1 },
          url: { type: 'string', minLength: 1, maxLength: 8192 },
          headers: { type: 'object', additionalProperties: { type: 'string', maxLength: 8192 } },
        }),
      },
      ok: [json(200, { type: 'object', description: 'the ready frame of the user stream (docs/asyncapi.json)' }), empty('a room socket opened')],
      errors: [401, 403, 404, 429],
    },
  ],
  [
    'POST',
    '/api/cluster/alive',
    {
      tag: 'Cluster',
      summary:
        'A gateway reports every socket it holds or is opening (every 2 s); the core forgets the others up to up_to and answers the ones it does not know. Needs X-Gateway-Key (403 without); 404 from a server with no gateways (ROLE=all)',
      auth: 'none',
      body: {
        kind: 'json',
        schema: input(
          {
            gateway: uuid,
            sockets: { type: 'array', items: { type: 'integer', minimum: 1, maximum: 2 ** 31 - 1 }, description: 'at most 200 000 ids' },
            up_to: {
              type: 'integer',
              minimum: 0,
              maximum: 2 ** 31 - 1,
              description: 'the highest socket id the gateway had given when it made the report: sockets above it may have overtaken the report and are kept',
            },
            hidden: {
              type: 'array',
              items: { type: 'integer', minimum: 1, maximum: 2 ** 31 - 1 },
              description: 'the user streams whose page said it is hidden (pushes go to users with no visible stream); at most 200 000 ids',
            },
          },
          ['hidden'],
        ),
      },
      prose: [rule('sockets and hidden list at most 200 000 ids each (a JSON body holds at most 1 MiB)', 'must be an array of at most')],
      ok: [json(200, ref('GatewayReport'))],
      errors: [403, 404],
    },
  ],
];

/** AutoMod's rules (docs/api.md "AutoMod"): manage_server (the owner and full administrators hold it). */
function automodOps(R: string): Ops {
  const keyword = { ...text(60), description: "a keyword: '*' only at its start or end" };
  const trigger: Schema = {
    description: 'one of five types (docs/moderation.md "AutoMod")',
    oneOf: [
      input(
        {
          type: { type: 'string', const: 'keyword' },
          keyword_filter: { ...arr(keyword), minItems: 1, maxItems: 1000 },
          allow_list: { ...arr(keyword), maxItems: 100 },
        },
        ['allow_list'],
      ),
      input({ type: { type: 'string', const: 'mention_spam' }, mention_total_limit: { type: 'integer', minimum: 1, maximum: 50 } }),
      input({ type: { type: 'string', const: 'spam' } }),
      input({ type: { type: 'string', const: 'links' }, allow_list: { ...arr({ type: 'string', maxLength: 253 }), maxItems: 100 } }, ['allow_list']),
      input({ type: { type: 'string', const: 'invite_links' } }),
    ],
  };
  const action: Schema = {
    oneOf: [
      input({ type: { type: 'string', const: 'block_message' }, custom_message: nullable(text(150)) }, ['custom_message']),
      input({ type: { type: 'string', const: 'send_alert_message' }, channel_id: uuid }),
      input({ type: { type: 'string', const: 'timeout' }, duration_seconds: { type: 'integer', minimum: 60, maximum: 2419200 } }),
    ],
  };
  const fields = {
    name: text(100),
    enabled: bool,
    trigger,
    actions: { ...arr(action), minItems: 1, maxItems: 3 },
    exempt_role_ids: { ...arr(uuid), maxItems: 20 },
    exempt_channel_ids: { ...arr(uuid), maxItems: 50 },
  };
  const prose: Prose[] = [
    rule("a keyword has a character besides '*'", 'a keyword needs a letter or digit'),
    rule("'*' stands only at the start or the end of a keyword", "'*' stands only at the start or the end"),
    rule('a keyword has no control characters', 'a keyword has no control characters'),
    rule('a links rule allows domain names (example.com)', 'is not a domain name'),
    rule('each type of action at most once', 'each type of action at most once'),
    rule("an alert's channel_id is a text channel of the server that the caller sees", 'channel_id: '),
    rule('exempt roles and channels are those of the server', 'of this server'),
    rule('a server has at most 6 keyword rules and one rule of each other type', 'a server has at most'),
  ];
  return [
    ['GET', R, { tag: 'Servers', summary: "The server's AutoMod rules, oldest first (manage_server)", auth: 'user', ok: [json(200, arr(ref('AutomodRule')))] }],
    [
      'POST',
      R,
      {
        tag: 'Servers',
        summary: 'Make an AutoMod rule (manage_server); audited (automod_rule_create)',
        auth: 'user',
        body: { kind: 'json', schema: input(fields, ['enabled', 'exempt_role_ids', 'exempt_channel_ids']) },
        prose,
        ok: [json(201, ref('AutomodRule'))],
        errors: [429],
      },
    ],
    [
      'PATCH',
      `${R}/{rule_id}`,
      {
        tag: 'Servers',
        summary: "Change an AutoMod rule: any of its fields, its trigger's type excepted (manage_server); audited (automod_rule_update)",
        auth: 'user',
        body: { kind: 'json', schema: input(fields, Object.keys(fields)) },
        prose: [...prose, rule("a rule's trigger type does not change", "a rule's trigger type cannot change")],
        ok: [json(200, ref('AutomodRule'))],
      },
    ],
    [
      'DELETE',
      `${R}/{rule_id}`,
      { tag: 'Servers', summary: 'Delete an AutoMod rule (manage_server); audited (automod_rule_delete)', auth: 'user', ok: [empty('deleted')] },
    ],
  ];
}
