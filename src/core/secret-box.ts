import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/** The key file in the data directory, made at first start when SECRET_KEY is not set. */
export const KEY_FILE = 'secret.key';

/**
 * Encrypts the few secrets the database must hold in a form it can read back (TOTP secrets), so
 * that a copy of chat.db alone signs nobody in: AES-256-GCM under a key kept outside the
 * database, bound to the row it belongs to (a secret copied to another user's row does not open).
 */
export interface SecretBox {
  seal(plain: string, boundTo: string): string;
  /** null when the text was not sealed under this key for this row (a lost or changed key). */
  open(sealed: string, boundTo: string): string | null;
}

/** SECRET_KEY if set; otherwise DATA_DIR/secret.key, created with mode 0600 the first time. */
export function loadSecretKey(dataDir: string, fromEnv: Buffer | null): Buffer {
  if (fromEnv) return fromEnv;
  const file = path.join(dataDir, KEY_FILE);
  try {
    // wx: never overwrite a key that exists (another start, a restore) — losing it loses every secret.
    fs.writeFileSync(file, `${crypto.randomBytes(32).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const text = fs.readFileSync(file, 'utf8').trim();
  if (!/^[0-9a-f]{64}$/i.test(text)) throw new Error(`${file} must hold 64 hex digits (32 bytes)`);
  return Buffer.from(text, 'hex');
}

export function createSecretBox(key: Buffer): SecretBox {
  return {
    seal(plain, boundTo) {
      const iv = crypto.randomBytes(12);
      const cipher = crypto.createCipheriv('aes-256-gcm', key, iv);
      cipher.setAAD(Buffer.from(boundTo));
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return ['v1', iv, cipher.getAuthTag(), body].map((part) => (typeof part === 'string' ? part : part.toString('base64url'))).join('.');
    },
    open(sealed, boundTo) {
      const [version, iv, tag, body] = sealed.split('.');
      if (version !== 'v1' || !iv || !tag || body === undefined) return null;
      try {
        const decipher = crypto.createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
        decipher.setAAD(Buffer.from(boundTo));
        decipher.setAuthTag(Buffer.from(tag, 'base64url'));
        return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
      } catch {
        return null;
      }
    },
  };
}
