/**
 * Channel permissions (issue 30): what a member may do in one channel, resolved the way Discord
 * resolves it. This module is the rule alone, pure and small, so every place that decides asks
 * the same function: the server's default for everyone and the flags of the member's roles, then
 * the channel's overwrites for everyone, for the member's roles combined, and for the member,
 * the more specific one winning. src/rules/channel-access.ts applies it to each server's rules
 * kept in memory; src/rules/permissions.ts answers the routes with it.
 */

/**
 * The moderators' flags (issue 53), Discord's server-level permissions. Channel-scoped (overwrites
 * apply, as on Discord): manage_messages, manage_channels, manage_roles (in a channel: its
 * overwrites), manage_webhooks; the others are the server's (serverFlags below).
 */
export const MODERATOR_FLAGS = [
  'manage_messages',
  'moderate_members',
  'kick_members',
  'ban_members',
  'manage_channels',
  'manage_roles',
  'manage_server',
  'manage_webhooks',
  'view_audit_log',
] as const;

/**
 * The flags, in the order they are listed (namesOf); each one's stored bit is in BITS below (a
 * new flag takes a new bit, and schema.sql's default and the migration that brought it name it).
 * Threads (issue 49): create_public_threads, create_private_threads, send_messages_in_threads,
 * manage_threads. Voice (issue 48): connect (join a voice channel), speak, video (camera and
 * screen), and the voice moderators' mute_members, deafen_members and move_members.
 */
export const FLAGS = [
  'view_channel',
  'send_messages',
  'attach_files',
  'add_reactions',
  'mention_everyone',
  'read_history',
  // Threads (issue 49): bits 6 to 9.
  'create_public_threads',
  'create_private_threads',
  'send_messages_in_threads',
  'manage_threads',
  // Voice (issue 48): bits 10 to 15.
  'connect',
  'speak',
  'video',
  'mute_members',
  'deafen_members',
  'move_members',
  // Issue 50: manage_emojis (server-wide: serverFlags below), send_polls (channel-scoped).
  'manage_emojis',
  'send_polls',
  // Issue 53, the moderators' flags: bits 18 to 26.
  ...MODERATOR_FLAGS,
] as const;
export type Flag = (typeof FLAGS)[number];
/** A set of flags as a bit mask. */
export type Flags = number;

/**
 * Each flag's bit in a stored mask (never renumbered). Bits 6 to 9 belong to the thread flags
 * (issue 49: create_public_threads, create_private_threads, send_messages_in_threads,
 * manage_threads); the voice flags take 10 to 15; manage_emojis 16 and send_polls 17 (issue 50).
 * The moderators' flags (issue 53) take 18 to 26.
 */
const BITS: Record<Flag, number> = {
  view_channel: 0,
  send_messages: 1,
  attach_files: 2,
  add_reactions: 3,
  mention_everyone: 4,
  read_history: 5,
  create_public_threads: 6,
  create_private_threads: 7,
  send_messages_in_threads: 8,
  manage_threads: 9,
  connect: 10,
  speak: 11,
  video: 12,
  mute_members: 13,
  deafen_members: 14,
  move_members: 15,
  manage_emojis: 16,
  send_polls: 17,
  manage_messages: 18,
  moderate_members: 19,
  kick_members: 20,
  ban_members: 21,
  manage_channels: 22,
  manage_roles: 23,
  manage_server: 24,
  manage_webhooks: 25,
  view_audit_log: 26,
};

export const NONE: Flags = 0;
// JavaScript's bit operators work on 32-bit integers: bits 0 to 30 at most, or the masks go wrong.
if (Math.max(...Object.values(BITS)) > 30) throw new Error('at most 31 permission flags fit a bit mask');
const bit = (flag: Flag): Flags => 1 << BITS[flag];
export const ALL: Flags = FLAGS.reduce((all, flag) => all | bit(flag), 0);
export const VIEW = bit('view_channel');
const SEND = bit('send_messages');
/** What one may do only in what one writes: without send_messages, none of it (step 7 below). */
const IN_WHAT_ONE_WRITES = bit('attach_files') | bit('mention_everyone') | bit('send_polls');
const SEND_IN_THREADS = bit('send_messages_in_threads');
/** Making threads: nothing a thread itself offers (step 8 below). */
const MAKING_THREADS = bit('create_public_threads') | bit('create_private_threads');
const CONNECT = bit('connect');
/** What one does only in a voice channel one is connected to: without connect, none of it (step 9). */
const IN_VOICE = bit('speak') | bit('video');

/**
 * The moderators' flags of issue 53: none is anyone's by default, and a role given one acts only
 * below its place in the hierarchy (src/rules/permissions.ts).
 */
export const MODERATION: Flags = MODERATOR_FLAGS.reduce((all, flag) => all | bit(flag), 0);

/**
 * Every power a role may carry beyond taking part (issue 53): the moderators' flags, managing
 * threads and emoji, the voice moderators' three, and @everyone. A self-assignable role carries
 * none of them (nor full_server_admin); two-factor for moderators guards all but @everyone.
 */
export const POWERS: Flags =
  MODERATION | bit('manage_threads') | bit('manage_emojis') | bit('mute_members') | bit('deafen_members') | bit('move_members') | bit('mention_everyone');
/** The powers a server that asks two-factor of its moderators refuses to an account without it. */
export const TWO_FACTOR_POWERS: Flags = POWERS & ~bit('mention_everyone');

/**
 * What everyone on a server may do when nothing says otherwise: what every member could do before
 * channel permissions existed, start and talk in threads (as Discord's @everyone may), connect,
 * speak and use video in voice channels, and send polls. `@everyone`, managing threads, the voice
 * moderators' flags, managing emoji and the moderators' flags (MODERATION) stay with the owner,
 * full server administrators and the roles given them. (138735; the servers' default.)
 */
export const EVERYONE_DEFAULT: Flags =
  ALL &
  ~(bit('mention_everyone') | bit('manage_threads') | bit('mute_members') | bit('deafen_members') | bit('move_members') | bit('manage_emojis') | MODERATION);

/**
 * What `subject` may do in the server as a whole, for the flags that are the server's rather than
 * a channel's (manage_emojis, moderate_members, kick_members, ban_members, manage_server,
 * view_audit_log; the others are resolved per channel by `resolve`, and a channel-scoped flag
 * asked of the server as a whole, such as manage_channels to make a channel, is read here too:
 * what roles give, before any overwrite): the owner and full server administrators, every flag;
 * otherwise the server's flags for everyone with those of every role they hold. No channel
 * overwrite counts: these flags are about the server, not a channel.
 */
export function serverFlags(everyone: Flags, roleFlags: ReadonlyMap<string, Flags>, subject: Subject): Flags {
  if (subject.moderator) return ALL;
  let flags = everyone;
  for (const roleId of subject.roleIds) flags |= roleFlags.get(roleId) ?? NONE;
  return flags & ALL;
}

export function flagsOf(names: readonly Flag[]): Flags {
  let flags = NONE;
  for (const name of names) flags |= bit(name);
  return flags;
}

// Each set's names, made at its first use and kept: records carry them by the thousand, and a
// server uses few distinct sets (a table of every set would be 2^flags arrays).
const NAMES = new Map<Flags, Flag[]>();

/** The names of a set of flags, in FLAGS order (shared arrays: not to be changed). */
export function namesOf(flags: Flags): Flag[] {
  const set = flags & ALL;
  let names = NAMES.get(set);
  if (names === undefined) {
    names = FLAGS.filter((flag) => (set & bit(flag)) !== 0);
    NAMES.set(set, names);
  }
  return names;
}

export const has = (flags: Flags, flag: Flag): boolean => (flags & bit(flag)) !== 0;

/** One overwrite of a channel: for everyone, one role, or one member. */
export interface Overwrite {
  kind: 'everyone' | 'role' | 'member';
  /** The role's or member's id ('everyone': the server's id). */
  targetId: string;
  allow: Flags;
  deny: Flags;
}

/** Who is asking, as the server sees them. */
export interface Subject {
  userId: string;
  /** The owner, or a holder of a full_server_admin role: they may do everything (a timeout stops writing, not this). */
  moderator: boolean;
  roleIds: ReadonlySet<string>;
}

/**
 * The flags `subject` has in a channel:
 * 1. the owner and full server administrators: everything;
 * 2. otherwise the server's flags for everyone, with the flags of every role they hold added;
 * 3. the channel's overwrite for everyone: its deny removes, its allow adds;
 * 4. the overwrites of the roles they hold, combined: all their denies remove, then all their
 *    allows add (so one role allowing beats another denying);
 * 5. the overwrite for them alone: its deny removes, its allow adds (the most specific wins);
 * 6. without view_channel, nothing else counts: the channel does not exist for them;
 * 7. Discord's implicit rule: without send_messages, no attach_files, no mention_everyone and no
 *    send_polls either (they are done in a message one sends), so what a client is told it may do is what
 *    the server lets it do;
 * 8. In a thread (`inThread`: the overwrites are its parent's, which it inherits), Discord's
 *    inherited permissions: send_messages is what send_messages_in_threads says (step 7 then
 *    applies to it), and no thread is made inside a thread. Whether a private thread is seen at
 *    all (a member of it, or manage_threads) is src/rules/channel-access.ts's to decide;
 * 9. step 7's voice twin: without connect, no speak and no video (they are done in a voice
 *    channel one is in).
 */
export function resolve(everyone: Flags, roleFlags: ReadonlyMap<string, Flags>, subject: Subject, overwrites: readonly Overwrite[], inThread = false): Flags {
  if (subject.moderator) return inThread ? ALL & ~MAKING_THREADS : ALL;
  let flags = everyone;
  for (const roleId of subject.roleIds) flags |= roleFlags.get(roleId) ?? NONE;
  const apply = (deny: Flags, allow: Flags) => {
    flags = (flags & ~deny) | allow;
  };
  const forEveryone = overwrites.find((o) => o.kind === 'everyone');
  if (forEveryone) apply(forEveryone.deny, forEveryone.allow);
  let roleDeny = NONE;
  let roleAllow = NONE;
  for (const o of overwrites) {
    if (o.kind === 'role' && subject.roleIds.has(o.targetId)) {
      roleDeny |= o.deny;
      roleAllow |= o.allow;
    }
  }
  apply(roleDeny, roleAllow);
  const forMember = overwrites.find((o) => o.kind === 'member' && o.targetId === subject.userId);
  if (forMember) apply(forMember.deny, forMember.allow);
  if (!(flags & VIEW)) return NONE;
  if (inThread) flags = (flags & SEND_IN_THREADS ? flags | SEND : flags & ~SEND) & ~MAKING_THREADS;
  if (!(flags & SEND)) flags &= ~IN_WHAT_ONE_WRITES;
  if (!(flags & CONNECT)) flags &= ~IN_VOICE;
  return flags & ALL;
}
