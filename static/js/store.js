// The one client-side store: what the user stream's ready frame says, kept current by its
// events. Views read `state` and subscribe to topics; nothing else holds a copy of the lists.
//
// Topics: 'nav' (servers, channels, conversations, unread and mention counts), 'friends'
// (friends, requests), 'presence', 'members' (a server's members or roles), 'typing',
// 'connection', 'account' (standing, status), 'users' (a name or picture changed), 'blocks'
// (the users the caller blocked). Notification settings (`notify`) change 'nav'.
//
// Live events go through a table, event type -> handler (see applyEvent): the store's own
// handler updates the state; views add theirs with onEvent(type, fn) (the open room, pins,
// notifications), which run after it.

export const state = {
  me: null, // {user_id, username, display_name, avatar_url}
  status: 'online', // what the user chose: online, idle, dnd, invisible
  standing: 0,
  isAdmin: false,
  servers: [], // as in ready: each with channels (each with its read state)
  conversations: [], // most recent first, each with its read state
  friends: [],
  incomingRequests: 0,
  presence: new Map(), // user id -> online | idle | dnd | offline
  users: new Map(), // user id -> {user_id, username, display_name, avatar_url}: everyone seen
  blocked: new Set(), // ids of the users the caller blocked (GET /api/blocks, then kept here)
  notify: new Map(), // target id (server, channel, conversation) -> its notification setting
  members: new Map(), // server id -> member records (loaded when a server is opened)
  roles: new Map(), // server id -> role records
  typing: new Map(), // room key -> Map(user id -> {username, until})
  connection: 'connecting', // connecting | live | offline | signed-out | suspended
  retryIn: 0,
  ready: false,
  current: null, // {kind: 'channel', serverId, channelId} | {kind: 'conversation', id} | {kind: 'friends'}
};

const listeners = new Map();

export function on(topic, fn) {
  return addTo(listeners, topic, fn);
}

/** Adds fn to the set map holds under key; returns a function that takes it out again. */
function addTo(map, key, fn) {
  if (!map.has(key)) map.set(key, new Set());
  map.get(key).add(fn);
  return () => map.get(key).delete(fn);
}

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

export const findServer = (id) => state.servers.find((s) => s.id === id) || null;
export const findChannel = (serverId, channelId) => findServer(serverId)?.channels.find((c) => c.id === channelId) || null;

/** Whether the user may do `flag` (a channel permission) in the room: always in a conversation. */
export function mayIn(room, flag) {
  if (!room || room.kind !== 'channel') return true;
  const permissions = findChannel(room.serverId, room.channelId)?.permissions;
  return !permissions || permissions.includes(flag);
}
export const findConversation = (id) => state.conversations.find((c) => c.id === id) || null;
export const isFriend = (userId) => state.friends.some((f) => f.user_id === userId);

/** 'c:<channel id>' or 'd:<conversation id>': the key of a room in drafts, typing and so on. */
export function roomKey(place) {
  if (!place) return '';
  if (place.channel_id || place.channelId) return `c:${place.channel_id || place.channelId}`;
  if (place.conversation_id) return `d:${place.conversation_id}`;
  if (place.kind === 'conversation') return `d:${place.id}`;
  return '';
}

/** The read-state record (channel or conversation) an event or message belongs to. */
export function containerOf(place) {
  if (place.channel_id) return findChannel(place.server_id, place.channel_id);
  if (place.conversation_id) return findConversation(place.conversation_id);
  return null;
}

export function conversationTitle(conversation) {
  if (conversation.kind === 'group') return conversation.name || 'Group';
  const other = conversation.members.find((m) => m.user_id !== state.me.user_id);
  return other ? displayName(other) : 'just you';
}

export function dmPartner(conversation) {
  if (conversation.kind !== 'dm') return null;
  return conversation.members.find((m) => m.user_id !== state.me.user_id) || null;
}

/**
 * Remembers how a user is shown. Records that carry display_name and avatar_url (messages,
 * members, friends, user_updated) set them; the short {user_id, username} of administrator
 * views keeps what was known.
 */
export function learnUser(user) {
  if (!user || !user.user_id || !user.username) return;
  const known = state.users.get(user.user_id);
  state.users.set(user.user_id, {
    user_id: user.user_id,
    username: user.username,
    display_name: 'display_name' in user ? user.display_name : known?.display_name ?? null,
    avatar_url: 'avatar_url' in user ? user.avatar_url : known?.avatar_url ?? null,
  });
}

/** The newest record of a user we know, or the reference given. */
export const userRecord = (user) => (user && state.users.get(user.user_id)) || user;

/** What to call a user: the display name, else the username. */
export function displayName(user) {
  const u = userRecord(user);
  if (!u) return 'unknown';
  return u.display_name || u.username || 'unknown';
}

export const isBlocked = (userId) => state.blocked.has(userId);

/** The server a user id owns, or whose member with a full_server_admin role they are. */
export function canManageServer(server) {
  if (!server || !state.me) return false;
  if (server.owner_id === state.me.user_id) return true;
  const members = state.members.get(server.id);
  const roles = state.roles.get(server.id);
  if (!members || !roles) return false;
  const mine = members.find((m) => m.user_id === state.me.user_id);
  return roles.some((role) => role.full_server_admin && holdsRole(mine, role.id));
}

/** Whether a member holds a role (by id: names change). */
export const holdsRole = (member, roleId) => Boolean(member?.role_ids?.includes(roleId));

/** The roles a member holds, in the server's order (a move reorders them without a member event). */
export const heldRoles = (roles, member) => roles.filter((r) => holdsRole(member, r.id));

/**
 * Whether a message names the user: by name, @everyone, or a role they hold (unless their
 * settings for its server suppress @everyone or role mentions, as the server counts them).
 */
export function mentionsMe(m) {
  const s = state.notify.get(m.server_id);
  if ((m.mention_everyone && !s?.suppress_everyone) || (m.mentions || []).includes(state.me.user_id)) return true;
  if (!m.mention_roles?.length || !m.server_id || s?.suppress_roles) return false;
  const mine = (state.members.get(m.server_id) || []).find((member) => member.user_id === state.me.user_id);
  return m.mention_roles.some((id) => holdsRole(mine, id));
}

/** What the title bar counts: mentions in channels plus unread DMs and groups not muted. */
export function attentionCount() {
  let n = 0;
  for (const server of state.servers) for (const c of server.channels) n += c.mention_count;
  for (const c of state.conversations) if (!isMuted(c.id)) n += c.unread_count;
  return n;
}

/** Unread, for the rail's dot: a channel neither it nor its server muted has unread messages. */
export function serverUnread(server) {
  return !isMuted(server.id) && server.channels.some((c) => c.unread_count > 0 && !isMuted(c.id));
}
export function serverMentions(server) {
  return server.channels.reduce((n, c) => n + c.mention_count, 0);
}

// ---- notification settings (docs/api.md "Notifications") ---------------------------------------

/** Whether a server, conversation or channel is muted now; a channel also when its server is. */
export function isMuted(id, serverId) {
  return [id, serverId].some((key) => Date.parse(state.notify.get(key)?.muted_until) > Date.now());
}

/** What notifies there: 'all', 'mentions' or 'nothing'; a channel without its own follows its server. */
export const notifyLevel = (id, serverId) => (state.notify.get(id) || state.notify.get(serverId))?.level || 'all';

/** Sets (or with null removes) a setting; the lists redraw. */
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

/** May the user send in this room, given their standing? (2: no DMs or groups; 3: nothing.) */
export function maySend(kind) {
  if (state.standing >= 3) return false;
  if (state.standing >= 2 && kind === 'conversation') return false;
  return true;
}

// ---- ready and events -------------------------------------------------------------------------

export function applyReady(frame) {
  state.me = { user_id: frame.user.user_id, username: frame.user.username, display_name: frame.user.display_name ?? null, avatar_url: frame.user.avatar_url ?? null };
  state.status = frame.user.status || 'online';
  state.servers = frame.servers;
  state.conversations = frame.conversations;
  state.friends = frame.friends;
  state.incomingRequests = frame.incoming_friend_requests || 0;
  state.notify.clear();
  for (const setting of frame.notification_settings || []) state.notify.set(setting.target_id, setting);
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
}

/** A user's new name or picture, wherever the store holds a copy of them. */
function applyUser(user) {
  learnUser(user);
  const patch = (list) => list.forEach((u) => {
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
    container.last_message_at = message.created_at;
    sortConversations();
  }
  // Whoever writes has stopped typing.
  const typers = state.typing.get(roomKey(message));
  if (typers && typers.delete(message.author_id)) emit('typing');
  emit('nav');
}

export function applyRead(place) {
  const container = containerOf(place);
  if (!container) return;
  container.last_read_id = place.last_read_id;
  container.unread_count = place.unread_count;
  container.mention_count = place.mention_count;
  emit('nav');
}

/**
 * What the store itself does with each live event of the user stream: event type -> handler.
 * Types without an entry change nothing here (views may still handle them, through onEvent).
 */
const storeHandlers = new Map(Object.entries({
  message: (ev) => onMessage(ev.message),
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
  conversation_created(ev) {
    if (findConversation(ev.conversation.id)) return;
    state.conversations.unshift(ev.conversation);
    ev.conversation.members.forEach(learnUser);
    sortConversations();
    emit('nav');
  },
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
  friend_removed(ev) {
    state.friends = state.friends.filter((f) => f.user_id !== ev.user_id);
    emit('friends', ev);
  },
  server_joined(ev) {
    if (!findServer(ev.server.id)) state.servers.push(ev.server);
    emit('nav');
  },
  server_left(ev) {
    // The views' handlers run after this one and say which server it was: keep it on the event.
    ev.server = findServer(ev.server_id) || null;
    state.servers = state.servers.filter((s) => s.id !== ev.server_id);
    state.members.delete(ev.server_id);
    emit('nav');
  },
  server_updated(ev) {
    const server = findServer(ev.server_id);
    if (server) Object.assign(server, ev.server);
    emit('nav');
  },
  channel_created(ev) {
    const server = findServer(ev.server_id);
    if (server && !server.channels.some((c) => c.id === ev.channel.id)) {
      server.channels.push({ last_message_id: null, last_read_id: null, unread_count: 0, mention_count: 0, ...ev.channel });
      server.channels.sort((a, b) => a.position - b.position);
    }
    emit('nav');
  },
  channel_updated(ev) {
    const channel = findChannel(ev.server_id, ev.channel_id);
    if (channel) Object.assign(channel, ev.channel);
    findServer(ev.server_id)?.channels.sort((a, b) => a.position - b.position);
    emit('nav');
  },
  // What the user may do in a channel changed (an overwrite, a role): the composer and the lock follow.
  channel_access(ev) {
    const channel = findChannel(ev.server_id, ev.channel_id);
    if (channel) Object.assign(channel, { permissions: ev.permissions, private: ev.private });
    emit('nav');
  },
  channel_deleted(ev) {
    const server = findServer(ev.server_id);
    if (server) server.channels = server.channels.filter((c) => c.id !== ev.channel_id);
    emit('nav');
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
    if (list) state.members.set(ev.server_id, list.filter((m) => m.user_id !== ev.user_id));
    emit('members', ev.server_id);
  },
  standing(ev) {
    state.standing = ev.account_standing;
    emit('account');
  },
  user_updated: (ev) => applyUser(ev.user),
  conversation_updated(ev) {
    const i = state.conversations.findIndex((c) => c.id === ev.conversation_id);
    if (i >= 0) state.conversations[i] = { ...state.conversations[i], ...ev.conversation };
    ev.conversation.members.forEach(learnUser);
    emit('nav');
  },
  conversation_left(ev) {
    state.conversations = state.conversations.filter((c) => c.id !== ev.conversation_id);
    emit('nav');
  },
}));

/** A member joined or changed (role, timeout, name): the loaded member list follows. */
function applyMember(ev) {
  learnUser(ev.member);
  if (ev.member.presence) state.presence.set(ev.member.user_id, ev.member.presence);
  const list = state.members.get(ev.server_id);
  if (list) {
    const i = list.findIndex((m) => m.user_id === ev.member.user_id);
    if (i >= 0) list[i] = { ...list[i], ...ev.member };
    else list.push(ev.member);
  }
  emit('members', ev.server_id);
}

/** Event type -> the views' handlers, in the order they were registered. */
const viewHandlers = new Map();

/**
 * A view's handler for one type of live event (the stream event's `event` field). It runs after
 * the store has applied the event, so it sees the state the event leaves. Returns a function
 * that removes it again.
 */
export function onEvent(type, fn) {
  return addTo(viewHandlers, type, fn);
}

/** One live event: the store's own update first, then every view's handler for its type. */
export function applyEvent(ev) {
  storeHandlers.get(ev.event)?.(ev);
  callEach(viewHandlers.get(ev.event), ev);
}
