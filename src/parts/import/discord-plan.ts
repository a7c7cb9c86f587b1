import {
  CHANNEL_FILE,
  CHANNEL_KINDS,
  type ChannelFile,
  type DiscordMessage,
  type DiscordRole,
  type DiscordUser,
  MESSAGE_KINDS,
  channelFileError,
  messageError,
} from './discord-format';
import { type ExportFiles, ImportError, assetPath } from './export-files';

export { assetPath };
import { DEFAULT_MEDIA_SLOTS, type MediaSlots, type MediaTally, mediaNotes, newTally, tallyMessage } from './discord-media';
import { JsonRefusal, boundedOrThrow, readJson } from './json-reader';
import { MAX_ATTACHMENT_BYTES } from '../messages/upload-store';
import { MAX_AVATAR_BYTES } from '../accounts/avatars';
import { MAX_CATEGORIES_PER_SERVER, MAX_CHANNELS_PER_SERVER, MAX_ROLES_PER_SERVER } from '../../rules/sizes';

/**
 * The dry run of a DiscordChatExporter import: every channel file of the export read, checked and
 * put together (a channel's partitions joined, its messages in snowflake order), and what would
 * come across counted, per channel. Nothing is written. A hostile or broken export is refused
 * here with a clear error: a file that is not the format, files of two servers, a message id
 * twice, a reply to another channel, an attachment path that leaves the export.
 */

export interface ChannelReport {
  id: string;
  name: string;
  /** DiscordChatExporter's channel type. */
  type: string;
  /**
   * What it becomes: a channel, a forum, a thread under its parent channel, a post of its forum, a
   * voice channel's text, or nothing. A thread whose parent is not in the export becomes a
   * channel named after its parent, as every thread did before threads (issue 49).
   */
  becomes: 'channel' | 'forum' | 'thread' | 'post' | 'voice' | 'nothing';
  /** The category (or, for a thread, the parent channel) it is under. */
  parent: string | null;
  files: number;
  messages: number;
  authors: number;
  attachments: { found: number; missing: number };
  stickers: number;
  embeds: number;
  reactions: number;
  pins: number;
  /** System lines (joins, pins, thread creations...). */
  system: number;
  /** Message types the importer does not know, with their counts: brought as plain lines. */
  unknownTypes: Record<string, number>;
  first: string | null;
  last: string | null;
}

export interface ImportPlan {
  guild: { id: string; name: string };
  channels: ChannelReport[];
  /** Category names, in the order first seen. */
  categories: string[];
  /** Everyone named: authors, mention targets, reaction users (each becomes a placeholder account). */
  people: number;
  /** Roles of the authors. */
  roles: number;
  /** What will not come across, in words. */
  notCarried: string[];
}

/** People (authors, mentioned, reacting) one import may name: each becomes a placeholder account. */
export const MAX_IMPORTED_PEOPLE = 100_000;

/** One channel file at most: past this, export with --partition (the import holds a channel's messages to sort them). */
export const MAX_CHANNEL_FILE_BYTES = 256 * 1024 * 1024;

/** Messages one export may hold (their ids are held for the duplicate check: 8 bytes each, 80 MiB at most). */
export const MAX_EXPORT_MESSAGES = 10_000_000;

// Every string and array the reader may keep has a bound (json-reader.ts): checked once, at load.
boundedOrThrow(CHANNEL_FILE, 'messages');

/** The refusal of an export with no channel file. */
export const NO_CHANNEL_FILES = 'no DiscordChatExporter JSON files in the export (export with --format Json)';

/** The channel files of an export: JSON files outside the `…_Files` media folders. */
export const isChannelFile = (file: string) =>
  file.toLowerCase().endsWith('.json') &&
  !file
    .split('/')
    .slice(0, -1)
    .some((dir) => dir.endsWith('_Files'));

export const snowflakeOrder = (a: { id: string }, b: { id: string }) => {
  const x = BigInt(a.id);
  const y = BigInt(b.id);
  return x < y ? -1 : x > y ? 1 : 0;
};

/** A channel of the export: what its first file says of it, and its files (partitions), in path order. */
export interface ChannelEntry {
  channel: ChannelFile['channel'];
  files: string[];
  /**
   * Its files the dry run found to hold no more values it skips than values it keeps: the import
   * reads them whole with JSON.parse (about three times faster than the streamed read), whose
   * memory is then at most about twice what is kept. Any other file is streamed again.
   */
  plain: Set<string>;
}

/** A file read whole may hold at most this many skipped values for each kept one (see ChannelEntry.plain). */
const PLAIN_SKIPPED_PER_KEPT = 1;

/** A channel's messages, read from all its files: snowflake order, each with the file it came from. */
export interface ChannelMessages {
  messages: DiscordMessage[];
  fileOf: Map<string, string>;
}

/** Everything the import needs besides the messages themselves, which it reads channel by channel. */
export interface ExportScan {
  plan: ImportPlan;
  channels: ChannelEntry[];
  /** Everyone named, by Discord id (the latest of what the export says of them), and where their avatar is. */
  people: Map<string, { user: DiscordUser; avatar: string | null }>;
  /** The authors' roles, by Discord id. */
  roles: Map<string, DiscordRole>;
  /** Custom emoji, stickers and polls: how often each is used, and where its image is (discord-media.ts). */
  media: MediaTally;
}

/**
 * One channel file read and checked against the format, streamed (src/parts/import/json-reader.ts:
 * what the schema does not name is never built). Each message goes to `onMessage` once checked;
 * without it, the messages are skipped unread and the reading ends at them once the server and
 * the channel are known. The file's other fields, checked.
 */
async function readChannelFile(
  files: ExportFiles,
  file: string,
  maxBytes: number,
  onMessage?: (m: DiscordMessage) => void,
  how: { whole?: boolean; counts?: { kept: number; skipped: number } } = {},
): Promise<ChannelFile> {
  if ((files.size(file) ?? 0) > maxBytes) {
    throw new ImportError(`${file}: ${files.size(file)} bytes, more than ${maxBytes} for one channel file: export with --partition 100000`);
  }
  if (how.whole && onMessage) return readWhole(files, file, onMessage);
  let rest: Record<string, unknown>;
  try {
    rest = await readJson(files.stream(file), CHANNEL_FILE, {
      counts: how.counts,
      streamed: 'messages',
      onItem: onMessage
        ? (item, index) => {
            const wrong = messageError(item, `/messages/${index}`);
            if (wrong) throw new JsonRefusal('shape', wrong);
            onMessage(item as DiscordMessage);
          }
        : undefined,
      enough: onMessage ? undefined : (root) => root.guild !== undefined && root.channel !== undefined,
    });
  } catch (err) {
    if (!(err instanceof JsonRefusal)) throw err;
    throw new ImportError(err.kind === 'json' ? `${file}: not JSON (${err.message})` : `${file}: not a DiscordChatExporter channel file: ${err.message}`);
  }
  const head = { ...rest, messages: [] };
  const wrong = channelFileError(head);
  if (wrong) throw new ImportError(`${file}: not a DiscordChatExporter channel file: ${wrong}`);
  return head as unknown as ChannelFile;
}

/** A file the dry run found plain (ChannelEntry.plain), read whole: the same checks, each message in turn. */
async function readWhole(files: ExportFiles, file: string, onMessage: (m: DiscordMessage) => void): Promise<ChannelFile> {
  let data: { messages?: unknown };
  try {
    data = JSON.parse((await files.read(file)).toString('utf8').replace(/^\uFEFF/, ''));
  } catch (err) {
    if (err instanceof ImportError) throw err;
    throw new ImportError(`${file}: not JSON (${(err as Error).message})`);
  }
  const messages = data !== null && typeof data === 'object' && Array.isArray(data.messages) ? (data.messages as unknown[]) : null;
  const head = { ...data, messages: [] };
  const wrong = channelFileError(head) ?? (messages ? null : '/messages: Expected array');
  if (wrong) throw new ImportError(`${file}: not a DiscordChatExporter channel file: ${wrong}`);
  messages!.forEach((item, index) => {
    const refused = messageError(item, `/messages/${index}`);
    if (refused) throw new ImportError(`${file}: not a DiscordChatExporter channel file: ${refused}`);
    onMessage(item as DiscordMessage);
  });
  return head as unknown as ChannelFile;
}

/** The channels of an export and their files: each file's server and channel read (its messages are read by the scan). */
async function indexExport(files: ExportFiles, maxBytes: number): Promise<{ guild: ImportPlan['guild']; channels: ChannelEntry[] }> {
  const channelFiles = files.paths().filter(isChannelFile);
  if (channelFiles.length === 0) throw new ImportError(NO_CHANNEL_FILES);
  let direct = 0;
  let guild: ImportPlan['guild'] | null = null;
  const byChannel = new Map<string, ChannelEntry>();
  for (const file of channelFiles) {
    const data = await readChannelFile(files, file, maxBytes);
    if (guild && guild.id !== data.guild.id) throw new ImportError(`${file}: a channel of another server (${data.guild.name}); import one server at a time`);
    guild ??= { id: data.guild.id, name: data.guild.name };
    if (DIRECT_MESSAGES.has(data.channel.type)) direct++;
    const entry = byChannel.get(data.channel.id);
    if (entry) entry.files.push(file);
    else byChannel.set(data.channel.id, { channel: data.channel, files: [file], plain: new Set() });
  }
  // DiscordChatExporter writes DMs under a made-up server ("Direct Messages"): there is no server
  // to bring, and its people would all become placeholders of a server nobody asked for.
  if (direct === channelFiles.length) throw new ImportError(DM_ONLY);
  return { guild: guild!, channels: [...byChannel.values()] };
}

/** The channel types of direct messages and group DMs in DiscordChatExporter's files. */
const DIRECT_MESSAGES = new Set(['DirectTextChat', 'DirectGroupTextChat']);
export const DM_ONLY = 'this export holds only direct messages: nothing to import';

/**
 * Each message of a channel, file by file, checked alone: a valid timestamp, a reply within the
 * channel. `judge` (the dry run): note which files are plain; otherwise those are read whole.
 */
async function eachMessage(
  files: ExportFiles,
  entry: ChannelEntry,
  maxBytes: number,
  onMessage: (m: DiscordMessage, file: string) => void,
  judge = false,
): Promise<void> {
  for (const file of entry.files) {
    const counts = { kept: 0, skipped: 0 };
    const how = judge ? { counts } : { whole: entry.plain.has(file) };
    await readChannelFile(
      files,
      file,
      maxBytes,
      (m) => {
        if (!Number.isFinite(Date.parse(m.timestamp))) throw new ImportError(`${file}: message ${m.id} has no valid timestamp (${m.timestamp.slice(0, 64)})`);
        if (m.timestampEdited && !Number.isFinite(Date.parse(m.timestampEdited)))
          throw new ImportError(`${file}: message ${m.id} has no valid timestampEdited`);
        onMessage(m, file);
      },
      how,
    );
    if (judge && counts.skipped <= counts.kept * PLAIN_SKIPPED_PER_KEPT) entry.plain.add(file);
  }
}

/** A channel's messages from all its files, checked: one id once, a valid timestamp, replies within the channel. */
export async function readChannel(files: ExportFiles, entry: ChannelEntry, maxBytes = MAX_CHANNEL_FILE_BYTES): Promise<ChannelMessages> {
  const fileOf = new Map<string, string>();
  const messages: DiscordMessage[] = [];
  await eachMessage(files, entry, maxBytes, (m, file) => {
    const earlier = fileOf.get(m.id);
    if (earlier) throw new ImportError(`${file}: message ${m.id} is also in ${earlier}: a message id may appear once`);
    fileOf.set(m.id, file);
    messages.push(m);
  });
  messages.sort(snowflakeOrder);
  return { messages, fileOf };
}

/**
 * Every message id of an export, 8 bytes each (a Discord id is a 64-bit number): sorted once all
 * are read, a duplicate is found next to its twin. Held off the JavaScript heap, and bounded by
 * MAX_EXPORT_MESSAGES.
 */
class MessageIds {
  private ids = new BigUint64Array(1 << 16);
  private count = 0;

  add(id: string, file: string): void {
    const value = BigInt(id);
    if (value >= 1n << 64n) throw new ImportError(`${file}: message ${id} is not a Discord id (more than 64 bits)`);
    if (this.count === MAX_EXPORT_MESSAGES)
      throw new ImportError(
        `the export holds more than ${MAX_EXPORT_MESSAGES} messages: export fewer channels at a time (a later import appends to the same server)`,
      );
    if (this.count === this.ids.length) {
      const grown = new BigUint64Array(Math.min(this.ids.length * 2, MAX_EXPORT_MESSAGES));
      grown.set(this.ids);
      this.ids = grown;
    }
    this.ids[this.count++] = value;
  }

  /** An id held twice, if any. */
  duplicate(): string | null {
    const sorted = this.ids.subarray(0, this.count).sort();
    for (let i = 1; i < sorted.length; i++) if (sorted[i] === sorted[i - 1]) return String(sorted[i]);
    return null;
  }
}

/** The refusal of a message id held twice: where it is, read again (only on this path). */
async function duplicateRefusal(files: ExportFiles, entries: ChannelEntry[], id: string, maxBytes: number): Promise<ImportError> {
  const found: { channel: string; file: string }[] = [];
  for (const entry of entries) {
    await eachMessage(files, entry, maxBytes, (m, file) => {
      if (m.id === id) found.push({ channel: entry.channel.id, file });
    });
    if (found.length >= 2) break;
  }
  const [first, second] = found;
  if (!second) return new ImportError(`message ${id} appears twice: a message id may appear once`);
  return first.channel === second.channel
    ? new ImportError(`${second.file}: message ${id} is also in ${first.file}: a message id may appear once`)
    : new ImportError(`${second.file}: message ${id} is also in the channel ${first.channel}: a message id may appear once`);
}

/** Where an asset of a message is, if the export holds it within the size an upload may have. */
export function heldAsset(files: ExportFiles, jsonFile: string, url: string, maxBytes: number): string | null {
  const where = assetPath(jsonFile, url);
  if (!('file' in where)) return null;
  const size = files.size(where.file);
  return size !== undefined && size <= maxBytes ? where.file : null;
}

export async function planDiscordImport(files: ExportFiles, maxChannelFileBytes = MAX_CHANNEL_FILE_BYTES): Promise<ImportPlan> {
  return (await scanExport(files, maxChannelFileBytes)).plan;
}

/**
 * The dry run: every file read and checked, what would come across counted; and the people and
 * roles it names. Messages are counted as they are read, never all held: what is kept of the
 * export is its channels, people and roles, and 8 bytes per message id.
 */
export async function scanExport(
  files: ExportFiles,
  maxChannelFileBytes = MAX_CHANNEL_FILE_BYTES,
  slots: MediaSlots = DEFAULT_MEDIA_SLOTS,
): Promise<ExportScan> {
  const { guild, channels: entries } = await indexExport(files, maxChannelFileBytes);
  const media = newTally();
  const categories: string[] = [];
  const people: ExportScan['people'] = new Map();
  /** The message whose author record each person's is: the newest wins (a mention or a reaction only adds someone unknown). */
  const recordOf = new Map<string, bigint>();
  const roles: ExportScan['roles'] = new Map();
  const notCarried = new Set<string>();
  const channels: ChannelReport[] = [];
  const ids = new MessageIds();
  const kindOf = new Map(entries.map(({ channel }) => [channel.id, CHANNEL_KINDS[channel.type]]));
  for (const entry of entries) {
    const { channel } = entry;
    const kind = CHANNEL_KINDS[channel.type];
    const becomes = becomesOf(kind, channel.categoryId ? kindOf.get(channel.categoryId) : undefined);
    if (!kind || kind === 'category') notCarried.add(`channels of type ${channel.type} (${channel.name})`);
    if (kind !== 'thread' && channel.category && !categories.includes(channel.category)) categories.push(channel.category);
    const report: ChannelReport = {
      id: channel.id,
      name: channel.name,
      type: channel.type,
      becomes,
      parent: channel.category ?? null,
      files: entry.files.length,
      messages: 0,
      authors: 0,
      attachments: { found: 0, missing: 0 },
      stickers: 0,
      embeds: 0,
      reactions: 0,
      pins: 0,
      system: 0,
      unknownTypes: {},
      first: null,
      last: null,
    };
    /** The earliest and latest message by their timestamps: the channel's time range. */
    let earliest = Infinity;
    let latest = -Infinity;
    const authors = new Set<string>();
    const person = (user: DiscordUser, file: string, at: bigint | null) => {
      const known = people.get(user.id);
      if (known && (at === null || (recordOf.get(user.id) ?? -1n) > at)) return;
      const avatar = user.avatarUrl ? heldAsset(files, file, user.avatarUrl, MAX_AVATAR_BYTES) : null;
      people.set(user.id, { user, avatar: avatar ?? known?.avatar ?? null });
      if (at !== null) recordOf.set(user.id, at);
      if (people.size > MAX_IMPORTED_PEOPLE)
        throw new ImportError(
          `the export names more than ${MAX_IMPORTED_PEOPLE} people; an import brings at most ${MAX_IMPORTED_PEOPLE} (each becomes an account)`,
        );
    };
    await eachMessage(
      files,
      entry,
      maxChannelFileBytes,
      (m, file) => {
        ids.add(m.id, file);
        const at = BigInt(m.id);
        report.messages++;
        const ms = Date.parse(m.timestamp);
        if (ms < earliest) {
          earliest = ms;
          report.first = m.timestamp;
        }
        if (ms > latest) {
          latest = ms;
          report.last = m.timestamp;
        }
        if (isForward(m, channel.id)) notCarried.add('messages forwarded from other channels or servers: brought as a quote with a link to the original');
        authors.add(m.author.id);
        person(m.author, file, at);
        for (const r of m.author.roles ?? []) roles.set(r.id, r);
        if (roles.size > MAX_ROLES_PER_SERVER)
          throw new ImportError(`the export's authors hold more than ${MAX_ROLES_PER_SERVER} roles; a server holds at most ${MAX_ROLES_PER_SERVER}`);
        for (const u of m.mentions ?? []) person(u, file, null);
        const type = MESSAGE_KINDS[m.type];
        if (!type) report.unknownTypes[m.type] = (report.unknownTypes[m.type] ?? 0) + 1;
        else if (type === 'system') report.system++;
        if (m.isPinned) report.pins++;
        for (const a of m.attachments ?? []) {
          if (heldAsset(files, file, a.url, MAX_ATTACHMENT_BYTES)) report.attachments.found++;
          else report.attachments.missing++;
        }
        report.stickers += m.stickers?.length ?? 0;
        tallyMessage(files, file, m, media);
        report.embeds += m.embeds?.length ?? 0;
        for (const r of m.reactions ?? []) {
          report.reactions += r.count;
          for (const u of r.users ?? []) person(u, file, null);
          if (!r.users || r.users.length < r.count) notCarried.add('who reacted, where the export does not name them (counted, attributed to no one)');
        }
      },
      true,
    );
    report.authors = authors.size;
    if (report.attachments.missing)
      notCarried.add(
        `attachments the export does not hold (exported without --media, or since gone) or larger than ${MAX_ATTACHMENT_BYTES / 1024 / 1024} MiB: named in their message, not brought`,
      );
    if (report.embeds) notCarried.add('embeds: brought as text and links below their message, nothing fetched');
    if (Object.keys(report.unknownTypes).length)
      notCarried.add('messages of types the importer does not know: brought as plain lines when they have text, else left out');
    channels.push(report);
  }
  const twice = ids.duplicate();
  if (twice) throw await duplicateRefusal(files, entries, twice, maxChannelFileBytes);
  // Threads and posts are in no channel list: the cap is the listed channels'.
  const kept = channels.filter((c) => c.becomes !== 'nothing' && c.becomes !== 'thread' && c.becomes !== 'post');
  if (kept.length > MAX_CHANNELS_PER_SERVER)
    throw new ImportError(`the export has ${kept.length} channels; a server holds at most ${MAX_CHANNELS_PER_SERVER}: export fewer`);
  if (categories.length > MAX_CATEGORIES_PER_SERVER)
    throw new ImportError(`the export has ${categories.length} categories; a server holds at most ${MAX_CATEGORIES_PER_SERVER}`);
  channels.sort((a, b) => a.name.localeCompare(b.name) || snowflakeOrder(a, b));
  return {
    plan: { guild, channels, categories, people: people.size, roles: roles.size, notCarried: [...notCarried, ...mediaNotes(media, slots)] },
    channels: entries,
    people,
    roles,
    media,
  };
}

/**
 * What a channel of the export becomes, by its kind and its parent's (a thread's `categoryId` is
 * its parent channel): a thread under a channel or forum the export holds is a thread or a post.
 */
export function becomesOf(kind: string | undefined, parentKind: string | undefined): ChannelReport['becomes'] {
  if (kind === 'thread') return parentKind === 'forum' ? 'post' : parentKind === 'text' || parentKind === 'voice' ? 'thread' : 'channel';
  if (kind === 'forum') return 'forum';
  if (kind === 'voice') return 'voice';
  return kind === 'text' ? 'channel' : 'nothing';
}

const BECOMES: Record<ChannelReport['becomes'], string> = {
  channel: 'a channel',
  forum: 'a forum',
  thread: 'a thread of its channel',
  post: 'a post of its forum',
  voice: "a channel of the voice channel's text",
  nothing: 'nothing (not carried)',
};

/** The dry run as the CLI prints it. */
export function formatPlan(plan: ImportPlan): string {
  const lines = [
    `Server "${plan.guild.name}" (Discord id ${plan.guild.id}): ${plan.channels.length} channels, ${plan.categories.length} categories, ${plan.people} people, ${plan.roles} roles`,
  ];
  for (const c of plan.channels) {
    const unknown = Object.entries(c.unknownTypes).map(([type, n]) => `${type} x${n}`);
    lines.push(
      `#${c.name} (${c.type}${c.parent ? `, under ${c.parent}` : ''}): becomes ${c.type.includes('Thread') && c.becomes === 'channel' ? 'a channel named after its parent (not in the export)' : BECOMES[c.becomes]}`,
      `  ${c.messages} messages by ${c.authors} authors${c.files > 1 ? ` from ${c.files} files` : ''}; ${c.first ? `${c.first} to ${c.last}` : 'empty'}`,
      `  attachments ${c.attachments.found} found, ${c.attachments.missing} missing; ${c.stickers} stickers, ${c.embeds} embeds, ${c.reactions} reactions, ${c.pins} pinned, ${c.system} system lines`,
      ...(unknown.length ? [`  unknown message types: ${unknown.join(', ')}`] : []),
    );
  }
  if (plan.notCarried.length) lines.push('Will not come across:', ...plan.notCarried.map((n) => `  - ${n}`));
  lines.push('Dry run: nothing was written.');
  return lines.join('\n');
}

/** A message naming one of another channel or server (a forward, or a reply across channels): a quote with a link, not a reply. */
export function isForward(m: DiscordMessage, channelId: string): boolean {
  const ref = m.reference;
  return MESSAGE_KINDS[m.type] === 'message' && !!ref?.messageId && !!ref.channelId && ref.channelId !== channelId;
}

/** A message naming one of its own channel, whatever its type (older exports write replies as Default): a reply. */
export function repliesTo(m: DiscordMessage, channelId: string): string | null {
  const ref = m.reference;
  return ref?.messageId && (!ref.channelId || ref.channelId === channelId) ? ref.messageId : null;
}
