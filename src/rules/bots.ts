import { HttpError } from '../core/http/errors';

/**
 * What a bot account may do (docs/api.md "Bots"): every route a member can use, through
 * `Authorization: Bot <token>`, but nothing that belongs to a person's account: the account
 * itself (password, two-factor, sessions, e-mail, export, push, notifications, signing in
 * through a provider or with a passkey), imports from
 * Discord, making servers, and the bot management of its own kind (a bot owns no bots).
 */
const REFUSED: { method?: string; prefix: string }[] = [
  { prefix: '/api/account' },
  { prefix: '/api/auth' },
  { prefix: '/api/login/passkey' },
  { prefix: '/api/imports' },
  { prefix: '/api/logout' },
  { prefix: '/api/bots' },
  { method: 'POST', prefix: '/api/servers' },
];

/** Throws 403 when a bot calls a route that is a person's. `path` is the route's pattern. */
export function assertBotMayUse(method: string, path: string): void {
  for (const rule of REFUSED) {
    if (rule.method && rule.method !== method) continue;
    if (rule.method ? path === rule.prefix : path === rule.prefix || path.startsWith(`${rule.prefix}/`)) {
      throw new HttpError(403, 'bots cannot use this endpoint: it belongs to a person’s account');
    }
  }
  if (/^\/api\/servers\/:server_id\/export$/.test(path)) throw new HttpError(403, 'bots cannot export servers');
}
