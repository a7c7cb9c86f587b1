import { type Static, type TSchema, Type } from '@sinclair/typebox';
import type { CustomEmoji, MessageRecord, PollRecord } from '../../core/message-record';
import type { UserRef } from '../../core/types';
import { FLAGS, type Flag } from '../../rules/channel-permissions';
import type {
  CategoryRecord,
  ChannelRecord,
  ChannelState,
  ContainerState,
  ConversationRecord,
  EmojiRecord,
  FriendRecord,
  JoinRateAction,
  MemberRecord,
  NotificationSetting,
  PostingGate,
  RoleRecord,
  ServerRecord,
  Shown,
  Status,
  ThreadRecord,
  ThreadState,
  VoiceStateRecord,
} from '../../core/records';
import { JOIN_RATE_ACTIONS } from '../../core/records';

/**
 * Every event a live socket receives, defined once: its TypeScript type (the hub takes nothing
 * else) and its JSON Schema, from which scripts/asyncapi builds docs/asyncapi.json and the event
 * table of docs/api.md, and against which the tests check every frame they receive.
 *
 * Records the HTTP API also answers with are named, not repeated: `record('Message')` is the
 * Message schema of docs/openapi.json, carried into the AsyncAPI document's components.
 */

/** A record of docs/openapi.json by its schema name, typed as the server builds it. */
const record = <T>(name: string) => Type.Unsafe<T>({ $ref: `#/components/schemas/${name}` });
const uuid = Type.String({ format: 'uuid' });
const count = Type.Integer({ minimum: 0 });

/**
 * A server as the sidebar shows it: its record, unread and mention counts, the roles the recipient
 * holds there (`role_ids`: what their mentions count), its channels with their read state, and the
 * active threads of those channels (with the read state of those the user follows).
 */
export type ServerEntry = ServerRecord & {
  unread: boolean;
  mention_count: number;
  role_ids: string[];
  /** What keeps the recipient from posting and reacting here now (the verification level), or null. */
  posting_gate: PostingGate | null;
  channels: ChannelState[];
  categories: CategoryRecord[];
  threads: ThreadState[];
};
/** A conversation with the caller's read state. */
export type ConversationEntry = ConversationRecord & ContainerState;
/** A friend request, from one user to another. */
export interface FriendRequestRecord {
  id: string;
  from: UserRef;
  to: UserRef;
  status: 'pending' | 'accepted';
  created_at: string;
}

/** One event of the user stream, `{"event": name, ...}`; `audience` says who receives it. */
function event<N extends string, P extends Record<string, TSchema>>(name: N, audience: string, description: string, props: P) {
  return Type.Object({ event: Type.Literal(name), ...props }, { additionalProperties: false, title: name, description, 'x-audience': audience });
}

/** An event placed in a channel (server_id and channel_id) or a conversation (conversation_id). */
function placed<N extends string, P extends Record<string, TSchema>>(name: N, audience: string, description: string, props: P) {
  return Type.Union(
    [
      Type.Object({ event: Type.Literal(name), ...props, server_id: uuid, channel_id: uuid }, { additionalProperties: false }),
      Type.Object({ event: Type.Literal(name), ...props, conversation_id: uuid }, { additionalProperties: false }),
    ],
    { title: name, description, 'x-audience': audience },
  );
}

const MEMBERS_OF_ROOM = "members of the channel's server who see it (view_channel), or of the conversation";
/** The history floor (read_history) applies to everything about one message. */
const READERS = `${MEMBERS_OF_ROOM}, who may read the message (without read_history, not one sent before they joined)`;
const SERVER_MEMBERS = "the server's members";
const CHANNEL_VIEWERS = "the server's members who see the channel (view_channel)";
const THREAD_VIEWERS =
  "the server's members who see the thread: who see its parent (view_channel), and of a private thread only its members and manage_threads";

/** The user stream (`GET /api/ws`): `ready` first, then these, each `{"event": ...}`. */
export const STREAM_EVENTS = {
  ready: event(
    'ready',
    'the stream that just opened, first',
    'the sidebar: who the user is, their servers with channels and read state, conversations, friends',
    {
      user: Type.Unsafe<UserRef & { status: Status }>({ $ref: '#/components/schemas/Me' }),
      servers: Type.Array(record<ServerEntry>('ServerEntry')),
      conversations: Type.Array(record<ConversationEntry>('ConversationWithState')),
      friends: Type.Array(record<FriendRecord & { presence: Shown }>('FriendWithPresence')),
      incoming_friend_requests: count,
      notification_settings: Type.Array(record<NotificationSetting>('NotificationSetting')),
      voice_states: Type.Array(record<VoiceStateRecord>('VoiceState'), { description: 'who is in the voice channels the user sees, and how' }),
    },
  ),
  message: event('message', READERS, 'a new message', { message: record<MessageRecord>('Message') }),
  message_edited: event('message_edited', READERS, "an edited message (its reactions[].reacted is the recipient's)", {
    message: record<MessageRecord>('Message'),
  }),
  message_updated: event(
    'message_updated',
    READERS,
    "a message changed by the server, not its author: its link previews arrived, changed or were removed (its reactions[].reacted is the recipient's)",
    { message: record<MessageRecord>('Message') },
  ),
  message_deleted: placed('message_deleted', READERS, 'a message deleted', { message_id: uuid }),
  reaction: placed(
    'reaction',
    READERS,
    "a reaction added or removed: the change alone, the same bytes for everyone; a recipient's own reacted changes only when user_id is theirs",
    {
      message_id: uuid,
      emoji: Type.Union([Type.String(), record<CustomEmoji>('CustomEmoji')], {
        description: 'a Unicode emoji, or a custom emoji (issue 50; available: false once deleted)',
      }),
      user_id: uuid,
      added: Type.Boolean(),
      count,
    },
  ),
  poll_vote: placed(
    'poll_vote',
    READERS,
    "a poll's counts moved (at most one event a second per poll: the counts as they then stand), or it ended (ended: true, the results frozen)",
    { message_id: uuid, poll: record<PollRecord>('Poll') },
  ),
  message_pinned: event('message_pinned', READERS, 'a message pinned', { message: record<MessageRecord>('Message') }),
  message_unpinned: event('message_unpinned', READERS, 'a message unpinned', { message: record<MessageRecord>('Message') }),
  typing: placed('typing', 'the other members (not the typist)', 'someone is typing (at most one a user and room each 3 s)', {
    user_id: uuid,
    username: Type.String(),
    display_name: Type.Union([Type.String(), Type.Null()]),
  }),
  presence: event(
    'presence',
    "friends, and members of shared servers of up to 250 members; the user's own streams (with status)",
    'what others now see of a user',
    {
      user_id: uuid,
      presence: Type.Unsafe<Shown>({ type: 'string', enum: ['online', 'idle', 'dnd', 'offline'] }),
      status: Type.Optional(
        Type.Unsafe<Status>({ type: 'string', enum: ['online', 'idle', 'dnd', 'invisible'], description: "the user's own choice: only to their own streams" }),
      ),
    },
  ),
  read: placed('read', "the user's own streams", 'the read marker moved (another tab or device read it)', {
    last_message_id: Type.Union([uuid, Type.Null()]),
    last_read_id: Type.Union([uuid, Type.Null()]),
    unread_count: Type.Integer({ minimum: 0, maximum: 100 }),
    mention_count: Type.Integer({ minimum: 0, maximum: 100 }),
  }),
  conversation_created: event('conversation_created', 'every member of a new DM or group, and who is added to a group', 'a conversation the user is now in', {
    conversation: record<ConversationEntry>('ConversationWithState'),
  }),
  conversation_updated: event('conversation_updated', "a group's members", 'a group renamed, or someone added or gone', {
    conversation_id: uuid,
    conversation: record<ConversationRecord>('Conversation'),
  }),
  conversation_left: event('conversation_left', 'who left or was removed from a group', 'a group the user is no longer in', { conversation_id: uuid }),
  friend_request: event('friend_request', 'the addressee', 'a friend request arrived', { request: record<FriendRequestRecord>('FriendRequest') }),
  friend_added: event('friend_added', 'both sides', 'a friendship began (the other side, with the presence now visible)', {
    friend: record<FriendRecord & { presence: Shown }>('FriendWithPresence'),
  }),
  friend_removed: event('friend_removed', 'both sides', 'a friendship ended (the other side)', { user_id: uuid }),
  server_joined: event('server_joined', 'the user who created or joined a server', 'a server the user is now in, as ready shows servers', {
    server: record<ServerEntry>('ServerEntry'),
  }),
  server_left: event('server_left', 'the user who left or was removed', 'a server the user is no longer in', {
    server_id: uuid,
    reason: Type.Unsafe<'left' | 'kicked' | 'banned' | 'deleted'>({ type: 'string', enum: ['left', 'kicked', 'banned', 'deleted'] }),
  }),
  server_updated: event(
    'server_updated',
    SERVER_MEMBERS,
    "a server renamed, described, handed to a new owner, its settings changed (safety, link previews, everyone's permissions), or its joins paused by join-rate protection",
    {
      server_id: uuid,
      server: record<ServerRecord>('Server'),
    },
  ),
  channel_created: event(
    'channel_created',
    CHANNEL_VIEWERS,
    'a new channel, or one the recipient now sees (with their read state, permissions and its position among the channels they see; the channels after it move down, each told by channel_updated)',
    {
      server_id: uuid,
      channel_id: uuid,
      channel: record<ChannelState>('ChannelWithState'),
    },
  ),
  channel_updated: event(
    'channel_updated',
    CHANNEL_VIEWERS,
    'a channel changed, or its place among the channels the recipient sees moved: one event for each (position is 0..k-1 over the k channels they see; a channel hidden from them moves unheard)',
    {
      server_id: uuid,
      channel_id: uuid,
      channel: record<ChannelRecord>('Channel'),
    },
  ),
  channel_deleted: event('channel_deleted', CHANNEL_VIEWERS, 'a channel deleted, or one the recipient no longer sees (its room sockets close with 4003)', {
    server_id: uuid,
    channel_id: uuid,
  }),
  channel_access: event(
    'channel_access',
    'each member whose permissions in a channel they still see changed',
    'what the recipient may do in a channel changed, or whether it is private',
    {
      server_id: uuid,
      channel_id: uuid,
      permissions: Type.Array(Type.Unsafe<Flag>({ type: 'string', enum: [...FLAGS] })),
      private: Type.Boolean(),
    },
  ),
  thread_created: event(
    'thread_created',
    THREAD_VIEWERS,
    'a new thread (a forum post too); its starter message, if any, now shows it (thread on the message record)',
    { server_id: uuid, thread_id: uuid, thread: record<ThreadRecord>('Thread') },
  ),
  thread_updated: event(
    'thread_updated',
    THREAD_VIEWERS,
    'a thread renamed, archived (by hand, by itself after auto_archive_minutes, or unarchived by a message), locked or tagged, or a forum post that lost a tag the forum no longer has',
    {
      server_id: uuid,
      thread_id: uuid,
      thread: record<ThreadRecord>('Thread'),
    },
  ),
  thread_deleted: event('thread_deleted', THREAD_VIEWERS, 'a thread deleted (its room sockets close with 4003)', {
    server_id: uuid,
    thread_id: uuid,
    parent_id: uuid,
  }),
  thread_members: event(
    'thread_members',
    "the thread's members, and who just left it",
    'who joined (posted, was mentioned, followed, was added) or left a thread: the user ids, and the thread as it is now (member_count)',
    {
      server_id: uuid,
      thread_id: uuid,
      thread: record<ThreadRecord>('Thread'),
      added: Type.Array(uuid),
      removed: Type.Array(uuid),
    },
  ),
  join_rate_alert: event(
    'join_rate_alert',
    'members holding manage_server, kick_members or ban_members (the owner and full server administrators)',
    'more joins in the last minute than the server\'s join-rate threshold (docs/moderation.md "Raid protection"): what was counted, and whether joins are now paused; at most once a minute per server unless joins were just paused',
    {
      server_id: uuid,
      joins: count,
      threshold: count,
      action: Type.Unsafe<JoinRateAction>({ type: 'string', enum: [...JOIN_RATE_ACTIONS] }),
      joins_paused: Type.Boolean(),
    },
  ),
  member_joined: event('member_joined', SERVER_MEMBERS, 'a new member', { server_id: uuid, member: record<MemberRecord>('Member') }),
  member_updated: event('member_updated', SERVER_MEMBERS, 'a member changed (a role, a timeout, ownership, membership screening: pending or let in)', {
    server_id: uuid,
    member: record<MemberRecord>('Member'),
  }),
  categories_updated: event(
    'categories_updated',
    SERVER_MEMBERS,
    'a category created, renamed, moved or deleted: every category of the server, in position order',
    {
      server_id: uuid,
      categories: Type.Array(record<CategoryRecord>('Category')),
    },
  ),
  roles_updated: event('roles_updated', SERVER_MEMBERS, 'a role created, changed, moved or deleted: every role of the server, in position order', {
    server_id: uuid,
    roles: Type.Array(record<RoleRecord>('Role')),
  }),
  onboarding_updated: event(
    'onboarding_updated',
    SERVER_MEMBERS,
    "a server's membership screening changed (GET …/onboarding reads it as each member may see it)",
    { server_id: uuid, enabled: Type.Boolean() },
  ),
  emojis_updated: event(
    'emojis_updated',
    SERVER_MEMBERS,
    'a custom emoji added, renamed or deleted, or an import into the server ended: every emoji of the server, oldest first',
    {
      server_id: uuid,
      emojis: Type.Array(record<EmojiRecord>('Emoji')),
    },
  ),
  member_left: event('member_left', SERVER_MEMBERS, 'a member left or was removed', { server_id: uuid, user_id: uuid }),
  history_claimed: event(
    'history_claimed',
    SERVER_MEMBERS,
    "an imported person's history was claimed (POST /api/account/claims, /discord-package/choose): the messages of from_user_id (the placeholder) are to_user_id's now, and mentions of it name them; a client refetches the messages it shows of the server",
    { server_id: uuid, from_user_id: uuid, to_user_id: uuid },
  ),
  standing: event(
    'standing',
    'the user whose standing changed, and their bots (a bot follows its owner)',
    'the account standing changed; at 4 the stream then closes with 4003',
    {
      account_standing: Type.Integer({ minimum: 0, maximum: 4 }),
    },
  ),
  notification_settings: event(
    'notification_settings',
    "the user's own streams",
    'a notification setting set or removed (null: back to inheriting) on another device or tab',
    {
      target_id: uuid,
      setting: Type.Union([record<NotificationSetting>('NotificationSetting'), Type.Null()]),
    },
  ),
  voice_state: event(
    'voice_state',
    "the server's members who see the voice channel (view_channel); when someone leaves or moves, those who saw the channel they were in",
    'someone joined a voice channel, left it (channel_id null), moved, or changed how they are there (mute, deafen, camera, screen, speaking)',
    {
      server_id: uuid,
      channel_id: Type.Union([uuid, Type.Null()]),
      user_id: uuid,
      self_mute: Type.Boolean(),
      self_deaf: Type.Boolean(),
      mute: Type.Boolean(),
      deaf: Type.Boolean(),
      video: Type.Boolean(),
      stream: Type.Boolean(),
      speaking: Type.Boolean(),
    },
  ),
  user_updated: event(
    'user_updated',
    "everyone who sees the user (friends, members of shared servers and conversations) and the user's own streams",
    'a new display name or avatar',
    {
      user: record<UserRef>('UserRef'),
    },
  ),
};

const ROOM = 'the sockets of its room whose users may read the message (read_history)';
const inRoom = (schema: string, title: string, description: string) =>
  Type.Unsafe<MessageRecord>({ $ref: `#/components/schemas/${schema}`, title, description, 'x-audience': ROOM });

const deletedInRoom = Type.Union(
  [
    Type.Object({ event: Type.Literal('deleted'), id: uuid, server_id: uuid, channel_id: uuid }, { additionalProperties: false }),
    Type.Object({ event: Type.Literal('deleted'), id: uuid, conversation_id: uuid }, { additionalProperties: false }),
  ],
  { title: 'deleted', description: 'a message deleted', 'x-audience': ROOM },
);

/**
 * The room sockets (`GET /api/channels/{channel_id}/ws`, `GET /api/conversations/{conversation_id}/ws`),
 * in the shapes the core contract gives them: a new message is the record exactly as `POST
 * …/messages` answers it (no `event`); the others carry `event`.
 */
export const ROOM_EVENTS = {
  message: inRoom('Message', 'message', 'a new message: the record, exactly as POST …/messages answers it, with no event field'),
  edited: inRoom('MessageEdited', 'edited', "an edited message: the record and event: edited (reactions[].reacted is the recipient's)"),
  message_updated: inRoom(
    'MessageUpdated',
    'message_updated',
    'a message whose link previews arrived, changed or were removed: the record and event: message_updated',
  ),
  deleted: deletedInRoom,
  reaction: inRoom('MessageReacted', 'reaction', "a reaction added or removed: the record and event: reaction (reactions[].reacted is the recipient's)"),
};

/**
 * What a client may send on its user stream (every other frame is ignored; docs/api.md "What
 * clients send"): whether its page is visible, which decides whether its user gets pushes.
 */
export const CLIENT_FRAMES = {
  visibility: Type.Object(
    { op: Type.Literal('visibility'), visible: Type.Boolean() },
    {
      additionalProperties: false,
      title: 'visibility',
      description: 'the page is visible or hidden (sent at open and on every change); a stream counts as visible until it says otherwise',
    },
  ),
};
export type ClientFrame = Static<(typeof CLIENT_FRAMES)['visibility']>;

// ---------------------------------------------------------------------------------------------
// The voice socket (`GET /api/voice/ws`, docs/api.md "Voice"): a browser's signaling with the chat
// server, which is the media server's only client. One socket per tab that is in voice; frames
// the client sends carry `op`, those it receives `event`. Every client frame is checked against
// these schemas; one that does not match is answered with an `error` frame and changes nothing.

/** What a voice socket may carry: SDPs are a few KiB each, a subscription's answer grows with the people in the channel. */
export const VOICE_LIMITS = {
  /** The largest frame a client may send (past it the socket closes with 1009). */
  maxFrameBytes: 256 * 1024,
  /** The longest SDP (characters). */
  maxSdpChars: 200_000,
  /** Frames a client may send in FLOOD_WINDOW_MS (src/parts/live/sockets.ts) before the socket closes with 1008: ICE candidates come by the dozen. */
  maxFramesPerWindow: 300,
} as const;

const sdpOf = <K extends 'offer' | 'answer'>(type: K) =>
  Type.Object({ type: Type.Literal(type), sdp: Type.String({ minLength: 1, maxLength: VOICE_LIMITS.maxSdpChars }) }, { additionalProperties: false });
const MEDIA_KIND = Type.Union([Type.Literal('audio'), Type.Literal('camera'), Type.Literal('screen')]);
/** What each m-line of a publisher's offer carries: the microphone, a camera, a screen. */
const mediaLabels = Type.Array(Type.Object({ mid: Type.String({ minLength: 1, maxLength: 32 }), kind: MEDIA_KIND }, { additionalProperties: false }), {
  maxItems: 3,
  description: 'what each m-line of the offer carries, by its mid: at most one audio, one camera and one screen; a video m-line needs the video permission',
});
const iceCandidate = Type.Union(
  [
    Type.Object(
      {
        candidate: Type.String({ maxLength: 1024 }),
        sdpMid: Type.Optional(Type.Union([Type.String({ maxLength: 32 }), Type.Null()])),
        sdpMLineIndex: Type.Optional(Type.Union([Type.Integer({ minimum: 0, maximum: 63 }), Type.Null()])),
        usernameFragment: Type.Optional(Type.Union([Type.String({ maxLength: 256 }), Type.Null()])),
      },
      { additionalProperties: false },
    ),
    Type.Null(),
  ],
  { description: 'an ICE candidate (RTCIceCandidate.toJSON()), or null once gathering is complete' },
);
const PEER = Type.Union([Type.Literal('publisher'), Type.Literal('subscriber')], {
  description: 'which of the two connections: the one that sends (publisher) or the one that receives (subscriber)',
});

function op<N extends string, P extends Record<string, TSchema>>(name: N, description: string, props: P) {
  return Type.Object({ op: Type.Literal(name), ...props }, { additionalProperties: false, title: name, description });
}

/** What a client sends on its voice socket. */
export const VOICE_CLIENT_FRAMES = {
  join: op('join', 'join a voice channel (leaving any other, in any tab) with the offer of the connection that sends', {
    channel_id: uuid,
    offer: sdpOf('offer'),
    media: mediaLabels,
    self_mute: Type.Boolean(),
    self_deaf: Type.Boolean(),
  }),
  publish: op('publish', 'a new offer of the sending connection: a camera or a screen turned on or off', { offer: sdpOf('offer'), media: mediaLabels }),
  answer: op('answer', 'the answer to the last `subscription` offer', { answer: sdpOf('answer') }),
  candidate: op('candidate', "one of the client's ICE candidates", { target: PEER, candidate: iceCandidate }),
  state: op('state', 'mute or deafen oneself (deafened is muted too)', { self_mute: Type.Boolean(), self_deaf: Type.Boolean() }),
  leave: op('leave', 'leave the voice channel (closing the socket does too)', {}),
};
export type VoiceClientFrame = Static<(typeof VOICE_CLIENT_FRAMES)[keyof typeof VOICE_CLIENT_FRAMES]>;

const voiceState = record<VoiceStateRecord>('VoiceState');
const REASONS = ['elsewhere', 'moderator', 'removed', 'timed_out', 'no_permission', 'channel_deleted', 'media_failed', 'media_restart'] as const;
export type VoiceEndReason = (typeof REASONS)[number];

function voiceEvent<N extends string, P extends Record<string, TSchema>>(name: N, description: string, props: P) {
  return Type.Object({ event: Type.Literal(name), ...props }, { additionalProperties: false, title: name, description, 'x-audience': 'the voice socket' });
}

const ICE_SERVERS = Type.Array(
  Type.Object(
    { urls: Type.Array(Type.String()), username: Type.Optional(Type.String()), credential: Type.Optional(Type.String()) },
    { additionalProperties: false },
  ),
  { description: 'RTCIceServer entries: STUN, and TURN with a credential of this user (coturn use-auth-secret) that lasts six hours' },
);

/** What the chat server sends on a voice socket. */
export const VOICE_EVENTS = {
  ice_servers: voiceEvent(
    'ice_servers',
    'sent first, when the socket opens: the STUN and TURN servers to make the connections of a join with (each `joined` carries fresh ones for later connections)',
    { ice_servers: ICE_SERVERS },
  ),
  joined: voiceEvent(
    'joined',
    'the join is done: the answer to the offer, the ICE servers to use (TURN credentials last six hours), and what the user may do there',
    {
      server_id: uuid,
      channel_id: uuid,
      answer: sdpOf('answer'),
      ice_servers: ICE_SERVERS,
      voice_state: voiceState,
      can_speak: Type.Boolean(),
      can_video: Type.Boolean(),
    },
  ),
  published: voiceEvent('published', 'the answer to a `publish` offer', { answer: sdpOf('answer') }),
  subscription: voiceEvent(
    'subscription',
    "an offer of the receiving connection, carrying everyone else's audio and video: answer it with `answer`; streams say whose each m-line is",
    {
      offer: sdpOf('offer'),
      streams: Type.Array(Type.Object({ mid: Type.String(), user_id: uuid, kind: MEDIA_KIND }, { additionalProperties: false })),
    },
  ),
  candidate: voiceEvent('candidate', "one of the media server's ICE candidates", { target: PEER, candidate: iceCandidate }),
  rights: voiceEvent('rights', 'what the user may do in the channel changed (speak, video): without them the media server stops their audio or video', {
    can_speak: Type.Boolean(),
    can_video: Type.Boolean(),
  }),
  moved: voiceEvent('moved', 'a moderator moved the user to another voice channel: join it with a new offer', { server_id: uuid, channel_id: uuid }),
  disconnected: voiceEvent(
    'disconnected',
    'the voice connection ended without the user asking: close the connections (a rejoin is refused where the reason still holds)',
    {
      reason: Type.Unsafe<VoiceEndReason>({ type: 'string', enum: [...REASONS] }),
      message: Type.String(),
    },
  ),
  error: voiceEvent('error', 'a frame was refused: nothing changed (status as the HTTP API would answer)', {
    op: Type.Union([Type.String(), Type.Null()]),
    status: Type.Integer({ minimum: 400, maximum: 599 }),
    message: Type.String(),
  }),
};
const voiceFrame = Type.Union(Object.values(VOICE_EVENTS));
/** Anything the chat server may send on a voice socket. */
export type VoiceServerFrame = Static<typeof voiceFrame>;

const streamEvent = Type.Union(Object.values(STREAM_EVENTS));
/** Anything the hub may send on a user stream. */
export type StreamEvent = Static<typeof streamEvent>;
export type StreamEventName = keyof typeof STREAM_EVENTS;

/**
 * A change to a message, told once: the hub writes it to its room's sockets in the core
 * contract's shapes and to the user streams of who can see it in the catalogue's.
 *
 * `seq` places the message in its room's history, held against each recipient's history floor
 * (read_history, src/rules/channel-access.ts): who may not read the message hears nothing of it,
 * not even its id. `replySeq` is the seq of the message it replies to (null once that was
 * deleted): who may not read that one gets the record without its reply. The record is the
 * message as a reader with the whole history sees it.
 */
interface Placed {
  seq: number;
  replySeq: number | null;
  message: MessageRecord;
}
type Reactors = () => Map<string, Set<string>>;
export type MessageChange =
  | ({ kind: 'created' } & Placed)
  | ({ kind: 'edited'; reactors: Reactors } & Placed)
  /** Its embeds changed (link previews), not its text: message_updated. */
  | ({ kind: 'updated'; reactors: Reactors } & Placed)
  | { kind: 'deleted'; messageId: string; seq: number }
  | ({ kind: 'reaction'; reactors: Reactors; emoji: string | CustomEmoji; userId: string; added: boolean; count: number } & Placed)
  | ({ kind: 'pinned' | 'unpinned'; reactors: Reactors } & Placed)
  | ({ kind: 'poll'; poll: PollRecord } & Placed);
