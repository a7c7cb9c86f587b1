import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { type Clock, iso } from '../../core/clock';
import type { DB } from '../../core/db';
import { isEmoji } from '../../core/emoji';
import { MAX_CONTENT_CHARS } from '../../core/message-record';
import { SNIFF_BYTES, sniff } from '../../core/sniff';
import { MAX_DISPLAY_NAME_CHARS, MAX_MESSAGE_STICKERS, MAX_NAME_CHARS, MAX_TOPIC_CHARS } from '../../rules/sizes';
import { EVERYONE_DEFAULT, VIEW, flagsOf } from '../../rules/channel-permissions';
import { createAccountRows } from '../accounts/account-rows';
import { encodeAvatar } from '../accounts/avatars';
import { createChannelStore } from '../community/channels';
import { createOverwriteStore } from '../community/overwrites';
import { createThreadStore } from '../community/threads';
import { timeOrderedUuid } from '../messages/message-store';
import { createMessageWrites } from '../messages/message-writes';
import { MAX_ATTACHMENT_BYTES, cleanFileName } from '../messages/upload-store';
import { CHANNEL_KINDS, type DiscordEmbed, type DiscordMessage, type DiscordUser, MESSAGE_KINDS } from './discord-format';
import { type ChannelEntry, type ExportScan, type ImportPlan, heldAsset, isForward, readChannel, repliesTo } from './discord-plan';
import { type ExportFiles, ImportError } from './export-files';
import { type BroughtMedia, CUSTOM_EMOJI, DEFAULT_MEDIA_SLOTS, type MediaSlots, bringMedia, pollShape } from './discord-media';
import { createImageDecoders } from '../../core/images';
import type { WorkQueue } from '../../core/work-queue';

/**
 * The import of a DiscordChatExporter export into a server (docs/import.md): what the dry run
 * checked (src/parts/import/discord-plan.ts) is written, channel by channel, in batches of one
 * transaction each. Every write of an import is here, but the rows of users and channels, which
 * their owners write (src/parts/accounts/account-rows.ts, src/parts/community/channels.ts) on this
 * import's connection.
 *
 * - The first run makes a new server; a later run of an export of the same Discord server, by the
 *   owner of the server it went into, appends to it. What it appends of a person who claimed their
 *   history goes to a new placeholder of theirs, which they may claim again: an import never
 *   writes as a real account. What each Discord role, category and channel
 *   became is in `import_map`; each person's placeholder in `imported_people`; each message's
 *   Discord id in `imported_messages`.
 * - A channel's messages go in snowflake order, and its `import_map` row keeps the newest one
 *   brought, in the same transaction as the batch: a run that stops anywhere (kill -9 included)
 *   resumes after it, and a newer export appends only what is newer.
 * - A batch's files are written (as live uploads are: sniffed, under their attachment id) before
 *   the transaction naming them commits: a crash leaves at most a file no row names, which the
 *   server's start-up removes.
 */

/** Messages written per transaction: a few milliseconds each, so a server writing meanwhile waits little. */
export const BATCH_MESSAGES = 200;

/**
 * What everyone (the server's id as the overwrite's target) is denied on what an import makes. A
 * DiscordChatExporter export carries no permissions, so the import guesses nothing open: each new
 * category, and each new channel not under one, is seen by the owner and full server
 * administrators only, until the owner chooses what everyone may see (the import page, or server
 * settings → Permissions); an announcement channel is also read-only for everyone. Channels under
 * a category follow it. A later run adds nothing to what was already chosen.
 */
const HIDDEN = VIEW;
const READ_ONLY = flagsOf(['send_messages', 'send_messages_in_threads', 'create_public_threads', 'create_private_threads']);
/** The Discord channel type of an announcement channel. */
const ANNOUNCEMENTS = 'GuildNews';

/** The report's lines about who sees what an import made (the import page says the same). */
export const visibilityNote = (serverId: string): string[] => [
  'New channels and categories are visible to the owner and full administrators only (an export carries no permissions);',
  `announcement channels are read-only. Choose what everyone may see on one screen: /import?server=${serverId}`,
];

export interface ImportOptions {
  importId: string;
  ownerId: string;
  /** The new server's name (the Discord server's by default). */
  serverName?: string;
  /** System lines (joins, pins, thread creations): brought as lines in italics, or skipped. */
  system: 'lines' | 'skip';
  /** After the server and its channels committed, before the messages: the server's id. */
  onServer?(serverId: string, created: boolean): void;
  /** Asked between batches: true stops the import where it is (it resumes from there later). */
  stopped?(): boolean;
  /** The server's slots for custom emoji and stickers (the server's settings; Discord's boosted tiers by default). */
  slots?: MediaSlots;
  /** The bounded pool emoji and sticker images are decoded through (one of the import's own by default). */
  decoders?: WorkQueue;
}

export interface ImportResult {
  serverId: string;
  created: boolean;
  /** Messages written by this run. */
  messages: number;
  /** Messages already there from an earlier run (or older than the newest already brought). */
  skipped: number;
  /** Messages left out: empty ones, and system lines when skipped. */
  leftOut: number;
  /** Of the messages already there, those this export changed: edited since, pinned, unpinned, with other reaction counts. */
  refreshed: { edited: number; pinned: number; unpinned: number; reactions: number };
  attachments: number;
  placeholders: number;
  /** Custom emoji and stickers made of the export's images, and polls brought as polls (issue 50). */
  emoji: number;
  stickers: number;
  polls: number;
  /** What came across of emoji, stickers and polls, and what stayed text, in words. */
  report: string[];
  /** False when asked to stop before the end (a later run resumes). */
  complete: boolean;
}

/** A person's account here: the placeholder, or the account that claimed it. */
interface Person {
  userId: string;
  username: string;
}

/** A message's file, read from the export: what its attachment row will say. */
interface StoredFile {
  id: string;
  name: string;
  contentType: string;
  size: number;
  previewKind: string;
}

/** One import's rows (imports), made by whoever starts it: the CLI or the server's Imports. */
export function recordImport(
  db: DB,
  clock: Clock,
  row: {
    id: string;
    ownerId: string;
    plan: ImportPlan;
    serverName: string;
    upload: string | null;
    status: 'checked' | 'running';
    packageClaims: boolean;
    system?: 'lines' | 'skip';
  },
): void {
  db.prepare(
    `INSERT INTO imports (id, owner_id, guild_id, server_name, upload, status, plan, total, package_claims, system, created_at, runner_pid)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    row.id,
    row.ownerId,
    row.plan.guild.id,
    row.serverName,
    row.upload,
    row.status,
    JSON.stringify(row.plan),
    totalOf(row.plan),
    row.packageClaims ? 1 : 0,
    row.system ?? 'lines',
    iso(clock.now()),
    row.status === 'running' ? process.pid : null,
  );
}

/** When an imported thread is made: long ago, so that its own messages say how recent it is. */
const LONG_AGO = '2015-01-01T00:00:00.000Z';
const totalOf = (plan: ImportPlan) => plan.channels.filter((c) => c.becomes !== 'nothing').reduce((n, c) => n + c.messages, 0);

/** Whether a process of this machine is alive (the database is on this machine's disk). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * CLI imports whose process is gone (kill -9, a closed terminal) become `interrupted`: the same
 * command resumes them. The server does this at start, the CLI before it takes its lock.
 */
export function markInterrupted(db: DB): void {
  const stale = db
    .prepare<[], { id: string; runner_pid: number | null }>("SELECT id, runner_pid FROM imports WHERE status = 'running' AND upload IS NULL")
    .all();
  const interrupt = db.prepare(
    "UPDATE imports SET status = 'interrupted', runner_pid = NULL, error = 'interrupted: its process ended; run the same command again to resume' WHERE id = ? AND status = 'running'",
  );
  for (const row of stale) if (row.runner_pid === null || !processAlive(row.runner_pid)) interrupt.run(row.id);
}

/**
 * The lock of a CLI import (imports_one_running in schema.sql): one running import of a Discord
 * server into one owner's server at a time. Taken in one transaction (IMMEDIATE, as every one here:
 * src/core/db.ts), so of two runs at once one takes it and the other is refused with who holds it. An import of the same Discord server
 * and owner that was interrupted is resumed under its own record; otherwise a new record is made.
 */
export function takeCliImport(
  db: DB,
  clock: Clock,
  row: { ownerId: string; plan: ImportPlan; serverName: string; packageClaims: boolean; system: 'lines' | 'skip' },
): { importId: string; resumed: boolean } {
  return db.transaction(() => {
    markInterrupted(db);
    const holder = db
      .prepare<[string, string], { id: string; runner_pid: number | null; upload: string | null; created_at: string }>(
        "SELECT id, runner_pid, upload, created_at FROM imports WHERE guild_id = ? AND owner_id = ? AND status = 'running'",
      )
      .get(row.plan.guild.id, row.ownerId);
    if (holder) {
      const where = holder.upload ? 'in the server (from the browser)' : `from the command line (process ${holder.runner_pid})`;
      throw new ImportError(
        `an import of this Discord server into this owner's server is running ${where}, since ${holder.created_at} (import ${holder.id}); run this again once it has ended`,
      );
    }
    const interrupted = db
      .prepare<[string, string], string>(
        "SELECT id FROM imports WHERE guild_id = ? AND owner_id = ? AND status = 'interrupted' AND upload IS NULL ORDER BY created_at DESC LIMIT 1",
      )
      .pluck()
      .get(row.plan.guild.id, row.ownerId);
    if (interrupted) {
      db.prepare(
        "UPDATE imports SET status = 'running', runner_pid = ?, error = NULL, finished_at = NULL, plan = ?, total = ?, server_name = ?, package_claims = ?, system = ? WHERE id = ?",
      ).run(process.pid, JSON.stringify(row.plan), totalOf(row.plan), row.serverName, row.packageClaims ? 1 : 0, row.system, interrupted);
      return { importId: interrupted, resumed: true };
    }
    const importId = crypto.randomUUID();
    recordImport(db, clock, {
      id: importId,
      ownerId: row.ownerId,
      plan: row.plan,
      serverName: row.serverName,
      upload: null,
      status: 'running',
      packageClaims: row.packageClaims,
      system: row.system,
    });
    return { importId, resumed: false };
  })();
}

/** What a run brought, as the CLI prints it. */
export function formatResult(r: ImportResult, owner: string): string {
  return [
    `${r.created ? 'Imported into a new server' : 'Appended to the server'} ${r.serverId} (owned by ${owner}):`,
    `  ${r.messages} messages, ${r.attachments} files, ${r.placeholders} new placeholder accounts`,
    ...(r.skipped ? [`  ${r.skipped} messages were already there (an earlier run): not written again`] : []),
    ...(refreshedLine(r.refreshed) ? [`  of those, refreshed from this export: ${refreshedLine(r.refreshed)}`] : []),
    ...(r.leftOut ? [`  ${r.leftOut} messages left out (no text and no file, or system lines skipped)`] : []),
    ...r.report.map((line) => `  ${line}`),
    ...visibilityNote(r.serverId),
    'Placeholders and their claim codes: server settings > Imported people.',
  ].join('\n');
}

/** What a re-import changed of the messages already there, in words; '' when nothing. */
function refreshedLine(r: ImportResult['refreshed']): string {
  const parts = [
    r.edited && `${r.edited} edited`,
    r.pinned && `${r.pinned} pinned`,
    r.unpinned && `${r.unpinned} unpinned`,
    r.reactions && `${r.reactions} with new reaction counts`,
  ];
  return parts.filter(Boolean).join(', ');
}

/** Marks an import running (by this process), done or failed (with the reason). */
export function setImportStatus(db: DB, clock: Clock, importId: string, status: 'running' | 'done' | 'failed', error: string | null = null): void {
  db.prepare('UPDATE imports SET status = ?, error = ?, finished_at = ?, runner_pid = ? WHERE id = ?').run(
    status,
    error,
    status === 'running' ? null : iso(clock.now()),
    status === 'running' ? process.pid : null,
    importId,
  );
}

export async function importDiscord(
  db: DB,
  clock: Clock,
  dataDir: string,
  files: ExportFiles,
  scan: ExportScan,
  options: ImportOptions,
): Promise<ImportResult> {
  const w = statements(db);
  // The rows of users and channels, written by their owners on this connection.
  const accounts = createAccountRows({ db, clock });
  const channels = createChannelStore({ db, clock });
  const threads = createThreadStore({ db, clock });
  const overwrites = createOverwriteStore(db);
  const now = () => iso(clock.now());
  const guildId = scan.plan.guild.id;
  const uploads = path.join(dataDir, 'uploads');
  fs.mkdirSync(uploads, { recursive: true });

  // 1. The server, its categories, roles, channels and people: one transaction.
  const existing = w.serverOfGuild.get(guildId, options.ownerId);
  const serverId = existing?.server_id ?? crypto.randomUUID();
  const channelOf = new Map<string, { id: string; name: string }>();
  const roleOf = new Map<string, { id: string; name: string }>();
  const people = new Map<string, Person>();
  /** People who claimed their placeholder here: a new one is made when a message of this run needs it. */
  const claimed = new Map<string, { user: DiscordUser; avatar: string | null }>();
  const newAvatars: { userId: string; file: string }[] = [];
  let placeholders = 0;
  /** A person's placeholder: the one they have, or a new one (with their roles, a member). */
  const placeholder = (discordId: string, user: DiscordUser, avatar: string | null, known?: Person): Person => {
    let person = known;
    if (!person) {
      const username = placeholderName(user.name, (n) => !!w.userNamed.get(n));
      const userId = accounts.createAccount({ kind: 'placeholder', username, displayName: (user.nickname || user.name).slice(0, MAX_DISPLAY_NAME_CHARS) });
      w.insertPerson.run(userId, serverId, discordId, user.name, user.discriminator ?? null, claimCode());
      w.insertMember.run(serverId, userId, now());
      placeholders++;
      if (avatar) newAvatars.push({ userId, file: avatar });
      person = { userId, username };
    }
    people.set(discordId, person);
    // Roles go to whoever holds the history now, if they are a member.
    for (const role of user.roles ?? []) {
      const local = roleOf.get(role.id);
      if (local) w.insertMemberRole.run(local.id, serverId, person.userId);
    }
    return person;
  };
  const personOf = (discordId: string): Person | undefined => {
    const known = people.get(discordId);
    if (known) return known;
    const waiting = claimed.get(discordId);
    if (!waiting) return undefined;
    claimed.delete(discordId);
    return db.transaction(() => placeholder(discordId, waiting.user, waiting.avatar))();
  };
  const kept = scan.channels.filter((e) => CHANNEL_KINDS[e.channel.type] && CHANNEL_KINDS[e.channel.type] !== 'category');
  // A thread's parent first: it is named after it and goes under its category.
  const ordered = [...kept.filter((e) => CHANNEL_KINDS[e.channel.type] !== 'thread'), ...kept.filter((e) => CHANNEL_KINDS[e.channel.type] === 'thread')];
  // What the dry run said each becomes: a thread or a post under its parent when the export holds it.
  const becomes = new Map(scan.plan.channels.map((c) => [c.id, c.becomes]));
  db.transaction(() => {
    if (!existing) {
      w.insertServer.run(serverId, (options.serverName ?? scan.plan.guild.name).slice(0, MAX_NAME_CHARS) || 'Imported server', options.ownerId, now());
      w.insertMember.run(serverId, options.ownerId, now());
    }
    w.setImportServer.run(serverId, options.importId);
    const categoryOf = new Map<string, string>();
    for (const { channel } of ordered) {
      if (CHANNEL_KINDS[channel.type] === 'thread' || !channel.categoryId || !channel.category) continue;
      categoryOf.set(
        channel.categoryId,
        mapped(w, serverId, 'category', channel.categoryId, () => {
          const id = crypto.randomUUID();
          w.insertCategory.run(id, serverId, channel.category!.slice(0, MAX_NAME_CHARS), serverId, now());
          overwrites.put({ categoryId: id }, serverId, serverId, 'everyone', 0, HIDDEN);
          return id;
        }),
      );
    }
    // Discord lists roles from the highest position down; here position 0 is listed first.
    const roles = [...scan.roles.values()].sort((a, b) => (b.position ?? 0) - (a.position ?? 0));
    for (const role of roles) {
      const id = mapped(w, serverId, 'role', role.id, () => {
        const roleId = crypto.randomUUID();
        w.insertRole.run(
          roleId,
          serverId,
          freeName(role.name.slice(0, MAX_NAME_CHARS) || 'role', (n) => !!w.roleNamed.get(serverId, n)),
          now(),
          colorOf(role.color),
          serverId,
        );
        return roleId;
      });
      roleOf.set(role.id, { id, name: w.roleName.get(id)! });
    }
    for (const entry of ordered) {
      const { channel } = entry;
      const thread = CHANNEL_KINDS[channel.type] === 'thread';
      const parent = thread && channel.categoryId ? channelOf.get(channel.categoryId) : undefined;
      const made = becomes.get(channel.id);
      const id = mapped(w, serverId, 'channel', channel.id, () => {
        // A thread, or a forum's post, under its parent. Made as long ago: once its messages are
        // in, it is archived if its last one is older than its auto-archive time (settle, below).
        // DiscordChatExporter writes no owner, tags or archive state: the importer owns it.
        if ((made === 'thread' || made === 'post') && parent) {
          const name = channel.name.slice(0, MAX_NAME_CHARS).trim() || 'thread';
          return threads.add(serverId, parent.id, { name, ownerId: options.ownerId, private: channel.type === 'GuildPrivateThread' }, LONG_AGO);
        }
        const wanted = thread ? `${parent?.name ?? channel.category ?? 'thread'} › ${channel.name}` : channel.name;
        const name = freeName(wanted.slice(0, MAX_NAME_CHARS) || 'channel', (n) => !!w.channelNamed.get(serverId, n));
        const voice = CHANNEL_KINDS[channel.type] === 'voice';
        const topic = [voice ? `Text chat of the voice channel ${channel.name}` : '', channel.topic ?? '']
          .filter(Boolean)
          .join(' · ')
          .slice(0, MAX_TOPIC_CHARS);
        const category = thread
          ? parent
            ? (w.categoryOfChannel.get(parent.id) ?? null)
            : null
          : channel.categoryId
            ? (categoryOf.get(channel.categoryId) ?? null)
            : null;
        const added = channels.add(serverId, { name, topic, categoryId: category, type: made === 'forum' ? 'forum' : 'text' });
        // Under a category it follows the category's (hidden); an announcement channel, or one
        // under none, gets its own, as the overwrite routes write them (detached first).
        const announcements = channel.type === ANNOUNCEMENTS;
        if (category === null || announcements) {
          overwrites.detach(added);
          overwrites.put({ channelId: added }, serverId, serverId, 'everyone', 0, HIDDEN | (announcements ? READ_ONLY : 0));
        }
        return added;
      });
      channelOf.set(channel.id, { id, name: w.channelName.get(id)! });
    }
    for (const [discordId, { user, avatar }] of scan.people) {
      // What an import brings of someone who claimed goes to a new placeholder, never to the
      // claimer's account (an owner must not post as them), made once a message needs it; one
      // who hid stays nameless.
      const current = w.personOf.get(serverId, discordId);
      if (current && current.claimed_at !== null && current.hidden_at === null) {
        claimed.set(discordId, { user, avatar });
        continue;
      }
      placeholder(discordId, user, avatar, current ? { userId: current.userId, username: current.username } : undefined);
    }
  })();
  options.onServer?.(serverId, !existing);

  // 2. The placeholders' avatars, through the same decoding as an uploaded one.
  const avatarsMade = async () => {
    for (const { userId, file } of newAvatars.splice(0)) {
      const temp = path.join(dataDir, 'avatars', `${userId}.import.part`);
      fs.mkdirSync(path.dirname(temp), { recursive: true });
      try {
        await fs.promises.writeFile(temp, await files.read(file));
        await encodeAvatar(temp, path.join(dataDir, 'avatars', `${userId}.webp`));
        accounts.avatarStored(userId);
      } catch {
        // Not an image that can be read: the placeholder goes without.
      } finally {
        fs.rmSync(temp, { force: true });
      }
    }
  };
  await avatarsMade();

  // 2b. Custom emoji and stickers whose image the export holds: the server's own (discord-media.ts).
  const media = await bringMedia({
    db,
    clock,
    dataDir,
    files,
    tally: scan.media,
    serverId,
    ownerId: options.ownerId,
    slots: options.slots ?? DEFAULT_MEDIA_SLOTS,
    decoders: options.decoders ?? createImageDecoders(),
  });

  // 3. The messages, channel by channel, in batches.
  const result: ImportResult = {
    serverId,
    created: !existing,
    messages: 0,
    skipped: 0,
    leftOut: 0,
    refreshed: { edited: 0, pinned: 0, unpinned: 0, reactions: 0 },
    attachments: 0,
    placeholders,
    emoji: media.counts.emoji,
    stickers: media.counts.stickers,
    polls: 0,
    report: media.report,
    complete: false,
  };
  const context: Context = { person: personOf, roleOf, channelOf, system: options.system, media, importedAt: now() };
  // A refresh of messages already brought makes nobody: a person who claimed (and so has no
  // placeholder here yet) gets no new one for it; their reactions count, unnamed.
  const refreshing: Context = { ...context, person: (discordId) => people.get(discordId) };
  let done = 0;
  for (const entry of ordered) {
    const local = channelOf.get(entry.channel.id)!;
    const last = w.lastOf.get(serverId, entry.channel.id) ?? null;
    const { messages, fileOf } = await readChannel(files, entry);
    const start = last === null ? 0 : messages.findIndex((m) => BigInt(m.id) > BigInt(last));
    const fresh = start === -1 ? [] : messages.slice(start);
    result.skipped += messages.length - fresh.length;
    done += messages.length - fresh.length;
    // A newer export of messages already brought: their later edits, pins and reactions apply.
    const earlier = messages.slice(0, start === -1 ? messages.length : start);
    for (let i = 0; i < earlier.length; i += BATCH_MESSAGES) {
      if (options.stopped?.()) return result;
      const batch = earlier.slice(i, i + BATCH_MESSAGES).flatMap((m) => prepareMessage(m, entry, refreshing) ?? []);
      refreshBatch(w, serverId, local.id, options, batch, result.refreshed, media);
      await new Promise((resolve) => setImmediate(resolve));
    }
    for (let i = 0; i < fresh.length; i += BATCH_MESSAGES) {
      if (options.stopped?.()) return result;
      const batch = fresh.slice(i, i + BATCH_MESSAGES);
      const prepared: Prepared[] = [];
      const written: string[] = [];
      try {
        for (const m of batch) {
          const p = prepareMessage(m, entry, context);
          if (p) {
            p.files = await storeFiles(files, uploads, fileOf.get(m.id)!, p, written);
            prepared.push(p);
          } else result.leftOut++;
        }
        done += batch.length;
        writeBatch(w, serverId, local.id, options, prepared, batch.at(-1)!.id, done);
      } catch (err) {
        for (const file of written) fs.rmSync(file, { force: true });
        throw err;
      }
      result.messages += prepared.length;
      result.attachments += prepared.reduce((n, p) => n + p.files.length, 0);
      result.polls += prepared.reduce((n, p) => n + (p.poll ? 1 : 0), 0);
      // Let the event loop breathe between batches (a server importing keeps serving).
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  // Threads: the message each started from (Discord gives a thread its starter message's id; a
  // forum post starts from its first message), and archived if it has been idle long enough.
  db.transaction(() => {
    for (const entry of ordered) {
      const local = channelOf.get(entry.channel.id)!;
      if (!threads.get(local.id)) continue;
      const starter =
        w.localMessage.get(serverId, entry.channel.id) ?? (becomes.get(entry.channel.id) === 'post' ? (w.firstMessageOf.get(local.id) ?? null) : null);
      threads.settle(local.id, starter, true);
    }
  })();

  // The avatars of placeholders made for messages of people who had claimed.
  await avatarsMade();
  result.placeholders = placeholders;

  // 4. Read state: imported history is old news, read by every member.
  if (result.polls) result.report.push(`${result.polls} polls brought as polls, ended, with their final counts`);
  db.transaction(() => {
    w.membersReadAll.run(serverId);
    w.readStatesReadAll.run(serverId);
    w.setReport.run(JSON.stringify(result.report), options.importId);
  })();
  result.complete = true;
  return result;
}

/** What a message becomes, before its files are stored. */
interface Prepared {
  discordId: string;
  authorId: string;
  content: string;
  createdAt: string;
  editedAt: string | null;
  replyTo: string | null;
  pinned: boolean;
  mentions: string[];
  everyone: boolean;
  mentionRoles: string[];
  /** `legacy`: the key an import that had no image of a custom emoji stored its reactions under (`:name:`). */
  reactions: { emoji: string; users: string[]; extra: number; custom?: { id: string; name: string; animated: boolean }; legacy?: string }[];
  /** Its Discord type when it is not Default or Reply (a system line), kept for the way out. */
  discordType: string | null;
  /** Files of the export to bring: path in the export and file name. */
  assets: { file: string; name: string }[];
  files: StoredFile[];
  /** The server's stickers it carries (those brought). */
  stickerIds: string[];
  /** Its poll, ended, with its final counts. */
  poll: { question: string; answers: string; allowMultiselect: boolean; expiresAt: string; ended: { at: string; results: string } } | null;
}

interface Context {
  /** A Discord person's account here (undefined: the export does not name them). */
  person(discordId: string): Person | undefined;
  roleOf: Map<string, { id: string; name: string }>;
  channelOf: Map<string, { id: string; name: string }>;
  system: 'lines' | 'skip';
  /** The emoji and stickers brought, by Discord id. */
  media: BroughtMedia;
  /** When the import runs: an imported poll ended then at the latest. */
  importedAt: string;
}

/** A message as it will be written, or null when it is left out (empty, or a system line skipped). */
function prepareMessage(m: DiscordMessage, entry: ChannelEntry, ctx: Context): Prepared | null {
  const kind = MESSAGE_KINDS[m.type];
  if (kind === 'system' && ctx.system === 'skip') return null;
  // Undefined only when refreshing a message already brought, whose author stays as it is.
  const author = ctx.person(m.author.id);
  const mentioned = new Set<string>();
  const roles = new Set<string>();
  // --markdown false keeps raw ids; they become names here (rendered exports already have names).
  let content = m.content
    .replace(/<@!?([0-9]{1,20})>/g, (_, id: string) => {
      const person = ctx.person(id);
      if (!person) return '@unknown-user';
      mentioned.add(person.userId);
      return `@${person.username}`;
    })
    .replace(/<@&([0-9]{1,20})>/g, (_, id: string) => {
      const role = ctx.roleOf.get(id);
      if (!role) return '@deleted-role';
      roles.add(role.id);
      return `@${role.name}`;
    })
    .replace(/<#([0-9]{1,20})>/g, (_, id: string) => `#${ctx.channelOf.get(id)?.name ?? 'deleted-channel'}`);
  content = relinked(content, ctx.media);
  for (const u of m.mentions ?? []) {
    const person = ctx.person(u.id);
    if (person) mentioned.add(person.userId);
  }
  if (kind === 'system') content = `*${content.trim() || m.type}*`;
  // A forward (or a reply across channels) names a message that is not in this channel: a quote
  // with a link to the original keeps what it pointed at, where a reply could not.
  if (isForward(m, entry.channel.id)) {
    const ref = m.reference!;
    const quote = `> ↪ forwarded: https://discord.com/channels/${ref.guildId ?? '@me'}/${ref.channelId}/${ref.messageId}`;
    content = content.trim() === '' ? quote : `${quote}\n${content}`;
  }
  const notes: string[] = [];
  for (const e of m.embeds ?? []) notes.push(...embedLines(e));
  const assets: Prepared['assets'] = [];
  for (const a of m.attachments ?? []) assets.push({ file: a.url, name: a.fileName });
  // Stickers brought are the server's (3 a message at most); any other is a line naming it.
  const stickerIds: string[] = [];
  for (const s of m.stickers ?? []) {
    const ours = ctx.media.stickers.get(s.id);
    if (ours && stickerIds.length < MAX_MESSAGE_STICKERS && !stickerIds.includes(ours.id)) stickerIds.push(ours.id);
    else notes.push(`*[sticker: ${s.name}]*`);
  }
  const poll = m.poll ? pollOf(m, ctx.importedAt) : null;
  if (m.poll && !poll) notes.push(...pollText(m.poll));
  if (notes.length) content = [content, ...notes].filter((line) => line.trim() !== '').join('\n');
  if (content.length > MAX_CONTENT_CHARS) content = `${content.slice(0, MAX_CONTENT_CHARS - 1)}…`;
  if (content.trim() === '' && assets.length === 0 && stickerIds.length === 0 && poll === null) return null;
  const reactions: Prepared['reactions'] = [];
  for (const r of m.reactions ?? []) {
    // A custom emoji brought: a reaction with the server's own (stored under its id).
    const ours = r.emoji.id ? ctx.media.emoji.get(r.emoji.id) : undefined;
    if (ours) {
      if (reactions.some((x) => x.emoji === ours.id)) continue;
      const users = [...new Set((r.users ?? []).map((u) => ctx.person(u.id)?.userId).filter((id): id is string => id !== undefined))];
      reactions.push({ emoji: ours.id, users, extra: Math.max(0, r.count - users.length), legacy: `:${r.emoji.name.toLowerCase()}:` });
      continue;
    }
    const emoji = r.emoji.id ? `:${r.emoji.name.toLowerCase()}:` : r.emoji.name;
    if (!isEmoji(emoji) || reactions.some((x) => x.emoji === emoji)) continue;
    const users = [...new Set((r.users ?? []).map((u) => ctx.person(u.id)?.userId).filter((id): id is string => id !== undefined))];
    const custom = r.emoji.id ? { id: r.emoji.id, name: r.emoji.name, animated: r.emoji.isAnimated === true } : undefined;
    reactions.push({ emoji, users, extra: Math.max(0, r.count - users.length), ...(custom ? { custom } : {}) });
  }
  return {
    discordId: m.id,
    authorId: author?.userId ?? '',
    content,
    createdAt: new Date(Date.parse(m.timestamp)).toISOString(),
    editedAt: m.timestampEdited ? new Date(Date.parse(m.timestampEdited)).toISOString() : null,
    replyTo: repliesTo(m, entry.channel.id),
    discordType: m.type === 'Default' || m.type === 'Reply' ? null : m.type,
    pinned: m.isPinned === true,
    mentions: [...mentioned],
    everyone: /(?<![A-Za-z0-9_])@(everyone|here)(?![A-Za-z0-9_-])/.test(m.content),
    mentionRoles: [...roles],
    reactions,
    assets,
    files: [],
    stickerIds,
    poll,
  };
}

/**
 * A Discord poll as an ended poll here: its answers (new ids), its final counts (Discord's
 * `results`; who voted is not in it, so nobody is named), frozen when it expired, or now if it had
 * not yet. Null when it cannot be one here (pollShape says why): the message then carries it as text.
 */
function pollOf(m: DiscordMessage, importedAt: string): Prepared['poll'] {
  const shape = pollShape(m.poll!);
  if (typeof shape === 'string') return null;
  const answers = shape.answers.map((a) => ({ answer_id: crypto.randomUUID(), text: a.text, emoji: a.emoji }));
  const counts = new Map((m.poll!.results?.answer_counts ?? []).map((c) => [c.id, c.count]));
  const results = shape.answers.map((a, i) => ({ answer_id: answers[i].answer_id, count: counts.get(a.discordId) ?? 0 }));
  const expiry = m.poll!.expiry && Number.isFinite(Date.parse(m.poll!.expiry)) ? new Date(Date.parse(m.poll!.expiry)).toISOString() : null;
  const expiresAt = expiry ?? new Date(Date.parse(m.timestamp)).toISOString();
  const endedAt = Date.parse(expiresAt) < Date.parse(importedAt) ? expiresAt : importedAt;
  return {
    question: shape.question,
    answers: JSON.stringify(answers),
    allowMultiselect: shape.allowMultiselect,
    expiresAt,
    ended: { at: endedAt, results: JSON.stringify(results) },
  };
}

/** A poll that is none here, as lines of its message: the question, each answer and its count. */
function pollText(poll: NonNullable<DiscordMessage['poll']>): string[] {
  const counts = new Map((poll.results?.answer_counts ?? []).map((c) => [c.id, c.count]));
  return [
    `> 📊 **${(poll.question.text ?? '').replace(/\s+/g, ' ').slice(0, 300)}**`,
    ...poll.answers
      .slice(0, 20)
      .map((a) => `> - ${(a.poll_media.text ?? a.poll_media.emoji?.name ?? '').replace(/\s+/g, ' ').slice(0, 100)}: ${counts.get(a.answer_id) ?? 0}`),
  ];
}

/**
 * Text whose custom emoji brought point at the server's own (`<:name:our-id>`); any other stays as
 * written, its Discord id with it (shown as :name: text; the way out writes it as it came).
 */
function relinked(content: string, media: BroughtMedia): string {
  return content.replace(CUSTOM_EMOJI, (whole, _a: string, _name: string, id: string) => {
    const ours = media.emoji.get(id);
    return ours ? `<${ours.animated ? 'a' : ''}:${ours.name}:${ours.id}>` : whole;
  });
}

/** An embed as lines of text below its message: title and link, description, fields, footer. */
function embedLines(e: DiscordEmbed): string[] {
  const lines: string[] = [];
  const title = [e.author?.name, e.title].filter(Boolean).join(': ');
  if (title || e.url) lines.push(`> **${title || e.url}**${e.url && title ? ` ${e.url}` : ''}`);
  for (const line of (e.description ?? '').split('\n')) if (line.trim()) lines.push(`> ${line}`);
  for (const f of e.fields ?? []) if (f.name || f.value) lines.push(`> **${f.name ?? ''}** ${f.value ?? ''}`.trimEnd());
  if (e.footer?.text) lines.push(`> *${e.footer.text}*`);
  return lines;
}

/**
 * The files of a message the export holds (at most an upload's size), written under new
 * attachment ids and sniffed as uploads are; the others are named in the message instead.
 */
async function storeFiles(files: ExportFiles, uploads: string, jsonFile: string, p: Prepared, written: string[]): Promise<StoredFile[]> {
  const stored: StoredFile[] = [];
  const lost: string[] = [];
  for (const asset of p.assets) {
    const held = heldAsset(files, jsonFile, asset.file, MAX_ATTACHMENT_BYTES);
    if (!held) {
      lost.push(asset.name);
      continue;
    }
    const data = await files.read(held);
    const id = crypto.randomUUID();
    const target = path.join(uploads, id);
    written.push(target);
    await fs.promises.writeFile(target, data, { flag: 'wx' });
    const name = cleanFileName(asset.name);
    const sniffed = sniff(data.subarray(0, SNIFF_BYTES), name, data.length <= SNIFF_BYTES);
    stored.push({ id, name, contentType: sniffed.contentType, size: data.length, previewKind: sniffed.previewKind });
  }
  if (lost.length) p.content = [p.content, ...lost.map((name) => `📎 ${name} (not in the export)`)].filter((l) => l.trim() !== '').join('\n');
  return stored;
}

/** One batch of a channel, and how far the channel and the import got: one transaction. */
function writeBatch(w: Statements, serverId: string, channelId: string, options: ImportOptions, batch: Prepared[], lastDiscordId: string, done: number): void {
  w.db.transaction(() => {
    for (const p of batch) {
      const replyTo = p.replyTo ? (w.localMessage.get(serverId, p.replyTo) ?? null) : null;
      const ms = Date.parse(p.createdAt);
      const seq = w.messageWrites.add({
        id: timeOrderedUuid(ms),
        container: { kind: 'channel', id: channelId, serverId },
        authorId: p.authorId,
        content: p.content,
        replyTo,
        createdAt: p.createdAt,
        editedAt: p.editedAt,
        mentions: { userIds: p.mentions, everyone: p.everyone, roleIds: p.mentionRoles },
        files: p.files,
        pinned: p.pinned ? { at: p.createdAt, by: options.ownerId } : null,
      });
      w.insertImported.run(seq, serverId, p.discordId, p.discordType);
      if (p.stickerIds.length) w.messageWrites.addStickers(seq, p.stickerIds);
      if (p.poll) w.messageWrites.addPoll(seq, p.poll);
      for (const r of p.reactions) {
        if (r.custom) w.insertEmoji.run(serverId, r.emoji, r.custom.id, r.custom.name, r.custom.animated ? 1 : 0);
        for (const userId of r.users) w.messageWrites.addReaction(seq, r.emoji, userId, p.createdAt);
        if (r.extra > 0) w.insertExtra.run(seq, r.emoji, r.extra);
      }
    }
    w.setLast.run(lastDiscordId, serverId, 'channel', w.discordChannelOf.get(serverId, channelId)!);
    w.setDone.run(done, options.importId);
  })();
}

/**
 * Messages an earlier run brought, as this export has them now: an edit made since (a later
 * timestampEdited) rewrites the text (the earlier text kept in its history), a pin or an unpin
 * applies, and each reaction's count becomes the export's (people it names added; the rest
 * counted). One transaction; counted into `refreshed`.
 */
function refreshBatch(
  w: Statements,
  serverId: string,
  channelId: string,
  options: ImportOptions,
  batch: Prepared[],
  refreshed: ImportResult['refreshed'],
  media: BroughtMedia,
): void {
  const container = { kind: 'channel' as const, id: channelId, serverId };
  w.db.transaction(() => {
    for (const p of batch) {
      const row = w.importedRow.get(serverId, p.discordId);
      if (!row) continue;
      const edited = p.editedAt !== null && (row.edited_at === null || Date.parse(p.editedAt) > Date.parse(row.edited_at)) && p.content !== row.content;
      if (edited) {
        const mentions = { userIds: p.mentions, everyone: p.everyone, roleIds: p.mentionRoles };
        w.messageWrites.keepVersion(row.seq, row.content, row.edited_at ?? row.created_at);
        w.messageWrites.setText(row.seq, p.content, mentions, p.editedAt);
        w.messageWrites.recountMentions(row.seq, container, row.author_id, mentions);
        refreshed.edited++;
      }
      // Custom emoji brought since the message was (an earlier export without their images): its
      // text points at them now, and their reactions move to them. No edit: the words are the same.
      const text = relinked(row.content, media);
      if (!edited && text !== row.content) w.messageWrites.relink(row.seq, text);
      for (const r of p.reactions) if (r.legacy) w.messageWrites.moveReactions(row.seq, r.legacy, r.emoji);
      if (p.pinned !== (row.pinned_at !== null)) {
        w.messageWrites.setPinned(row.seq, p.pinned ? { at: p.editedAt ?? p.createdAt, by: options.ownerId } : null);
        if (p.pinned) refreshed.pinned++;
        else refreshed.unpinned++;
      }
      let changed = false;
      for (const r of p.reactions) {
        if (r.custom) w.insertEmoji.run(serverId, r.emoji, r.custom.id, r.custom.name, r.custom.animated ? 1 : 0);
        const before = w.reactionCount.get({ seq: row.seq, emoji: r.emoji })!;
        for (const userId of r.users) w.messageWrites.addReaction(row.seq, r.emoji, userId, p.createdAt);
        const named = w.reactionRows.get(row.seq, r.emoji)!;
        const extra = Math.max(0, r.users.length + r.extra - named);
        if (extra > 0) w.setExtra.run(row.seq, r.emoji, extra);
        else w.deleteExtra.run(row.seq, r.emoji);
        if (w.reactionCount.get({ seq: row.seq, emoji: r.emoji })! !== before) changed = true;
      }
      if (changed) refreshed.reactions++;
    }
  })();
}

type Statements = ReturnType<typeof statements>;

function statements(db: DB) {
  return {
    db,
    serverOfGuild: db.prepare<[string, string], { server_id: string }>(
      `SELECT i.server_id FROM imports i JOIN servers s ON s.id = i.server_id
        WHERE i.guild_id = ? AND s.owner_id = ? ORDER BY i.created_at LIMIT 1`,
    ),
    setImportServer: db.prepare('UPDATE imports SET server_id = ? WHERE id = ?'),
    insertServer: db.prepare(`INSERT INTO servers (id, name, owner_id, created_at, everyone_permissions) VALUES (?, ?, ?, ?, ${EVERYONE_DEFAULT})`),
    insertMember: db.prepare('INSERT OR IGNORE INTO members (server_id, user_id, joined_at, joined_seq) VALUES (?, ?, ?, 0)'),
    insertMemberRole: db.prepare(
      'INSERT OR IGNORE INTO member_roles (server_id, user_id, role_id) SELECT server_id, user_id, ? FROM members WHERE server_id = ? AND user_id = ?',
    ),
    mapGet: db.prepare<[string, string, string], string>('SELECT local_id FROM import_map WHERE server_id = ? AND kind = ? AND discord_id = ?').pluck(),
    mapPut: db.prepare('INSERT INTO import_map (server_id, kind, discord_id, local_id) VALUES (?, ?, ?, ?)'),
    lastOf: db
      .prepare<[string, string], string | null>("SELECT last_message_id FROM import_map WHERE server_id = ? AND kind = 'channel' AND discord_id = ?")
      .pluck(),
    discordChannelOf: db
      .prepare<[string, string], string>("SELECT discord_id FROM import_map WHERE server_id = ? AND kind = 'channel' AND local_id = ?")
      .pluck(),
    setLast: db.prepare('UPDATE import_map SET last_message_id = ? WHERE server_id = ? AND kind = ? AND discord_id = ?'),
    setDone: db.prepare('UPDATE imports SET done = ? WHERE id = ?'),
    setReport: db.prepare('UPDATE imports SET report = ? WHERE id = ?'),
    insertCategory: db.prepare(
      `INSERT INTO categories (id, server_id, name, position, created_at)
       VALUES (?, ?, ?, (SELECT COUNT(*) FROM categories WHERE server_id = ?), ?)`,
    ),
    insertRole: db.prepare(
      `INSERT INTO roles (id, server_id, name, created_at, color, position) VALUES (?, ?, ?, ?, ?, (SELECT COUNT(*) FROM roles WHERE server_id = ?))`,
    ),
    roleNamed: db.prepare<[string, string], number>('SELECT 1 FROM roles WHERE server_id = ? AND name = ? COLLATE NOCASE').pluck(),
    roleName: db.prepare<[string], string>('SELECT name FROM roles WHERE id = ?').pluck(),
    channelNamed: db.prepare<[string, string], number>('SELECT 1 FROM channels WHERE server_id = ? AND name = ? COLLATE NOCASE').pluck(),
    channelName: db.prepare<[string], string>('SELECT name FROM channels WHERE id = ?').pluck(),
    categoryOfChannel: db.prepare<[string], string | null>('SELECT category_id FROM channels WHERE id = ?').pluck(),
    // A person's newest placeholder in the server (one claimed is followed by a new one).
    personOf: db.prepare<[string, string], Person & { claimed_at: string | null; hidden_at: string | null }>(
      `SELECT u.id AS userId, u.username, p.claimed_at, p.hidden_at FROM imported_people p JOIN users u ON u.id = p.user_id
        WHERE p.server_id = ? AND p.discord_id = ? ORDER BY p.rowid DESC LIMIT 1`,
    ),
    userNamed: db.prepare<[string], number>('SELECT 1 FROM users WHERE username = ? COLLATE NOCASE').pluck(),
    insertPerson: db.prepare(
      'INSERT INTO imported_people (user_id, server_id, discord_id, discord_name, discord_discriminator, claim_code) VALUES (?, ?, ?, ?, ?, ?)',
    ),
    firstMessageOf: db.prepare<[string], string>('SELECT id FROM messages WHERE channel_id = ? ORDER BY seq LIMIT 1').pluck(),
    localMessage: db
      .prepare<[string, string], string>('SELECT m.id FROM imported_messages i JOIN messages m ON m.seq = i.seq WHERE i.server_id = ? AND i.discord_id = ?')
      .pluck(),
    // A message, its attachments, mentions and reactions: through the messages area's one writer.
    messageWrites: createMessageWrites(db),
    insertImported: db.prepare('INSERT INTO imported_messages (seq, server_id, discord_id, discord_type) VALUES (?, ?, ?, ?)'),
    // A custom emoji reacted with, as Discord named it (the way out writes it so: discord-export.ts).
    insertEmoji: db.prepare('INSERT OR IGNORE INTO imported_emoji (server_id, emoji, discord_id, discord_name, animated) VALUES (?, ?, ?, ?, ?)'),
    insertExtra: db.prepare('INSERT INTO reaction_extras (message_seq, emoji, extra) VALUES (?, ?, ?)'),
    // A re-import's refresh of messages an earlier run brought (refreshBatch).
    importedRow: db.prepare<
      [string, string],
      { seq: number; author_id: string; content: string; created_at: string; edited_at: string | null; pinned_at: string | null }
    >(
      `SELECT m.seq, m.author_id, m.content, m.created_at, m.edited_at, m.pinned_at
         FROM imported_messages i JOIN messages m ON m.seq = i.seq WHERE i.server_id = ? AND i.discord_id = ?`,
    ),
    reactionRows: db.prepare<[number, string], number>('SELECT COUNT(*) FROM reactions WHERE message_seq = ? AND emoji = ?').pluck(),
    reactionCount: db
      .prepare<{ seq: number; emoji: string }, number>(
        `SELECT (SELECT COUNT(*) FROM reactions WHERE message_seq = :seq AND emoji = :emoji)
              + COALESCE((SELECT extra FROM reaction_extras WHERE message_seq = :seq AND emoji = :emoji), 0)`,
      )
      .pluck(),
    setExtra: db.prepare(
      'INSERT INTO reaction_extras (message_seq, emoji, extra) VALUES (?, ?, ?) ON CONFLICT (message_seq, emoji) DO UPDATE SET extra = excluded.extra',
    ),
    deleteExtra: db.prepare('DELETE FROM reaction_extras WHERE message_seq = ? AND emoji = ?'),
    membersReadAll: db.prepare('UPDATE members SET joined_seq = (SELECT COALESCE(MAX(seq), 0) FROM messages) WHERE server_id = ?'),
    readStatesReadAll: db.prepare(
      `UPDATE read_states SET last_read_seq = (SELECT COALESCE(MAX(seq), 0) FROM messages WHERE channel_id = read_states.container_id)
        WHERE container_id IN (SELECT id FROM channels WHERE server_id = ?)`,
    ),
  };
}

/** The local id a Discord id became, or a new one made now (and remembered). */
function mapped(w: Statements, serverId: string, kind: 'role' | 'category' | 'channel', discordId: string, make: () => string): string {
  const known = w.mapGet.get(serverId, kind, discordId);
  if (known) return known;
  const id = make();
  w.mapPut.run(serverId, kind, discordId, id);
  return id;
}

/** `name`, or `name (2)`, `name (3)`... whichever is free. */
function freeName(name: string, taken: (name: string) => boolean): string {
  if (!taken(name)) return name;
  for (let n = 2; ; n++) {
    const suffix = ` (${n})`;
    const candidate = `${name.slice(0, MAX_NAME_CHARS - suffix.length)}${suffix}`;
    if (!taken(candidate)) return candidate;
  }
}

/**
 * A placeholder's username: the Discord name in the characters a username may hold, marked
 * `-discord` so it never takes a name a person here might want (`alice-discord`, then
 * `alice-discord-2`...). The Discord name itself is the display name.
 */
export function placeholderName(discordName: string, taken: (name: string) => boolean): string {
  const base =
    discordName
      .replace(/[^A-Za-z0-9_-]+/g, '_')
      .replace(/^_+|_+$/g, '')
      .slice(0, 20) || 'user';
  for (let n = 1; ; n++) {
    const candidate = n === 1 ? `${base}-discord` : `${base}-discord-${n}`;
    if (!taken(candidate)) return candidate;
  }
}

/** A one-time claim code: 12 letters and digits (no look-alikes), in groups of four. */
function claimCode(): string {
  const alphabet = 'ABCDEFGHJKMNPQRSTUVWXYZ23456789';
  const chars = Array.from({ length: 12 }, () => alphabet[crypto.randomInt(alphabet.length)]);
  return `${chars.slice(0, 4).join('')}-${chars.slice(4, 8).join('')}-${chars.slice(8).join('')}`;
}

/** '#3BA55D' as 0x3BA55D; anything else, no colour. */
function colorOf(color: string | null | undefined): number | null {
  return color && /^#[0-9A-Fa-f]{6}$/.test(color) ? Number.parseInt(color.slice(1), 16) : null;
}
