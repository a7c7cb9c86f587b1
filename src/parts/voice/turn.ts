import { createHmac } from 'node:crypto';

/**
 * Time-limited TURN credentials for coturn's `use-auth-secret` (the "TURN REST API" of
 * draft-uberti-behave-turn-rest): the username is `<expiry>:<user>`, the expiry in Unix seconds,
 * and the password is base64(HMAC-SHA1(secret, username)). coturn recomputes the password from
 * the secret it shares with us and refuses a username whose expiry has passed, so a credential
 * handed to a browser with a join is worth nothing after `ttlSeconds` and nothing to anyone
 * without the secret. The user part only labels the allocation in coturn's log.
 */
export interface TurnCredentials {
  username: string;
  credential: string;
  /** When the username stops working, milliseconds since the epoch. */
  expiresAt: number;
}

/** How long a TURN credential lasts by default: longer than a long evening in voice (a join hands out a fresh one). */
export const TURN_CREDENTIAL_TTL_SECONDS = 6 * 60 * 60;

export function turnCredentials(secret: string, user: string, nowMs: number, ttlSeconds = TURN_CREDENTIAL_TTL_SECONDS): TurnCredentials {
  const expiry = Math.floor(nowMs / 1000) + ttlSeconds;
  const username = `${expiry}:${user}`;
  return { username, credential: createHmac('sha1', secret).update(username).digest('base64'), expiresAt: expiry * 1000 };
}
