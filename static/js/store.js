// @ts-check
// The one client-side store: what the user stream's ready frame says, kept current by its
// events. Views read `state` and subscribe to topics; nothing else holds a copy of the lists.
//
// Topics: 'nav' (servers, channels, conversations, unread and mention counts), 'friends'
// (friends, requests), 'presence', 'members' (a server's members or roles), 'typing',
// 'connection', 'account' (standing, status), 'users' (a name or picture changed), 'blocks'
// (the users the caller blocked), 'voice' (who is in which voice channel, and how). Notification
// settings (`notify`) change 'nav'. 'open' is a
// view asking the page to open a place (openPlace; app.js opens it).
//
// Live events go through a table, event type -> handler (see applyEvent): the store's own
// handler updates the state; views add theirs with onEvent(type, fn) (the open room, pins,
// notifications), which run after it. The records are typed from docs/openapi.json and the
// frames from the event catalogue (types/client.d.ts).

/**
 * @typedef {import('../../types/client').ServerEntry} ServerEntry
 * @typedef {import('../../types/client').ChannelWithState} ChannelWithState
 * @typedef {import('../../types/client').ConversationWithState} ConversationWithState
 * @typedef {import('../../types/client').FriendWithPresence} FriendWithPresence
 * @typedef {import('../../types/client').Member} Member
 * @typedef {import('../../types/client').Role} Role
 * @typedef {import('../../types/client').Message} Message
 * @typedef {import('../../types/client').Presence} Presence
 * @typedef {import('../../types/client').NotificationSetting} NotificationSetting
 * @typedef {import('../../types/client').Account} Account
 * @typedef {import('../../types/client').ReadyFrame} ReadyFrame
 * @typedef {import('../../types/client').Events} Events
 * @typedef {import('../../types/client').Place} Place
 * @typedef {import('../../types/client').VoiceState} VoiceState
 */
/**
 * How a user is shown: what the store learned of them (learnUser).
 * @typedef {{ user_id: string, username: string, display_name?: string | null, avatar_url?: string | null }} KnownUser
 */
/**
 * @typedef {object} State
 * @property {KnownUser} me who is signed in
 * @property {'online' | 'idle' | 'dnd' | 'invisible'} status what the user chose
 * @property {number} standing the account standing, 0 (all good) to 4 (suspended)
 * @property {boolean} isAdmin
 * @property {ServerEntry[]} servers as in ready: each with channels (each with its read state)
 * @property {ConversationWithState[]} conversations most recent first, each with its read state
 * @property {FriendWithPresence[]} friends
 * @property {number} incomingRequests
 * @property {Map<string, Presence>} presence user id -> online | idle | dnd | offline
 * @property {Map<string, KnownUser>} users user id -> how they are shown: everyone seen
 * @property {Set<string>} blocked ids of the users the caller blocked (GET /api/blocks, then kept here)
 * @property {Map<string, NotificationSetting>} notify target id (server, channel, conversation) -> its notification setting
 * @property {Map<string, Member[]>} members server id -> member records (loaded when a server is opened)
 * @property {Map<string, Role[]>} roles server id -> role records
 * @property {Map<string, Map<string, KnownUser & { until: number }>>} typing room key -> user id -> who, until when (ms)
 * @property {'connecting' | 'live' | 'offline' | 'signed-out' | 'suspended'} connection
 * @property {number} retryIn
 * @property {boolean} ready
 * @property {Place | null} current what the page shows
 * @property {Map<string, VoiceState>} voice user id -> where and how they are in voice (of the voice channels the user sees)
 */

/** @type {State} */
export const state = {
  me: null,
  status: 'online',
  standing: 0,
  isAdmin: false,
  servers: [],
  conversations: [],
  friends: [],
  incomingRequests: 0,
  presence: new Map(),
  users: new Map(),
  blocked: new Set(),
  notify: new Map(),
  members: new Map(),
  roles: new Map(),
  typing: new Map(),
  connection: 'connecting',
  retryIn: 0,
  ready: false,
  current: null,
  voice: new Map(),
};

/** @type {Map<string, Set<(detail: any) => void>>} */
const listeners = new Map();

/**
 * A view's function for a topic; returns a function that removes it again.
 * @param {string} topic
 * @param {(detail: any) => void} fn
 * @returns {() => void}
 */
export function on(topic, fn) {
  return addTo(listeners, topic, fn);
}

/**
 * Adds fn to the set map holds under key; returns a function that takes it out again.
 * @template F
 * @param {Map<string, Set<F>>} map
 * @param {string} key
 * @param {F} fn
 */
function addTo(map, key, fn) {
  if (!map.has(key)) map.set(key, new Set());
  map.get(key).add(fn);
  return () => map.get(key).delete(fn);
}

/** @param {string} topic @param {any} [detail] */
export function emit(topic, detail) {
  callEach(listeners.get(topic), detail);
}

function callEach(fns, detail) {
  for (const fn of fns || []) {
    try {
      fn(detail);
    } catch (err) {
      console.warn(err); // one broken view must not stop the others
    }
  }
}

// ---- lookups ----------------------------------------------------------------------------------

/** @type {(id: string) => ServerEntry | null} */
export const findServer = (id) => state.servers.find((s) => s.id === id) || null;
/** @type {(serverId: string, channelId: string) => ChannelWithState | null} */
export const findChannel = (serverId, channelId) => findServer(serverId)?.channels.find((c) => c.id === channelId) || null;
/**
 * An active thread the user sees (ready's threads, kept by the thread events), or null.
 * @type {(serverId: string, threadId: string) => import('../../types/client').ThreadState | null}
 */
export const findThread = (serverId, threadId) => findServer(serverId)?.threads?.find((x) => x.id === threadId) || null;

/**
 * A thread as it is now: kept among the server's active threads while it is active (with its read
 * state, when the event brought none), dropped when archived or gone; 'threads' tells the views.
 * @param {string} serverId
 * @param {import('../../types/client').Thread} thread
 * @param {boolean} [gone]
 */
function applyThread(serverId, thread, gone = false) {
  const server = findServer(serverId);
  if (!server) return;
  const list = (server.threads ||= []);
  const at = list.findIndex((x) => x.id === thread.id);
  if (gone || thread.archived) {
    if (at >= 0) list.splice(at, 1);
  } else if (at >= 0) list[at] = { ...list[at], ...thread };
  else list.push({ following: false, ...thread });
  emit('threads', { serverId, thread, gone });
}

/**
 * Whether the user may do `flag` (a channel permission) in the room: always in a conversation.
 * @param {{ kind: string, serverId?: string, channelId?: string } | null} room
 * @param {import('../../types/client').Permission} flag
 */
export function mayIn(room, flag) {
  if (!room || room.kind !== 'channel') return true;
  const permissions = findChannel(room.serverId, room.channelId)?.permissions;
  return !permissions || permissions.includes(flag);
}
/** @type {(id: string) => ConversationWithState | null} */
export const findConversation = (id) => state.conversations.find((c) => c.id === id) || null;
/** @type {(userId: string) => boolean} */
export const isFriend = (userId) => state.friends.some((f) => f.user_id === userId);

/** 'c:<channel id>' or 'd:<conversation id>': the key of a room in drafts, typing and so on. */
export function roomKey(place) {
  if (!place) return '';
  if (place.channel_id || place.channelId) return `c:${place.channel_id || place.channelId}`;
  if (place.conversation_id) return `d:${place.conversation_id}`;
  if (place.kind === 'conversation') return `d:${place.id}`;
  return '';
}

/**
 * The read-state record (channel, followed thread or conversation) an event or message belongs
 * to. An unfollowed thread has none: it counts nothing.
 * @param {{ server_id?: string, channel_id?: string, conversation_id?: string }} place
 * @returns {ChannelWithState | ConversationWithState | null}
 */
export function containerOf(place) {
  if (place.channel_id) {
    const thread = findThread(place.server_id, place.channel_id);
    if (thread) return thread.following ? /** @type {ChannelWithState} */ (/** @type {unknown} */ (thread)) : null;
    return findChannel(place.server_id, place.channel_id);
  }
  if (place.conversation_id) return findConversation(place.conversation_id);
  return null;
}

/** @param {{ kind: string, name: string | null, members: KnownUser[] }} conversation */
export function conversationTitle(conversation) {
  if (conversation.kind === 'group') return conversation.name || 'Group';
  const other = conversation.members.find((m) => m.user_id !== state.me.user_id);
  return other ? displayName(other) : 'just you';
}

/** The other person of a DM (null for a group). @param {{ kind: string, members?: KnownUser[] }} conversation */
export function dmPartner(conversation) {
  if (conversation.kind !== 'dm') return null;
  return conversation.members.find((m) => m.user_id !== state.me.user_id) || null;
}

/**
 * Remembers how a user is shown. Records that carry display_name and avatar_url (messages,
 * members, friends, user_updated) set them; the short {user_id, username} of administrator
 * views keeps what was known.
 * @param {{ user_id: string, username: string, display_name?: string | null, avatar_url?: string | null } | null | undefined} user
 */
export function learnUser(user) {
  if (!user || !user.user_id || !user.username) return;
  const known = state.users.get(user.user_id);
  state.users.set(user.user_id, {
    user_id: user.user_id,
    username: user.username,
    display_name: 'display_name' in user ? user.display_name : (known?.display_name ?? null),
    avatar_url: 'avatar_url' in user ? user.avatar_url : (known?.avatar_url ?? null),
  });
}

/**
 * The newest record of a user we know, or the reference given.
 * @type {<U extends { user_id: string }>(user: U | null | undefined) => KnownUser | U | null | undefined}
 */
export const userRecord = (user) => (user && state.users.get(user.user_id)) || user;

/**
 * What to call a user: the display name, else the username.
 * @param {{ user_id: string, username?: string, display_name?: string | null } | null | undefined} user
 */
export function displayName(user) {
  const u = userRecord(user);
  if (!u) return 'unknown';
  return u.display_name || u.username || 'unknown';
}

/** @type {(userId: string) => boolean} */
export const isBlocked = (userId) => state.blocked.has(userId);

/**
 * The server a user id owns, or whose member with a full_server_admin role they are.
 * @param {{ id: string, owner_id: string } | null | undefined} server
 */
export function canManageServer(server) {
  if (!server || !state.me) return false;
  if (server.owner_id === state.me.user_id) return true;
  const members = state.members.get(server.id);
  const roles = state.roles.get(server.id);
  if (!members || !roles) return false;
  const mine = members.find((m) => m.user_id === state.me.user_id);
  return roles.some((role) => role.full_server_admin && holdsRole(mine, role.id));
}

/**
 * Whether the user holds a server-wide flag (docs/moderation.md): the owner and full server
 * administrators every one; anyone else what everyone's flags and their roles give (no channel
 * overwrite counts). Only which tabs and buttons show: the server decides.
 * @param {ServerEntry} server
 * @param {import('../../types/client').Permission} flag
 */
export function holdsServerFlag(server, flag) {
  if (canManageServer(server)) return true;
  if (server.permissions?.includes(flag)) return true;
  return (state.roles.get(server.id) || []).some((role) => holdsRole(server, role.id) && role.permissions?.includes(flag));
}

/** Whether the user may manage the server's custom emoji and stickers (issue 50). */
export const mayManageEmojis = (/** @type {ServerEntry} */ server) => holdsServerFlag(server, 'manage_emojis');

/**
 * Whether a member holds a role (by id: names change).
 * @type {(member: { role_ids?: string[] } | null | undefined, roleId: string) => boolean}
 */
export const holdsRole = (member, roleId) => Boolean(member?.role_ids?.includes(roleId));

/**
 * The roles a member holds, in the server's order (a move reorders them without a member event).
 * @type {(roles: Role[], member: { role_ids?: string[] } | null | undefined) => Role[]}
 */
export const heldRoles = (roles, member) => roles.filter((r) => holdsRole(member, r.id));

/**
 * Whether a message names the user: by name, @everyone, or a role they hold (unless their
 * settings for its server suppress @everyone or role mentions, as the server counts them).
 * @param {Message} m
 */
export function mentionsMe(m) {
  const s = state.notify.get(m.server_id);
  if ((m.mention_everyone && !s?.suppress_everyone) || (m.mentions || []).includes(state.me.user_id)) return true;
  if (!m.mention_roles?.length || !m.server_id || s?.suppress_roles) return false;
  // The roles the user holds come with the server's entry (ready, server_joined) and follow
  // member_updated: known for every server, whether or not its member list was loaded.
  const mine = findServer(m.server_id)?.role_ids || [];
  return m.mention_roles.some((id) => mine.includes(id));
}

/** What the title bar counts: mentions in channels plus unread DMs and groups not muted. */
export function attentionCount() {
  let n = 0;
  for (const server of state.servers) for (const c of server.channels) n += c.mention_count;
  for (const c of state.conversations) if (!isMuted(c.id)) n += c.unread_count;
  return n;
}

/** The threads of a server the user follows (their read state counts toward their channel). */
const followed = (/** @type {ServerEntry} */ server) => (server.threads || []).filter((x) => x.following);

/** Unread, for the rail's dot: a channel (or followed thread) neither it nor its server muted has unread messages. */
/** @param {ServerEntry} server */
export function serverUnread(server) {
  if (isMuted(server.id)) return false;
  return (
    server.channels.some((c) => c.unread_count > 0 && !isMuted(c.id)) ||
    followed(server).some((x) => (x.unread_count || 0) > 0 && !isMuted(x.id) && !isMuted(x.parent_id))
  );
}
/** @param {ServerEntry} server */
export function serverMentions(server) {
  return server.channels.reduce((n, c) => n + c.mention_count, 0) + followed(server).reduce((n, x) => n + (x.mention_count || 0), 0);
}

// ---- notification settings (docs/api.md "Notifications") ---------------------------------------

/**
 * Whether a server, conversation or channel is muted now; a channel also when its server is.
 * @param {string} id
 * @param {string} [serverId]
 */
export function isMuted(id, serverId) {
  return [id, serverId].some((key) => Date.parse(state.notify.get(key)?.muted_until) > Date.now());
}

/**
 * What notifies there: 'all', 'mentions' or 'nothing'; a channel without its own follows its server.
 * @type {(id: string, serverId?: string) => string}
 */
export const notifyLevel = (id, serverId) => (state.notify.get(id) || state.notify.get(serverId))?.level || 'all';

/**
 * Sets (or with null removes) a setting; the lists redraw.
 * @param {string} id
 * @param {NotificationSetting | null} setting
 */
export function setNotify(id, setting) {
  if (setting) state.notify.set(id, setting);
  else state.notify.delete(id);
  redrawWhenMuteEnds();
}

let unmuteTimer = 0;
/** The lists redraw when the next mute ends (within setTimeout's reach, about 24 days). */
function redrawWhenMuteEnds() {
  const ends = [...state.notify.values()].map((s) => Date.parse(s.muted_until) - Date.now()).filter((ms) => ms > 0 && ms < 2 ** 31);
  clearTimeout(unmuteTimer);
  if (ends.length) unmuteTimer = setTimeout(redrawWhenMuteEnds, Math.min(...ends) + 50);
  emit('nav');
}

/**
 * May the user send in this room, given their standing? (2: no DMs or groups; 3: nothing.)
 * @param {string} kind 'channel' or 'conversation'
 */
export function maySend(kind) {
  if (state.standing >= 3) return false;
  if (state.standing >= 2 && kind === 'conversation') return false;
  return true;
}

// ---- ready and events -------------------------------------------------------------------------

/** @param {ReadyFrame} frame */
export function applyReady(frame) {
  state.me = {
    user_id: frame.user.user_id,
    username: frame.user.username,
    display_name: frame.user.display_name ?? null,
    avatar_url: frame.user.avatar_url ?? null,
  };
  state.status = frame.user.status || 'online';
  state.servers = frame.servers;
  state.conversations = frame.conversations;
  state.friends = frame.friends;
  state.incomingRequests = frame.incoming_friend_requests || 0;
  state.notify.clear();
  for (const setting of frame.notification_settings || []) state.notify.set(setting.target_id, setting);
  state.voice = new Map((frame.voice_states || []).map((s) => [s.user_id, s]));
  learnUser(state.me);
  for (const friend of frame.friends) {
    learnUser(friend);
    state.presence.set(friend.user_id, friend.presence);
  }
  for (const c of frame.conversations) c.members.forEach(learnUser);
  state.presence.set(state.me.user_id, state.status === 'invisible' ? 'offline' : state.status);
  state.ready = true;
  redrawWhenMuteEnds();
  // Member lists may have changed while we were away: load them again when needed.
  state.members.clear();
  state.roles.clear();
  emit('nav');
  emit('friends');
  emit('account');
  emit('presence');
  emit('voice');
}

/**
 * The people in a voice channel, in the order they joined (as the store heard them).
 * @param {string} channelId
 * @returns {VoiceState[]}
 */
export function voiceIn(channelId) {
  return [...state.voice.values()].filter((s) => s.channel_id === channelId);
}

/**
 * A user's new name or picture, wherever the store holds a copy of them.
 * @param {KnownUser} user
 */
function applyUser(user) {
  learnUser(user);
  const patch = (list) =>
    list.forEach((u) => {
      if (u.user_id === user.user_id) Object.assign(u, { username: user.username, display_name: user.display_name, avatar_url: user.avatar_url });
    });
  if (user.user_id === state.me.user_id) patch([state.me]);
  patch(state.friends);
  for (const c of state.conversations) patch(c.members);
  for (const list of state.members.values()) patch(list);
  emit('users', user.user_id);
  emit('nav');
}

const sortConversations = () => state.conversations.sort((a, b) => (b.last_message_at || b.created_at).localeCompare(a.last_message_at || a.created_at));

/** @param {Message} message */
function onMessage(message) {
  learnUser(message.author);
  const container = containerOf(message);
  if (!container) return;
  container.last_message_id = message.id;
  if (message.author_id === state.me.user_id) {
    // Sending marks the room read up to the message (the server does the same).
    container.last_read_id = message.id;
    container.unread_count = 0;
    container.mention_count = 0;
  } else {
    container.unread_count = Math.min(100, container.unread_count + 1);
    const mentioned = message.conversation_id || mentionsMe(message);
    if (mentioned) container.mention_count = Math.min(100, container.mention_count + 1);
  }
  if (message.conversation_id) {
    /** @type {ConversationWithState} */ (container).last_message_at = message.created_at;
    sortConversations();
  }
  // Whoever writes has stopped typing.
  const typers = state.typing.get(roomKey(message));
  if (typers && typers.delete(message.author_id)) emit('typing');
  emit('nav');
}

/** @param {import('../../types/client').ReadState & { server_id?: string, channel_id?: string, conversation_id?: string }} place */
export function applyRead(place) {
  const container = containerOf(place);
  if (!container) return;
  container.last_read_id = place.last_read_id;
  container.unread_count = place.unread_count;
  container.mention_count = place.mention_count;
  emit('nav');
}

// ---- the views' writes ------------------------------------------------------------------------
// Views never change `state` themselves: they call these (with the answer to their own request,
// before the stream's event brings the same), and the stream's handlers below use them too.

/**
 * Who signed in (GET /api/account), before the stream's ready says the rest.
 * @param {Account} account
 */
export function startSession(account) {
  state.standing = account.account_standing;
  state.isAdmin = account.is_admin;
  state.me = { user_id: account.user_id, username: account.username };
}

/**
 * What the page shows: the caller redraws (app.js select()).
 * @param {Place} place
 */
export function setCurrent(place) {
  state.current = place;
}

/**
 * A view asks the page to open a place (a conversation it just made): app.js listens on 'open'.
 * @param {Place} place
 */
export function openPlace(place) {
  emit('open', place);
}

/** @param {State['connection']} value @param {number} [retryIn] seconds until the next try */
export function setConnection(value, retryIn = 0) {
  state.connection = value;
  state.retryIn = retryIn;
  emit('connection');
}

/** @param {number} standing */
export function setStanding(standing) {
  state.standing = standing;
  emit('account');
}

/**
 * The user's own status and presence, as PUT /api/account/presence answered.
 * @param {{ status: State['status'], presence: Presence }} result
 */
export function applyStatus(result) {
  state.status = result.status;
  state.presence.set(state.me.user_id, result.presence);
  emit('presence');
}

/**
 * The room was seen: its counts drop at once (the server's answer to the read follows).
 * @param {ChannelWithState | ConversationWithState} container
 */
export function clearUnread(container) {
  container.unread_count = 0;
  container.mention_count = 0;
  emit('nav');
}

/** @param {ServerEntry} server */
export function addServer(server) {
  if (!findServer(server.id)) state.servers.push(server);
  emit('nav');
}

/** @param {string} serverId @param {Partial<ServerEntry>} server */
export function applyServer(serverId, server) {
  const known = findServer(serverId);
  if (known) Object.assign(known, server);
  emit('nav');
}

/** A server the user left or deleted, gone from the lists at once: the caller opens another place. */
/** @param {string} serverId */
export function forgetServer(serverId) {
  state.servers = state.servers.filter((s) => s.id !== serverId);
}

const byPosition = (a, b) => a.position - b.position;

/**
 * A new channel: from the stream with the user's permissions there, or from the answer to
 * creating it without them (mayIn() allows all until channel_access says otherwise).
 * @param {string} serverId
 * @param {import('../../types/client').Channel & Partial<ChannelWithState>} channel
 */
export function addChannel(serverId, channel) {
  const server = findServer(serverId);
  if (server && !server.channels.some((c) => c.id === channel.id)) {
    server.channels.push(/** @type {ChannelWithState} */ ({ last_message_id: null, last_read_id: null, unread_count: 0, mention_count: 0, ...channel }));
    server.channels.sort(byPosition);
  }
  emit('nav');
}

/**
 * A changed channel record (or some of its fields, with its id), keeping its read state.
 * @param {string} serverId
 * @param {Partial<ChannelWithState> & { id: string }} channel
 */
export function applyChannel(serverId, channel) {
  const known = findChannel(serverId, channel.id);
  if (known) Object.assign(known, channel);
  findServer(serverId)?.channels.sort(byPosition);
  emit('nav');
}

/** @param {string} serverId @param {string} channelId */
export function removeChannel(serverId, channelId) {
  const server = findServer(serverId);
  const removed = server?.channels.find((c) => c.id === channelId);
  if (server) server.channels = server.channels.filter((c) => c.id !== channelId);
  emit('nav', removed);
}

/**
 * The server's channels in a new order, shown before the server confirms it.
 * @param {string} serverId
 * @param {ChannelWithState[]} order
 */
export function orderChannels(serverId, order) {
  order.forEach((c, i) => {
    c.position = i;
  });
  findServer(serverId)?.channels.sort(byPosition);
  emit('nav');
}

/** @param {import('../../types/client').Conversation & Partial<ConversationWithState>} conversation */
export function addConversation(conversation) {
  if (findConversation(conversation.id)) return;
  state.conversations.unshift({ last_message_id: null, last_read_id: null, unread_count: 0, mention_count: 0, ...conversation });
  conversation.members.forEach(learnUser);
  sortConversations();
  emit('nav');
}

/** @param {string} conversationId @param {Partial<ConversationWithState>} record */
export function applyConversation(conversationId, record) {
  const i = state.conversations.findIndex((c) => c.id === conversationId);
  if (i >= 0) state.conversations[i] = { ...state.conversations[i], ...record };
  record.members?.forEach(learnUser);
  emit('nav');
}

/** @param {string} conversationId */
export function removeConversation(conversationId) {
  state.conversations = state.conversations.filter((c) => c.id !== conversationId);
  emit('nav');
}

/**
 * Someone is no longer a friend (removed, or blocked); `detail` goes to the 'friends' listeners.
 * @param {string} userId
 * @param {object} [detail]
 */
export function removeFriend(userId, detail) {
  state.friends = state.friends.filter((f) => f.user_id !== userId);
  emit('friends', detail);
}

/** @param {number} count */
export function setIncomingRequests(count) {
  if (state.incomingRequests === count) return;
  state.incomingRequests = count;
  emit('friends-count');
}

/**
 * The users the caller blocked (GET /api/blocks).
 * @param {import('../../types/client').Block[]} users
 */
export function setBlocked(users) {
  users.forEach(learnUser);
  state.blocked = new Set(users.map((b) => b.user_id));
  emit('blocks');
}

/**
 * A server's members and roles, as loaded.
 * @param {string} serverId
 * @param {Member[]} members
 * @param {Role[]} roles
 */
export function setMembers(serverId, members, roles) {
  state.members.set(serverId, members);
  state.roles.set(serverId, roles);
  for (const m of members) {
    learnUser(m);
    if (m.presence) state.presence.set(m.user_id, m.presence);
  }
  emit('members', serverId);
}

/**
 * What the store itself does with each live event of the user stream: event type -> handler.
 * Types without an entry change nothing here (views may still handle them, through onEvent).
 */
/** @typedef {{ [K in keyof Events]?: (ev: Events[K]) => void }} Handlers */

/** @type {Handlers} */
const handlers = {
  message: (ev) => onMessage(ev.message),
  voice_state(ev) {
    const { event: _event, ...record } = ev;
    // (Deleted first: one who moved goes to the end of their new channel's list.)
    state.voice.delete(ev.user_id);
    if (ev.channel_id !== null) state.voice.set(ev.user_id, /** @type {VoiceState} */ (record));
    emit('voice', ev);
  },
  read: applyRead,
  notification_settings: (ev) => setNotify(ev.target_id, ev.setting),
  typing(ev) {
    if (ev.user_id === state.me.user_id) return;
    const key = roomKey(ev);
    if (!state.typing.has(key)) state.typing.set(key, new Map());
    state.typing.get(key).set(ev.user_id, { user_id: ev.user_id, username: ev.username, display_name: ev.display_name ?? null, until: Date.now() + 6000 });
    learnUser(ev);
    emit('typing');
  },
  presence(ev) {
    state.presence.set(ev.user_id, ev.presence);
    if (ev.user_id === state.me.user_id && ev.status) {
      state.status = ev.status;
      emit('account');
    }
    emit('presence');
  },
  conversation_created: (ev) => addConversation(ev.conversation),
  friend_request(ev) {
    if (ev.request.to.user_id === state.me.user_id) state.incomingRequests += 1;
    learnUser(ev.request.from);
    emit('friends', ev);
  },
  friend_added(ev) {
    if (!isFriend(ev.friend.user_id)) state.friends.push(ev.friend);
    state.friends.sort((a, b) => displayName(a).localeCompare(displayName(b)));
    state.presence.set(ev.friend.user_id, ev.friend.presence);
    learnUser(ev.friend);
    emit('friends', ev);
    emit('presence');
  },
  friend_removed: (ev) => removeFriend(ev.user_id, ev),
  server_joined: (ev) => addServer(ev.server),
  server_left(ev) {
    // The views' handlers run after this one and say which server it was: keep it on the event.
    ev.server = findServer(ev.server_id) || null;
    state.servers = state.servers.filter((s) => s.id !== ev.server_id);
    state.members.delete(ev.server_id);
    emit('nav');
  },
  server_updated(ev) {
    // The caller's own gate (posting_gate) is theirs alone: a new level asks for it again (composer.js).
    const level = findServer(ev.server_id)?.verification_level;
    applyServer(ev.server_id, ev.server);
    if (level !== ev.server.verification_level) emit('gate', ev.server_id);
  },
  channel_created: (ev) => addChannel(ev.server_id, ev.channel),
  channel_updated: (ev) => applyChannel(ev.server_id, { ...ev.channel, id: ev.channel_id }),
  // What the user may do in a channel changed (an overwrite, a role): the composer and the lock follow.
  channel_access(ev) {
    const channel = findChannel(ev.server_id, ev.channel_id);
    if (channel) Object.assign(channel, { permissions: ev.permissions, private: ev.private });
    emit('nav');
  },
  channel_deleted: (ev) => removeChannel(ev.server_id, ev.channel_id),
  thread_created: (ev) => applyThread(ev.server_id, ev.thread),
  thread_updated: (ev) => applyThread(ev.server_id, ev.thread),
  thread_deleted: (ev) => applyThread(ev.server_id, /** @type {any} */ ({ id: ev.thread_id, parent_id: ev.parent_id }), true),
  thread_members(ev) {
    const mine = ev.added.includes(state.me.user_id) ? true : ev.removed.includes(state.me.user_id) ? false : undefined;
    applyThread(ev.server_id, mine === undefined ? ev.thread : { ...ev.thread, ...{ following: mine } });
  },
  member_joined: applyMember,
  member_updated: applyMember,
  // Every role of the server, in position order: names, colours and groups of the member list.
  roles_updated: (ev) => {
    state.roles.set(ev.server_id, ev.roles);
    emit('members', ev.server_id);
  },
  categories_updated(ev) {
    const server = findServer(ev.server_id);
    if (server) server.categories = ev.categories;
    emit('nav');
  },
  member_left(ev) {
    const list = state.members.get(ev.server_id);
    if (list)
      state.members.set(
        ev.server_id,
        list.filter((m) => m.user_id !== ev.user_id),
      );
    emit('members', ev.server_id);
  },
  standing: (ev) => setStanding(ev.account_standing),
  user_updated: (ev) => applyUser(ev.user),
  conversation_updated: (ev) => applyConversation(ev.conversation_id, ev.conversation),
  conversation_left: (ev) => removeConversation(ev.conversation_id),
};

/** @type {Map<string, (ev: any) => void>} */
const storeHandlers = new Map(Object.entries(handlers));

/**
 * A member joined or changed (role, timeout, name): the loaded member list follows.
 * @param {Events['member_joined'] | Events['member_updated']} ev
 */
function applyMember(ev) {
  learnUser(ev.member);
  const server = ev.member.user_id === state.me.user_id ? findServer(ev.server_id) : null;
  if (server) {
    server.role_ids = ev.member.role_ids;
    // A role may make the user a moderator, who is exempt from the verification level.
    if (server.posting_gate) emit('gate', ev.server_id);
  }
  if (ev.member.presence) state.presence.set(ev.member.user_id, ev.member.presence);
  const list = state.members.get(ev.server_id);
  if (list) {
    const i = list.findIndex((m) => m.user_id === ev.member.user_id);
    if (i >= 0) list[i] = { ...list[i], ...ev.member };
    else list.push(ev.member);
  }
  emit('members', ev.server_id);
}

/** @type {Map<string, Set<(ev: any) => void>>} Event type -> the views' handlers, in the order they were registered. */
const viewHandlers = new Map();

/**
 * A view's handler for one type of live event (the stream event's `event` field). It runs after
 * the store has applied the event, so it sees the state the event leaves. Returns a function
 * that removes it again.
 * @template {keyof Events} K
 * @param {K} type
 * @param {(ev: Events[K]) => void} fn
 * @returns {() => void}
 */
export function onEvent(type, fn) {
  return addTo(viewHandlers, type, fn);
}

/**
 * One live event: the store's own update first, then every view's handler for its type.
 * @param {import('../../types/client').StreamEvent} ev
 */
export function applyEvent(ev) {
  storeHandlers.get(ev.event)?.(ev);
  callEach(viewHandlers.get(ev.event), ev);
}
