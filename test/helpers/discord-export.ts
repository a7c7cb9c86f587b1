// Synthetic DiscordChatExporter exports, built from the format's field list (never real exports,
// which carry personal data): a server with categories, text, news, voice and forum channels, a
// thread, every message type the importer reads, attachments present and absent, Windows paths,
// partitioned files, raw mentions (--markdown false) and rendered ones.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import yazl from 'yazl';

export const GUILD = { id: '800000000000000001', name: 'Hobby Club', iconUrl: null };

let snowflake = 900_000_000_000_000_000n;
export const nextId = () => String(++snowflake);

export const person = (id: string, name: string, roles: object[] = []) => ({
  id,
  name,
  discriminator: '0000',
  nickname: name,
  color: roles.length ? '#3BA55D' : null,
  isBot: false,
  roles,
  avatarUrl: null,
});

export const ALICE = person('700000000000000001', 'alice', [{ id: '600000000000000001', name: 'Mods', color: '#3BA55D', position: 2 }]);
export const BOB = person('700000000000000002', 'bob');

export interface Msg {
  id?: string;
  type?: string;
  timestamp?: string;
  content?: string;
  author?: object;
  isPinned?: boolean;
  attachments?: { id: string; url: string; fileName: string; fileSizeBytes: number }[];
  reactions?: object[];
  mentions?: object[];
  reference?: object | null;
  embeds?: object[];
  stickers?: object[];
}

export const message = (m: Msg) => ({
  id: m.id ?? nextId(),
  type: m.type ?? 'Default',
  timestamp: m.timestamp ?? '2024-03-01T12:00:00.000+00:00',
  timestampEdited: null,
  callEndedTimestamp: null,
  isPinned: m.isPinned ?? false,
  content: m.content ?? 'hello',
  author: m.author ?? BOB,
  attachments: m.attachments ?? [],
  embeds: m.embeds ?? [],
  stickers: m.stickers ?? [],
  reactions: m.reactions ?? [],
  mentions: m.mentions ?? [],
  ...(m.reference !== undefined ? { reference: m.reference } : {}),
  inlineEmojis: [] as object[],
});

export interface ChannelSpec {
  id: string;
  type: string;
  name: string;
  category?: string | null;
  categoryId?: string | null;
  topic?: string | null;
  messages: ReturnType<typeof message>[];
}

/** One channel file's JSON. */
export const channelFile = (c: ChannelSpec, guild = GUILD) => ({
  guild,
  channel: { id: c.id, type: c.type, categoryId: c.categoryId ?? null, category: c.category ?? null, name: c.name, topic: c.topic ?? null },
  dateRange: { after: null, before: null },
  exportedAt: '2024-04-01T00:00:00.000+00:00',
  messages: c.messages,
  messageCount: c.messages.length,
});

/** Writes files (name → JSON value or bytes) into a new folder; its path. */
export function writeExport(files: Record<string, unknown>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dce-export-'));
  for (const [name, value] of Object.entries(files)) {
    const file = path.join(dir, ...name.split('/'));
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, Buffer.isBuffer(value) ? value : JSON.stringify(value, null, 2));
  }
  return dir;
}

/** The same files as a zip (entry names as given, so a test may write hostile ones). */
export async function writeZip(files: Record<string, unknown>): Promise<string> {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'dce-zip-')), 'export.zip');
  const zip = new yazl.ZipFile();
  for (const [name, value] of Object.entries(files)) zip.addBuffer(Buffer.isBuffer(value) ? value : Buffer.from(JSON.stringify(value)), name);
  zip.end();
  await new Promise<void>((resolve, reject) => zip.outputStream.pipe(fs.createWriteStream(file)).on('close', resolve).on('error', reject));
  return file;
}

/**
 * The standard scene: #general (text, under "Text", partitioned in two files, a reply, a pin and
 * its system line, a join, a file present and one absent, a Windows-separated path, reactions with
 * and without their users, a raw mention), #news (news), a thread of #general, #lounge (voice text)
 * and a forum post, with an unknown message type.
 */
export function standardExport(): Record<string, unknown> {
  const first = message({
    content: 'welcome <@700000000000000002>',
    author: ALICE,
    mentions: [BOB],
    isPinned: true,
    timestamp: '2024-01-01T10:00:00.000+00:00',
  });
  const reply = message({
    type: 'Reply',
    content: 'thanks!',
    reference: { messageId: first.id, channelId: '810000000000000001', guildId: GUILD.id },
    timestamp: '2024-01-01T10:01:00.000+00:00',
  });
  const withFile = message({
    content: 'a photo and a lost file',
    attachments: [
      { id: nextId(), url: 'Hobby Club - general [810000000000000001].json_Files/photo-1A2B.png', fileName: 'photo.png', fileSizeBytes: 4 },
      { id: nextId(), url: 'https://cdn.discordapp.com/attachments/1/2/lost.txt', fileName: 'lost.txt', fileSizeBytes: 10 },
    ],
    reactions: [
      { emoji: { id: '', name: '👍', code: 'thumbsup', isAnimated: false, imageUrl: null }, count: 2, users: [ALICE, BOB] },
      { emoji: { id: '', name: '🎉', code: 'tada', isAnimated: false, imageUrl: null }, count: 3 },
    ],
    timestamp: '2024-01-02T09:00:00.000+00:00',
  });
  const windows = message({
    content: 'from a Windows export',
    attachments: [{ id: nextId(), url: 'Hobby Club - general [810000000000000001].json_Files\\notes-3C4D.txt', fileName: 'notes.txt', fileSizeBytes: 6 }],
    timestamp: '2024-01-03T09:00:00.000+00:00',
  });
  const pinLine = message({
    type: 'ChannelPinnedMessage',
    content: 'Pinned a message.',
    author: ALICE,
    reference: { messageId: first.id, channelId: '810000000000000001', guildId: GUILD.id },
    timestamp: '2024-01-03T10:00:00.000+00:00',
  });
  const join = message({ type: 'GuildMemberJoin', content: 'Joined the server.', timestamp: '2024-01-03T11:00:00.000+00:00' });
  const general = { id: '810000000000000001', type: 'GuildTextChat', name: 'general', category: 'Text', categoryId: '820000000000000001', topic: 'say hi' };
  return {
    'Hobby Club - general [810000000000000001] [part 1].json': channelFile({ ...general, messages: [first, reply, withFile] }),
    'Hobby Club - general [810000000000000001] [part 2].json': channelFile({ ...general, messages: [windows, pinLine, join] }),
    'Hobby Club - general [810000000000000001].json_Files/photo-1A2B.png': Buffer.from([0x89, 0x50, 0x4e, 0x47]),
    'Hobby Club - general [810000000000000001].json_Files/notes-3C4D.txt': Buffer.from('notes\n'),
    'Hobby Club - news [810000000000000002].json': channelFile({
      id: '810000000000000002',
      type: 'GuildNews',
      name: 'news',
      category: 'Text',
      categoryId: '820000000000000001',
      messages: [message({ content: 'big news @everyone', author: ALICE, timestamp: '2024-02-01T10:00:00.000+00:00' })],
    }),
    'Hobby Club - plans [830000000000000001].json': channelFile({
      id: '830000000000000001',
      type: 'GuildPublicThread',
      name: 'plans',
      category: 'general',
      categoryId: '810000000000000001',
      messages: [
        message({ content: 'thread talk', timestamp: '2024-02-02T10:00:00.000+00:00' }),
        message({ type: 'ThreadCreated', content: 'Started a thread.' }),
      ],
    }),
    'Hobby Club - lounge [840000000000000001].json': channelFile({
      id: '840000000000000001',
      type: 'GuildVoiceChat',
      name: 'lounge',
      category: 'Voice',
      categoryId: '820000000000000002',
      messages: [message({ content: 'can you hear me', timestamp: '2024-02-03T10:00:00.000+00:00' }), message({ type: 'AutoModerationAction', content: '' })],
    }),
  };
}

/**
 * A forum with a post (a thread under it), every message type the importer names plus one it does
 * not, and mentions rendered as DCE writes them by default (`--markdown true`: names as text, the
 * `mentions` list still naming who).
 */
export function forumExport(): Record<string, unknown> {
  const forum = { id: '850000000000000001', type: 'GuildForum', name: 'ideas', category: 'Community', categoryId: '820000000000000003' };
  const types = [
    'Default',
    'Reply',
    'ChannelPinnedMessage',
    'GuildMemberJoin',
    'ThreadCreated',
    'RecipientAdd',
    'RecipientRemove',
    'ChannelNameChange',
    'ChannelIconChange',
    'Call',
    'StageStart',
  ];
  const lines = types.map((type, i) =>
    message({
      type,
      content: `${type} line`,
      author: i % 2 ? ALICE : BOB,
      timestamp: new Date(Date.UTC(2024, 5, 1, 10, i)).toISOString().replace('Z', '+00:00'),
    }),
  );
  return {
    'Hobby Club - ideas [850000000000000001].json': channelFile({ ...forum, messages: [] }),
    'Hobby Club - dark mode [860000000000000001].json': channelFile({
      id: '860000000000000001',
      type: 'GuildPublicThread',
      name: 'dark mode',
      category: 'ideas',
      categoryId: forum.id,
      messages: [message({ content: 'please @bob, dark mode', mentions: [BOB], author: ALICE, timestamp: '2024-06-02T10:00:00.000+00:00' })],
    }),
    'Hobby Club - types [870000000000000001].json': channelFile({ id: '870000000000000001', type: 'GuildTextChat', name: 'types', messages: lines }),
  };
}

/** A MiB. */
export const MIB = 1024 * 1024;

/**
 * A hostile channel file of issue 45, as raw JSON: about `bytes` of `[],` (a few KiB once zipped)
 * in one message, where the format ignores it (`ignored`: a field it does not name, in a message
 * whose id is then wrong; `ignored-valid`: the same in a valid message) or inside a kept array
 * (`kept`: arrays where `mentions` holds people; `kept-count`: past its 1000 items).
 */
export function hostileChannelFile(where: 'ignored' | 'ignored-valid' | 'kept' | 'kept-count', bytes = 16 * MIB): Buffer {
  const head = JSON.stringify(channelFile({ id: '810000000000000009', type: 'GuildTextChat', name: 'general', messages: [] }));
  const m = JSON.stringify({ ...message({ author: ALICE }), ...(where === 'ignored' ? { id: '12x' } : {}), mentions: [] });
  const junk = (where === 'kept-count' ? '{},' : '[],').repeat(Math.floor(bytes / 3)) + '[]';
  const hostile = where.startsWith('ignored') ? `{"junk":[${junk}],${m.slice(1)}` : m.replace('"mentions":[]', `"mentions":[${junk}]`);
  return Buffer.from(head.replace('"messages":[]', `"messages":[${hostile}]`));
}
