import fs from 'node:fs';
import type { IncomingMessage } from 'node:http';
import path from 'node:path';
import { type Clock, iso } from '../../core/clock';
import type { DB } from '../../core/db';
import { badRequest, conflict, notFound } from '../../core/http/errors';
import { isUuid } from '../../core/http/router';
import type { EmojiRecord } from '../../core/records';
import type { Log } from '../../core/types';
import type { WorkQueue } from '../../core/work-queue';
import type { AuditLog } from './audit';
import { uploadServerImage } from './server-images';

/** The largest upload an emoji may come from (it is re-encoded; MAX_EMOJI_BYTES holds the result). */
export const MAX_EMOJI_UPLOAD_BYTES = 1024 * 1024;
/** The largest emoji once drawn, as Discord's cap. */
export const MAX_EMOJI_BYTES = 256 * 1024;
/** Every emoji is drawn in this square (the whole image, padded with transparency). */
export const EMOJI_SIZE = 128;
/** 2 to 32 letters, digits and underscores, as Discord's. */
export const EMOJI_NAME = /^[A-Za-z0-9_]{2,32}$/;
/** As Discord's boosted tiers: so many static and so many animated emoji per server (src/app.ts Settings). */
export const DEFAULT_EMOJI_SLOTS = { static: 100, animated: 100 };

/** What a message or a reaction needs of an emoji to draw it. */
export interface EmojiRef {
  id: string;
  serverId: string;
  name: string;
  animated: boolean;
}

export interface Emojis {
  /** A server's emoji, oldest first. */
  list(serverId: string): EmojiRecord[];
  /**
   * Reads a multipart body (`name`, one `image`), re-encodes the image through the image decoders
   * (src/core/images.ts) and adds the emoji, audited; 400 for a bad name or image, 409 for a name
   * taken or slots full, 413 for a file too large, 429 while the same user uploads another, 503
   * when the decoders' queue is full.
   */
  create(serverId: string, actorId: string, req: IncomingMessage): Promise<EmojiRecord>;
  /** Renames one (audited); 404 when it is not this server's, 409 when the name is taken. */
  rename(serverId: string, emojiId: string, actorId: string, name: string): EmojiRecord;
  /** Deletes one and its image (audited); 404 when it is not this server's. Its row stays, marked deleted: reactions with it show its name as text. */
  remove(serverId: string, emojiId: string, actorId: string): void;
  /** An emoji by id, wherever it lives, or null (deleted, or never was). */
  byId(emojiId: string): EmojiRef | null;
  /** The stored image of an emoji, or null. */
  file(emojiId: string): string | null;
}

interface Row {
  id: string;
  server_id: string;
  name: string;
  animated: number;
  creator_id: string;
}

export const emojiUrl = (id: string): string => `/emojis/${id}`;
const record = (row: Row): EmojiRecord => ({ id: row.id, name: row.name, animated: row.animated === 1, url: emojiUrl(row.id), creator_id: row.creator_id });

/** 400 unless `name` is 2 to 32 of [A-Za-z0-9_]. */
export function checkEmojiName(name: unknown): string {
  if (typeof name !== 'string' || !EMOJI_NAME.test(name)) throw badRequest('name must be 2 to 32 letters, digits or underscores');
  return name;
}

/**
 * A server's custom emoji (issue 50): rows in `emojis`, images under DATA_DIR/emojis/<id>.webp,
 * each re-encoded to a 128 × 128 WebP (animated GIF and WebP stay animated) by the same bounded
 * pool of decoders as avatars.
 */
export function createEmojis({
  db,
  clock,
  audit,
  dataDir,
  decoders,
  slots,
  log,
}: {
  db: DB;
  clock: Clock;
  audit: AuditLog;
  dataDir: string;
  decoders: WorkQueue;
  slots: () => { static: number; animated: number };
  log: Log;
}): Emojis {
  const dir = path.join(dataDir, 'emojis');
  fs.mkdirSync(dir, { recursive: true });
  const listRows = db.prepare<[string], Row>(
    'SELECT id, server_id, name, animated, creator_id FROM emojis WHERE server_id = ? AND deleted_at IS NULL ORDER BY created_at, rowid',
  );
  const rowById = db.prepare<[string], Row>('SELECT id, server_id, name, animated, creator_id FROM emojis WHERE id = ? AND deleted_at IS NULL');
  const countOf = db.prepare<[string, number], number>('SELECT COUNT(*) FROM emojis WHERE server_id = ? AND animated = ? AND deleted_at IS NULL').pluck();
  const holderOf = db.prepare<[string, string], string>('SELECT id FROM emojis WHERE server_id = ? AND name = ? AND deleted_at IS NULL').pluck();
  const insertRow = db.prepare('INSERT INTO emojis (id, server_id, name, animated, creator_id, created_at) VALUES (?, ?, ?, ?, ?, ?)');
  const renameRow = db.prepare('UPDATE emojis SET name = ? WHERE id = ?');
  // The row stays (old reactions name it, shown as `:name:` text); its name and slot are free again.
  const deleteRow = db.prepare('UPDATE emojis SET deleted_at = ? WHERE id = ?');
  const allIds = db.prepare<[], string>('SELECT id FROM emojis WHERE deleted_at IS NULL').pluck();
  const finalPath = (id: string) => path.join(dir, `${id}.webp`);

  // Files no row names (a server deleted with its emoji, a crash between the file and its row).
  const known = new Set(allIds.all());
  for (const name of fs.readdirSync(dir)) if (!known.has(name.replace(/\.webp$/, ''))) fs.rmSync(path.join(dir, name), { force: true });

  /** Users with an upload in progress: one at a time each, so one user holds one decoder at most. */
  const uploading = new Set<string>();

  const requireRoom = (serverId: string, animated: boolean | null) => {
    const limits = slots();
    const fullStatic = countOf.get(serverId, 0)! >= limits.static;
    const fullAnimated = countOf.get(serverId, 1)! >= limits.animated;
    if (animated === null ? fullStatic && fullAnimated : animated ? fullAnimated : fullStatic) {
      const kind = animated === null ? '' : animated ? ' animated' : ' static';
      const n = animated === null ? `${limits.static} static and ${limits.animated} animated` : animated ? limits.animated : limits.static;
      throw conflict(`this server has no${kind} emoji slot left (${n}): delete one first`);
    }
  };
  const requireFreeName = (serverId: string, name: string, except?: string) => {
    const holder = holderOf.get(serverId, name);
    if (holder !== undefined && holder !== except) {
      throw conflict(`this server already has an emoji named ${name}`);
    }
  };
  const findOwn = (serverId: string, emojiId: string): Row => {
    const row = isUuid(emojiId) ? rowById.get(emojiId) : undefined;
    if (!row || row.server_id !== serverId) throw notFound('emoji not found');
    return row;
  };

  return {
    list: (serverId) => listRows.all(serverId).map(record),

    async create(serverId, actorId, req) {
      // Slots full: said before the file is received, not after.
      requireRoom(serverId, null);
      const id = await uploadServerImage({
        req,
        userId: actorId,
        uploading,
        decoders,
        dir,
        log,
        form: { what: 'an emoji image', maxBytes: MAX_EMOJI_UPLOAD_BYTES, textFields: ['name'] },
        image: { what: 'the emoji', size: EMOJI_SIZE, fit: 'contain', keepAnimation: true, maxOutputBytes: MAX_EMOJI_BYTES },
        check: (fields) => {
          const name = checkEmojiName(fields.name);
          requireFreeName(serverId, name);
          return name;
        },
        commit: (newId, name, animated) =>
          db.transaction(() => {
            requireRoom(serverId, animated);
            requireFreeName(serverId, name);
            insertRow.run(newId, serverId, name, animated ? 1 : 0, actorId, iso(clock.now()));
            audit.write({ serverId, action: 'emoji_create', actorId, targetId: newId, targetKind: 'emoji', reason: null, changes: { name, animated } });
          })(),
      });
      return record(rowById.get(id)!);
    },

    rename(serverId, emojiId, actorId, name) {
      const row = findOwn(serverId, emojiId);
      db.transaction(() => {
        requireFreeName(serverId, name, emojiId);
        renameRow.run(name, emojiId);
        audit.write({
          serverId,
          action: 'emoji_update',
          actorId,
          targetId: emojiId,
          targetKind: 'emoji',
          reason: null,
          changes: { name: { from: row.name, to: name } },
        });
      })();
      return record(rowById.get(emojiId)!);
    },

    remove(serverId, emojiId, actorId) {
      const row = findOwn(serverId, emojiId);
      db.transaction(() => {
        deleteRow.run(iso(clock.now()), emojiId);
        audit.write({ serverId, action: 'emoji_delete', actorId, targetId: emojiId, targetKind: 'emoji', reason: null, changes: { name: row.name } });
      })();
      fs.rmSync(finalPath(emojiId), { force: true });
    },

    byId(emojiId) {
      const row = isUuid(emojiId) ? rowById.get(emojiId) : undefined;
      return row ? { id: row.id, serverId: row.server_id, name: row.name, animated: row.animated === 1 } : null;
    },

    file(emojiId) {
      return isUuid(emojiId) && rowById.get(emojiId) ? finalPath(emojiId) : null;
    },
  };
}
