import fs from 'node:fs';
import sharp, { type Metadata } from 'sharp';
import { failpoint } from './callbacks';
import { HttpError, badRequest } from './http/errors';
import { type WorkQueue, createWorkQueue } from './work-queue';

/**
 * The one image path: avatars, custom emoji and stickers are decoded and re-encoded here, by
 * sharp (libvips), one at a time per decoder of one bounded pool, so uploads of every kind
 * together hold at most MAX_CONCURRENT_DECODES decoders and MAX_DECODES_WAITING waiting callers.
 */

/**
 * Pixels an uploaded image may decode to (6 000 × 4 000, a camera photo; every frame of an
 * animation counted): checked from the header before a pixel is decoded. 16-bit images count twice.
 */
export const MAX_IMAGE_PIXELS = 24_000_000;
/**
 * And a budget tied to the file's size: a small file that claims many pixels (a decompression
 * bomb: 316 KiB of PNG can claim 40 megapixels) is refused. Photos hold well under 32 pixels a
 * byte; flat graphics more, which the floor covers.
 */
export const IMAGE_PIXELS_PER_BYTE = 32;
export const IMAGE_PIXEL_FLOOR = 4_000_000;
/** Uploads waiting for a decoder; past this the service is busy (503 with Retry-After). */
export const MAX_DECODES_WAITING = 8;
export const DECODERS_BUSY_RETRY_S = 5;
/** Images decoded at once; the rest wait (decoding a large image takes a core and tens of MiB). */
const MAX_CONCURRENT_DECODES = 2;
/** The formats decoded; anything else (SVG, TIFF, PDF, HEIF...) is refused, whatever libvips could read. */
const FORMATS = new Set(['jpeg', 'png', 'gif', 'webp']);

/** The pool every image upload goes through (one per server process). */
export function createImageDecoders(): WorkQueue {
  const busy = () => new HttpError(503, 'image processing is busy: try again in a few seconds', { 'Retry-After': String(DECODERS_BUSY_RETRY_S) });
  return createWorkQueue(MAX_CONCURRENT_DECODES, MAX_DECODES_WAITING, busy);
}

export interface ImageSpec {
  /** What the refusals call it: "the avatar", "the emoji". */
  what: string;
  /** The square it is drawn at, in pixels. */
  size: number;
  /**
   * cover: cropped to fill the square (avatars); contain: the whole image, padded with
   * transparency (emoji, stickers); inside: the whole image within the square, never enlarged
   * (the media proxy's remote images).
   */
  fit: 'cover' | 'contain' | 'inside';
  /** Animated GIF and WebP keep their frames (an animated WebP); otherwise only the first frame is kept. */
  keepAnimation: boolean;
  /** The largest encoded file, in bytes (400 past it); none for avatars (a 256 × 256 WebP is small). */
  maxOutputBytes?: number;
}

/**
 * Re-encodes an image file to a WebP square at `output`, if it is one of the four formats and not
 * too many pixels for its size; 400 otherwise. Whether the result is animated. Metadata (EXIF, GPS,
 * ICC comments) does not survive the re-encoding.
 */
export async function encodeImage(input: string, output: string, spec: ImageSpec): Promise<{ animated: boolean }> {
  failpoint('avatar.encode');
  const unreadable = () => badRequest(`${spec.what} is not an image that can be read`);
  // The header alone: format, dimensions and frames, before a single pixel is decoded.
  let meta: Metadata;
  try {
    meta = await sharp(input, { limitInputPixels: false }).metadata();
  } catch {
    throw unreadable();
  }
  if (!meta.format || !FORMATS.has(meta.format)) throw badRequest(`${spec.what} must be a PNG, JPEG, GIF or WebP image`);
  const animated = spec.keepAnimation && (meta.format === 'gif' || meta.format === 'webp') && (meta.pages ?? 1) > 1;
  const frames = animated ? (meta.pages ?? 1) : 1;
  const pixels = (meta.width ?? 0) * (meta.height ?? 0) * frames * (meta.depth === 'ushort' ? 2 : 1);
  const bytes = (await fs.promises.stat(input)).size;
  const budget = Math.min(MAX_IMAGE_PIXELS, Math.max(IMAGE_PIXEL_FLOOR, IMAGE_PIXELS_PER_BYTE * bytes));
  if (pixels > budget) {
    const counted = animated ? 'width × height × frames' : 'width × height';
    throw badRequest(`${spec.what} file of ${bytes} bytes may hold at most ${budget} pixels (${counted}; 16-bit images count twice)`);
  }
  try {
    // rotate(): upright by the EXIF orientation, before the metadata is dropped.
    // sequentialRead: decoded top to bottom in strips, never held whole.
    const image = sharp(input, { limitInputPixels: MAX_IMAGE_PIXELS, failOn: 'error', sequentialRead: true, animated });
    const resize =
      spec.fit === 'contain'
        ? { fit: 'contain' as const, background: { r: 0, g: 0, b: 0, alpha: 0 } }
        : spec.fit === 'inside'
          ? { fit: 'inside' as const, withoutEnlargement: true }
          : { fit: 'cover' as const };
    await image.rotate().resize(spec.size, spec.size, resize).webp({ quality: 82 }).toFile(output);
  } catch {
    throw unreadable();
  }
  if (spec.maxOutputBytes !== undefined) {
    const size = (await fs.promises.stat(output)).size;
    if (size > spec.maxOutputBytes) {
      await fs.promises.rm(output, { force: true });
      throw new HttpError(
        413,
        `${spec.what} is ${size} bytes once drawn at ${spec.size} × ${spec.size}: at most ${spec.maxOutputBytes} (fewer frames or colours)`,
      );
    }
  }
  return { animated };
}
