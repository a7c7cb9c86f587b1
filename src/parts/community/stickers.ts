import fs from 'node:fs';
import type { IncomingMessage } from 'node:http';
import path from 'node:path';
import { type Clock, iso } from '../../core/clock';
import type { DB } from '../../core/db';
import { resolveEmoji } from '../../core/emoji';
import { badRequest, conflict, notFound } from '../../core/http/errors';
import { isUuid } from '../../core/http/router';
import type { StickerRecord } from '../../core/records';
import type { Log } from '../../core/types';
import type { WorkQueue } from '../../core/work-queue';
import type { AuditLog } from './audit';
import { uploadServerImage } from './server-images';

/** The largest sticker upload, and its largest drawn image (Discord's cap). */
export const MAX_STICKER_BYTES = 512 * 1024;
/** Every sticker is drawn whole in this square. */
export const STICKER_SIZE = 320;
/** Stickers a server may hold (Discord's unboosted 5 … boosted 60: 30). */
export const MAX_STICKERS = 30;
export const STICKER_NAME_CHARS = { min: 2, max: 30 };
export const STICKER_DESCRIPTION_CHARS = 100;

export interface Stickers {
  list(serverId: string): StickerRecord[];
  /** Multipart `name`, `description`?, `tags` (a related Unicode emoji) and one `image`: the sticker, audited. */
  create(serverId: string, actorId: string, req: IncomingMessage): Promise<StickerRecord>;
  update(serverId: string, stickerId: string, actorId: string, change: { name?: string; description?: string; tags?: string }): StickerRecord;
  remove(serverId: string, stickerId: string, actorId: string): void;
  /** A live sticker by id, with its server, or null. */
  byId(stickerId: string): (StickerRecord & { server_id: string }) | null;
  file(stickerId: string): string | null;
}

interface Row {
  id: string;
  server_id: string;
  name: string;
  description: string;
  tags: string;
  animated: number;
  creator_id: string;
}

export const stickerUrl = (id: string): string => `/stickers/${id}`;
const record = (row: Row): StickerRecord => ({
  id: row.id,
  name: row.name,
  description: row.description,
  tags: row.tags,
  animated: row.animated === 1,
  url: stickerUrl(row.id),
  creator_id: row.creator_id,
});

/** 400 unless a sticker's fields are as Discord's: name 2 to 30 characters, description up to 100, tags one Unicode emoji. */
export function checkStickerFields(fields: Record<string, unknown>, partial: boolean): { name?: string; description?: string; tags?: string } {
  const out: { name?: string; description?: string; tags?: string } = {};
  if (fields.name !== undefined || !partial) {
    const name = typeof fields.name === 'string' ? fields.name.trim() : '';
    if ([...name].length < STICKER_NAME_CHARS.min || [...name].length > STICKER_NAME_CHARS.max || /[\p{Cc}]/u.test(name)) {
      throw badRequest(`name must be ${STICKER_NAME_CHARS.min} to ${STICKER_NAME_CHARS.max} characters`);
    }
    out.name = name;
  }
  if (fields.description !== undefined) {
    if (typeof fields.description !== 'string' || [...fields.description].length > STICKER_DESCRIPTION_CHARS || /[\p{Cc}]/u.test(fields.description)) {
      throw badRequest(`description must be at most ${STICKER_DESCRIPTION_CHARS} characters`);
    }
    out.description = fields.description.trim();
  } else if (!partial) out.description = '';
  if (fields.tags !== undefined || !partial) {
    const tags = resolveEmoji(fields.tags);
    if (tags === null) throw badRequest('tags must be the one Unicode emoji the sticker stands for (or its :shortcode:)');
    out.tags = tags;
  }
  return out;
}

/**
 * A server's stickers (issue 50): rows in `stickers`, images under DATA_DIR/stickers/<id>.webp,
 * re-encoded to a 320 × 320 WebP (an animated GIF or WebP stays animated; an APNG shows its first
 * frame) by the same bounded pool of decoders as avatars and emoji.
 */
export function createStickers({
  db,
  clock,
  audit,
  dataDir,
  decoders,
  log,
}: {
  db: DB;
  clock: Clock;
  audit: AuditLog;
  dataDir: string;
  decoders: WorkQueue;
  log: Log;
}): Stickers {
  const dir = path.join(dataDir, 'stickers');
  fs.mkdirSync(dir, { recursive: true });
  const COLUMNS = 'id, server_id, name, description, tags, animated, creator_id';
  const listRows = db.prepare<[string], Row>(`SELECT ${COLUMNS} FROM stickers WHERE server_id = ? AND deleted_at IS NULL ORDER BY created_at, rowid`);
  const rowById = db.prepare<[string], Row>(`SELECT ${COLUMNS} FROM stickers WHERE id = ? AND deleted_at IS NULL`);
  const countOf = db.prepare<[string], number>('SELECT COUNT(*) FROM stickers WHERE server_id = ? AND deleted_at IS NULL').pluck();
  const insertRow = db.prepare(
    'INSERT INTO stickers (id, server_id, name, description, tags, animated, creator_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
  );
  const updateRow = db.prepare('UPDATE stickers SET name = ?, description = ?, tags = ? WHERE id = ?');
  const deleteRow = db.prepare('UPDATE stickers SET deleted_at = ? WHERE id = ?');
  const liveIds = new Set(db.prepare<[], string>('SELECT id FROM stickers WHERE deleted_at IS NULL').pluck().all());
  for (const name of fs.readdirSync(dir)) if (!liveIds.has(name.replace(/\.webp$/, ''))) fs.rmSync(path.join(dir, name), { force: true });
  const finalPath = (id: string) => path.join(dir, `${id}.webp`);
  const uploading = new Set<string>();

  const requireRoom = (serverId: string) => {
    if (countOf.get(serverId)! >= MAX_STICKERS) throw conflict(`this server has no sticker slot left (${MAX_STICKERS}): delete one first`);
  };
  const findOwn = (serverId: string, stickerId: string): Row => {
    const row = isUuid(stickerId) ? rowById.get(stickerId) : undefined;
    if (!row || row.server_id !== serverId) throw notFound('sticker not found');
    return row;
  };

  return {
    list: (serverId) => listRows.all(serverId).map(record),

    async create(serverId, actorId, req) {
      requireRoom(serverId);
      const id = await uploadServerImage({
        req,
        userId: actorId,
        uploading,
        decoders,
        dir,
        log,
        form: { what: 'a sticker image', maxBytes: MAX_STICKER_BYTES, textFields: ['name', 'description', 'tags'] },
        image: { what: 'the sticker', size: STICKER_SIZE, fit: 'contain', keepAnimation: true, maxOutputBytes: MAX_STICKER_BYTES },
        check: (fields) => checkStickerFields(fields, false) as Required<ReturnType<typeof checkStickerFields>>,
        commit: (newId, fields, animated) =>
          db.transaction(() => {
            requireRoom(serverId);
            insertRow.run(newId, serverId, fields.name, fields.description, fields.tags, animated ? 1 : 0, actorId, iso(clock.now()));
            audit.write({
              serverId,
              action: 'sticker_create',
              actorId,
              targetId: newId,
              targetKind: 'sticker',
              reason: null,
              changes: { name: fields.name, animated },
            });
          })(),
      });
      return record(rowById.get(id)!);
    },

    update(serverId, stickerId, actorId, change) {
      const row = findOwn(serverId, stickerId);
      const next = { name: change.name ?? row.name, description: change.description ?? row.description, tags: change.tags ?? row.tags };
      db.transaction(() => {
        updateRow.run(next.name, next.description, next.tags, stickerId);
        audit.write({
          serverId,
          action: 'sticker_update',
          actorId,
          targetId: stickerId,
          targetKind: 'sticker',
          reason: null,
          changes: { name: { from: row.name, to: next.name } },
        });
      })();
      return record(rowById.get(stickerId)!);
    },

    remove(serverId, stickerId, actorId) {
      const row = findOwn(serverId, stickerId);
      db.transaction(() => {
        deleteRow.run(iso(clock.now()), stickerId);
        audit.write({ serverId, action: 'sticker_delete', actorId, targetId: stickerId, targetKind: 'sticker', reason: null, changes: { name: row.name } });
      })();
      fs.rmSync(finalPath(stickerId), { force: true });
    },

    byId(stickerId) {
      const row = isUuid(stickerId) ? rowById.get(stickerId) : undefined;
      return row ? { ...record(row), server_id: row.server_id } : null;
    },

    file(stickerId) {
      return isUuid(stickerId) && rowById.get(stickerId) ? finalPath(stickerId) : null;
    },
  };
}
