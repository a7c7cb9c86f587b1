import { type Clock, MINUTE, HOUR, SECOND } from '../core/clock';
import { RateLimiter } from '../core/ratelimit';

/**
 * Every rate limit of the service, with its default (README "Rate limits").
 * RATE_LIMIT=off builds them all disabled.
 */
export const LIMIT_POLICIES = {
  /** Failed logins per account: 5, then one more every minute. */
  loginFailuresPerAccount: { burst: 5, refillMs: MINUTE },
  /** Failed logins per client address: 20, then one more every 30 s. */
  loginFailuresPerClient: { burst: 20, refillMs: 30 * SECOND },
  /**
   * Remembered-device sign-ins per client address: 60, then one a second (a restart brings every
   * browser behind one address back at once; each secret is 256 random bits, so this is for load).
   */
  deviceResumesPerClient: { burst: 60, refillMs: SECOND },
  /** Registrations per client address: 10, then one every 6 minutes (sign-ups through a provider too). */
  registrationsPerClient: { burst: 10, refillMs: 6 * MINUTE },
  /**
   * Sign-ins with an OpenID Provider started per client address: 20, then one every 30 s (each
   * holds a flow in memory for 10 minutes and may ask the provider for its metadata).
   */
  ssoStartsPerClient: { burst: 20, refillMs: 30 * SECOND },
  /**
   * Passkey sign-in challenges per client address: 120, then two a second. The sign-in page asks
   * for one at each visit (the conditional UI), many people may share an address (a school's),
   * and the server keeps nothing for one until it is answered: this is for the CPU only.
   */
  passkeyChallengesPerClient: { burst: 120, refillMs: 500 },
  /** Verification and reset emails per address: 3, then one every 20 minutes. */
  emailsPerAddress: { burst: 3, refillMs: 20 * MINUTE },
  /** Verification and reset emails per client address: 10, then one every 6 minutes. */
  emailsPerClient: { burst: 10, refillMs: 6 * MINUTE },
  /** Messages per user: a burst of 20 for fast typing, then 2 per second. */
  messagesPerUser: { burst: 20, refillMs: 500 },
  /** Friend requests per user: 20, then one every 3 minutes. */
  friendRequestsPerUser: { burst: 20, refillMs: 3 * MINUTE },
  /** Reports per user: 10, then one every 6 minutes (60 an hour at most after the burst). */
  reportsPerUser: { burst: 10, refillMs: HOUR / 10 },
  /** Reactions added or removed per user: 30, then 3 a second (a toggle loop cannot flood a room). */
  reactionsPerUser: { burst: 30, refillMs: 333 },
  /** Searches per user: 20, then 2 a second (each is a scan of the index). */
  searchesPerUser: { burst: 20, refillMs: 500 },
  /** Account exports started per user: 3, then one an hour (each reads every message and file of the user). */
  exportsPerUser: { burst: 3, refillMs: HOUR },
  /** Server exports per user: 3, then one an hour (each reads every message and file of the server). */
  serverExportsPerUser: { burst: 3, refillMs: HOUR },
  /** Discord exports uploaded per user: 3, then one an hour (each is unpacked and read whole). */
  importsPerUser: { burst: 3, refillMs: HOUR },
  /** Claim codes tried per user: 10, then one every 6 minutes (a code is 59 random bits; this is for noise). */
  claimsPerUser: { burst: 10, refillMs: 6 * MINUTE },
  /** Avatar uploads per user: 5, then one every 20 seconds (each is decoded and resized). */
  avatarsPerUser: { burst: 5, refillMs: 20 * SECOND },
  /** Servers created per user: 10, then one every 10 minutes. */
  serversPerUser: { burst: 10, refillMs: 10 * MINUTE },
  /** Whole servers or everything marked read per user: 20, then one every 3 seconds (each reads every channel's state). */
  markAllReadPerUser: { burst: 20, refillMs: 3 * SECOND },
  /** Push subscriptions made per user: 10, then one a minute (each looks its endpoint's host up). */
  pushSubscriptionsPerUser: { burst: 10, refillMs: MINUTE },
  /** Messages through one webhook: 5, then one every 400 ms (Discord's 5 per 2 s). */
  webhookCallsPerWebhook: { burst: 5, refillMs: 400 },
  /** Webhook messages into one channel, all its webhooks together: 30, then one every 2 s (Discord's 30 a minute). */
  webhookCallsPerChannel: { burst: 30, refillMs: 2 * SECOND },
  /** Threads and forum posts started per user: 20, then one every 15 seconds. */
  threadsPerUser: { burst: 20, refillMs: 15 * SECOND },
  /** Channels, roles and invites created per user: 50, then one every 6 seconds. */
  creationsPerUser: { burst: 50, refillMs: 6 * SECOND },
  /**
   * Links fetched for previews of one user's messages: 30, then one every 2 s; and of one server's
   * (or conversation's): 120, then two a second. Past them links go without a card (src/parts/messages/previews.ts).
   */
  previewFetchesPerUser: { burst: 30, refillMs: 2 * SECOND },
  previewFetchesPerServer: { burst: 120, refillMs: 500 },
} as const;

export type Limits = { -readonly [K in keyof typeof LIMIT_POLICIES]: RateLimiter };

export function createLimits(clock: Clock, enabled: boolean): Limits {
  const limits = {} as Limits;
  for (const [name, policy] of Object.entries(LIMIT_POLICIES)) {
    limits[name as keyof Limits] = new RateLimiter(name, policy, clock, enabled);
  }
  return limits;
}

/**
 * A login attempt, or a password or code re-typed while signed in: counted as a failure per
 * account and per client address before the slow check (so parallel guesses cannot all pass
 * the check first), and given back once it succeeds. 429 when either budget is used up.
 */
export function createLoginGuard(limits: Pick<Limits, 'loginFailuresPerAccount' | 'loginFailuresPerClient'>) {
  const perAccount = limits.loginFailuresPerAccount;
  const perClient = limits.loginFailuresPerClient;
  return {
    /** accountKey: the lower-case username, or null when the name cannot be an account. */
    begin(accountKey: string | null, client: string) {
      if (accountKey) perAccount.check(accountKey, 'failed logins for this account');
      perClient.check(client, 'failed logins from this address');
      if (accountKey) perAccount.spend(accountKey);
      perClient.spend(client);
      return {
        accountKey,
        succeeded() {
          if (accountKey) perAccount.refund(accountKey);
          perClient.refund(client);
        },
      };
    },
  };
}
