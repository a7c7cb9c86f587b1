import crypto from 'node:crypto';
import type { MessageRecord } from './message-record';

/**
 * Where the browser gets a remote image: `/api/media/{sig}/{url}`, the URL in base64url and
 * signed (HMAC-SHA256 with a key derived from the server's secret key), so the proxy serves only
 * URLs the server itself put in a record and cannot be used to fetch arbitrary ones
 * (src/api/media.ts serves them under the fetch rules).
 */
export const MEDIA_PATH = '/api/media';
/** Signature characters kept (base64url of the first 24 bytes of the HMAC: 192 bits). */
const SIG_CHARS = 32;

export interface MediaUrls {
  /** The proxy's path for a remote http(s) image URL. */
  url(remote: string): string;
  /** The remote URL a path's two parts name, or null when the signature does not match. */
  open(sig: string, encoded: string): string | null;
}

/** `key`: the server's secret key; the media key is derived from it (HKDF), never the key itself. */
export function createMediaUrls(secretKey: Buffer): MediaUrls {
  const key = Buffer.from(crypto.hkdfSync('sha256', secretKey, Buffer.alloc(0), 'chat media proxy v1', 32));
  const sign = (remote: string) => crypto.createHmac('sha256', key).update(remote).digest('base64url').slice(0, SIG_CHARS);
  return {
    url: (remote) => `${MEDIA_PATH}/${sign(remote)}/${Buffer.from(remote).toString('base64url')}`,
    open(sig, encoded) {
      if (!/^[A-Za-z0-9_-]+$/.test(encoded) || sig.length !== SIG_CHARS) return null;
      const remote = Buffer.from(encoded, 'base64url').toString('utf8');
      const expected = Buffer.from(sign(remote));
      return crypto.timingSafeEqual(expected, Buffer.from(sig.padEnd(SIG_CHARS).slice(0, SIG_CHARS))) ? remote : null;
    },
  };
}

/**
 * A record as the browser gets it: each embed says its `type`, and every remote image it would
 * show (embed images and thumbnails, a webhook's avatar) has its proxy URL beside the original.
 */
export function withMediaUrls(record: MessageRecord, media: MediaUrls): MessageRecord {
  if (record.webhook_avatar_url !== undefined) record.webhook_avatar_proxy_url = media.url(record.webhook_avatar_url);
  for (const embed of record.embeds ?? []) {
    embed.type ??= 'rich';
    if (embed.image) embed.image.proxy_url = media.url(embed.image.url);
    if (embed.thumbnail) embed.thumbnail.proxy_url = media.url(embed.thumbnail.url);
  }
  return record;
}
