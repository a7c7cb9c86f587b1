import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Clock } from '../../core/clock';
import { HttpError, forbidden } from '../../core/http/errors';
import type { MediaUrls } from '../../core/media-url';
import { FetchRefused, type FetchRules, safeFetch } from '../../core/net/safe-fetch';
import type { Log } from '../../core/types';
import type { Avatars } from './avatars';

/**
 * The media proxy (`GET /api/media/{sig}/{url}`, docs/api.md "Media proxy"): every remote image
 * a page shows (link previews, webhook and bot embed images and thumbnails, webhook avatars)
 * comes from our origin, so the page's CSP keeps `img-src 'self'` and readers' browsers never
 * connect to third parties (their addresses and cookies stay with us). Only URLs the server
 * signed are served (src/core/media-url.ts): the proxy fetches nothing a visitor names.
 *
 * An image is fetched under the fetch rules (src/core/net/safe-fetch.ts: 8 MiB at most), its
 * format read from its bytes (PNG, JPEG, GIF or WebP; never SVG), re-encoded to WebP within
 * MAX_SIDE pixels a side on the avatars' bounded decoders, and kept on disk under
 * DATA_DIR/media/ up to a size cap, least recently used first out. Failures are remembered for
 * FAILURE_MS so a broken image is not fetched at every view.
 */
export const MAX_SIDE = 1024;
/** The cache's size on disk at most (MEDIA_CACHE_MB). */
export const DEFAULT_CACHE_BYTES = 256 * 1024 * 1024;
export const FAILURE_MS = 10 * 60 * 1000;
export const MEDIA_MAX_AGE_S = 365 * 24 * 60 * 60;

export interface MediaProxy {
  /** The cached WebP of a signed URL, fetched and re-encoded first if need be: its bytes. 403 for a bad signature. */
  image(sig: string, encoded: string): Promise<Buffer>;
  /** Bytes on disk now (tests, metrics). */
  readonly cachedBytes: number;
}

export function createMediaProxy({
  dataDir,
  log,
  clock,
  media,
  rules,
  avatars,
  cacheBytes = DEFAULT_CACHE_BYTES,
}: {
  dataDir: string;
  log: Log;
  clock: Clock;
  media: MediaUrls;
  rules: FetchRules;
  avatars: Pick<Avatars, 'reencode'>;
  cacheBytes?: number;
}): MediaProxy {
  const dir = path.join(dataDir, 'media');
  fs.mkdirSync(dir, { recursive: true });
  /** What is on disk, least recently used first (a Map keeps insertion order: a use moves a key to the end). */
  const entries = new Map<string, number>();
  let total = 0;
  for (const name of fs.readdirSync(dir)) {
    const file = path.join(dir, name);
    if (!name.endsWith('.webp')) {
      fs.rmSync(file, { force: true });
      continue;
    }
    const size = fs.statSync(file).size;
    entries.set(name.slice(0, -'.webp'.length), size);
    total += size;
  }
  const failures = new Map<string, { until: number; error: HttpError }>();
  const inFlight = new Map<string, Promise<Buffer>>();
  const fileOf = (key: string) => path.join(dir, `${key}.webp`);

  const evict = () => {
    for (const [key, size] of entries) {
      if (total <= cacheBytes) break;
      entries.delete(key);
      total -= size;
      fs.rm(fileOf(key), { force: true }, (err) => err && log(`media cache: could not remove ${key}: ${err.message}`));
    }
  };

  async function fetchAndStore(remote: string, key: string): Promise<Buffer> {
    let body: Buffer;
    try {
      body = (await safeFetch(remote, 'image', rules)).body;
    } catch (err) {
      if (err instanceof FetchRefused) throw new HttpError(404, `the image could not be fetched: ${err.message}`);
      throw err;
    }
    const part = path.join(dir, `${crypto.randomUUID()}.part`);
    const encoded = `${part}.out`;
    try {
      await fs.promises.writeFile(part, body);
      try {
        await avatars.reencode(part, encoded, MAX_SIDE);
      } catch (err) {
        if (err instanceof HttpError && err.status === 400) throw new HttpError(415, 'the image is not a PNG, JPEG, GIF or WebP image that can be read');
        throw err;
      }
      const bytes = await fs.promises.readFile(encoded);
      await fs.promises.rename(encoded, fileOf(key));
      entries.set(key, bytes.length);
      total += bytes.length;
      evict();
      return bytes;
    } finally {
      await Promise.all([part, encoded].map((file) => fs.promises.rm(file, { force: true })));
    }
  }

  return {
    async image(sig, encoded) {
      const remote = media.open(sig, encoded);
      if (remote === null) throw forbidden('this media URL is not signed by this server');
      const key = crypto.createHash('sha256').update(remote).digest('hex');
      const size = entries.get(key);
      if (size !== undefined) {
        const bytes = await fs.promises.readFile(fileOf(key)).catch(() => null);
        if (bytes) {
          entries.delete(key);
          entries.set(key, size);
          return bytes;
        }
        entries.delete(key);
        total -= size;
      }
      const failed = failures.get(key);
      if (failed && failed.until > clock.now()) throw failed.error;
      const known = inFlight.get(key);
      if (known) return known;
      const promise = fetchAndStore(remote, key)
        .catch((err: unknown) => {
          // 503 (the decoders are busy) is worth another try soon; a refusal is not.
          if (err instanceof HttpError && err.status !== 503) {
            if (failures.size >= 10_000) failures.delete(failures.keys().next().value!);
            failures.set(key, { until: clock.now() + FAILURE_MS, error: err });
          }
          throw err;
        })
        .finally(() => inFlight.delete(key));
      inFlight.set(key, promise);
      return promise;
    },
    get cachedBytes() {
      return total;
    },
  };
}
