import crypto from 'node:crypto';
import fs from 'node:fs';
import type { IncomingMessage } from 'node:http';
import path from 'node:path';
import type { DB } from '../../core/db';
import { HttpError } from '../../core/http/errors';
import { receiveFile } from '../../core/http/multipart';
import { encodeImage } from '../../core/images';
import { isUuid } from '../../core/http/router';
import type { WorkQueue } from '../../core/work-queue';
import type { Log } from '../../core/types';
import type { AccountRows } from './account-rows';

export const MAX_AVATAR_BYTES = 8 * 1024 * 1024;
/** Every avatar is re-encoded to this square. */
export const AVATAR_SIZE = 256;

export interface Avatars {
  /**
   * Reads the one file of a multipart body (field `avatar`), re-encodes it, stores it; the new
   * version. 429 while the same user has an upload in progress; 503 when the decoders' queue is full.
   */
  replace(userId: string, req: IncomingMessage): Promise<number>;
  /** Removes the user's avatar (file and version); false when they had none. */
  remove(userId: string): boolean;
  /** The stored file of a user's avatar, or null. */
  file(userId: string): string | null;
  /**
   * A remote image the media proxy fetched, re-encoded to WebP within `maxSide` pixels a side, on
   * the same bounded decoders (503 when they are busy); 400 if it is not one of the four raster
   * formats or claims too many pixels.
   */
  reencode(input: string, output: string, maxSide: number): Promise<void>;
}

/**
 * Avatars under DATA_DIR/avatars/<user id>.webp. An upload streams to a temporary file (never
 * held in memory), is decoded by sharp (libvips) only if it is one of four image formats and
 * not too many pixels, and is re-encoded to a 256 × 256 WebP: metadata (EXIF, GPS, ICC
 * comments) does not survive the re-encoding.
 */
export function createAvatars({
  db,
  accountRows,
  dataDir,
  decoders,
  log,
}: {
  db: DB;
  accountRows: Pick<AccountRows, 'avatarStored' | 'avatarRemoved'>;
  dataDir: string;
  /** The one bounded pool of image decoders (src/core/images.ts), shared with emoji and stickers. */
  decoders: WorkQueue;
  log: Log;
}): Avatars {
  const dir = path.join(dataDir, 'avatars');
  fs.mkdirSync(dir, { recursive: true });
  for (const name of fs.readdirSync(dir)) if (name.endsWith('.part')) fs.rmSync(path.join(dir, name), { force: true });
  const versionOf = db.prepare<[string], { avatar_version: number }>('SELECT avatar_version FROM users WHERE id = ? AND deleted_at IS NULL');
  const finalPath = (userId: string) => path.join(dir, `${userId}.webp`);
  /** Users with an upload in progress: one at a time each, so one user holds one decoder at most. */
  const uploading = new Set<string>();
  const encode = (input: string, output: string) => decoders.run(() => encodeAvatar(input, output));

  return {
    async replace(userId, req) {
      if (uploading.has(userId)) throw new HttpError(429, 'one avatar at a time: wait for the one being uploaded', { 'Retry-After': '1' });
      // Full now: say so before the file is received, not after.
      decoders.requireRoom();
      uploading.add(userId);
      try {
        const upload = await receiveFile(req, { field: 'avatar', what: 'an avatar', maxBytes: MAX_AVATAR_BYTES, dir }, log);
        const encoded = path.join(dir, `${crypto.randomUUID()}.webp.part`);
        try {
          await encode(upload, encoded);
          // The file is whole before the version names it: a new URL never shows a half-written image.
          await fs.promises.rename(encoded, finalPath(userId));
        } finally {
          for (const file of [upload, encoded]) {
            await fs.promises.rm(file, { force: true }).catch((err: Error) => log(`could not remove ${file}: ${err.message}`));
          }
        }
      } finally {
        uploading.delete(userId);
      }
      return accountRows.avatarStored(userId);
    },
    remove(userId) {
      const had = accountRows.avatarRemoved(userId);
      if (isUuid(userId)) fs.rmSync(finalPath(userId), { force: true });
      return had;
    },
    file(userId) {
      if (!isUuid(userId) || !(versionOf.get(userId)?.avatar_version ?? 0)) return null;
      return finalPath(userId);
    },
    async reencode(input, output, maxSide) {
      await decoders.run(() => encodeImage(input, output, { what: 'the image', size: maxSide, fit: 'inside', keepAnimation: false }));
    },
  };
}

/**
 * Re-encodes an image file to the avatar square (WebP) at `output`, if it is one of the four
 * formats and not too many pixels for its size; 400 otherwise. Also an import's avatars
 * (src/parts/import/) go through it.
 */
export async function encodeAvatar(input: string, output: string): Promise<void> {
  await encodeImage(input, output, { what: 'the avatar', size: AVATAR_SIZE, fit: 'cover', keepAnimation: false });
}
