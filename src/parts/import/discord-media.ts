import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { type Clock, iso } from '../../core/clock';
import type { DB } from '../../core/db';
import { isEmoji } from '../../core/emoji';
import { HttpError } from '../../core/http/errors';
import { type ImageSpec, encodeImage } from '../../core/images';
import type { WorkQueue } from '../../core/work-queue';
import { POLL_ANSWERS, POLL_ANSWER_CHARS, POLL_QUESTION_CHARS } from '../../rules/sizes';
import { createAuditLog } from '../community/audit';
import { DEFAULT_EMOJI_SLOTS, EMOJI_SIZE, MAX_EMOJI_BYTES, MAX_EMOJI_UPLOAD_BYTES } from '../community/emojis';
import { MAX_STICKERS, MAX_STICKER_BYTES, STICKER_NAME_CHARS, STICKER_SIZE } from '../community/stickers';
import type { DiscordMessage } from './discord-format';
import { type ExportFiles, ImportError, assetPath } from './export-files';

/**
 * The custom emoji and stickers of a DiscordChatExporter export (issue 50). The dry run tallies
 * them (how often each is used, where its image is); the import brings those whose image the
 * export holds (`--media`) into the server's own emoji and stickers, through the same checks as an
 * upload (src/core/images.ts: the four formats, the pixel budget, the drawn size), the most used
 * first while the slots last. What does not come across stays text, and the reports say which.
 */

/** Distinct custom emoji and stickers one export's tally holds: past these, the rest stay text (a hostile export cannot grow it). */
export const MAX_TALLIED_EMOJI = 5_000;
export const MAX_TALLIED_STICKERS = 1_000;
/** Names listed in one line of a report; the rest counted. */
const NAMES_LISTED = 40;

/** A custom emoji in a message's text, as Discord writes it: `<:name:id>`, `<a:name:id>` animated. */
export const CUSTOM_EMOJI = /<(a?):([A-Za-z0-9_]{1,32}):([0-9]{1,20})>/g;

export interface TalliedImage {
  id: string;
  name: string;
  /** Uses: in messages' text, as reactions (each person counted), on messages (stickers). */
  uses: number;
  /** Its image: a file of the export (a path relative to the export's root), or null. */
  image: string | null;
  /** Why its image cannot be used, when the export names one that is refused before decoding. */
  refused: string | null;
}
export interface TalliedEmoji extends TalliedImage {
  animated: boolean;
}
export interface TalliedSticker extends TalliedImage {
  format: string;
}

export interface MediaTally {
  emoji: Map<string, TalliedEmoji>;
  stickers: Map<string, TalliedSticker>;
  /** Polls that cannot be a poll here (brought as text): their questions. */
  textPolls: string[];
  polls: number;
  /** Some emoji or stickers past MAX_TALLIED_*: not tallied (they stay text). */
  overflow: boolean;
}

export const newTally = (): MediaTally => ({ emoji: new Map(), stickers: new Map(), textPolls: [], polls: 0, overflow: false });

/** Where an image of the export is: a file within `maxBytes`, a refusal, or nothing (a CDN link, which is never fetched, or a file not there). */
function imageOf(files: ExportFiles, jsonFile: string, url: string | null | undefined, maxBytes: number): { file: string } | { refused: string } | null {
  if (!url) return null;
  let where: ReturnType<typeof assetPath>;
  try {
    where = assetPath(jsonFile, url);
  } catch (err) {
    if (err instanceof ImportError) return { refused: 'its image path leaves the export' };
    throw err;
  }
  if (!('file' in where)) return null;
  const size = files.size(where.file);
  if (size === undefined) return null;
  if (size > maxBytes) return { refused: `its image is ${size} bytes, more than ${maxBytes}` };
  return { file: where.file };
}

function noteImage(entry: TalliedImage, found: ReturnType<typeof imageOf>): void {
  if (entry.image !== null || found === null) return;
  if ('file' in found) {
    entry.image = found.file;
    entry.refused = null;
  } else entry.refused ??= found.refused;
}

/** Counts one message's custom emoji (text, inline list, reactions), stickers and poll. */
export function tallyMessage(files: ExportFiles, jsonFile: string, m: DiscordMessage, tally: MediaTally): void {
  const emoji = (id: string, name: string, animated: boolean, uses: number, url?: string | null) => {
    let entry = tally.emoji.get(id);
    if (!entry) {
      if (tally.emoji.size >= MAX_TALLIED_EMOJI) {
        tally.overflow = true;
        return;
      }
      entry = { id, name, animated, uses: 0, image: null, refused: null };
      tally.emoji.set(id, entry);
    }
    entry.uses += uses;
    if (entry.image === null) noteImage(entry, imageOf(files, jsonFile, url, MAX_EMOJI_UPLOAD_BYTES));
  };
  for (const [, a, name, id] of m.content.matchAll(CUSTOM_EMOJI)) emoji(id, name, a === 'a', 1);
  for (const e of m.inlineEmojis ?? []) if (e.id && /^[0-9]{1,20}$/.test(e.id)) emoji(e.id, e.name, e.isAnimated === true, 0, e.imageUrl);
  for (const r of m.reactions ?? []) {
    const e = r.emoji;
    if (e.id && /^[0-9]{1,20}$/.test(e.id)) emoji(e.id, e.name, e.isAnimated === true, Math.min(r.count, 1_000_000), e.imageUrl);
  }
  for (const s of m.stickers ?? []) {
    let entry = tally.stickers.get(s.id);
    if (!entry) {
      if (tally.stickers.size >= MAX_TALLIED_STICKERS) {
        tally.overflow = true;
        continue;
      }
      entry = { id: s.id, name: s.name, format: s.format ?? '', uses: 0, image: null, refused: null };
      tally.stickers.set(s.id, entry);
    }
    entry.uses++;
    if (entry.image === null && !isLottie(entry)) noteImage(entry, imageOf(files, jsonFile, s.sourceUrl, MAX_STICKER_BYTES));
  }
  if (m.poll) {
    tally.polls++;
    if (typeof pollShape(m.poll) === 'string' && tally.textPolls.length < NAMES_LISTED) tally.textPolls.push((m.poll.question.text ?? '').slice(0, 100));
  }
}

/** A Lottie sticker (an animation of vectors, JSON): drawn by nothing here. */
const isLottie = (s: { format: string; image?: string | null }) => s.format === 'Lottie' || /\.json$/i.test(s.image ?? '');

/** Most used first, then by name: who wins the slots. */
const mostUsed = (a: TalliedImage, b: TalliedImage) => b.uses - a.uses || a.name.localeCompare(b.name) || a.id.localeCompare(b.id);

/** `:a:, :b:, … and N more`. */
export function listed(names: string[]): string {
  const shown = names.slice(0, NAMES_LISTED).join(', ');
  return names.length > NAMES_LISTED ? `${shown} and ${names.length - NAMES_LISTED} more` : shown;
}

export interface MediaSlots {
  emoji: { static: number; animated: number };
  stickers: number;
}
export const DEFAULT_MEDIA_SLOTS: MediaSlots = { emoji: DEFAULT_EMOJI_SLOTS, stickers: MAX_STICKERS };

/**
 * The dry run's lines about emoji, stickers and polls (what will not come across), for a new
 * server with `slots`: slots are given to the most used, by what the export says is animated.
 */
export function mediaNotes(tally: MediaTally, slots: MediaSlots = DEFAULT_MEDIA_SLOTS): string[] {
  const notes: string[] = [];
  const emoji = [...tally.emoji.values()].sort(mostUsed);
  const imageless = emoji.filter((e) => e.image === null && e.refused === null);
  if (imageless.length)
    notes.push(
      `custom emoji whose image the export does not hold (exported without --media; a CDN link is not fetched): stay :name: text: ${listed(imageless.map((e) => `:${e.name}:`))}`,
    );
  const refused = emoji.filter((e) => e.image === null && e.refused !== null);
  if (refused.length) notes.push(`custom emoji whose image cannot be used: stay :name: text: ${listed(refused.map((e) => `:${e.name}: (${e.refused})`))}`);
  const left = { ...slots.emoji };
  const past: string[] = [];
  for (const e of emoji.filter((x) => x.image !== null)) {
    const kind = e.animated ? 'animated' : 'static';
    if (left[kind] > 0) left[kind]--;
    else past.push(`:${e.name}:`);
  }
  if (past.length)
    notes.push(
      `custom emoji past the server's slots (${slots.emoji.static} static, ${slots.emoji.animated} animated; the most used are brought): stay :name: text: ${listed(past)}`,
    );
  const stickers = [...tally.stickers.values()].sort(mostUsed);
  const textStickers = stickers.filter((s) => s.image === null || isLottie(s));
  if (textStickers.length)
    notes.push(
      `stickers whose image the export does not hold, or Lottie ones (not drawn here): a line naming them in their message: ${listed(textStickers.map((s) => s.name))}`,
    );
  const pastStickers = stickers.filter((s) => s.image !== null && !isLottie(s)).slice(slots.stickers);
  if (pastStickers.length)
    notes.push(
      `stickers past the server's ${slots.stickers} slots (the most used are brought): a line naming them in their message: ${listed(pastStickers.map((s) => s.name))}`,
    );
  if (tally.textPolls.length)
    notes.push(`polls that are not polls here (2 to 10 answers with text): brought as text: ${listed(tally.textPolls.map((q) => `“${q}”`))}`);
  if (tally.overflow) notes.push(`custom emoji past ${MAX_TALLIED_EMOJI} different ones, stickers past ${MAX_TALLIED_STICKERS}: stay text`);
  return notes;
}

/** What an import brought: each Discord emoji and sticker's own here (by Discord id), and the report's lines. */
export interface BroughtMedia {
  emoji: Map<string, { id: string; name: string; animated: boolean }>;
  stickers: Map<string, { id: string; name: string }>;
  /** Counts for the result. */
  counts: { emoji: number; stickers: number };
  report: string[];
}

/** An emoji name of 2 to 32 of [A-Za-z0-9_] made of a Discord name, free in the server (`name_2`, `name_3`...). */
export function emojiName(name: string, taken: (name: string) => boolean): string {
  let base = name.replace(/[^A-Za-z0-9_]+/g, '_').slice(0, 32);
  if (base.replace(/_/g, '') === '') base = 'emoji';
  if (base.length < 2) base = `${base}_`;
  if (!taken(base)) return base;
  for (let n = 2; ; n++) {
    const suffix = `_${n}`;
    const candidate = `${base.slice(0, 32 - suffix.length)}${suffix}`;
    if (!taken(candidate)) return candidate;
  }
}

/** A sticker name of 2 to 30 characters, without control characters. */
function stickerName(name: string): string {
  const clean = [...name.replace(/\p{Cc}+/gu, ' ').trim()].slice(0, STICKER_NAME_CHARS.max).join('');
  return [...clean].length >= STICKER_NAME_CHARS.min ? clean : `${clean || 'sticker'}_`.padEnd(STICKER_NAME_CHARS.min, '_');
}

const EMOJI_IMAGE: ImageSpec = { what: 'the emoji', size: EMOJI_SIZE, fit: 'contain', keepAnimation: true, maxOutputBytes: MAX_EMOJI_BYTES };
const STICKER_IMAGE: ImageSpec = { what: 'the sticker', size: STICKER_SIZE, fit: 'contain', keepAnimation: true, maxOutputBytes: MAX_STICKER_BYTES };
/** The Unicode emoji an imported sticker stands for (DiscordChatExporter does not write a sticker's tags). */
export const IMPORTED_STICKER_TAGS = '🖼️';

/**
 * Brings the tallied emoji and stickers whose image the export holds into the server: the most
 * used first while the slots last, each image decoded one at a time through `decoders` (the
 * bounded pool of src/core/images.ts) with the checks of an upload; written as an upload is (the
 * file whole at DATA_DIR/emojis/<id>.webp before the row that names it), audited as the owner's.
 * Those an earlier import into this server brought are used again, never made twice. A refused
 * image is named in the report, never a failed import.
 */
export async function bringMedia(opts: {
  db: DB;
  clock: Clock;
  dataDir: string;
  files: ExportFiles;
  tally: MediaTally;
  serverId: string;
  ownerId: string;
  slots: MediaSlots;
  decoders: WorkQueue;
}): Promise<BroughtMedia> {
  const { db, clock, dataDir, files, tally, serverId, ownerId, slots, decoders } = opts;
  const audit = createAuditLog(db, clock);
  const q = {
    knownEmoji: db.prepare<[string], { discord_id: string; id: string; name: string; animated: number; deleted_at: string | null }>(
      `SELECT i.discord_id, e.id, e.name, e.animated, e.deleted_at FROM imported_emoji i JOIN emojis e ON e.id = i.emoji WHERE i.server_id = ?`,
    ),
    emojiCount: db.prepare<[string, number], number>('SELECT COUNT(*) FROM emojis WHERE server_id = ? AND animated = ? AND deleted_at IS NULL').pluck(),
    emojiNamed: db.prepare<[string, string], number>('SELECT 1 FROM emojis WHERE server_id = ? AND name = ? AND deleted_at IS NULL').pluck(),
    insertEmoji: db.prepare('INSERT INTO emojis (id, server_id, name, animated, creator_id, created_at) VALUES (?, ?, ?, ?, ?, ?)'),
    mapEmoji: db.prepare('INSERT OR REPLACE INTO imported_emoji (server_id, emoji, discord_id, discord_name, animated) VALUES (?, ?, ?, ?, ?)'),
    knownStickers: db.prepare<[string], { discord_id: string; id: string; name: string; deleted_at: string | null }>(
      `SELECT i.discord_id, s.id, s.name, s.deleted_at FROM imported_stickers i JOIN stickers s ON s.id = i.sticker_id WHERE i.server_id = ?`,
    ),
    stickerCount: db.prepare<[string], number>('SELECT COUNT(*) FROM stickers WHERE server_id = ? AND deleted_at IS NULL').pluck(),
    insertSticker: db.prepare(
      'INSERT INTO stickers (id, server_id, name, description, tags, animated, creator_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    ),
    mapSticker: db.prepare('INSERT OR REPLACE INTO imported_stickers (server_id, discord_id, sticker_id) VALUES (?, ?, ?)'),
  };
  const brought: BroughtMedia = { emoji: new Map(), stickers: new Map(), counts: { emoji: 0, stickers: 0 }, report: [] };

  /** The image decoded into DIR/<id>.webp (whole before any row names it); its animation, or why it was refused. */
  async function decode(image: string, dir: string, id: string, spec: ImageSpec): Promise<{ animated: boolean } | { refused: string }> {
    fs.mkdirSync(dir, { recursive: true });
    const final = path.join(dir, `${id}.webp`);
    const source = `${final}.import`;
    const encoded = `${final}.part`;
    try {
      await fs.promises.writeFile(source, await files.read(image));
      const { animated } = await decoders.run(() => encodeImage(source, encoded, spec));
      await fs.promises.rename(encoded, final);
      return { animated };
    } catch (err) {
      // A refused image, or one the export cannot give after all (a damaged entry): a line of the report, never a failed import.
      if (!(err instanceof HttpError || err instanceof ImportError)) throw err;
      return { refused: err.message };
    } finally {
      for (const file of [source, encoded]) await fs.promises.rm(file, { force: true });
    }
  }

  // Emoji: those brought before, then the most used with an image while the slots last.
  /** Brought by an earlier import and deleted here since: the owner's choice stands (they stay text). */
  const deletedHere = new Map<string, string>();
  for (const row of q.knownEmoji.all(serverId)) {
    if (row.deleted_at === null) brought.emoji.set(row.discord_id, { id: row.id, name: row.name, animated: row.animated === 1 });
    else if (tally.emoji.has(row.discord_id)) deletedHere.set(row.discord_id, `:${row.name}:`);
  }
  const noSlot: string[] = [];
  const refused: string[] = [];
  const emojiDir = path.join(dataDir, 'emojis');
  for (const e of [...tally.emoji.values()].sort(mostUsed)) {
    if (brought.emoji.has(e.id) || deletedHere.has(e.id)) continue;
    if (e.refused !== null && e.image === null) {
      refused.push(`:${e.name}: (${e.refused})`);
      continue;
    }
    if (e.image === null) continue;
    const free = { static: slots.emoji.static - q.emojiCount.get(serverId, 0)!, animated: slots.emoji.animated - q.emojiCount.get(serverId, 1)! };
    if (free.static <= 0 && free.animated <= 0) {
      noSlot.push(`:${e.name}:`);
      continue;
    }
    const id = crypto.randomUUID();
    const made = await decode(e.image, emojiDir, id, EMOJI_IMAGE);
    if ('refused' in made) {
      refused.push(`:${e.name}: (${made.refused})`);
      continue;
    }
    if (free[made.animated ? 'animated' : 'static'] <= 0) {
      fs.rmSync(path.join(emojiDir, `${id}.webp`), { force: true });
      noSlot.push(`:${e.name}:`);
      continue;
    }
    const name = emojiName(e.name, (n) => q.emojiNamed.get(serverId, n) !== undefined);
    db.transaction(() => {
      q.insertEmoji.run(id, serverId, name, made.animated ? 1 : 0, ownerId, iso(clock.now()));
      q.mapEmoji.run(serverId, id, e.id, e.name, made.animated ? 1 : 0);
      audit.write({
        serverId,
        action: 'emoji_create',
        actorId: ownerId,
        targetId: id,
        targetKind: 'emoji',
        reason: 'imported from Discord',
        changes: { name, animated: made.animated },
      });
    })();
    brought.emoji.set(e.id, { id, name, animated: made.animated });
    brought.counts.emoji++;
  }
  if (brought.counts.emoji) brought.report.push(`${brought.counts.emoji} custom emoji brought into the server's emoji (the most used first)`);
  if (noSlot.length)
    brought.report.push(
      `custom emoji past the server's slots (${slots.emoji.static} static, ${slots.emoji.animated} animated): stay :name: text: ${listed(noSlot)}`,
    );
  if (refused.length) brought.report.push(`custom emoji whose image was refused: stay :name: text: ${listed(refused)}`);
  if (deletedHere.size)
    brought.report.push(`custom emoji an earlier import brought and that were deleted since: stay :name: text: ${listed([...deletedHere.values()])}`);
  const imageless = [...tally.emoji.values()]
    .filter((e) => e.image === null && e.refused === null && !brought.emoji.has(e.id) && !deletedHere.has(e.id))
    .sort(mostUsed);
  if (imageless.length)
    brought.report.push(`custom emoji whose image the export does not hold: stay :name: text: ${listed(imageless.map((e) => `:${e.name}:`))}`);

  // Stickers, the same way: one kind of slot.
  for (const row of q.knownStickers.all(serverId)) if (row.deleted_at === null) brought.stickers.set(row.discord_id, { id: row.id, name: row.name });
  const stickerText: string[] = [];
  const stickerDir = path.join(dataDir, 'stickers');
  for (const s of [...tally.stickers.values()].sort(mostUsed)) {
    if (brought.stickers.has(s.id)) continue;
    if (s.image === null || isLottie(s)) {
      stickerText.push(`${s.name} (${isLottie(s) ? 'Lottie' : s.refused ? s.refused : 'no image in the export'})`);
      continue;
    }
    if (q.stickerCount.get(serverId)! >= slots.stickers) {
      stickerText.push(`${s.name} (no slot left of ${slots.stickers})`);
      continue;
    }
    const id = crypto.randomUUID();
    const made = await decode(s.image, stickerDir, id, STICKER_IMAGE);
    if ('refused' in made) {
      stickerText.push(`${s.name} (${made.refused})`);
      continue;
    }
    const name = stickerName(s.name);
    db.transaction(() => {
      q.insertSticker.run(id, serverId, name, '', IMPORTED_STICKER_TAGS, made.animated ? 1 : 0, ownerId, iso(clock.now()));
      q.mapSticker.run(serverId, s.id, id);
      audit.write({
        serverId,
        action: 'sticker_create',
        actorId: ownerId,
        targetId: id,
        targetKind: 'sticker',
        reason: 'imported from Discord',
        changes: { name },
      });
    })();
    brought.stickers.set(s.id, { id, name });
    brought.counts.stickers++;
  }
  if (brought.counts.stickers) brought.report.push(`${brought.counts.stickers} stickers brought into the server's stickers (the most used first)`);
  if (stickerText.length) brought.report.push(`stickers brought as a line naming them in their message: ${listed(stickerText)}`);
  if (tally.textPolls.length) brought.report.push(`polls brought as text (not a poll here): ${listed(tally.textPolls.map((q) => `“${q}”`))}`);
  return brought;
}

/** A Discord poll as a poll here, or why it cannot be one (it is then brought as text). */
export function pollShape(
  poll: NonNullable<DiscordMessage['poll']>,
): { question: string; answers: { discordId: number; text: string; emoji: string | null }[]; allowMultiselect: boolean } | string {
  const oneLine = (text: string | null | undefined) => (text ?? '').replace(/\p{Cc}+/gu, ' ').trim();
  const question = oneLine(poll.question.text);
  if (question === '' || [...question].length > POLL_QUESTION_CHARS) return `its question is empty or longer than ${POLL_QUESTION_CHARS}`;
  if (poll.answers.length < POLL_ANSWERS.min || poll.answers.length > POLL_ANSWERS.max) return `${poll.answers.length} answers`;
  const answers: { discordId: number; text: string; emoji: string | null }[] = [];
  for (const a of poll.answers) {
    const name = a.poll_media.emoji?.name ?? null;
    // A Unicode emoji stays with its answer; a custom one's name joins the text.
    const unicode = name !== null && !a.poll_media.emoji?.id && isEmoji(name) ? name : null;
    const text = oneLine(a.poll_media.text) || (name && !unicode ? `:${name}:` : (unicode ?? ''));
    if (text === '' || [...text].length > POLL_ANSWER_CHARS) return `an answer is empty or longer than ${POLL_ANSWER_CHARS}`;
    answers.push({ discordId: a.answer_id, text, emoji: unicode });
  }
  return { question, answers, allowMultiselect: poll.allow_multiselect === true };
}
