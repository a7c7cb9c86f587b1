import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import type yazl from 'yazl';
import type { DB } from '../../core/db';
import type { PollRecord, PollResult, PollRow } from '../../core/message-record';
import { isUuid } from '../../core/http/router';

/**
 * The way out: a whole server written in DiscordChatExporter's JSON shape (`--format Json
 * --media --markdown false --partition 10000`), which the importer (discord-plan.ts,
 * discord-import.ts) reads back. What the format can carry comes across: channels and their
 * categories, messages with their edits, pins, replies, mentions of people and roles, reactions
 * and who reacted, attachments and avatars (as files in the zip), roles and their colours.
 *
 * Ids are DiscordChatExporter's snowflakes: what an import brought keeps its Discord id
 * (import_map, imported_people, imported_messages, imports), so it is the same thing to
 * Discord-side tools and to a later import; anything else gets a snowflake made from its
 * creation time and a hash of its local id, the same in every export.
 */

/** Messages per channel file, as DiscordChatExporter's `--partition 10000` writes them. */
export const PARTITION_MESSAGES = 10_000;
/** Messages read per query: one short read, then the event loop gets a turn. */
export const EXPORT_PAGE = 2_000;
/** Discord's epoch (2015-01-01T00:00:00Z): a snowflake counts milliseconds from it. */
const DISCORD_EPOCH_MS = 1_420_070_400_000n;
/** Where avatars go in the zip, beside the channel files (one folder for all of them); custom emoji and stickers alike. */
const AVATARS_DIR = 'avatars_Files';
const EMOJIS_DIR = 'emojis_Files';
const STICKERS_DIR = 'stickers_Files';
/** A custom emoji of ours in a message's text: `<:name:uuid>`, `<a:name:uuid>`. */
const OUR_EMOJI = /<(a?):([A-Za-z0-9_]{2,32}):([0-9a-fA-F-]{36})>/g;

// @name where a username may start and end: the boundaries of src/parts/messages/mentions.ts.
const MENTION = /(?<![A-Za-z0-9_@.-])@([A-Za-z0-9_-]{3,32})(?![A-Za-z0-9_-])/g;

/**
 * A name as part of a file name in the zip: no path separators, control characters or `..`,
 * none of the characters Windows refuses in a file name (DiscordChatExporter replaces them the
 * same way), and no `%`, which the importer would read as percent-encoding in a file's path.
 */
export function exportFileName(name: string): string {
  const clean = name
    .replace(/[\u0000-\u001f\u007f<>:"/\\|?*%]/g, '_')
    .replace(/\.{2,}/g, '_')
    .trim();
  return clean || '_';
}

/**
 * A snowflake for something made here: its creation time in the upper bits, as Discord's ids
 * carry theirs (the importer orders messages by it), and 22 bits of a SHA-256 of its local id
 * where Discord keeps worker, process and sequence numbers. The same row gets the same id in
 * every export.
 */
export function syntheticSnowflake(localId: string, createdAt: string): string {
  const ms = BigInt(Math.max(0, Date.parse(createdAt) || 0));
  const since = ms > DISCORD_EPOCH_MS ? ms - DISCORD_EPOCH_MS : 0n;
  const low = BigInt(crypto.createHash('sha256').update(localId).digest().readUIntBE(0, 3) & 0x3fffff);
  return ((since << 22n) | low).toString();
}

interface ExportedRole {
  id: string;
  name: string;
  color: string | null;
  position: number;
}

interface ExportedUser {
  id: string;
  name: string;
  discriminator: string;
  nickname: string;
  color: string | null;
  isBot: boolean;
  roles: ExportedRole[];
  avatarUrl: string | null;
}

interface ChannelRow {
  id: string;
  type: string;
  name: string;
  topic: string;
  created_at: string;
  category_id: string | null;
  category: string | null;
  category_created_at: string | null;
  /** A thread's: its parent channel, whether private, and the message it started from. */
  parent_id: string | null;
  parent: string | null;
  parent_created_at: string | null;
  private: number | null;
  starter_id: string | null;
  starter_created_at: string | null;
  starter_discord_id: string | null;
}

interface MessageRow {
  seq: number;
  id: string;
  author_id: string;
  content: string;
  reply_to: string | null;
  created_at: string;
  edited_at: string | null;
  mentions: string | null;
  mention_roles: string | null;
  pinned_at: string | null;
  /** Its Discord id, when an import brought it. */
  discord_id: string | null;
  /** Its Discord type, when an import brought a system line. */
  discord_type: string | null;
}

interface UserRow {
  id: string;
  username: string;
  display_name: string | null;
  avatar_version: number;
  deleted_at: string | null;
  created_at: string;
}

/** 0xRRGGBB as DiscordChatExporter writes a colour; null for none. */
const hex = (color: number | null) => (color === null ? null : `#${color.toString(16).padStart(6, '0')}`);
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

/**
 * Adds the server's export to `zip`: one JSON file per channel (per 10 000 messages of it), at
 * the zip's root; each channel's attachments in `<its file name>_Files/`; every avatar shown
 * once in `avatars_Files/`. `files` counts the attachments and avatars added.
 *
 * The channel files are written as the zip is read, a page of messages at a time, so pipe
 * `zip.outputStream` somewhere before awaiting this: it resolves once the last channel file has
 * been read, and the caller then calls `zip.end()` (the files queued after it stream from disk
 * then). It rejects when the zip fails or its output closes early (the download was left).
 */
export async function writeServerExport(
  db: DB,
  dataDir: string,
  serverId: string,
  zip: yazl.ZipFile,
): Promise<{ channels: number; messages: number; files: number }> {
  const q = statements(db);
  const server = q.server.get(serverId);
  if (!server) throw new Error(`no server ${serverId}`);
  const mtime = new Date();
  const exportedAt = mtime.toISOString();
  const counts = { channels: 0, messages: 0, files: 0 };

  // Local id → snowflake, Discord's own first. Messages and attachments are not kept here (a
  // million of them would be held for nothing): theirs is computed again wherever it is needed.
  const ids = new Map<string, string>();
  for (const row of q.mapped.all(serverId)) ids.set(row.local_id, row.discord_id);
  /** The Discord name and discriminator of each person an import brought: they go out as they came. */
  const discordNames = new Map<string, { name: string; discriminator: string | null }>();
  for (const person of q.people.all(serverId)) {
    ids.set(person.user_id, person.discord_id);
    const name = { name: person.discord_name, discriminator: person.discord_discriminator };
    discordNames.set(person.user_id, name);
    // The history moved to the account that claimed the placeholder: it goes out as that person.
    if (person.claimed_by && !ids.has(person.claimed_by)) {
      ids.set(person.claimed_by, person.discord_id);
      discordNames.set(person.claimed_by, name);
    }
  }
  /** Custom emoji reacted with, as Discord named them (an import's `:name:` without an image, or the server's emoji it made). */
  const customEmoji = new Map(q.emoji.all(serverId).map((e) => [e.emoji, e]));
  const emojiFiles = path.join(dataDir, 'emojis');
  const stickerFiles = path.join(dataDir, 'stickers');
  /** Our custom emoji as DiscordChatExporter writes one, its image added to the zip once (with --media). */
  const shownEmoji = new Map<string, ReturnType<typeof emojiOf> | null>();
  async function ourEmoji(emojiId: string): Promise<ReturnType<typeof emojiOf> | null> {
    if (shownEmoji.has(emojiId)) return shownEmoji.get(emojiId)!;
    const row = isUuid(emojiId) ? q.emojiRow.get(emojiId) : undefined;
    let shown: ReturnType<typeof emojiOf> | null = null;
    if (row) {
      const id = customEmoji.get(emojiId)?.discord_id ?? syntheticSnowflake(row.id, row.created_at);
      const source = path.join(emojiFiles, `${row.id}.webp`);
      let imageUrl: string | null = null;
      if (row.deleted_at === null && (await fs.promises.stat(source).catch(() => null))) {
        imageUrl = `${EMOJIS_DIR}/${id}.webp`;
        zip.addFile(source, imageUrl, { compress: false, mtime });
        counts.files++;
      }
      shown = { id, name: row.name, code: row.name, isAnimated: row.animated === 1, imageUrl };
    }
    shownEmoji.set(emojiId, shown);
    return shown;
  }
  /** Our stickers as DiscordChatExporter writes one, its image added once. */
  const shownStickers = new Map<string, { id: string; name: string; format: string; sourceUrl: string } | null>();
  async function ourSticker(row: { id: string; name: string; animated: number; created_at: string; deleted_at: string | null }) {
    if (shownStickers.has(row.id)) return shownStickers.get(row.id)!;
    const id = q.stickerDiscordId.get(serverId, row.id) ?? syntheticSnowflake(row.id, row.created_at);
    const source = path.join(stickerFiles, `${row.id}.webp`);
    let shown: { id: string; name: string; format: string; sourceUrl: string } | null = null;
    // A deleted sticker's image is gone: the message names it (an import makes it a line).
    if (row.deleted_at === null && isUuid(row.id) && (await fs.promises.stat(source).catch(() => null))) {
      shown = { id, name: row.name, format: row.animated === 1 ? 'Gif' : 'Png', sourceUrl: `${STICKERS_DIR}/${id}.webp` };
      zip.addFile(source, shown.sourceUrl, { compress: false, mtime });
      counts.files++;
    } else shown = { id, name: row.name, format: 'Png', sourceUrl: `https://media.discordapp.net/stickers/${id}.png` };
    shownStickers.set(row.id, shown);
    return shown;
  }
  const snowflake = (localId: string, createdAt: string): string => {
    let id = ids.get(localId);
    if (id === undefined) {
      id = syntheticSnowflake(localId, createdAt);
      ids.set(localId, id);
    }
    return id;
  };
  const messageSnowflake = (row: { id: string; created_at: string; discord_id: string | null }) => row.discord_id ?? syntheticSnowflake(row.id, row.created_at);
  // The server's own id, never the Discord server's it was imported from: an import of this export
  // makes a new server (here or elsewhere) rather than appending to the one it came from.
  const guild = { id: snowflake(serverId, server.created_at), name: server.name, iconUrl: null };

  // Discord counts positions up from the bottom; here 0 is the first role listed.
  const roleRows = q.roles.all(serverId);
  const roles = new Map<string, ExportedRole>(
    roleRows.map((r, i) => [r.id, { id: snowflake(r.id, r.created_at), name: r.name, color: hex(r.color), position: roleRows.length - i }]),
  );

  /** Everyone shown so far (authors, mentioned, reacting), and the username a mention of them is written with. */
  const people = new Map<string, ExportedUser>();
  const mentionName = new Map<string, string>();
  const uploads = path.join(dataDir, 'uploads');
  const avatars = path.join(dataDir, 'avatars');

  async function avatarOf(user: UserRow, id: string): Promise<string | null> {
    if (user.deleted_at !== null || user.avatar_version <= 0 || !isUuid(user.id)) return null;
    const source = path.join(avatars, `${user.id}.webp`);
    if (!(await fs.promises.stat(source).catch(() => null))) return null;
    const entry = `${AVATARS_DIR}/${id}.webp`;
    zip.addFile(source, entry, { compress: false, mtime });
    counts.files++;
    return entry;
  }

  /** The users of a page not shown before: two queries, whatever their number. */
  async function showUsers(userIds: Set<string>): Promise<void> {
    const fresh = JSON.stringify([...userIds].filter((id) => !people.has(id)));
    if (fresh === '[]') return;
    const held = new Map<string, ExportedRole[]>();
    for (const { user_id, role_id } of q.rolesOfUsers.all(serverId, fresh)) {
      const role = roles.get(role_id);
      if (role) held.set(user_id, [...(held.get(user_id) ?? []), role]);
    }
    for (const user of q.usersOfPage.all(fresh)) {
      const id = snowflake(user.id, user.created_at);
      const own = (held.get(user.id) ?? []).sort((a, b) => b.position - a.position);
      const deleted = user.deleted_at !== null;
      const discord = discordNames.get(user.id);
      people.set(user.id, {
        id,
        // Someone an import brought keeps their Discord name and tag; anyone else has ours.
        name: deleted ? 'deleted-user' : (discord?.name ?? user.username),
        discriminator: (!deleted && discord?.discriminator) || '0000',
        nickname: deleted ? 'Deleted user' : (user.display_name ?? user.username),
        // The colour of their highest coloured role, as Discord shows a name.
        color: own.find((r) => r.color !== null)?.color ?? null,
        isBot: false,
        roles: own,
        avatarUrl: await avatarOf(user, id),
      });
      if (!deleted) mentionName.set(user.id, user.username.toLowerCase());
    }
  }

  /** A page of a channel's messages as DiscordChatExporter writes them: six queries, whatever the page's size. */
  async function exportPage(page: MessageRow[], channel: { id: string; snowflake: string }, mediaDir: string): Promise<object[]> {
    const seqs = JSON.stringify(page.map((m) => m.seq));
    const reactions = new Map<number, Map<string, { users: string[]; extra: number }>>();
    const reactionOf = (seq: number, emoji: string) => {
      const byEmoji = reactions.get(seq) ?? reactions.set(seq, new Map()).get(seq)!;
      return byEmoji.get(emoji) ?? byEmoji.set(emoji, { users: [], extra: 0 }).get(emoji)!;
    };
    for (const r of q.reactionsOfPage.all(seqs)) reactionOf(r.message_seq, r.emoji).users.push(r.user_id);
    // Reactions an import counted without knowing who: counted, named by no one.
    for (const r of q.extrasOfPage.all(seqs)) reactionOf(r.message_seq, r.emoji).extra += r.extra;
    const attachments = new Map<number, { id: string; url: string; fileName: string; fileSizeBytes: number }[]>();
    for (const a of q.attachmentsOfPage.all(seqs)) {
      const id = syntheticSnowflake(a.id, a.created_at);
      const url = `${mediaDir}/${id}-${exportFileName(a.name)}`;
      const source = path.join(uploads, a.id);
      // A row whose file is gone (reported at start-up) keeps its place in the message, without the file.
      if (isUuid(a.id) && (await fs.promises.stat(source).catch(() => null))) {
        zip.addFile(source, url, { compress: false, mtime });
        counts.files++;
      }
      attachments.set(a.message_seq, [...(attachments.get(a.message_seq) ?? []), { id, url, fileName: a.name, fileSizeBytes: a.size }]);
    }
    const stickers = new Map<number, object[]>();
    for (const row of q.stickersOfPage.all(seqs)) stickers.set(row.message_seq, [...(stickers.get(row.message_seq) ?? []), (await ourSticker(row))!]);
    const polls = new Map<number, object>();
    const pollRows = q.pollsOfPage.all(seqs);
    if (pollRows.length) {
      const live = new Map<string, number>();
      for (const v of q.pollVotesOfPage.all(seqs)) live.set(`${v.message_seq} ${v.answer_id}`, v.n);
      for (const row of pollRows) polls.set(row.message_seq, discordPoll(row, live));
    }
    // Our custom emoji: in reactions (stored under their id) and in the text.
    const emojiOfKey = new Map<string, ReturnType<typeof emojiOf>>();
    for (const byEmoji of reactions.values())
      for (const key of byEmoji.keys()) {
        if (!emojiOfKey.has(key) && isUuid(key)) {
          const ours = await ourEmoji(key);
          if (ours) emojiOfKey.set(key, ours);
        }
      }
    for (const m of page)
      for (const [, , , id] of m.content.matchAll(OUR_EMOJI)) {
        const ours = await ourEmoji(id.toLowerCase());
        if (ours) emojiOfKey.set(id.toLowerCase(), ours);
      }
    const targets = page.map((m) => m.reply_to).filter((id): id is string => id !== null);
    const replies = new Map(targets.length ? q.repliesOfPage.all(JSON.stringify(targets)).map((r) => [r.id, r]) : []);

    const mentioned = new Map(page.map((m) => [m.seq, m.mentions ? (JSON.parse(m.mentions) as string[]) : []]));
    const shown = new Set<string>();
    for (const m of page) {
      shown.add(m.author_id);
      for (const id of mentioned.get(m.seq)!) shown.add(id);
      for (const r of reactions.get(m.seq)?.values() ?? []) for (const id of r.users) shown.add(id);
    }
    await showUsers(shown);
    const withoutRoles = ({ roles: _, ...user }: ExportedUser) => user;

    return page.map((m) => {
      const inline = new Map<string, ReturnType<typeof emojiOf>>();
      const text = m.content.replace(OUR_EMOJI, (whole, a: string, _name: string, id: string) => {
        const ours = emojiOfKey.get(id.toLowerCase());
        if (!ours?.id) return whole;
        inline.set(ours.id, ours);
        return `<${a}:${ours.name}:${ours.id}>`;
      });
      const users = mentioned.get(m.seq)!.filter((id) => people.has(id));
      const roleIds = m.mention_roles ? (JSON.parse(m.mention_roles) as string[]).filter((id) => roles.has(id)) : [];
      const target = m.reply_to ? replies.get(m.reply_to) : undefined;
      // A reply to a message of another channel would be refused by the importer: it goes as a plain message.
      const reply = target && target.channel_id === channel.id ? target : undefined;
      return {
        id: messageSnowflake(m),
        type: m.discord_type ?? (reply ? 'Reply' : 'Default'),
        timestamp: m.created_at,
        timestampEdited: m.edited_at,
        callEndedTimestamp: null,
        isPinned: m.pinned_at !== null,
        content: rawMentions(
          m.discord_type === null ? text : systemText(text, m.discord_type),
          new Map(users.filter((id) => mentionName.has(id)).map((id) => [mentionName.get(id)!, people.get(id)!.id])),
          new Map(roleIds.map((id) => [roles.get(id)!.name.toLowerCase(), roles.get(id)!.id])),
        ),
        author: people.get(m.author_id)!,
        attachments: attachments.get(m.seq) ?? [],
        embeds: [],
        stickers: stickers.get(m.seq) ?? [],
        reactions: [...(reactions.get(m.seq)?.entries() ?? [])].map(([emoji, r]) => ({
          emoji: emojiOfKey.get(emoji) ?? emojiOf(emoji, customEmoji.get(emoji)),
          count: r.users.length + r.extra,
          users: r.users.filter((id) => people.has(id)).map((id) => withoutRoles(people.get(id)!)),
        })),
        mentions: users.map((id) => people.get(id)!),
        reference: reply ? { messageId: messageSnowflake(reply), channelId: channel.snowflake, guildId: guild.id } : null,
        inlineEmojis: [...inline.values()],
        ...(polls.has(m.seq) ? { poll: polls.get(m.seq) } : {}),
      };
    });
  }

  /** One channel file: its head, then up to PARTITION_MESSAGES messages a page at a time, then the count. */
  async function* channelFile(head: object, channel: { id: string; snowflake: string }, mediaDir: string, state: { after: number; more: boolean }) {
    const opening = JSON.stringify(head);
    yield Buffer.from(`${opening.slice(0, -1)},"messages":[`);
    let written = 0;
    while (written < PARTITION_MESSAGES) {
      const page = q.messagesAfter.all(channel.id, state.after, Math.min(EXPORT_PAGE, PARTITION_MESSAGES - written));
      if (page.length === 0) break;
      state.after = page[page.length - 1].seq;
      let chunk = '';
      for (const message of await exportPage(page, channel, mediaDir)) {
        chunk += `${written === 0 ? '' : ','}\n${JSON.stringify(message)}`;
        written++;
      }
      counts.messages += page.length;
      yield Buffer.from(chunk);
      // A turn for everything else waiting (requests, sockets) before the next page.
      await nextTurn();
    }
    state.more = written === PARTITION_MESSAGES && q.anyAfter.get(channel.id, state.after) !== undefined;
    yield Buffer.from(`\n],"messageCount":${written}}\n`);
  }

  // The zip failing, or its reader leaving, stops the export between two files.
  let stop!: (err: Error) => void;
  const stopped = new Promise<never>((_, reject) => (stop = reject));
  stopped.catch(() => {});
  const failed = (err: Error) => stop(err);
  const left = () => stop(new Error('the export was closed before it was written'));
  zip.on('error', failed);
  zip.outputStream.once('close', left);
  try {
    for (const row of q.channels.all(serverId)) {
      // As Discord (and so DiscordChatExporter) writes a thread: its id is the id of the message it
      // started from, its "category" its parent channel; a forum post's first message is its starter.
      const starter = row.starter_id ? messageSnowflake({ id: row.starter_id, created_at: row.starter_created_at!, discord_id: row.starter_discord_id }) : null;
      if (starter && !ids.has(row.id)) ids.set(row.id, starter);
      const channel = { id: row.id, snowflake: snowflake(row.id, row.created_at) };
      const thread = row.parent_id !== null;
      const head = {
        guild,
        channel: {
          id: channel.snowflake,
          type: thread ? (row.private ? 'GuildPrivateThread' : 'GuildPublicThread') : row.type === 'forum' ? 'GuildForum' : 'GuildTextChat',
          categoryId: thread
            ? snowflake(row.parent_id!, row.parent_created_at!)
            : row.category_id
              ? snowflake(row.category_id, row.category_created_at!)
              : null,
          category: thread ? row.parent : row.category,
          name: row.name,
          topic: row.topic || null,
        },
        dateRange: { after: null, before: null },
        exportedAt,
      };
      const base = `${exportFileName(server.name)} - ${exportFileName(row.name)} [${channel.snowflake}]`;
      // DiscordChatExporter keeps one media folder per channel, named after its first file.
      const mediaDir = `${base}.json_Files`;
      const state = { after: 0, more: true };
      // As DiscordChatExporter names partitions: the first file keeps the name, then `[part 2]`...
      for (let part = 1; state.more; part++) {
        const body = Readable.from(channelFile(head, channel, mediaDir, state));
        zip.addReadStream(body, part === 1 ? `${base}.json` : `${base} [part ${part}].json`, { mtime });
        try {
          await Promise.race([finished(body), stopped]);
        } catch (err) {
          body.destroy();
          throw err;
        }
      }
      counts.channels++;
    }
  } finally {
    zip.off('error', failed);
    zip.outputStream.off('close', left);
  }
  return counts;
}

/** A reaction's emoji as DiscordChatExporter writes it: a custom one an import brought with its Discord id and name. */
function emojiOf(
  emoji: string,
  custom: { discord_id: string; discord_name: string; animated: number } | undefined,
): { id: string | null; name: string; code: string; isAnimated: boolean; imageUrl: string | null } {
  if (!custom) return { id: null, name: emoji, code: '', isAnimated: false, imageUrl: null };
  return { id: custom.discord_id, name: custom.discord_name, code: custom.discord_name, isAnimated: custom.animated === 1, imageUrl: null };
}

/**
 * A poll as Discord's API gives a message's `poll` (DiscordChatExporter writes none; the importer
 * reads this): answer ids 1, 2, ... in order, and the counts, final once it ended.
 */
function discordPoll(row: PollRow & { message_seq: number }, live: Map<string, number>): object {
  const answers = JSON.parse(row.answers) as PollRecord['answers'];
  const frozen = row.results ? new Map((JSON.parse(row.results) as PollResult[]).map((r) => [r.answer_id, r.count])) : null;
  return {
    question: { text: row.question },
    answers: answers.map((a, i) => ({ answer_id: i + 1, poll_media: { text: a.text, ...(a.emoji ? { emoji: { id: null, name: a.emoji } } : {}) } })),
    expiry: row.expires_at,
    allow_multiselect: row.allow_multiselect === 1,
    layout_type: 1,
    results: {
      is_finalized: row.ended_at !== null,
      answer_counts: answers.map((a, i) => ({
        id: i + 1,
        count: (frozen ? frozen.get(a.answer_id) : live.get(`${row.message_seq} ${a.answer_id}`)) ?? 0,
        me_voted: false,
      })),
    },
  };
}

/** A system line's text as Discord had it: the import wrote it in italics (`*Joined the server.*`), or its type alone when it had none. */
function systemText(content: string, type: string): string {
  const inner = /^\*([\s\S]*)\*$/.exec(content)?.[1] ?? content;
  return inner === type ? '' : inner;
}

/**
 * Content in DiscordChatExporter's raw form (`--markdown false`): `@username` of a user the
 * message mentions becomes `<@snowflake>`, `@rolename` of a role it mentions `<@&snowflake>`;
 * `@everyone` and any other `@word` stay as written.
 */
function rawMentions(content: string, users: Map<string, string>, roles: Map<string, string>): string {
  if ((users.size === 0 && roles.size === 0) || !content.includes('@')) return content;
  return content.replace(MENTION, (whole, name: string) => {
    const key = name.toLowerCase();
    const user = users.get(key);
    if (user) return `<@${user}>`;
    const role = roles.get(key);
    return role ? `<@&${role}>` : whole;
  });
}

function statements(db: DB) {
  return {
    server: db.prepare<[string], { name: string; created_at: string }>('SELECT name, created_at FROM servers WHERE id = ?'),
    // The first import into the server named the Discord server it came from.
    mapped: db.prepare<[string], { local_id: string; discord_id: string }>('SELECT local_id, discord_id FROM import_map WHERE server_id = ?'),
    people: db.prepare<
      [string],
      { user_id: string; discord_id: string; discord_name: string; discord_discriminator: string | null; claimed_by: string | null }
    >(
      `SELECT user_id, discord_id, discord_name, discord_discriminator, claimed_by FROM imported_people
        WHERE server_id = ? ORDER BY claimed_at IS NULL, claimed_at, discord_id`,
    ),
    emoji: db.prepare<[string], { emoji: string; discord_id: string; discord_name: string; animated: number }>(
      'SELECT emoji, discord_id, discord_name, animated FROM imported_emoji WHERE server_id = ?',
    ),
    emojiRow: db.prepare<[string], { id: string; name: string; animated: number; created_at: string; deleted_at: string | null }>(
      'SELECT id, name, animated, created_at, deleted_at FROM emojis WHERE id = ?',
    ),
    stickerDiscordId: db.prepare<[string, string], string>('SELECT discord_id FROM imported_stickers WHERE server_id = ? AND sticker_id = ?').pluck(),
    stickersOfPage: db.prepare<[string], { message_seq: number; id: string; name: string; animated: number; created_at: string; deleted_at: string | null }>(
      `SELECT ms.message_seq, s.id, s.name, s.animated, s.created_at, s.deleted_at FROM message_stickers ms JOIN stickers s ON s.id = ms.sticker_id
        WHERE ms.message_seq IN (SELECT value FROM json_each(?)) ORDER BY ms.message_seq, ms.position`,
    ),
    pollsOfPage: db.prepare<[string], PollRow & { message_seq: number }>(
      `SELECT message_seq, question, answers, allow_multiselect, expires_at, ended_at, results FROM polls
        WHERE message_seq IN (SELECT value FROM json_each(?))`,
    ),
    pollVotesOfPage: db.prepare<[string], { message_seq: number; answer_id: string; n: number }>(
      `SELECT message_seq, answer_id, COUNT(*) AS n FROM poll_votes
        WHERE message_seq IN (SELECT value FROM json_each(?)) GROUP BY message_seq, answer_id`,
    ),
    roles: db.prepare<[string], { id: string; name: string; color: number | null; created_at: string }>(
      'SELECT id, name, color, created_at FROM roles WHERE server_id = ? ORDER BY position, created_at',
    ),
    // The listed channels in their order, then the threads (each after its parent, as an import wants them).
    channels: db.prepare<[string], ChannelRow>(
      `SELECT c.id, c.type, c.name, c.topic, c.created_at, k.id AS category_id, k.name AS category, k.created_at AS category_created_at,
              c.parent_id, p.name AS parent, p.created_at AS parent_created_at, t.private,
              s.id AS starter_id, s.created_at AS starter_created_at, si.discord_id AS starter_discord_id
         FROM channels c LEFT JOIN categories k ON k.id = c.category_id
         LEFT JOIN channels p ON p.id = c.parent_id
         LEFT JOIN threads t ON t.channel_id = c.id
         LEFT JOIN messages s ON s.id = t.starter_message_id
         LEFT JOIN imported_messages si ON si.seq = s.seq
        WHERE c.server_id = ? ORDER BY c.parent_id IS NOT NULL, c.position, c.created_at`,
    ),
    messagesAfter: db.prepare<[string, number, number], MessageRow>(
      `SELECT m.seq, m.id, m.author_id, m.content, m.reply_to, m.created_at, m.edited_at, m.mentions, m.mention_roles, m.pinned_at, i.discord_id,
              i.discord_type
         FROM messages m LEFT JOIN imported_messages i ON i.seq = m.seq
        WHERE m.channel_id = ? AND m.seq > ? ORDER BY m.seq LIMIT ?`,
    ),
    anyAfter: db.prepare<[string, number], number>('SELECT 1 FROM messages WHERE channel_id = ? AND seq > ? LIMIT 1').pluck(),
    reactionsOfPage: db.prepare<[string], { message_seq: number; emoji: string; user_id: string }>(
      `SELECT message_seq, emoji, user_id FROM reactions
        WHERE message_seq IN (SELECT value FROM json_each(?)) ORDER BY message_seq, created_at, user_id`,
    ),
    extrasOfPage: db.prepare<[string], { message_seq: number; emoji: string; extra: number }>(
      'SELECT message_seq, emoji, extra FROM reaction_extras WHERE message_seq IN (SELECT value FROM json_each(?)) ORDER BY message_seq, emoji',
    ),
    attachmentsOfPage: db.prepare<[string], { message_seq: number; id: string; name: string; size: number; created_at: string }>(
      `SELECT message_seq, id, name, size, created_at FROM attachments
        WHERE message_seq IN (SELECT value FROM json_each(?)) ORDER BY message_seq, position`,
    ),
    repliesOfPage: db.prepare<[string], { id: string; channel_id: string | null; created_at: string; discord_id: string | null }>(
      `SELECT m.id, m.channel_id, m.created_at, i.discord_id FROM messages m LEFT JOIN imported_messages i ON i.seq = m.seq
        WHERE m.id IN (SELECT value FROM json_each(?))`,
    ),
    usersOfPage: db.prepare<[string], UserRow>(
      'SELECT id, username, display_name, avatar_version, deleted_at, created_at FROM users WHERE id IN (SELECT value FROM json_each(?))',
    ),
    rolesOfUsers: db.prepare<[string, string], { user_id: string; role_id: string }>(
      'SELECT user_id, role_id FROM member_roles WHERE server_id = ? AND user_id IN (SELECT value FROM json_each(?))',
    ),
  };
}
