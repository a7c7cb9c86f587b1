/**
 * AutoMod's rules (issue 53), in Discord's shape
 * (https://discord.com/developers/docs/resources/auto-moderation): a rule has one trigger and one
 * to three actions. What each trigger sees in a message is a pure function of its text here; the
 * rules' store, their cache and their actions are src/parts/messages/automod.ts's.
 */

export const TRIGGER_TYPES = ['keyword', 'mention_spam', 'spam', 'links', 'invite_links'] as const;
export type TriggerType = (typeof TRIGGER_TYPES)[number];
export const ACTION_TYPES = ['block_message', 'send_alert_message', 'timeout'] as const;
export type ActionType = (typeof ACTION_TYPES)[number];

export type Trigger =
  | { type: 'keyword'; keyword_filter: string[]; allow_list: string[] }
  | { type: 'mention_spam'; mention_total_limit: number }
  | { type: 'spam' }
  | { type: 'links'; allow_list: string[] }
  | { type: 'invite_links' };

export type Action =
  { type: 'block_message'; custom_message: string | null } | { type: 'send_alert_message'; channel_id: string } | { type: 'timeout'; duration_seconds: number };

export interface AutomodRule {
  id: string;
  server_id: string;
  name: string;
  enabled: boolean;
  trigger: Trigger;
  actions: Action[];
  exempt_role_ids: string[];
  exempt_channel_ids: string[];
  creator_id: string;
  created_at: string;
}

/** Rules of each kind one server may have (Discord: 6 keyword rules, one of each other kind). */
export const MAX_RULES_OF_TYPE: Record<TriggerType, number> = { keyword: 6, mention_spam: 1, spam: 1, links: 1, invite_links: 1 };
export const MAX_KEYWORDS = 1000;
export const MAX_KEYWORD_CHARS = 60;
export const MAX_ALLOW_LIST = 100;
export const MAX_MENTION_LIMIT = 50;
export const MAX_RULE_NAME_CHARS = 100;
export const MAX_CUSTOM_MESSAGE_CHARS = 150;
export const MAX_EXEMPT_ROLES = 20;
export const MAX_EXEMPT_CHANNELS = 50;

/**
 * The spam trigger's thresholds: a member's message is spam when it is the
 * SPAM_SAME_CHANNELS-th copy of one text in as many different channels of the server within
 * SPAM_WINDOW_MS, or when it is more than SPAM_BURST_MESSAGES messages in the server within
 * SPAM_BURST_MS. Counted in memory, per server and member.
 */
export const SPAM_SAME_CHANNELS = 3;
export const SPAM_WINDOW_MS = 60_000;
export const SPAM_BURST_MESSAGES = 5;
export const SPAM_BURST_MS = 5_000;

// @name as src/parts/messages/mentions.ts reads one (and @everyone, @here).
const MENTION = /(?<![A-Za-z0-9_@.-])@([A-Za-z0-9_-]{3,32})(?![A-Za-z0-9_-])/g;

/**
 * The distinct @names of a message, whether or not each names someone (a flood of made-up names
 * is a flood too), as Discord counts unique user and role mentions. Most messages have no `@`.
 */
export function distinctMentions(content: string): number {
  if (!content.includes('@')) return 0;
  const names = new Set<string>();
  for (const m of content.matchAll(MENTION)) names.add(m[1].toLowerCase());
  return names.size;
}

// A link: a scheme and a host, or a bare `www.` host (what a client turns into a link).
const LINK = /\b(?:https?:\/\/|www\.)([^\s/?#<>"'`\\]+)/gi;

/** The host names of the links in a message, lower-cased, without a port or user part. */
export function linkHosts(content: string): string[] {
  if (!content.includes('://') && !/www\./i.test(content)) return [];
  const hosts: string[] = [];
  for (const m of content.matchAll(LINK)) {
    let host = m[1].toLowerCase();
    host = host
      .slice(host.lastIndexOf('@') + 1)
      .replace(/:\d*$/, '')
      .replace(/\.$/, '');
    if (m[0].toLowerCase().startsWith('www.')) host = `www.${host}`;
    hosts.push(host);
  }
  return hosts;
}

/** Whether `host` is `domain` or a subdomain of it. */
export const withinDomain = (host: string, domain: string): boolean => host === domain || host.endsWith(`.${domain}`);

// Discord's invite links, with or without a scheme.
const DISCORD_INVITE = /\b(?:discord\.gg|discord(?:app)?\.com\/invite)\/[A-Za-z0-9-]+/i;
// Our own invite links (/invites/{token}, /api/invites/{token}) and a bare token (24 base64url characters).
const OUR_INVITE = /\/invites\/([A-Za-z0-9_-]{24})(?![A-Za-z0-9_-])|(?<![A-Za-z0-9_-])([A-Za-z0-9_-]{24})(?![A-Za-z0-9_-])/g;

export const hasDiscordInvite = (content: string): boolean => DISCORD_INVITE.test(content);

/** Words of a message that could be one of our invite tokens (a link's, or alone). */
export function inviteTokenCandidates(content: string): string[] {
  if (content.length < 24) return [];
  const found = new Set<string>();
  for (const m of content.matchAll(OUR_INVITE)) {
    const token = m[1] ?? m[2];
    if (token) found.add(token);
    if (found.size >= 10) break;
  }
  return [...found];
}
