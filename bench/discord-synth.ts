/**
 * A synthetic DiscordChatExporter export for the import benchmark (bench/import.ts), in the shape
 * test/helpers/discord-export.ts builds and DCE writes with `--format Json --media --markdown false
 * --partition 10000`: one guild, CHANNELS channels (a few large, many small; a news channel and
 * three threads of the largest), AUTHORS people with roles, messages of 10 to 300 characters of
 * Zipf-drawn words with raw `<@id>` mentions, replies, reactions with and without their users,
 * pins, edits, link embeds and join lines; and attachments, small files (PNG headers or text,
 * 1 to 20 KiB) in `<channel file>.json_Files/`, named by a percent-encoded relative `url`.
 *
 * Every file is written as it is generated (a channel file in chunks of about 1 MiB), so a million
 * messages need no more memory than a few thousand. The same seed writes the same export.
 *
 * Run alone: node dist-bench/bench/discord-synth.js <folder>   (IMPORT_MESSAGES, IMPORT_ATTACHMENTS)
 */
import fs from 'node:fs';
import path from 'node:path';
import { rng } from './lib';

const CHANNELS = 40;
const AUTHORS = 2_000;
const ROLES = 8;
/** DCE's `--partition 10000`. */
const PARTITION_MESSAGES = 10_000;
const GUILD = { id: '800000000000000777', name: 'Synth Guild', iconUrl: null };
/** Discord's epoch (2015-01-01T00:00:00Z): a snowflake counts milliseconds from it. */
const DISCORD_EPOCH_MS = 1_420_070_400_000n;
const FIRST_MS = Date.UTC(2021, 0, 1);
const LAST_MS = Date.UTC(2024, 5, 1);
const WRITE_CHUNK_CHARS = 1 << 20;

/** Shares of messages with each feature (of all messages). */
const SHARE = {
  mention: 0.08,
  channelMention: 0.01,
  reply: 0.1,
  reaction: 0.06,
  reactionUsers: 0.6,
  pinned: 0.002,
  edited: 0.04,
  join: 0.005,
  embed: 0.02,
  imageOnly: 0.15,
};
/** In exactly one message (the middle one): a search for it finds one. */
export const UNIQUE_WORD = 'quasarplonk';
/** In every COMMON_EVERY-th message. */
export const COMMON_WORD = 'hello';
const COMMON_EVERY = 50;
const EMOJI = ['👍', '❤️', '😂', '🎉', '👀', '🔥', '😮', '✅'];
const ENGLISH =
  "the a to and i you it is of that in for this on be was with just so but not have like it's what do we my are can if at all me no get or one up lol yeah out about know think there now how will when time good they from would don't your got people then more make see some any really going here also well only thanks need right new because work want way yes which use still did try even too want much something".split(
    ' ',
  );

export interface SynthOptions {
  messages: number;
  attachments: number;
  seed?: number;
}

export interface SynthExport {
  dir: string;
  guildName: string;
  channels: number;
  authors: number;
  messages: number;
  attachments: number;
  jsonFiles: number;
  jsonBytes: number;
  attachmentBytes: number;
  /** Messages holding COMMON_WORD. */
  commonCount: number;
  writeMs: number;
}

/** Pronounceable made-up words and names, distinct, 2 to 4 syllables. */
function madeUpWords(count: number, random: () => number, taken: Set<string>): string[] {
  const onsets = ['b', 'c', 'd', 'f', 'g', 'h', 'j', 'k', 'l', 'm', 'n', 'p', 'r', 's', 't', 'v', 'w', 'z', 'br', 'st', 'tr', 'ch', 'sh', 'pl'];
  const vowels = ['a', 'e', 'i', 'o', 'u', 'ai', 'ea', 'ou'];
  const words: string[] = [];
  while (words.length < count) {
    const syllables = 2 + Math.floor(random() * 3);
    let word = '';
    for (let i = 0; i < syllables; i++) word += onsets[Math.floor(random() * onsets.length)] + vowels[Math.floor(random() * vowels.length)];
    if (random() < 0.3) word += 'n';
    if (taken.has(word)) continue;
    taken.add(word);
    words.push(word);
  }
  return words;
}

/** Draws ranks 0..n-1 by Zipf's law with exponent s: rank 0 is the most common. */
function zipf(n: number, s: number, random: () => number): () => number {
  const cumulative = new Float64Array(n);
  let total = 0;
  for (let rank = 0; rank < n; rank++) cumulative[rank] = total += 1 / (rank + 1) ** s;
  return () => {
    const x = random() * total;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid] < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

/** `count` split by Zipf weights (exponent s) over `parts`, largest first, every part at least 1 when it can be. */
function zipfSplit(count: number, parts: number, s: number): number[] {
  const weights = Array.from({ length: parts }, (_, i) => 1 / (i + 1) ** s);
  const total = weights.reduce((a, b) => a + b, 0);
  const sizes = weights.map((w) => Math.max(count >= parts ? 1 : 0, Math.floor((count * w) / total)));
  sizes[0] += count - sizes.reduce((a, b) => a + b, 0);
  return sizes;
}

/** A file's path as DCE writes it in a `url`: each segment percent-encoded. */
const encodedPath = (...segments: string[]) => segments.map(encodeURIComponent).join('/');

/** Writes a string to a file descriptor in chunks of about WRITE_CHUNK_CHARS. */
class ChunkedWriter {
  private pending: string[] = [];
  private chars = 0;
  bytes = 0;
  constructor(private readonly fd: number) {}
  write(text: string): void {
    this.pending.push(text);
    this.chars += text.length;
    if (this.chars >= WRITE_CHUNK_CHARS) this.flush();
  }
  flush(): void {
    if (this.pending.length === 0) return;
    const data = Buffer.from(this.pending.join(''));
    fs.writeSync(this.fd, data);
    this.bytes += data.length;
    this.pending = [];
    this.chars = 0;
  }
}

export function writeSyntheticExport(dir: string, options: SynthOptions): SynthExport {
  const started = performance.now();
  const random = rng(options.seed ?? 20_240_601);
  const chance = (p: number) => random() < p;
  const pick = <T>(list: T[]) => list[Math.floor(random() * list.length)];
  fs.mkdirSync(dir, { recursive: true });

  let counter = 0;
  const snowflake = (ms: number) => ((BigInt(ms) - DISCORD_EPOCH_MS) << 22n) | BigInt(counter++ & 0x3fffff);
  const stamp = (ms: number) => new Date(ms).toISOString().replace('Z', '+00:00');

  const taken = new Set<string>(ENGLISH);
  const vocabulary = [...ENGLISH, ...madeUpWords(8_000, random, taken)];
  const drawWord = zipf(vocabulary.length, 1.05, random);
  const names = madeUpWords(AUTHORS, random, taken);

  const roles = Array.from({ length: ROLES }, (_, i) => ({
    id: String(600_000_000_000_000_100n + BigInt(i)),
    name: ['Admins', 'Mods', 'Regulars', 'Artists', 'Developers', 'Musicians', 'Gamers', 'Newcomers'][i],
    color: `#${((i * 0x3a5f17 + 0x204060) & 0xffffff).toString(16).padStart(6, '0')}`,
    position: ROLES - i,
  }));
  const authors = names.map((name, i) => {
    const held = [...new Set(Array.from({ length: Math.floor(random() * 3) }, () => pick(roles)))].sort((a, b) => b.position - a.position);
    const id = String(700_000_000_000_000_000n + BigInt(i));
    return {
      id,
      name,
      discriminator: '0000',
      nickname: chance(0.3) ? `${name[0].toUpperCase()}${name.slice(1)}` : name,
      color: held[0]?.color ?? null,
      isBot: false,
      roles: held,
      avatarUrl: `https://cdn.discordapp.com/avatars/${id}/${(i * 2654435761).toString(16)}.png?size=512`,
    };
  });
  const drawAuthor = zipf(AUTHORS, 1, random);

  // Channels: the largest first; a news channel, and three threads of the largest among the small ones.
  const sizes = zipfSplit(options.messages, CHANNELS, 1);
  const baseNames = [
    'general',
    'random',
    'help',
    'announcements',
    'off-topic',
    'dev',
    'music',
    'gaming',
    'art',
    'memes',
    'support',
    'feedback',
    'events',
    'introductions',
    'showcase',
  ];
  const categories = ['Text', 'Community', 'Projects', 'Archive'].map((name, i) => ({ id: String(820_000_000_000_000_100n + BigInt(i)), name }));
  const channels = sizes.map((messages, i) => {
    const id = String(810_000_000_000_000_100n + BigInt(i));
    const thread = i >= CHANNELS - 3;
    const category = categories[i % categories.length];
    return {
      id,
      type: thread ? 'GuildPublicThread' : i === 3 ? 'GuildNews' : 'GuildTextChat',
      name: thread ? `thread ${i}` : i < baseNames.length ? baseNames[i] : `${baseNames[i % baseNames.length]}-${i}`,
      categoryId: thread ? '810000000000000100' : category.id,
      category: thread ? 'general' : category.name,
      topic: chance(0.5) ? `All about ${pick(vocabulary)} and ${pick(vocabulary)}` : null,
      messages,
    };
  });

  const pool = Buffer.alloc(64 * 1024);
  for (let i = 0; i < pool.length; i++) pool[i] = Math.floor(random() * 256);
  const PNG_HEAD = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');

  const words = (chars: number) => {
    let text = '';
    while (text.length < chars) text += (text ? ' ' : '') + vocabulary[drawWord()];
    return text.slice(0, chars).trimEnd();
  };

  /** One attachment's file, written now; its entry in the message. */
  let fileNumber = 0;
  const attachmentOf = (mediaDir: string, ms: number) => {
    const n = fileNumber++;
    const size = 1024 + Math.floor(random() * 19 * 1024);
    const image = chance(0.6);
    const stem = image ? pick(['image', 'IMG_', 'screenshot-', 'photo']) + n : pick(['notes-', 'log-', 'readme-', 'snippet-']) + n;
    const ext = image ? '.png' : pick(['.txt', '.log', '.md']);
    let data: Buffer;
    if (image) {
      data = Buffer.alloc(size);
      PNG_HEAD.copy(data, 0);
      data.writeUInt32BE(64 + (n % 1024), 16);
      data.writeUInt32BE(48 + (n % 768), 20);
      pool.copy(data, 24, (n * 977) % (pool.length - size), ((n * 977) % (pool.length - size)) + size - 24);
    } else {
      let text = '';
      while (text.length < size) text += `${words(20 + Math.floor(random() * 100))}\n`;
      data = Buffer.from(text.slice(0, size));
    }
    // DCE names a downloaded file after its own name and a hash of its address.
    const fileName = `${stem}${ext}`;
    const stored = `${stem}-${((n * 2654435761) >>> 0).toString(16).toUpperCase().slice(0, 5)}${ext}`;
    fs.writeFileSync(path.join(dir, mediaDir, stored), data);
    return { entry: { id: String(snowflake(ms)), url: encodedPath(mediaDir, stored), fileName, fileSizeBytes: data.length }, bytes: data.length };
  };

  const summary: SynthExport = {
    dir,
    guildName: GUILD.name,
    channels: channels.length,
    authors: AUTHORS,
    messages: 0,
    attachments: 0,
    jsonFiles: 0,
    jsonBytes: 0,
    attachmentBytes: 0,
    commonCount: 0,
    writeMs: 0,
  };
  const exportedAt = stamp(LAST_MS + 86_400_000);
  let global = 0;
  const uniqueAt = Math.floor(options.messages / 2);

  for (const [c, channel] of channels.entries()) {
    const base = `${GUILD.name} - ${channel.name} [${channel.id}]`;
    // One media folder per channel, named after its first file (as DCE keeps it for every partition).
    const mediaDir = `${base}.json_Files`;
    fs.mkdirSync(path.join(dir, mediaDir), { recursive: true });
    const head = JSON.stringify(
      {
        guild: GUILD,
        channel: { id: channel.id, type: channel.type, categoryId: channel.categoryId, category: channel.category, name: channel.name, topic: channel.topic },
        dateRange: { after: null, before: null },
        exportedAt,
      },
      null,
      2,
    ).slice(0, -2);
    const startMs = FIRST_MS + Math.floor(random() * 180) * 86_400_000;
    const step = Math.max(1, Math.floor((LAST_MS - startMs) / Math.max(1, channel.messages)));
    let ms = startMs;
    const recent: string[] = [];
    const authorShift = c * 37;

    for (let part = 0, written = 0; written < channel.messages || (part === 0 && channel.messages === 0); part++) {
      const file = part === 0 ? `${base}.json` : `${base} [part ${part + 1}].json`;
      const fd = fs.openSync(path.join(dir, file), 'w');
      const out = new ChunkedWriter(fd);
      out.write(`${head},\n  "messages": [`);
      const inPart = Math.min(PARTITION_MESSAGES, channel.messages - written);
      for (let i = 0; i < inPart; i++, written++, global++) {
        ms += 1 + Math.floor(step * (0.5 + random()));
        const id = String(snowflake(ms));
        const author = authors[(drawAuthor() + authorShift) % AUTHORS];
        // The message holding UNIQUE_WORD is a plain one (words, no join line, not a file alone).
        const plain = global === uniqueAt;
        const join = !plain && chance(SHARE.join);
        const fileCount = Math.floor(((global + 1) * options.attachments) / options.messages) - Math.floor((global * options.attachments) / options.messages);
        const mentions: object[] = [];
        let content: string;
        if (join) content = 'Joined the server.';
        else if (!plain && fileCount > 0 && chance(SHARE.imageOnly)) content = '';
        else {
          const length = 10 + Math.floor(290 * random() ** 2.5);
          content = words(length);
          if (chance(SHARE.mention)) {
            const someone = authors[drawAuthor()];
            mentions.push(someone);
            content = chance(0.5) ? `<@${someone.id}> ${content}` : `${content} <@${someone.id}>`;
          }
          if (chance(SHARE.channelMention)) content += ` see <#${pick(channels).id}>`;
          if (global % COMMON_EVERY === 0) {
            content = `${COMMON_WORD} ${content}`;
            summary.commonCount++;
          }
          content = content.slice(0, 320);
          if (plain) content += ` ${UNIQUE_WORD}`;
        }
        const attachments = [];
        for (let f = 0; f < fileCount; f++) {
          const { entry, bytes } = attachmentOf(mediaDir, ms);
          attachments.push(entry);
          summary.attachments++;
          summary.attachmentBytes += bytes;
        }
        const reply = !join && recent.length > 0 && chance(SHARE.reply);
        const embeds: object[] = [];
        if (!join && chance(SHARE.embed)) {
          const url = `https://example.com/${pick(vocabulary)}/${global}`;
          content = `${content} ${url}`.trim();
          embeds.push({
            title: words(40),
            url,
            timestamp: null,
            description: words(120),
            color: '#3BA55D',
            thumbnail: null,
            images: [],
            fields: [],
            inlineEmojis: [],
          });
        }
        const reactions: object[] = [];
        if (!join && chance(SHARE.reaction)) {
          for (const name of new Set(Array.from({ length: 1 + Math.floor(random() * 3) }, () => pick(EMOJI)))) {
            const emoji = {
              id: '',
              name,
              code: name,
              isAnimated: false,
              imageUrl: `https://cdn.jsdelivr.net/gh/twitter/twemoji@latest/assets/svg/${name.codePointAt(0)!.toString(16)}.svg`,
            };
            if (chance(SHARE.reactionUsers)) {
              const users = [...new Set(Array.from({ length: 1 + Math.floor(random() * 3) }, () => authors[drawAuthor()]))];
              reactions.push({ emoji, count: users.length, users });
            } else reactions.push({ emoji, count: 1 + Math.floor(random() * 12) });
          }
        }
        const message = {
          id,
          type: join ? 'GuildMemberJoin' : reply ? 'Reply' : 'Default',
          timestamp: stamp(ms),
          timestampEdited: !join && chance(SHARE.edited) ? stamp(ms + 60_000 + Math.floor(random() * 600_000)) : null,
          callEndedTimestamp: null,
          isPinned: !join && chance(SHARE.pinned),
          content,
          author,
          attachments,
          embeds,
          stickers: [],
          reactions,
          mentions,
          ...(reply ? { reference: { messageId: pick(recent), channelId: channel.id, guildId: GUILD.id } } : {}),
          inlineEmojis: [],
        };
        out.write(`${i === 0 ? '' : ','}\n    ${JSON.stringify(message, null, 2).replace(/\n/g, '\n    ')}`);
        recent.push(id);
        if (recent.length > 200) recent.shift();
        summary.messages++;
      }
      out.write(`\n  ],\n  "messageCount": ${inPart}\n}\n`);
      out.flush();
      fs.closeSync(fd);
      summary.jsonFiles++;
      summary.jsonBytes += out.bytes;
      if (channel.messages === 0) break;
    }
  }
  summary.writeMs = performance.now() - started;
  return summary;
}

if (require.main === module) {
  const dir = process.argv[2];
  if (!dir) {
    console.error('usage: node dist-bench/bench/discord-synth.js <folder>   (IMPORT_MESSAGES, IMPORT_ATTACHMENTS)');
    process.exit(2);
  }
  const made = writeSyntheticExport(path.resolve(dir), {
    messages: Number(process.env.IMPORT_MESSAGES ?? 1_000_000),
    attachments: Number(process.env.IMPORT_ATTACHMENTS ?? 50_000),
  });
  console.log(JSON.stringify({ ...made, writeMs: Math.round(made.writeMs) }, null, 2));
}
