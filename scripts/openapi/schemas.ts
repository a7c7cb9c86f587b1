/** The records the API answers with (components/schemas of docs/openapi.json). */
import { FLAGS } from '../../src/rules/channel-permissions';
import { AUTO_ARCHIVE_MINUTES, CHANNEL_TYPES, FIRST_LINES_CHARS, FORUM_SORTS, JOIN_RATE_ACTIONS, VERIFICATION_LEVELS } from '../../src/core/records';
import { MAX_JOIN_RATE_THRESHOLD } from '../../src/parts/community/join-rate';
import { MAX_VOICE_BITRATE, MAX_VOICE_USER_LIMIT, MIN_VOICE_BITRATE } from '../../src/rules/sizes';
import { type Schema, arr, bool, input, int, nullable, obj, oneOf, ref, str, time, uuid } from './dsl';

/** The channel permission flags, as src/rules/channel-permissions.ts names them. */
export const FLAG_NAMES: string[] = [...FLAGS];
const FLAG_LIST: Schema = { type: 'array', items: { type: 'string', enum: FLAG_NAMES }, uniqueItems: true };
/** A channel's fields that only voice channels have. */
const VOICE_ONLY = ['user_limit', 'bitrate'];

/** The fields of a message record that only some messages have: where it is, and what webhooks and bots add. */
export const MESSAGE_OPTIONAL = [
  'server_id',
  'channel_id',
  'conversation_id',
  'webhook_id',
  'webhook_avatar_url',
  'webhook_avatar_proxy_url',
  'embeds',
  'thread',
  'poll',
  'stickers',
];
/** A forum's fields of a channel record: on forums only. */
const FORUM_OPTIONAL = ['available_tags', 'default_reaction', 'default_sort'];

/** `bot`: present (true) on bots and webhooks only. */
export const BOT_FLAG: Schema = { type: 'boolean', const: true, description: 'a bot or a webhook: present only then' };

export const schemas: Record<string, Schema> = {
  UserRef: obj({ ...profile(), bot: BOT_FLAG }, ['bot']),
  NameRef: withDescription(obj({ user_id: uuid, username: str }), 'a user as administrators and the audit log name them'),
  Ok: obj({ ok: { const: true } }),
  Registered: obj({ user_id: uuid }),
  LoggedIn: obj({ user_id: uuid, suspended: bool }),
  AccountWarning: obj({ id: uuid, issued_by: withDescription(str, 'username of the administrator'), reason: str, created_at: time }),
  Account: obj({
    user_id: uuid,
    username: str,
    is_admin: bool,
    account_standing: { type: 'integer', minimum: 0, maximum: 4 },
    warnings: arr(ref('AccountWarning')),
    email: nullable(str),
    email_verified: bool,
    display_name: nullable(str),
    avatar_url: nullable(str),
    two_factor: withDescription(bool, 'two-factor sign-in is on'),
    has_password: withDescription(bool, 'the account has a password (one made through an OpenID Provider has none until it sets one)'),
    username_changeable: withDescription(bool, "the username was made from a provider's claim and may still be changed once (PUT /api/account/username)"),
  }),
  SignInOptions: obj({
    providers: arr(obj({ id: str, name: withDescription(str, 'shown on its button: "Sign in with <name>"') })),
    password_signup: withDescription(bool, 'POST /api/register is open (PASSWORD_SIGNUP)'),
  }),
  SsoSignedIn: obj({ user_id: uuid, suspended: bool, return_to: withDescription(str, 'where the sign-in was going: a path on this site') }),
  Identity: obj({
    id: uuid,
    provider_id: str,
    provider_name: withDescription(nullable(str), 'null when the provider is no longer configured (the identity then opens nothing)'),
    email: withDescription(nullable(str), 'the verified email the provider gave at the last sign-in'),
    created_at: time,
    last_used_at: time,
  }),
  Passkey: obj({
    id: uuid,
    name: str,
    created_at: time,
    last_used_at: withDescription(nullable(time), 'the last sign-in with it; null before the first'),
    backed_up: withDescription(bool, "synced to the owner's other devices by a passkey manager"),
  }),
  PasskeyCreationOptions: {
    type: 'object',
    description: 'PublicKeyCredentialCreationOptionsJSON (WebAuthn Level 3), for PublicKeyCredential.parseCreationOptionsFromJSON()',
    required: ['challenge', 'rp', 'user', 'pubKeyCredParams'],
    properties: {
      challenge: str,
      rp: { type: 'object', required: ['id', 'name'], properties: { id: withDescription(str, "BASE_URL's host"), name: str } },
      user: { type: 'object', required: ['id', 'name', 'displayName'], properties: { id: str, name: str, displayName: str } },
      pubKeyCredParams: arr({ type: 'object', properties: { type: str, alg: { type: 'integer' } } }),
      timeout: { type: 'integer' },
      excludeCredentials: arr({ type: 'object', properties: { id: str, type: str, transports: arr(str) } }),
      authenticatorSelection: { type: 'object' },
      attestation: str,
      extensions: { type: 'object' },
      hints: arr(str),
    },
  },
  PasskeyRequestOptions: {
    type: 'object',
    description: 'PublicKeyCredentialRequestOptionsJSON (WebAuthn Level 3), for PublicKeyCredential.parseRequestOptionsFromJSON()',
    required: ['challenge', 'rpId'],
    properties: {
      challenge: str,
      rpId: str,
      timeout: { type: 'integer' },
      userVerification: str,
      allowCredentials: arr({ type: 'object' }),
      extensions: { type: 'object' },
      hints: arr(str),
    },
  },
  LinkStarted: obj({ authorization_url: withDescription(str, "the provider's sign-in page: send the browser there") }),
  Session: obj({
    id: withDescription(uuid, 'the handle to end it by (never the cookie value)'),
    device: withDescription(bool, 'a remembered device (it signs its browser in again after a restart) rather than a session alone'),
    created_at: time,
    last_seen_at: time,
    user_agent: str,
    address: str,
    current: withDescription(bool, 'the session of this request'),
  }),
  TwoFactorSetup: obj({
    secret: withDescription(str, 'base32, for typing into an authenticator'),
    otpauth_url: withDescription(str, 'otpauth://totp/... for a QR code'),
  }),
  RecoveryCodes: obj({ recovery_codes: withDescription(arr(str), 'ten single-use codes, shown once') }),
  AvatarSet: obj({ avatar_url: str }),
  ExportStatus: obj(
    {
      status: oneOf('none', 'running', 'ready'),
      url: withDescription(str, '/api/account/export/file, when ready'),
      created_at: time,
      size: withDescription(int, 'bytes of the zip'),
    },
    ['url', 'created_at', 'size'],
  ),
  EmailStatus: obj({ email: str, email_verified: bool }),
  ImportChannel: obj({
    id: withDescription(str, "the Discord channel's id"),
    name: str,
    type: withDescription(str, "DiscordChatExporter's channel type (GuildTextChat, GuildPublicThread...)"),
    becomes: withDescription(oneOf('channel', 'forum', 'thread', 'post', 'voice', 'nothing'), 'a thread under its parent; a post of its forum'),
    parent: withDescription(nullable(str), 'its category, or for a thread its parent channel'),
    files: int,
    messages: int,
    authors: int,
    attachments: obj({ found: int, missing: int }),
    stickers: int,
    embeds: int,
    reactions: int,
    pins: int,
    system: withDescription(int, 'system lines: joins, pins, thread creations...'),
    unknownTypes: withDescription({ type: 'object', additionalProperties: int }, 'message types the importer does not know, with their counts'),
    first: nullable(str),
    last: nullable(str),
  }),
  ImportPlan: obj({
    guild: obj({ id: str, name: str }),
    channels: arr(ref('ImportChannel')),
    categories: arr(str),
    people: withDescription(int, 'everyone named: each becomes a placeholder account'),
    roles: int,
    notCarried: withDescription(arr(str), 'what will not come across, in words'),
  }),
  Import: obj({
    id: uuid,
    status: withDescription(
      oneOf('checked', 'running', 'interrupted', 'done', 'failed'),
      'interrupted: a command-line import whose process ended; the same command resumes it',
    ),
    guild: obj({ id: str, name: str }),
    server_name: str,
    server_id: withDescription(nullable(uuid), 'the server it went into, once made'),
    plan: ref('ImportPlan'),
    progress: obj({ done: withDescription(int, 'messages gone through'), total: int }),
    error: nullable(str),
    package_claims: withDescription(bool, 'people may claim their history with their Discord data package'),
    created_at: time,
    finished_at: nullable(time),
    report: withDescription(
      arr(str),
      'once done: which custom emoji and stickers became the server’s, which stayed :name: text (slots out, image refused or not in the export), polls brought as polls or as text; empty before',
    ),
  }),
  ImportedPerson: obj({
    ...profile(),
    discord_id: str,
    discord_name: str,
    claim_code: withDescription(nullable(str), 'the one-time code (ABCD-EFGH-JKMN), until used'),
    claimed_by: nullable(ref('UserRef')),
    claimed_at: nullable(time),
    hidden: withDescription(bool, 'the claimer gave the messages back to this placeholder, now nameless'),
    messages: withDescription(int, 'imported messages the placeholder holds now'),
  }),
  MyClaim: obj({ server_id: uuid, discord_name: str, claimed_at: time, hidden: bool }),
  Claimed: obj({ claimed: arr(obj({ server_id: uuid, discord_name: str, messages: withDescription(int, "messages that became the caller's") })) }),
  PackageClaim: obj({
    claimed: withDescription(arr(obj({ server_id: uuid, discord_name: str, messages: int })), 'always empty: a package joins nothing until the caller chooses'),
    discord_id: withDescription(str, 'the Discord id in Account/user.json'),
    servers: withDescription(
      arr(obj({ server_id: uuid, name: str, discord_name: str, messages: withDescription(int, 'imported messages the history holds') })),
      'where a history of that id may be claimed: choose with POST /api/account/claims/discord-package/choose',
    ),
  }),
  ImportedMessages: obj({ action: oneOf('hide', 'erase'), messages: int }),
  GatewayReport: obj({
    epoch: uuid,
    unknown: {
      type: 'array',
      items: int,
      description: 'reported sockets the core does not hold: the gateway closes them (1012; 4001 when the epoch changed, the core having restarted)',
    },
  }),

  Server: obj(server()),
  ServerWithUnread: obj({ ...server(), unread: bool, mention_count: int, posting_gate: postingGate() }),
  Channel: obj({ ...channel(), ...forum(), ...voice() }, [...FORUM_OPTIONAL, ...VOICE_ONLY]),
  ForumTag: obj({
    id: uuid,
    name: str,
    emoji: withDescription(nullable(str), 'one emoji, or null'),
    moderated: withDescription(bool, 'applied (or taken off a post) only by those with manage_threads'),
  }),
  Thread: withDescription(obj(thread()), 'a thread: a channel with a parent (a text channel, or the forum whose post it is), and what is its own'),
  ListedThread: withDescription(
    obj({
      ...thread(),
      first_message: withDescription(
        nullable(ref('FirstMessage')),
        "a forum post's first message as its card shows it; null for a thread of a text channel, when that message is gone, or when the caller may not read it (read_history)",
      ),
    }),
    'a thread as a channel lists it',
  ),
  FirstMessage: obj({
    content: withDescription(
      { type: 'string', maxLength: FIRST_LINES_CHARS },
      `its first ${FIRST_LINES_CHARS} characters, as written (markdown: show it as text)`,
    ),
    image: withDescription(nullable(str), 'the URL of its first image attachment (/uploads/<attachment_id>, as the message gives it), or null'),
  }),
  ForumPost: withDescription(
    obj({ ...thread(), message: withDescription(ref('Message'), 'its first message') }),
    'a forum post just made: its thread and first message',
  ),
  ThreadState: withDescription(
    obj({ ...thread(), following: withDescription(bool, 'the user is a member of it (posted, was mentioned, followed or was added)'), ...readState() }, [
      'last_message_id',
      'last_read_id',
      'unread_count',
      'mention_count',
    ]),
    "an active thread as ready gives it: the user's read state there only when they follow it (an unfollowed thread counts nothing)",
  ),
  ThreadMember: obj({ ...profile(), bot: BOT_FLAG, joined_at: withDescription(time, 'when they joined (followed) the thread') }, ['bot']),
  Category: obj({ id: uuid, server_id: uuid, name: str, position: withDescription(int, "order among the server's categories, 0 first"), created_at: time }),
  ChannelWithState: obj(
    {
      ...channel(),
      ...readState(),
      permissions: withDescription(FLAG_LIST, "the caller's channel permissions here"),
      private: withDescription(bool, 'a member with no role and no overwrite of their own would not see it'),
      ...forum(),
      ...voice(),
    },
    [...FORUM_OPTIONAL, ...VOICE_ONLY],
  ),
  VoiceState: withDescription(
    obj({
      server_id: uuid,
      channel_id: uuid,
      user_id: uuid,
      self_mute: withDescription(bool, 'they muted themselves'),
      self_deaf: withDescription(bool, 'they deafened themselves (which mutes them too)'),
      mute: withDescription(bool, 'muted by the server: a moderator did, or they lack speak there; their audio stops at the media server'),
      deaf: withDescription(bool, 'deafened by a moderator: nothing reaches them'),
      video: withDescription(bool, 'sending a camera'),
      stream: withDescription(bool, 'sharing a screen'),
      speaking: withDescription(bool, 'speaking now, as the media server hears them (the audio level their packets carry)'),
    }),
    'who is in a voice channel, and how',
  ),
  Overwrite: obj({
    target_id: withDescription(uuid, "the server's id (everyone), a role's id or a member's user id"),
    kind: oneOf('everyone', 'role', 'member'),
    allow: withDescription(FLAG_LIST, 'flags it grants'),
    deny: withDescription(FLAG_LIST, 'flags it takes away'),
  }),
  WebAppManifest: withDescription(
    obj({
      id: str,
      name: withDescription(str, 'INSTANCE_NAME (default chat)'),
      short_name: withDescription(str, 'the name, cut to 12 characters for a home screen'),
      description: str,
      start_url: str,
      scope: str,
      display: { type: 'string', const: 'standalone' },
      theme_color: str,
      background_color: str,
      categories: arr(str),
      icons: arr(obj({ src: str, sizes: str, type: str, purpose: oneOf('any', 'maskable') })),
      shortcuts: arr(obj({ name: str, short_name: str, url: str, icons: arr(obj({ src: str, sizes: str, type: str })) }, ['short_name'])),
      share_target: obj({
        action: str,
        method: { type: 'string', const: 'POST' },
        enctype: { type: 'string', const: 'multipart/form-data' },
        params: obj({ title: str, text: str, url: str, files: arr(obj({ name: str, accept: arr(str) })) }),
      }),
    }),
    'A W3C Web Application Manifest: what a browser needs to install the app, and what the installed app offers',
  ),
  PushKey: obj({ key: withDescription(str, 'base64url of the P-256 public key (65 bytes)') }),
  PushSubscription: obj({
    id: uuid,
    endpoint: withDescription(str, "the push service's address for this browser"),
    show_text: withDescription(bool, 'pushes to this device carry the message text'),
    user_agent: withDescription(str, 'the browser that subscribed, as it named itself'),
    created_at: time,
  }),
  NotificationSetting: obj({
    target_id: uuid,
    target_kind: oneOf('server', 'channel', 'conversation'),
    level: oneOf('all', 'mentions', 'nothing'),
    muted_until: { anyOf: [time, { type: 'null' }], description: 'muted until then; null: not muted; a time in the year 9999: until turned off' },
    suppress_everyone: withDescription(bool, "a server's: @everyone and @here are not mentions of this user there"),
    suppress_roles: withDescription(bool, "a server's: role mentions are not mentions of this user there"),
  }),
  ReadState: obj({ server_id: uuid, channel_id: uuid, conversation_id: uuid, ...readState() }, ['server_id', 'channel_id', 'conversation_id']),
  Presence: obj({ status: oneOf('online', 'idle', 'dnd', 'invisible'), presence: oneOf('online', 'idle', 'dnd', 'offline') }),
  Emoji: obj({
    id: uuid,
    name: withDescription({ type: 'string', minLength: 2, maxLength: 32, pattern: '^[A-Za-z0-9_]{2,32}$' }, 'unique in its server, whatever its case'),
    animated: withDescription(bool, 'an animated GIF or WebP kept animated'),
    url: withDescription(str, 'its image on this server: /emojis/{id}'),
    creator_id: uuid,
  }),
  Role: obj({
    id: uuid,
    server_id: uuid,
    name: str,
    full_server_admin: bool,
    created_at: time,
    color: withDescription(nullable({ type: 'integer', minimum: 0, maximum: 0xffffff }), '0xRRGGBB, or null for none'),
    position: withDescription({ type: 'integer', minimum: 0 }, 'the order roles are listed and shown in, 0 first'),
    hoist: withDescription(bool, 'its holders are a group of their own in the member list'),
    mentionable: withDescription(bool, '@name counts as a mention of every holder, from who may use @everyone'),
    permissions: withDescription(FLAG_LIST, "the channel permissions its holders have server-wide, beside everyone's"),
    self_assignable: withDescription(bool, 'members take and drop it themselves (PUT/DELETE …/members/@me/roles/{role_id}); it carries no power'),
  }),
  Member: obj(
    {
      ...profile(),
      is_owner: bool,
      role: withDescription(nullable(str), 'the first of roles, or null'),
      roles: withDescription(arr(str), "the names of the member's roles, in position order"),
      role_ids: withDescription(arr(uuid), 'their ids, in the same order'),
      joined_at: time,
      presence: ref('Shown'),
      timeout_until: withDescription(nullable(time), 'until when the member may only read; null when not timed out'),
      pending: withDescription(bool, "in membership screening: reads, may not write or react until they accept the server's rules"),
      bot: BOT_FLAG,
    },
    ['bot'],
  ),
  Onboarding: obj({
    server_id: uuid,
    enabled: withDescription(bool, 'whoever joins from now on is pending until they accept'),
    rules: withDescription(arr(str), 'the rules a new member accepts, in order'),
    questions: arr(
      obj({
        id: str,
        title: str,
        required: bool,
        single_select: withDescription(bool, 'at most one answer'),
        answers: arr(
          obj({
            id: str,
            title: str,
            role_ids: withDescription(arr(uuid), 'the roles this answer gives'),
            channel_ids: withDescription(arr(uuid), 'channels shown first to who picks it (those the caller sees)'),
          }),
        ),
      }),
    ),
    default_channel_ids: withDescription(arr(uuid), 'channels shown first to everyone who accepts (those the caller sees)'),
    pending: withDescription(bool, 'whether the caller is pending in this server'),
  }),
  OnboardingAccepted: obj({
    member: ref('Member'),
    role_ids: withDescription(arr(uuid), 'the roles the answers gave'),
    channel_ids: withDescription(arr(uuid), 'the channels to show first: the defaults, then the answers’, those the member now sees'),
  }),
  Shown: withDescription(oneOf('online', 'idle', 'dnd', 'offline'), 'what others see: invisible shows as offline'),
  Invite: obj({
    token: str,
    server_id: uuid,
    created_by: ref('NameRef'),
    created_at: time,
    expires_at: time,
    max_uses: withDescription(nullable(int), 'null: unlimited'),
    uses: int,
    url: str,
  }),
  InviteInfo: obj({ server_id: uuid, server_name: str, expires_at: time, member_count: int, member: withDescription(bool, 'the caller is already a member') }),
  Ban: obj({ ...profile(), reason: nullable(str), banned_by: withDescription(uuid, 'the user id of who banned'), created_at: time }),
  AuditEntry: {
    description: 'one action of an owner or administrator; `changes` has one shape per action (null where nothing else is recorded)',
    oneOf: auditEntries(),
  },
  Block: obj({ ...profile(), created_at: time }),
  AutomodTrigger: {
    description: 'what sets a rule off (docs/moderation.md "AutoMod"): one of five types, each with its own settings',
    oneOf: [
      obj({
        type: { type: 'string', const: 'keyword' },
        keyword_filter: withDescription(
          arr(str),
          "1 to 1000 keywords of up to 60 characters: whole words in any case; '*' at the start or end for a suffix or prefix",
        ),
        allow_list: withDescription(arr(str), 'up to 100 keywords (the same syntax) whose matches are let through'),
      }),
      obj({
        type: { type: 'string', const: 'mention_spam' },
        mention_total_limit: withDescription(int, 'more than this many distinct @names in one message (1 to 50)'),
      }),
      obj({ type: { type: 'string', const: 'spam' } }),
      obj({
        type: { type: 'string', const: 'links' },
        allow_list: withDescription(arr(str), 'domains (their subdomains included) whose links are let through; empty: every link'),
      }),
      obj({ type: { type: 'string', const: 'invite_links' } }),
    ],
  },
  AutomodAction: {
    description: 'what a rule does when set off',
    oneOf: [
      obj({
        type: { type: 'string', const: 'block_message' },
        custom_message: withDescription(nullable(str), "shown to the author (the 403's text); null: a default naming the rule"),
      }),
      obj({ type: { type: 'string', const: 'send_alert_message' }, channel_id: withDescription(uuid, 'the text channel where the alert is written') }),
      obj({ type: { type: 'string', const: 'timeout' }, duration_seconds: withDescription(int, 'the timeout given to the author, 60 to 2419200 (28 days)') }),
    ],
  },
  AutomodRule: obj({
    id: uuid,
    server_id: uuid,
    name: str,
    enabled: bool,
    trigger: ref('AutomodTrigger'),
    actions: arr(ref('AutomodAction')),
    exempt_role_ids: withDescription(arr(uuid), 'members holding any of these roles are not judged'),
    exempt_channel_ids: withDescription(arr(uuid), 'messages in these channels (and their threads) are not judged'),
    creator_id: uuid,
    created_at: time,
  }),
  MessageHistory: obj({ message_id: uuid, versions: arr(obj({ content: str, edited_at: nullable(time) })) }),
  Joined: obj({ server_id: uuid }),

  Attachment: obj({
    id: uuid,
    name: str,
    url: str,
    content_type: str,
    size: int,
    preview_kind: oneOf('code', 'image', 'audio', 'video'),
  }),
  Reaction: obj({
    emoji: withDescription(
      { anyOf: [str, ref('CustomEmoji')] },
      "a Unicode emoji (as the spec has it), or a server's custom emoji: the two never merge, whatever their names",
    ),
    count: int,
    reacted: bool,
  }),
  Sticker: obj({
    id: uuid,
    name: withDescription(str, '2 to 30 characters'),
    description: withDescription(str, 'at most 100 characters, possibly empty'),
    tags: withDescription(str, 'the Unicode emoji it stands for'),
    animated: withDescription(bool, 'an animated GIF or WebP kept animated'),
    url: withDescription(str, 'its image on this server: /stickers/{id}'),
    creator_id: uuid,
  }),
  Poll: obj({
    question: str,
    answers: arr(obj({ answer_id: uuid, text: str, emoji: nullable(str) })),
    allow_multiselect: bool,
    expires_at: withDescription(time, 'when it ends unless its author ends it first'),
    ended: withDescription(bool, 'expired, or ended early by its author: results no longer move'),
    results: withDescription(arr(obj({ answer_id: uuid, count: int })), "each answer's votes, in the answers' order; frozen once ended"),
  }),
  CustomEmoji: obj({
    id: uuid,
    name: str,
    animated: bool,
    available: withDescription(bool, 'false once deleted: shown as :name: text, its image gone'),
  }),
  ReplyPreview: obj({ id: uuid, author: ref('UserRef'), content: str }),
  Message: obj(messageFields(), MESSAGE_OPTIONAL),
  Embed: obj(embedFields(obj), ['title', 'description', 'url', 'timestamp', 'color', 'footer', 'author', 'fields', 'image', 'thumbnail', 'provider']),
  EmbedInput: withDescription(
    input(embedFields(input), ['title', 'description', 'url', 'timestamp', 'color', 'footer', 'author', 'fields', 'image', 'thumbnail']),
    "an embed as Discord's execute-webhook takes it: these fields (others, such as icon_url, ignored); at most 6000 characters of text over all embeds",
  ),
  Bot: obj({ id: uuid, username: str, display_name: nullable(str), avatar_url: nullable(str), bot: { type: 'boolean', const: true }, created_at: time }),
  BotWithToken: obj({
    id: uuid,
    username: str,
    display_name: nullable(str),
    avatar_url: nullable(str),
    bot: { type: 'boolean', const: true },
    created_at: time,
    token: withDescription(str, 'shown this once: Authorization: Bot <token>'),
  }),
  BotToken: obj({ token: withDescription(str, 'shown this once: Authorization: Bot <token>') }),
  BotAdded: obj({ server_id: uuid, user_id: uuid }),
  Webhook: obj(webhookFields()),
  WebhookWithToken: obj({
    ...webhookFields(),
    token: withDescription(str, 'shown this once'),
    url: withDescription(
      str,
      'BASE_URL/api/webhooks/<id>/<token>: paste it where a tool asks for a Discord webhook URL (append /slack or /github for those formats)',
    ),
  }),

  DiscordWebhook: obj({
    id: uuid,
    type: { type: 'integer', const: 1, description: 'incoming' },
    guild_id: withDescription(uuid, 'its server'),
    channel_id: uuid,
    name: str,
    avatar: { type: 'null' },
    application_id: { type: 'null' },
  }),
  DiscordMessage: obj({
    id: uuid,
    type: { type: 'integer', const: 0 },
    channel_id: withDescription(uuid, 'its channel, or the thread it was posted into'),
    guild_id: withDescription(uuid, 'its server'),
    content: str,
    author: obj({
      id: withDescription(uuid, "the webhook's id"),
      username: withDescription(str, 'the name this message was posted under'),
      global_name: { type: 'null' },
      avatar: { type: 'null' },
      discriminator: { type: 'string', const: '0000' },
      bot: { type: 'boolean', const: true },
    }),
    attachments: arr(obj({ id: uuid, filename: str, size: int, url: str, proxy_url: str, content_type: str })),
    embeds: arr(ref('Embed')),
    mentions: withDescription(arr(obj({})), "always empty: the users mentioned are in our own message record's mentions"),
    mention_roles: arr(uuid),
    mention_everyone: bool,
    pinned: bool,
    tts: { type: 'boolean', const: false },
    timestamp: time,
    edited_timestamp: nullable(time),
    flags: int,
    components: arr(obj({})),
    webhook_id: uuid,
  }),

  SearchResults: obj({
    results: arr(
      obj(
        {
          ...messageFields(),
          highlight: withDescription(
            arr({ type: 'array', items: int, minItems: 2, maxItems: 2 }),
            '[start, end] offsets of the matched terms in UTF-16 code units of content',
          ),
          in_thread: withDescription(
            obj({ id: uuid, name: str, parent_id: uuid }),
            'a message of a thread: the thread (channel_id) and the channel it belongs to',
          ),
        },
        [...MESSAGE_OPTIONAL, 'in_thread'],
      ),
    ),
    next_before: withDescription(nullable(uuid), 'pass as before= for the next page; null when this page is not full'),
  }),

  FriendRequest: obj({ id: uuid, from: ref('UserRef'), to: ref('UserRef'), status: oneOf('pending', 'accepted'), created_at: time }),
  Friend: obj({ ...profile(), bot: BOT_FLAG, since: time }, ['bot']),
  FriendWithPresence: obj({ ...profile(), bot: BOT_FLAG, since: time, presence: ref('Shown') }, ['bot']),
  Conversation: obj(conversation()),
  ConversationWithState: obj({ ...conversation(), ...readState() }),

  Report: { oneOf: reports() },
  ReportWithContext: { oneOf: reports(true) },
  UserSnapshot: withDescription(obj({ user_id: uuid, username: str }), 'the reported user when reported'),
  ServerSnapshot: withDescription(
    obj({ server_id: uuid, name: str, owner_id: uuid, owner_username: str }, ['name', 'owner_id', 'owner_username']),
    'the reported server when reported; a reporter who is not a member sees only server_id',
  ),
  MessageSnapshot: withDescription(
    obj(
      {
        message_id: uuid,
        server_id: uuid,
        channel_id: uuid,
        conversation_id: uuid,
        author: ref('UserRef'),
        content: str,
        attachments: arr(obj({ id: uuid, name: str, content_type: str })),
        created_at: time,
        edited_at: nullable(time),
        versions: withDescription(arr(obj({ content: str, edited_at: nullable(time) })), 'every version, oldest first'),
      },
      ['server_id', 'channel_id', 'conversation_id'],
    ),
    'the reported message when reported, with every earlier version',
  ),
  AdminWarning: obj({ id: uuid, user_id: uuid, username: str, issued_by: str, reason: str, created_at: time }),
  WarningIssued: obj({ id: uuid, user_id: uuid, username: str, issued_by: str, reason: str, created_at: time, account_standing: int }),
  StandingOf: obj({ user_id: uuid, account_standing: int }),
  AdminUser: obj({
    user_id: uuid,
    username: str,
    account_standing: int,
    is_admin: bool,
    warnings: arr(ref('AdminWarning')),
    created_at: time,
    kind: {
      type: 'string',
      enum: ['person', 'bot', 'webhook', 'placeholder'],
      description: "placeholder: a person an import named (cannot sign in); bot: a bot account; webhook: the author of a webhook's messages",
    },
    claimed: { ...bool, description: 'a placeholder whose history someone claimed (an empty shell)' },
  }),
  AdminUserRecord: obj({ user_id: uuid, username: str, account_standing: int, is_admin: bool, warnings: arr(ref('AdminWarning')) }),
  AdminMe: obj({ user_id: uuid, username: str, is_admin: { const: true } }),
};

function readState(): Record<string, Schema> {
  return {
    last_message_id: nullable(uuid),
    last_read_id: withDescription(nullable(uuid), 'the newest message at or before the read marker'),
    unread_count: withDescription({ type: 'integer', minimum: 0, maximum: 100 }, 'messages after the marker by others, at most 100 ("99+")'),
    mention_count: withDescription(
      { type: 'integer', minimum: 0, maximum: 100 },
      'of those, the ones that mention the caller or everyone (all of them in a DM or group)',
    ),
  };
}

/** A report, one shape per type (its snapshot and, for administrators, its context's target). */
function reports(withContext = false): Schema[] {
  const none: Schema = { type: 'null' };
  const kinds: [string, string, Schema, Schema][] = [
    ['user', 'UserSnapshot', ref('NameRef'), none],
    ['server', 'ServerSnapshot', obj({ server_id: uuid, name: str }), none],
    [
      'server_message',
      'MessageSnapshot',
      withDescription(ref('UserRef'), 'the author'),
      obj({ server_id: uuid, server_name: nullable(str), channel_id: uuid, channel_name: nullable(str) }),
    ],
    [
      'conversation_message',
      'MessageSnapshot',
      withDescription(ref('UserRef'), 'the author'),
      obj({ conversation_id: uuid, conversation_name: withDescription(nullable(str), "a group's name, or its members' usernames") }),
    ],
  ];
  return kinds.map(([type, snapshot, target, place]) =>
    obj({
      id: uuid,
      type: { type: 'string', const: type },
      target: uuid,
      reason: str,
      status: oneOf('pending', 'resolved'),
      reporter: ref('NameRef'),
      snapshot: withDescription(ref(snapshot), 'what the target looked like when reported'),
      place: withDescription(place, 'where a reported message is, named as it is now (a name is null once that place is gone); null for other reports'),
      created_at: time,
      updated_at: nullable(time),
      updated_by: nullable(ref('NameRef')),
      target_deleted: withDescription(bool, 'the reported message or server no longer exists'),
      ...(withContext
        ? {
            context: obj({
              reporter: ref('NameRef'),
              target: withDescription(target, 'who or what was reported, as it is now'),
              messages: withDescription(arr(ref('Message')), 'a reported message among up to 5 messages on each side, oldest first; [] otherwise'),
            }),
          }
        : {}),
    }),
  );
}

/** An audit entry per action, each with the `changes` that action records. */
function auditEntries(): Schema[] {
  const fromTo = (schema: Schema) => obj({ from: schema, to: schema });
  const name = obj({ name: str });
  const kinds: [action: string, targetKind: string, changes: Schema][] = [
    [
      'server_update',
      'server',
      obj(
        {
          name: fromTo(str),
          description: fromTo(str),
          permissions: fromTo(FLAG_LIST),
          link_previews: fromTo(bool),
          verification_level: fromTo(int),
          two_factor_for_moderators: fromTo(bool),
          join_rate_threshold: fromTo(int),
          join_rate_action: fromTo(oneOf(...JOIN_RATE_ACTIONS)),
          invites_paused: fromTo(bool),
          joins_paused: fromTo(bool),
        },
        [
          'name',
          'description',
          'permissions',
          'link_previews',
          'verification_level',
          'two_factor_for_moderators',
          'join_rate_threshold',
          'join_rate_action',
          'invites_paused',
          'joins_paused',
        ],
      ),
    ],
    ['joins_pause', 'server', obj({ joins_paused: fromTo(bool) })],
    ['owner_transfer', 'user', obj({ owner_id: uuid })],
    ['channel_create', 'channel', obj({ name: str, type: oneOf(...CHANNEL_TYPES), user_limit: int, bitrate: int }, ['type', 'user_limit', 'bitrate'])],
    [
      'channel_update',
      'channel',
      obj(
        {
          name: fromTo(str),
          topic: fromTo(str),
          slowmode_seconds: fromTo(int),
          position: fromTo(int),
          category_id: fromTo(nullable(uuid)),
          permissions_synced: fromTo(bool),
          available_tags: fromTo(arr(ref('ForumTag'))),
          default_reaction: fromTo(nullable(str)),
          default_sort: fromTo(str),
          user_limit: fromTo(int),
          bitrate: fromTo(int),
        },
        [
          'name',
          'topic',
          'slowmode_seconds',
          'position',
          'category_id',
          'permissions_synced',
          'available_tags',
          'default_reaction',
          'default_sort',
          'user_limit',
          'bitrate',
        ],
      ),
    ],
    ['channel_delete', 'channel', name],
    [
      'thread_update',
      'channel',
      obj(
        {
          name: fromTo(str),
          archived: fromTo(bool),
          locked: fromTo(bool),
          auto_archive_minutes: fromTo(int),
          applied_tags: fromTo(arr(uuid)),
        },
        ['name', 'archived', 'locked', 'auto_archive_minutes', 'applied_tags'],
      ),
    ],
    ['thread_delete', 'channel', name],
    ['category_create', 'category', name],
    ['category_update', 'category', obj({ name: fromTo(str), position: fromTo(int) }, ['name', 'position'])],
    ['category_delete', 'category', name],
    ...(['channel', 'category'] as const).flatMap((kind): [string, string, Schema][] => [
      [
        'overwrite_update',
        kind,
        obj({ target_id: uuid, kind: oneOf('everyone', 'role', 'member'), allow: fromTo(nullable(FLAG_LIST)), deny: fromTo(nullable(FLAG_LIST)) }),
      ],
      [
        'overwrite_delete',
        kind,
        obj({ target_id: uuid, kind: oneOf('everyone', 'role', 'member'), allow: fromTo(nullable(FLAG_LIST)), deny: fromTo(nullable(FLAG_LIST)) }),
      ],
    ]),
    [
      'role_create',
      'role',
      obj({ name: str, full_server_admin: bool, color: nullable(int), hoist: bool, mentionable: bool, permissions: FLAG_LIST, self_assignable: bool }, [
        'self_assignable',
      ]),
    ],
    [
      'role_update',
      'role',
      obj(
        {
          name: fromTo(str),
          full_server_admin: fromTo(bool),
          color: fromTo(nullable(int)),
          hoist: fromTo(bool),
          mentionable: fromTo(bool),
          permissions: fromTo(FLAG_LIST),
          position: fromTo(int),
          self_assignable: fromTo(bool),
        },
        ['name', 'full_server_admin', 'color', 'hoist', 'mentionable', 'permissions', 'position', 'self_assignable'],
      ),
    ],
    ['role_delete', 'role', name],
    [
      'role_assign',
      'user',
      obj(
        {
          role: nullable(str),
          role_id: nullable(uuid),
          roles: fromTo(arr(str)),
          self: withDescription({ type: 'boolean', const: true }, 'the member took it themselves'),
        },
        ['self'],
      ),
    ],
    [
      'role_unassign',
      'user',
      obj({ role: str, role_id: uuid, roles: fromTo(arr(str)), self: withDescription({ type: 'boolean', const: true }, 'the member dropped it themselves') }, [
        'self',
      ]),
    ],
    ['member_kick', 'user', { type: 'null' }],
    ['member_ban', 'user', { type: 'null' }],
    ['member_unban', 'user', { type: 'null' }],
    ['member_timeout', 'user', obj({ timeout_until: time })],
    ['member_timeout_remove', 'user', { type: 'null' }],
    ['member_voice_update', 'user', obj({ mute: bool, deaf: bool })],
    ['member_move', 'user', obj({ from: uuid, channel_id: uuid })],
    ['member_disconnect', 'user', obj({ from: uuid, channel_id: { type: 'null' } })],
    ['invite_revoke', 'invite', { type: 'null' }],
    ['message_delete', 'message', { type: 'null' }],
    ['message_pin', 'message', { type: 'null' }],
    ['message_unpin', 'message', { type: 'null' }],
    ['bot_add', 'user', { type: 'null' }],
    ['webhook_create', 'webhook', obj({ name: str, channel_id: uuid })],
    ['webhook_update', 'webhook', obj({ name: str, github_secret_set: bool }, ['name', 'github_secret_set'])],
    ['webhook_token_reset', 'webhook', { type: 'null' }],
    ['webhook_delete', 'webhook', obj({ name: str, messages_deleted: int })],
    ['emoji_create', 'emoji', obj({ name: str, animated: bool })],
    ['emoji_update', 'emoji', obj({ name: fromTo(str) })],
    ['emoji_delete', 'emoji', obj({ name: str })],
    ['sticker_create', 'sticker', obj({ name: str, animated: bool })],
    ['sticker_update', 'sticker', obj({ name: fromTo(str) })],
    ['sticker_delete', 'sticker', obj({ name: str })],
    ...(['automod_rule_create', 'automod_rule_update', 'automod_rule_delete'] as const).map((action): [string, string, Schema] => [
      action,
      'automod_rule',
      obj(
        {
          name: str,
          enabled: bool,
          trigger_type: oneOf('keyword', 'mention_spam', 'spam', 'links', 'invite_links'),
          keywords: withDescription(int, 'a keyword rule: how many keywords (never the keywords)'),
          actions: arr(oneOf('block_message', 'send_alert_message', 'timeout')),
        },
        ['keywords'],
      ),
    ]),
    ...(['automod_block', 'automod_alert'] as const).map((action): [string, string, Schema] => [
      action,
      'user',
      obj(
        {
          rule_id: uuid,
          rule_name: str,
          channel_id: withDescription(uuid, 'where the message was said (never what it said: readers of the log may not see that channel)'),
          cause: withDescription(str, 'what set the rule off: the keyword, the link host, a count'),
          alert_message_id: withDescription(uuid, 'automod_alert: the alert written'),
        },
        ['alert_message_id'],
      ),
    ]),
    [
      'onboarding_update',
      'server',
      obj({ enabled: fromTo(bool), rules: fromTo(int), questions: fromTo(int), let_in: withDescription(int, 'pending members let in by turning it off') }, [
        'let_in',
      ]),
    ],
    ['onboarding_accept', 'user', obj({ answers: withDescription(arr(str), 'the titles of the answers picked'), role_ids: arr(uuid) })],
  ];
  return kinds.map(([action, targetKind, changes]) =>
    obj({
      id: uuid,
      action: { type: 'string', const: action },
      actor: ref('NameRef'),
      target_id: str,
      target_kind: { type: 'string', const: targetKind },
      reason: nullable(str),
      changes: changes.type === 'null' ? changes : nullable(changes),
      created_at: time,
    }),
  );
}

export function server(): Record<string, Schema> {
  return {
    id: uuid,
    name: str,
    owner_id: uuid,
    created_at: time,
    description: str,
    permissions: withDescription(FLAG_LIST, "what everyone may do in the server's channels unless a channel's overwrites say otherwise"),
    link_previews: withDescription(bool, 'links posted here get preview cards (on by default; LINK_PREVIEWS=off turns them off on every server)'),
    verification_level: withDescription(
      { type: 'integer', enum: [...VERIFICATION_LEVELS] },
      'who may post and react (docs/moderation.md "Verification levels"): 0 anyone; 1 a verified email; 2 also an account older than 5 minutes; 3 also a member for 10 minutes',
    ),
    two_factor_for_moderators: withDescription(bool, "a moderator's power is refused to an account without two-factor sign-in"),
    join_rate_threshold: withDescription(
      { type: 'integer', minimum: 0, maximum: MAX_JOIN_RATE_THRESHOLD },
      'joins per minute past which join_rate_action happens (docs/moderation.md "Raid protection"); 0: off',
    ),
    join_rate_action: withDescription(
      oneOf(...JOIN_RATE_ACTIONS),
      "past the threshold: 'pause' new joins and alert moderators, 'screen' (newcomers wait in membership screening until they accept, and moderators are alerted), or 'alert' only",
    ),
    invites_paused: withDescription(bool, 'invites take nobody in while set'),
    joins_paused: withDescription(bool, 'nobody joins by any way until a moderator resumes (set by join-rate protection, or by hand)'),
  };
}

/** What keeps the caller from posting and reacting in a server now (src/rules/verification.ts), or null. */
export function postingGate(): Schema {
  return withDescription(
    nullable(
      obj({
        reason: str,
        until: withDescription(nullable(time), 'when it lifts by itself; null while an email is still to verify'),
      }),
    ),
    "what keeps the caller from posting and reacting here now (the server's verification level), or null",
  );
}

function channel(): Record<string, Schema> {
  return {
    id: uuid,
    server_id: uuid,
    type: withDescription(oneOf(...CHANNEL_TYPES), "what kind of channel it is: 'text' unless made otherwise"),
    parent_id: withDescription(nullable(uuid), "the channel it belongs to (a thread's parent), or null"),
    name: str,
    position: int,
    created_at: time,
    topic: str,
    slowmode_seconds: int,
    category_id: withDescription(nullable(uuid), 'the category it is listed under, or null'),
    permissions_synced: withDescription(bool, "it follows its category's overwrites (true) or has its own (false)"),
  };
}

/** A voice channel's own fields (src/core/records.ts ChannelRecord): present on voice channels only. */
function voice(): Record<string, Schema> {
  return {
    user_limit: withDescription(
      { type: 'integer', minimum: 0, maximum: MAX_VOICE_USER_LIMIT },
      'a voice channel only: at most this many people in it at once (0: no limit)',
    ),
    bitrate: withDescription(
      { type: 'integer', minimum: MIN_VOICE_BITRATE, maximum: MAX_VOICE_BITRATE },
      'a voice channel only: the audio bitrate its people send, bits per second',
    ),
  };
}

/** A forum's own fields (src/core/records.ts ChannelRecord): present on forums only. */
function forum(): Record<string, Schema> {
  return {
    available_tags: withDescription(arr(ref('ForumTag')), "a forum's: the tags its posts may carry (at most 20)"),
    default_reaction: withDescription(nullable(str), "a forum's: the reaction its posts offer first, or null"),
    default_sort: withDescription(oneOf(...FORUM_SORTS), "a forum's: how its posts are listed by default"),
  };
}

/** A thread's fields (src/core/records.ts ThreadRecord): a channel's, and its own. */
function thread(): Record<string, Schema> {
  return {
    ...channel(),
    type: { type: 'string', const: 'thread' },
    parent_id: withDescription(uuid, 'the text channel it was started in, or the forum whose post it is'),
    owner_id: withDescription(uuid, 'who started it'),
    archived: bool,
    archived_at: withDescription(nullable(time), 'when it was last archived'),
    locked: withDescription(bool, 'only those with manage_threads write in it (and unarchive it)'),
    private: withDescription(bool, 'seen only by its members and those with manage_threads'),
    auto_archive_minutes: withDescription(oneOf(...AUTO_ARCHIVE_MINUTES), 'it archives by itself after this long without a message'),
    message_count: int,
    member_count: int,
    last_message_at: nullable(time),
    applied_tags: withDescription(arr(uuid), "a forum post's tags (ids of its forum's available_tags); [] otherwise"),
    starter_message_id: withDescription(
      nullable(uuid),
      "the message it was started from (in its parent), or a forum post's first message; null for one started alone",
    ),
  };
}

function conversation(): Record<string, Schema> {
  return {
    id: uuid,
    kind: oneOf('dm', 'group'),
    name: nullable(str),
    created_by: uuid,
    members: arr(ref('UserRef')),
    created_at: time,
    last_message_at: nullable(time),
  };
}

/** How a user is shown (the profiles view): deleted accounts as deleted-user / Deleted user. */
export function profile(): Record<string, Schema> {
  return {
    user_id: uuid,
    username: str,
    display_name: withDescription(nullable(str), 'shown instead of the username where set'),
    avatar_url: withDescription(nullable(str), '/avatars/<user_id>?v=<n>, or null'),
  };
}

function withDescription(schema: Schema, description: string): Schema {
  return { ...schema, description };
}

/** The fields of an embed (src/core/embed.ts); `object` makes its nested objects (obj for answers, input for requests). */
function embedFields(object: typeof obj): Record<string, Schema> {
  const link = { type: 'string', maxLength: 2048, pattern: '^https?://' };
  /** A path of our media proxy (src/core/media-url.ts). */
  const proxied = withDescription({ type: 'string', pattern: '^/api/media/[A-Za-z0-9_-]{32}/[A-Za-z0-9_-]+$' }, 'the image through our media proxy');
  return {
    title: { type: 'string', maxLength: 256 },
    description: { type: 'string', maxLength: 4096 },
    url: link,
    timestamp: time,
    color: { type: 'integer', minimum: 0, maximum: 0xffffff },
    footer: object({ text: { type: 'string', maxLength: 2048 } }),
    author: object({ name: { type: 'string', maxLength: 256 }, url: link }, ['url']),
    fields: {
      type: 'array',
      maxItems: 25,
      items: object({ name: { type: 'string', maxLength: 256 }, value: { type: 'string', maxLength: 1024 }, inline: bool }, object === input ? ['inline'] : []),
    },
    ...(object === input
      ? { image: object({ url: link }), thumbnail: object({ url: link }) }
      : {
          type: withDescription(
            oneOf('rich', 'link', 'image', 'video'),
            'rich: a webhook\'s or bot\'s own; link, image (a link to an image) and video: a link preview the server made (docs/api.md "Link previews")',
          ),
          provider: withDescription(
            object({ name: { type: 'string', maxLength: 256 }, url: link }, ['url']),
            "the site a preview came from (og:site_name, oEmbed's provider_name)",
          ),
          image: withDescription(object({ url: link, proxy_url: proxied }), 'a large image: clients load proxy_url, never url'),
          thumbnail: withDescription(object({ url: link, proxy_url: proxied }), 'a small image beside the text: clients load proxy_url, never url'),
        }),
  };
}

/** The fields of a webhook record (src/parts/integrations/webhooks.ts). */
function webhookFields(): Record<string, Schema> {
  return {
    id: uuid,
    name: str,
    server_id: uuid,
    channel_id: uuid,
    github_secret_set: withDescription(bool, 'every call, on every route (Discord, Slack and GitHub formats), must carry a matching X-Hub-Signature-256'),
    created_by: ref('NameRef'),
    created_at: time,
  };
}

/** The fields of a message record (src/core/message-record.ts). */
export function messageFields(): Record<string, Schema> {
  return {
    id: uuid,
    server_id: uuid,
    channel_id: uuid,
    conversation_id: uuid,
    author_id: uuid,
    author: ref('UserRef'),
    content: str,
    mentions: withDescription(arr(uuid), 'the users the content mentions with @name'),
    mention_everyone: bool,
    mention_roles: withDescription(arr(uuid), 'the mentionable roles the content mentions with @rolename (from the owner or a full server admin)'),
    reply_to: nullable(uuid),
    reply_preview: nullable(ref('ReplyPreview')),
    pinned: bool,
    attachments: arr(ref('Attachment')),
    reactions: arr(ref('Reaction')),
    created_at: time,
    edited_at: nullable(time),
    webhook_id: withDescription(uuid, "a webhook's message: the webhook (which may have been deleted since)"),
    webhook_avatar_url: withDescription(str, 'the avatar link the webhook gave'),
    webhook_avatar_proxy_url: withDescription(str, 'the same image through our media proxy (GET /api/media/{sig}/{url}): what clients show'),
    embeds: arr(ref('Embed')),
    thread: withDescription(
      obj({ id: uuid, name: str, message_count: int, last_message_at: nullable(time), archived: bool, locked: bool }),
      'a message a thread was started from, in its parent: that thread ("N replies · last reply …")',
    ),
    poll: withDescription(ref('Poll'), 'a poll (issue 50)'),
    stickers: withDescription(
      { type: 'array', minItems: 1, maxItems: 3, items: obj({ id: uuid, name: str, animated: bool, url: str, available: bool }) },
      'the stickers it carries, drawn as images (available: false once deleted: shown by name)',
    ),
  };
}
