import { type UserRef, userRef } from './types';

/**
 * The records the API answers with and the sockets send, as TypeScript sees them: shaped once
 * here, below every part, so the stores that build them and the event catalogue that sends them
 * (src/parts/delivery/events.ts) name the same types. Their JSON Schemas are in docs/openapi.json.
 */

/** What a user chose: others see invisible as offline. */
export type Status = 'online' | 'idle' | 'dnd' | 'invisible';
/** What others see. */
export type Shown = 'online' | 'idle' | 'dnd' | 'offline';

export interface ServerRecord {
  id: string;
  name: string;
  owner_id: string;
  created_at: string;
  description: string;
  /** The channel permissions everyone has unless a channel's overwrites say otherwise. */
  permissions: string[];
  /** Links posted here get preview cards (docs/api.md "Link previews"); LINK_PREVIEWS=off overrides it. */
  link_previews: boolean;
  /** Who may post (docs/moderation.md "Verification levels"): 0 anyone, 1 a verified email, 2 an account older than 5 minutes, 3 a member for 10 minutes. */
  verification_level: VerificationLevel;
  /** A moderator's power is refused to an account without two-factor sign-in. */
  two_factor_for_moderators: boolean;
  /** Joins per minute past which join_rate_action happens; 0: off (docs/moderation.md "Raid protection"). */
  join_rate_threshold: number;
  join_rate_action: JoinRateAction;
  /** Invites take nobody in while set. */
  invites_paused: boolean;
  /** Nobody joins, by any way, until a moderator resumes (set by join-rate protection or by hand). */
  joins_paused: boolean;
}

export const VERIFICATION_LEVELS = [0, 1, 2, 3] as const;
export type VerificationLevel = (typeof VERIFICATION_LEVELS)[number];
/** What join-rate protection does past its threshold: pause joins (and alert), or alert only. */
export const JOIN_RATE_ACTIONS = ['pause', 'alert', 'screen'] as const;
export type JoinRateAction = (typeof JOIN_RATE_ACTIONS)[number];
/** What keeps the caller from posting in a server now (src/rules/verification.ts), or null. */
export interface PostingGate {
  reason: string;
  /** When it lifts by itself (ISO 8601); null when only the member can lift it (verify an email). */
  until: string | null;
}

/** The kinds of channel there are; every channel record carries its `type`. */
export const CHANNEL_TYPES = ['text', 'forum', 'thread', 'voice'] as const;
export type ChannelType = (typeof CHANNEL_TYPES)[number];
/** The kinds `POST …/channels` makes (a thread is made with `POST …/channels/{channel_id}/threads`). */
export const LISTED_CHANNEL_TYPES = CHANNEL_TYPES.filter((type) => type !== 'thread');

/** How a forum lists its posts by default. */
export const FORUM_SORTS = ['latest_activity', 'creation'] as const;
export type ForumSort = (typeof FORUM_SORTS)[number];

/** A tag a forum's posts may carry (docs/api.md "Threads and forums"). */
export interface ForumTag {
  id: string;
  name: string;
  /** One emoji, or null. */
  emoji: string | null;
  /** Only a member with manage_threads applies (or removes) it. */
  moderated: boolean;
}

export interface ChannelRecord {
  id: string;
  server_id: string;
  /** What kind of channel it is ('text' unless made otherwise). */
  type: ChannelType;
  /** The channel it belongs to, or null (every channel today: threads will have one). */
  parent_id: string | null;
  name: string;
  position: number;
  created_at: string;
  topic: string;
  slowmode_seconds: number;
  /** The category it is listed under, or null. */
  category_id: string | null;
  /** Follows its category's permission overwrites (true), or has its own (false). */
  permissions_synced: boolean;
  /** A forum's: the tags its posts may carry (at most 20). Absent on other channels. */
  available_tags?: ForumTag[];
  /** A forum's: the reaction a post starts with the offer of, or null. */
  default_reaction?: string | null;
  /** A forum's: how its posts are listed by default. */
  default_sort?: ForumSort;
  /** A voice channel's: at most this many people in it at once (0: no limit). */
  user_limit?: number;
  /** A voice channel's: the audio bitrate its people send, bits per second. */
  bitrate?: number;
}

/** How long a thread stays active without a message, in minutes (Discord's four choices). */
export const AUTO_ARCHIVE_MINUTES = [60, 1440, 4320, 10080] as const;
export type AutoArchiveMinutes = (typeof AUTO_ARCHIVE_MINUTES)[number];

/**
 * A thread: a channel with a parent (a text channel, or a forum whose post it is), its messages
 * in the one messages table; what is a thread's own lives in the `threads` table (schema.sql).
 */
export interface ThreadRecord extends ChannelRecord {
  type: 'thread';
  parent_id: string;
  /** Who started it. */
  owner_id: string;
  archived: boolean;
  /** When it was last archived, or null. */
  archived_at: string | null;
  /** Only manage_threads posts (and unarchives) then. */
  locked: boolean;
  /** Seen only by its members and by manage_threads. */
  private: boolean;
  auto_archive_minutes: AutoArchiveMinutes;
  message_count: number;
  member_count: number;
  last_message_at: string | null;
  /** A forum post's tags (ids of its forum's available_tags); [] elsewhere. */
  applied_tags: string[];
  /** The message it was started from (in its parent), or a forum post's first message; null for a thread started alone. */
  starter_message_id: string | null;
}

/** How much of a forum post's first message its card shows, in characters. */
export const FIRST_LINES_CHARS = 200;

/** A forum post's first message as its card shows it: its first lines, and its first image (a download URL), if any. */
export interface FirstMessage {
  /** The first FIRST_LINES_CHARS characters of its content, as written (markdown, never HTML). */
  content: string;
  /** `/uploads/<attachment_id>` of its first image attachment, or null. */
  image: string | null;
}

/**
 * A thread as `GET …/threads` lists it: a forum post's with its first message, null for a thread
 * of a text channel, a starter message gone, or one the caller may not read (read_history).
 */
export type ListedThread = ThreadRecord & { first_message: FirstMessage | null };

/**
 * A thread as `ready` gives it: its record, whether the user follows it (is a member), and for a
 * followed thread their read state there (an unfollowed thread has none: it counts nothing).
 */
export type ThreadState = ThreadRecord & { following: boolean } & Partial<ContainerState>;

/** A named group of a server's channels. */
export interface CategoryRecord {
  id: string;
  server_id: string;
  name: string;
  /** Order among the server's categories, 0 first. */
  position: number;
  created_at: string;
}

export interface ConversationRecord {
  id: string;
  kind: 'dm' | 'group';
  name: string | null;
  /** Who made it: in a group, the one who may remove others. */
  created_by: string;
  members: UserRef[];
  created_at: string;
  last_message_at: string | null;
}

export interface FriendRecord {
  user_id: string;
  username: string;
  display_name: string | null;
  avatar_url: string | null;
  /** Present (true) on bots only. */
  bot?: true;
  since: string;
}

/** A friend from the profiles view's columns and when the friendship began. */
export const friendRecord = (row: Parameters<typeof userRef>[0] & { since: string }): FriendRecord => ({ ...userRef(row), since: row.since });

export interface ContainerState {
  last_message_id: string | null;
  /** The newest message at or before the marker (null when there is none). */
  last_read_id: string | null;
  /** Messages after the marker by others (at most UNREAD_CAP). */
  unread_count: number;
  /** Of those, the ones that mention the caller or everyone; in a DM or group all of them. */
  mention_count: number;
}

/** A container without messages, or one the caller has just been shown. */
export const NOTHING_READ: Readonly<ContainerState> = { last_message_id: null, last_read_id: null, unread_count: 0, mention_count: 0 };

/** What the caller may do in a channel, and whether it is private (a member with no role would not see it). */
export interface ChannelAccessState {
  /** The caller's channel permissions there (src/rules/channel-permissions.ts FLAGS). */
  permissions: string[];
  private: boolean;
}

/** A channel as the sidebar shows it: its record, the caller's read state and permissions. */
export type ChannelState = ChannelRecord & ContainerState & ChannelAccessState;

export interface ConversationState extends ContainerState {
  conversation_id: string;
}

/** A server's custom emoji (src/parts/community/emojis.ts). */
export interface EmojiRecord {
  id: string;
  name: string;
  animated: boolean;
  /** On our origin; the bytes behind it never change (a new image is a new emoji). */
  url: string;
  creator_id: string;
}

/** A server's sticker (src/parts/community/stickers.ts). */
export interface StickerRecord {
  id: string;
  name: string;
  description: string;
  /** The Unicode emoji it stands for. */
  tags: string;
  animated: boolean;
  url: string;
  creator_id: string;
}

export interface RoleRecord {
  id: string;
  server_id: string;
  name: string;
  full_server_admin: boolean;
  created_at: string;
  /** 0xRRGGBB, or null for none. */
  color: number | null;
  /** The order roles are listed and shown in, 0 first. */
  position: number;
  /** Its holders are a group of their own in the member list. */
  hoist: boolean;
  /** @name mentions every holder (from who may use @everyone). */
  mentionable: boolean;
  /** The channel permissions its holders have server-wide, beside everyone's. */
  permissions: string[];
  /** Members take and drop it themselves (PUT/DELETE …/members/@me/roles/{role_id}); such a role carries no power. */
  self_assignable: boolean;
}

export interface MemberRecord {
  user_id: string;
  username: string;
  display_name: string | null;
  avatar_url: string | null;
  is_owner: boolean;
  /** The first of `roles`, or null: the one role a member had before several were allowed. */
  role: string | null;
  /** The names of the member's roles, in position order. */
  roles: string[];
  /** Their ids, in the same order. */
  role_ids: string[];
  joined_at: string;
  presence: string;
  /** Until when the member may only read; null when not timed out. */
  timeout_until: string | null;
  /** In membership screening: reads, may not write or react until they accept the server's rules. */
  pending: boolean;
  /** Present (true) on bots only. */
  bot?: true;
}

/** How much a user wants to hear of a server, channel or conversation (docs/api.md "Notifications"). */
export const LEVELS = ['all', 'mentions', 'nothing'] as const;
export type Level = (typeof LEVELS)[number];
export type TargetKind = 'server' | 'channel' | 'conversation';

export interface NotificationSetting {
  target_id: string;
  target_kind: TargetKind;
  level: Level;
  /** Muted until then (ISO 8601); null: not muted. "Until turned off" is a time in the year 9999. */
  muted_until: string | null;
  /** A server's: `@everyone` and `@here` are not mentions for this user there. */
  suppress_everyone: boolean;
  /** A server's: role mentions are not mentions for this user there. */
  suppress_roles: boolean;
}

/**
 * Who is in a voice channel, and how (docs/api.md "Voice"): the `voice_states` of `ready`, the
 * `voice_state` event (where `channel_id` is null once they left), a moderator's answer.
 */
export interface VoiceStateRecord {
  server_id: string;
  channel_id: string;
  user_id: string;
  /** They muted themselves. */
  self_mute: boolean;
  /** They deafened themselves (which mutes them too). */
  self_deaf: boolean;
  /** Muted by the server: a moderator did, or they lack speak there. Their audio stops at the media server. */
  mute: boolean;
  /** Deafened by a moderator: nothing reaches them. */
  deaf: boolean;
  /** Sending a camera. */
  video: boolean;
  /** Sharing a screen. */
  stream: boolean;
  /** Speaking now, as the media server hears them (the audio level their packets carry). */
  speaking: boolean;
}
