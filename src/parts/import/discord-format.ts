import { type Static, Type } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';

/**
 * DiscordChatExporter's JSON (version 2.47 and earlier): one file per channel or thread, or per
 * part of one (`--partition`). The schema below is the part of its JSON writer the importer reads,
 * every field checked for its type; anything else in a file is ignored (and never built: a file is
 * read against this schema by src/parts/import/json-reader.ts, which needs a bound on every string
 * and array). A file that does not match is refused with the path of the first field that does not
 * (a clear error, nothing written).
 */

/** A Discord id: a snowflake, decimal digits. */
const snowflake = Type.String({ pattern: '^[0-9]{1,20}$', maxLength: 20 });
const text = Type.String({ maxLength: 100_000 });
const maybe = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()]);
/** An asset: a path relative to the export file (with `--media`), or a Discord CDN address. */
const assetUrl = Type.String({ maxLength: 4096 });

/** A colour as DCE writes it ('#3BA55D'). */
const color = Type.Optional(maybe(Type.String({ maxLength: 64 })));
const role = Type.Object({ id: snowflake, name: text, color, position: Type.Optional(Type.Number()) });
const user = Type.Object({
  id: snowflake,
  name: Type.String({ maxLength: 200 }),
  discriminator: Type.Optional(Type.String({ maxLength: 10 })),
  nickname: Type.Optional(maybe(Type.String({ maxLength: 200 }))),
  color,
  isBot: Type.Optional(Type.Boolean()),
  roles: Type.Optional(Type.Array(role, { maxItems: 500 })),
  avatarUrl: Type.Optional(maybe(assetUrl)),
});
const emoji = Type.Object({
  id: Type.Optional(maybe(Type.String({ maxLength: 40 }))),
  name: Type.String({ maxLength: 200 }),
  code: Type.Optional(Type.String({ maxLength: 200 })),
  isAnimated: Type.Optional(Type.Boolean()),
  imageUrl: Type.Optional(maybe(assetUrl)),
});

/**
 * A poll, as Discord's API gives a message's `poll` (DiscordChatExporter 2.47 writes none; our own
 * export writes this, src/parts/import/discord-export.ts): the question, the answers with their
 * ids, and the final counts. Bounded loosely: one that is no poll here (fewer than 2 or more than
 * 10 answers, texts too long) is brought as text, not refused.
 */
const pollText = Type.Optional(maybe(Type.String({ maxLength: 1000 })));
const poll = Type.Object({
  question: Type.Object({ text: pollText }),
  answers: Type.Array(
    Type.Object({
      answer_id: Type.Integer({ minimum: 0, maximum: 1_000_000 }),
      poll_media: Type.Object({
        text: pollText,
        emoji: Type.Optional(
          Type.Union([
            Type.Object({ id: Type.Optional(maybe(Type.String({ maxLength: 40 }))), name: Type.Optional(maybe(Type.String({ maxLength: 200 }))) }),
            Type.Null(),
          ]),
        ),
      }),
    }),
    { maxItems: 100 },
  ),
  expiry: Type.Optional(maybe(Type.String({ maxLength: 64 }))),
  allow_multiselect: Type.Optional(Type.Boolean()),
  results: Type.Optional(
    Type.Union([
      Type.Object({
        is_finalized: Type.Optional(Type.Boolean()),
        answer_counts: Type.Array(Type.Object({ id: Type.Integer({ minimum: 0, maximum: 1_000_000 }), count: Type.Integer({ minimum: 0 }) }), {
          maxItems: 100,
        }),
      }),
      Type.Null(),
    ]),
  ),
});
export type DiscordPoll = Static<typeof poll>;

/** An embed: the parts brought across as text (anything else in it is ignored). */
const embedText = Type.Optional(maybe(Type.String({ maxLength: 10_000 })));
const embed = Type.Object({
  title: embedText,
  url: embedText,
  description: embedText,
  author: Type.Optional(Type.Union([Type.Object({ name: embedText }), Type.Null()])),
  footer: Type.Optional(Type.Union([Type.Object({ text: embedText }), Type.Null()])),
  fields: Type.Optional(Type.Array(Type.Object({ name: embedText, value: embedText }), { maxItems: 25 })),
});
export type DiscordEmbed = Static<typeof embed>;

export const MESSAGE = Type.Object({
  id: snowflake,
  type: Type.String({ maxLength: 100 }),
  timestamp: Type.String({ maxLength: 64 }),
  timestampEdited: Type.Optional(maybe(Type.String({ maxLength: 64 }))),
  isPinned: Type.Optional(Type.Boolean()),
  content: Type.String({ maxLength: 100_000 }),
  author: user,
  attachments: Type.Optional(
    Type.Array(Type.Object({ id: snowflake, url: assetUrl, fileName: Type.String({ maxLength: 1000 }), fileSizeBytes: Type.Number({ minimum: 0 }) }), {
      maxItems: 100,
    }),
  ),
  embeds: Type.Optional(Type.Array(embed, { maxItems: 100 })),
  stickers: Type.Optional(
    Type.Array(
      Type.Object({ id: snowflake, name: Type.String({ maxLength: 200 }), format: Type.Optional(Type.String({ maxLength: 100 })), sourceUrl: assetUrl }),
      { maxItems: 10 },
    ),
  ),
  /** The custom (and Unicode) emoji of the content, each once: with --media, their images are files of the export. */
  inlineEmojis: Type.Optional(Type.Array(emoji, { maxItems: 200 })),
  poll: Type.Optional(Type.Union([poll, Type.Null()])),
  reactions: Type.Optional(
    Type.Array(Type.Object({ emoji, count: Type.Integer({ minimum: 0 }), users: Type.Optional(Type.Array(user, { maxItems: 100_000 })) }), { maxItems: 100 }),
  ),
  mentions: Type.Optional(Type.Array(user, { maxItems: 1000 })),
  reference: Type.Optional(
    Type.Union([
      Type.Object({
        messageId: Type.Optional(maybe(snowflake)),
        channelId: Type.Optional(maybe(snowflake)),
        guildId: Type.Optional(maybe(snowflake)),
      }),
      Type.Null(),
    ]),
  ),
});
export type DiscordMessage = Static<typeof MESSAGE>;
export type DiscordUser = Static<typeof user>;
export type DiscordRole = Static<typeof role>;

export const CHANNEL_FILE = Type.Object({
  guild: Type.Object({ id: snowflake, name: text, iconUrl: Type.Optional(maybe(assetUrl)) }),
  channel: Type.Object({
    id: snowflake,
    type: Type.String({ maxLength: 100 }),
    categoryId: Type.Optional(maybe(snowflake)),
    category: Type.Optional(maybe(text)),
    name: text,
    topic: Type.Optional(maybe(text)),
  }),
  exportedAt: Type.Optional(Type.String({ maxLength: 64 })),
  messages: Type.Array(MESSAGE),
  messageCount: Type.Optional(Type.Integer({ minimum: 0 })),
});
export type ChannelFile = Static<typeof CHANNEL_FILE>;

/** The channel types the importer brings across, and what each becomes. */
export const CHANNEL_KINDS: Record<string, 'text' | 'forum' | 'thread' | 'voice' | 'category'> = {
  GuildTextChat: 'text',
  GuildNews: 'text',
  GuildForum: 'forum',
  GuildPublicThread: 'thread',
  GuildPrivateThread: 'thread',
  GuildNewsThread: 'thread',
  GuildVoiceChat: 'voice',
  GuildStageVoice: 'voice',
  GuildCategory: 'category',
};

/** Message types with a meaning here: words, replies, and system lines. */
export const MESSAGE_KINDS: Record<string, 'message' | 'system'> = {
  Default: 'message',
  Reply: 'message',
  ChannelPinnedMessage: 'system',
  GuildMemberJoin: 'system',
  ThreadCreated: 'system',
  RecipientAdd: 'system',
  RecipientRemove: 'system',
  ChannelNameChange: 'system',
  ChannelIconChange: 'system',
  Call: 'system',
};

// Compiled once: a million messages are checked in a second or two.
const channelFileCheck = TypeCompiler.Compile(CHANNEL_FILE);
const messageCheck = TypeCompiler.Compile(MESSAGE);

/** The first field of `value` that does not fit the channel file's schema, as "path: reason"; null when it fits. */
export function channelFileError(value: unknown): string | null {
  if (channelFileCheck.Check(value)) return null;
  const first = channelFileCheck.Errors(value).First();
  return first ? `${first.path || '/'}: ${first.message}` : '/: does not fit';
}

/** The same for one message, its path under `prefix` (`/messages/3`). */
export function messageError(value: unknown, prefix: string): string | null {
  if (messageCheck.Check(value)) return null;
  const first = messageCheck.Errors(value).First();
  return first ? `${prefix}${first.path}: ${first.message}` : `${prefix}: does not fit`;
}
