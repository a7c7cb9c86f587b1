import crypto from 'node:crypto';
import fs from 'node:fs';
import type { IncomingMessage } from 'node:http';
import path from 'node:path';
import { HttpError } from '../../core/http/errors';
import { receiveForm } from '../../core/http/multipart';
import { type ImageSpec, encodeImage } from '../../core/images';
import type { Log } from '../../core/types';
import type { WorkQueue } from '../../core/work-queue';

/**
 * One upload of a server's image (a custom emoji, a sticker), the way both go: one at a time per
 * user (429), refused before the file is read when the decoders' pool is full (503), the file
 * streamed to disk, its fields checked, the image re-encoded through the shared pool, the file
 * whole at DIR/<id>.webp before `commit` writes the row that names it (undone if that throws).
 */
export async function uploadServerImage<F>(opts: {
  req: IncomingMessage;
  userId: string;
  /** Users with an upload in progress (the caller's own set). */
  uploading: Set<string>;
  decoders: WorkQueue;
  dir: string;
  log: Log;
  form: { what: string; maxBytes: number; textFields: readonly string[] };
  image: ImageSpec;
  /** Checks the text fields, before the image is decoded. */
  check: (fields: Record<string, string>) => F;
  /** Writes the row (in a transaction of its own), once the image is stored. */
  commit: (id: string, fields: F, animated: boolean) => void;
}): Promise<string> {
  const { req, userId, uploading, decoders, dir, log } = opts;
  if (uploading.has(userId))
    throw new HttpError(429, `one ${opts.image.what.replace(/^the /, '')} at a time: wait for the one being uploaded`, { 'Retry-After': '1' });
  decoders.requireRoom();
  uploading.add(userId);
  const id = crypto.randomUUID();
  const final = path.join(dir, `${id}.webp`);
  const encoded = `${final}.part`;
  let upload: string | null = null;
  try {
    const form = await receiveForm(req, { field: 'image', dir, ...opts.form }, log);
    upload = form.file;
    const fields = opts.check(form.fields);
    const { animated } = await decoders.run(() => encodeImage(form.file, encoded, opts.image));
    // The file is whole before its row names it: a listed image is never half-written.
    await fs.promises.rename(encoded, final);
    try {
      opts.commit(id, fields, animated);
    } catch (err) {
      fs.rmSync(final, { force: true });
      throw err;
    }
    return id;
  } finally {
    uploading.delete(userId);
    for (const file of [upload, encoded]) {
      if (file) await fs.promises.rm(file, { force: true }).catch((err: Error) => log(`could not remove ${file}: ${err.message}`));
    }
  }
}
