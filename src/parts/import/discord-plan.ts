import { CHANNEL_KINDS, type ChannelFile, type DiscordMessage, MESSAGE_KINDS, channelFileError } from './discord-format';
import { type ExportFiles, ImportError, insidePath } from './export-files';

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
  /** What it becomes: a channel, a channel named after its parent (a thread), a voice channel's text, or nothing. */
  becomes: 'channel' | 'thread' | 'voice' | 'nothing';
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

/** A channel file is read whole: past this, export with --partition (a JavaScript string holds at most about 512 MiB). */
export const MAX_CHANNEL_FILE_BYTES = 256 * 1024 * 1024;

/** The channel files of an export: JSON files outside the `…_Files` media folders. */
const isChannelFile = (file: string) => file.toLowerCase().endsWith('.json') && !file.split('/').slice(0, -1).some((dir) => dir.endsWith('_Files'));

const snowflakeOrder = (a: { id: string }, b: { id: string }) => {
  const x = BigInt(a.id);
  const y = BigInt(b.id);
  return x < y ? -1 : x > y ? 1 : 0;
};

/** Where an attachment's `url` points: a file of the export, a remote address (missing), or an error. */
export function assetPath(jsonFile: string, url: string): { file: string } | { remote: string } {
  if (/^[a-z][a-z0-9+.-]*:/i.test(url) && !/^[A-Za-z]:[\\/]/.test(url)) return { remote: url };
  let decoded = url;
  try {
    decoded = decodeURIComponent(url);
  } catch {
    // Not percent-encoded after all: taken as it is.
  }
  const dir = jsonFile.includes('/') ? jsonFile.slice(0, jsonFile.lastIndexOf('/') + 1) : '';
  const file = insidePath(dir + decoded);
  if (file === null) throw new ImportError(`${jsonFile}: an attachment path leaves the export: ${url.slice(0, 200)}`);
  return { file };
}

export async function planDiscordImport(files: ExportFiles, maxChannelFileBytes = MAX_CHANNEL_FILE_BYTES): Promise<ImportPlan> {
  const channelFiles = files.paths().filter(isChannelFile);
  if (channelFiles.length === 0) throw new ImportError('no DiscordChatExporter JSON files in the export (export with --format Json)');
  let guild: ImportPlan['guild'] | null = null;
  const byChannel = new Map<string, { file: string; data: ChannelFile }[]>();
  for (const file of channelFiles) {
    if ((files.size(file) ?? 0) > maxChannelFileBytes) {
      throw new ImportError(`${file}: ${files.size(file)} bytes, more than ${maxChannelFileBytes} for one channel file: export with --partition 100000`);
    }
    let data: unknown;
    try {
      data = JSON.parse((await files.read(file)).toString('utf8'));
    } catch (err) {
      if (err instanceof ImportError) throw err;
      throw new ImportError(`${file}: not JSON (${(err as Error).message})`);
    }
    const wrong = channelFileError(data);
    if (wrong) throw new ImportError(`${file}: not a DiscordChatExporter channel file: ${wrong}`);
    const channelFile = data as ChannelFile;
    if (guild && guild.id !== channelFile.guild.id) throw new ImportError(`${file}: a channel of another server (${channelFile.guild.name}); import one server at a time`);
    guild ??= { id: channelFile.guild.id, name: channelFile.guild.name };
    const parts = byChannel.get(channelFile.channel.id) ?? [];
    parts.push({ file, data: channelFile });
    byChannel.set(channelFile.channel.id, parts);
  }

  const categories: string[] = [];
  const people = new Set<string>();
  const roles = new Set<string>();
  const notCarried = new Set<string>();
  const channels: ChannelReport[] = [];
  for (const [channelId, parts] of byChannel) {
    const { channel } = parts[0].data;
    const kind = CHANNEL_KINDS[channel.type];
    const becomes: ChannelReport['becomes'] = kind === 'thread' ? 'thread' : kind === 'voice' ? 'voice' : kind === 'text' ? 'channel' : 'nothing';
    if (!kind) notCarried.add(`channels of type ${channel.type} (${channel.name})`);
    if (kind !== 'thread' && channel.category && !categories.includes(channel.category)) categories.push(channel.category);
    const seen = new Map<string, string>();
    const messages: DiscordMessage[] = [];
    for (const { file, data } of parts) {
      for (const m of data.messages) {
        const earlier = seen.get(m.id);
        if (earlier) throw new ImportError(`${file}: message ${m.id} is also in ${earlier}: a message id may appear once`);
        seen.set(m.id, file);
        if (!Number.isFinite(Date.parse(m.timestamp))) throw new ImportError(`${file}: message ${m.id} has no valid timestamp (${m.timestamp.slice(0, 64)})`);
        if (m.type === 'Reply' && m.reference?.channelId && m.reference.channelId !== channelId) {
          throw new ImportError(`${file}: message ${m.id} replies to a message of another channel (${m.reference.channelId})`);
        }
        messages.push(m);
      }
    }
    messages.sort(snowflakeOrder);
    const report: ChannelReport = {
      id: channelId,
      name: channel.name,
      type: channel.type,
      becomes,
      parent: channel.category ?? null,
      files: parts.length,
      messages: messages.length,
      authors: 0,
      attachments: { found: 0, missing: 0 },
      stickers: 0,
      embeds: 0,
      reactions: 0,
      pins: 0,
      system: 0,
      unknownTypes: {},
      first: messages[0]?.timestamp ?? null,
      last: messages.at(-1)?.timestamp ?? null,
    };
    const authors = new Set<string>();
    const fileOf = new Map(parts.flatMap(({ file, data }) => data.messages.map((m) => [m.id, file] as const)));
    for (const m of messages) {
      authors.add(m.author.id);
      people.add(m.author.id);
      for (const r of m.author.roles ?? []) roles.add(r.id);
      for (const u of m.mentions ?? []) people.add(u.id);
      const type = MESSAGE_KINDS[m.type];
      if (!type) report.unknownTypes[m.type] = (report.unknownTypes[m.type] ?? 0) + 1;
      else if (type === 'system') report.system++;
      if (m.isPinned) report.pins++;
      for (const a of m.attachments ?? []) {
        const where = assetPath(fileOf.get(m.id)!, a.url);
        if ('file' in where && files.size(where.file) !== undefined) report.attachments.found++;
        else report.attachments.missing++;
      }
      report.stickers += m.stickers?.length ?? 0;
      report.embeds += m.embeds?.length ?? 0;
      for (const r of m.reactions ?? []) {
        report.reactions += r.count;
        for (const u of r.users ?? []) people.add(u.id);
        if (!r.users || r.users.length < r.count) notCarried.add('who reacted, where the export does not name them (counted, attributed to no one)');
      }
    }
    report.authors = authors.size;
    if (report.attachments.missing) notCarried.add('attachments the export does not hold (exported without --media, or since gone): listed, not brought');
    if (report.embeds) notCarried.add('embeds: brought as text and links below their message, nothing fetched');
    channels.push(report);
  }
  channels.sort((a, b) => a.name.localeCompare(b.name) || snowflakeOrder(a, b));
  return { guild: guild!, channels, categories, people: people.size, roles: roles.size, notCarried: [...notCarried] };
}

/** The dry run as the CLI prints it. */
export function formatPlan(plan: ImportPlan): string {
  const lines = [`Server "${plan.guild.name}" (Discord id ${plan.guild.id}): ${plan.channels.length} channels, ${plan.categories.length} categories, ${plan.people} people, ${plan.roles} roles`];
  for (const c of plan.channels) {
    const unknown = Object.entries(c.unknownTypes).map(([type, n]) => `${type} x${n}`);
    lines.push(
      `#${c.name} (${c.type}${c.parent ? `, under ${c.parent}` : ''}): becomes ${c.becomes === 'nothing' ? 'nothing (not carried)' : c.becomes === 'thread' ? 'a channel named after its parent' : c.becomes === 'voice' ? "a channel of the voice channel's text" : 'a channel'}`,
      `  ${c.messages} messages by ${c.authors} authors${c.files > 1 ? ` from ${c.files} files` : ''}; ${c.first ? `${c.first} to ${c.last}` : 'empty'}`,
      `  attachments ${c.attachments.found} found, ${c.attachments.missing} missing; ${c.stickers} stickers, ${c.embeds} embeds, ${c.reactions} reactions, ${c.pins} pinned, ${c.system} system lines`,
      ...(unknown.length ? [`  unknown message types: ${unknown.join(', ')}`] : []),
    );
  }
  if (plan.notCarried.length) lines.push('Will not come across:', ...plan.notCarried.map((n) => `  - ${n}`));
  lines.push('Dry run: nothing was written.');
  return lines.join('\n');
}
