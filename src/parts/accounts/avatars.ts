import crypto from 'node:crypto';
import fs from 'node:fs';
import type { IncomingMessage } from 'node:http';
import path from 'node:path';
import sharp, { type Metadata, type Sharp } from 'sharp';
import type { DB } from '../../core/db';
import { HttpError, badRequest } from '../../core/http/errors';
import { receiveFile } from '../../core/http/multipart';
import { failpoint } from '../../core/callbacks';
import { isUuid } from '../../core/http/router';
import { createWorkQueue } from '../../core/work-queue';
import type { Log } from '../../core/types';
import type { AccountRows } from './account-rows';

export const MAX_AVATAR_BYTES = 8 * 1024 * 1024;
/** Every avatar is re-encoded to this square. */
export const AVATAR_SIZE = 256;
/**
 * Pixels an uploaded image may decode to (6 000 × 4 000, a camera photo): checked from the header
 * before a pixel is decoded. 16-bit images count twice.
 */
export const MAX_AVATAR_PIXELS = 24_000_000;
/**
 * And a budget tied to the file's size: a small file that claims many pixels (a decompression
 * bomb: 316 KiB of PNG can claim 40 megapixels) is refused. Photos hold well under 32 pixels a
 * byte; flat graphics more, which the floor covers.
 */
export const AVATAR_PIXELS_PER_BYTE = 32;
export const AVATAR_PIXEL_FLOOR = 4_000_000;
/** Uploads waiting for a decoder; past this the service is busy (503 with Retry-After). */
export const MAX_AVATARS_WAITING = 8;
export const AVATAR_BUSY_RETRY_S = 5;
/** The formats decoded; anything else (SVG, TIFF, PDF, HEIF...) is refused, whatever libvips could read. */
const FORMATS = new Set(['jpeg', 'png', 'gif', 'webp']);
/** Images decoded at once; the rest wait (decoding a large image takes a core and tens of MiB). */
const MAX_CONCURRENT = 2;

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
   * the same bounded decoders as avatars (503 when they are busy); 400 if it is not one of the
   * four raster formats or claims too many pixels.
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
  log,
}: {
  db: DB;
  accountRows: Pick<AccountRows, 'avatarStored' | 'avatarRemoved'>;
  dataDir: string;
  log: Log;
}): Avatars {
  const dir = path.join(dataDir, 'avatars');
  fs.mkdirSync(dir, { recursive: true });
  for (const name of fs.readdirSync(dir)) if (name.endsWith('.part')) fs.rmSync(path.join(dir, name), { force: true });
  const versionOf = db.prepare<[string], { avatar_version: number }>('SELECT avatar_version FROM users WHERE id = ? AND deleted_at IS NULL');
  const finalPath = (userId: string) => path.join(dir, `${userId}.webp`);
  /** Users with an upload in progress: one at a time each, so one user holds one decoder at most. */
  const uploading = new Set<string>();
  const busy = () => new HttpError(503, 'avatars are busy: try again in a few seconds', { 'Retry-After': String(AVATAR_BUSY_RETRY_S) });
  const decoders = createWorkQueue(MAX_CONCURRENT, MAX_AVATARS_WAITING, busy);

  const encode = (input: string, output: string) => decoders.run(() => encodeAvatar(input, output));

  return {
    async replace(userId, req) {
      if (uploading.has(userId)) throw new HttpError(429, 'one avatar at a time: wait for the one being uploaded', { 'Retry-After': '1' });
      // Full now: say so before the file is received, not after.
      if (decoders.full) throw busy();
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
    reencode: (input, output, maxSide) =>
      decoders.run(() => encodeImage(input, output, 'the image', (image) => image.resize(maxSide, maxSide, { fit: 'inside', withoutEnlargement: true }))),
  };
}

/**
 * Re-encodes an image file to the avatar square (WebP) at `output`, if it is one of the four
 * formats and not too many pixels for its size; 400 otherwise. Also an import's avatars
 * (src/parts/import/) go through it.
 */
export async function encodeAvatar(input: string, output: string): Promise<void> {
  failpoint('avatar.encode');
  await encodeImage(input, output, 'the avatar', (image) => image.resize(AVATAR_SIZE, AVATAR_SIZE, { fit: 'cover' }));
}

/**
 * Re-encodes one of the four raster formats (never SVG, whatever its name or type says: the
 * format is read from the bytes) to WebP, shaped by `shape`; 400 naming `what` otherwise.
 */
async function encodeImage(input: string, output: string, what: string, shape: (image: Sharp) => Sharp): Promise<void> {
  const The = what[0].toUpperCase() + what.slice(1);
  // The header alone: format and dimensions, before a single pixel is decoded.
  let meta: Metadata;
  try {
    meta = await sharp(input, { limitInputPixels: false }).metadata();
  } catch {
    throw badRequest(`${what} is not an image that can be read`);
  }
  if (!meta.format || !FORMATS.has(meta.format)) throw badRequest(`${what} must be a PNG, JPEG, GIF or WebP image`);
  const pixels = (meta.width ?? 0) * (meta.height ?? 0) * (meta.depth === 'ushort' ? 2 : 1);
  const bytes = (await fs.promises.stat(input)).size;
  const budget = Math.min(MAX_AVATAR_PIXELS, Math.max(AVATAR_PIXEL_FLOOR, AVATAR_PIXELS_PER_BYTE * bytes));
  if (pixels > budget) {
    throw badRequest(`${The} (a file of ${bytes} bytes) may hold at most ${budget} pixels (width × height; 16-bit images count twice)`);
  }
  try {
    // rotate(): upright by the EXIF orientation, before the metadata is dropped.
    // sequentialRead: decoded top to bottom in strips, never held whole.
    const image = sharp(input, { limitInputPixels: MAX_AVATAR_PIXELS, failOn: 'error', sequentialRead: true });
    await shape(image.rotate()).webp({ quality: 82 }).toFile(output);
  } catch {
    throw badRequest(`${what} is not an image that can be read`);
  }
}
