import { HttpError } from '../core/http/errors';

/**
 * Account standing (spec section 3): the one place that decides what a standing allows.
 * Levels are cumulative: each restriction applies at its level and every level above.
 */
export const SUSPENDED = 4;

export type RestrictedAction = 'join_server' | 'create_group' | 'send_private_message' | 'send_message';

/** The lowest standing at which each action is blocked. */
const BLOCKED_FROM: Record<RestrictedAction, { level: number; reason: string }> = {
  join_server: { level: 1, reason: 'your account standing (limited) does not allow joining servers' },
  create_group: { level: 2, reason: 'your account standing (very limited) does not allow creating group chats' },
  send_private_message: {
    level: 2,
    reason: 'your account standing (very limited) does not allow sending direct or group messages',
  },
  send_message: { level: 3, reason: 'your account standing (at risk) does not allow sending messages' },
};

export function allows(standing: number, action: RestrictedAction): boolean {
  return standing < BLOCKED_FROM[action].level;
}

/** Throws 403 naming the restriction when the standing blocks the action. */
export function assertAllowed(user: { standing: number }, action: RestrictedAction): void {
  if (!allows(user.standing, action)) throw new HttpError(403, BLOCKED_FROM[action].reason);
  // Sending in a DM or group is also sending a message: level 3 blocks it too.
  if (action === 'send_private_message') assertAllowed(user, 'send_message');
}

export const SUSPENDED_REASON = 'your account is suspended; see /account/warnings';

/**
 * A bot stands as its owner (docs/api.md "Bots"): its standing is the higher of its own and its
 * owner's, so a person restricted or suspended cannot act through their bots, and the bots are
 * restored with them. The reasons are the owner's.
 */
export const botStanding = (own: number, ownerStanding: number | null): number => Math.max(own, ownerStanding ?? 0);

/** Warnings map to standing one for one, capped at suspension. */
export const standingForWarnings = (count: number): number => Math.min(count, SUSPENDED);
