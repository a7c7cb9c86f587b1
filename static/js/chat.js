// The signed-in app: the left column (servers, conversations), the middle column (a server's
// channels, or the people panel) and which room is open. The room itself lives in room.js.
import { api } from './api.js';
import { $, el, notify, ask, wireDialogs } from './ui.js';
import { openRoom, closeRoom } from './room.js';
import { initPeople, showPeople, refreshPeople } from './people.js';

const state = {
  me: null,
  servers: [],
  conversations: [],
  server: null, // the selected server record
  canManage: false, // owner or full server administrator of the selected server
  channels: [],
  selection: null, // {kind: 'channel', id} | {kind: 'conversation', id} | null
};

export async function startChat(me) {
  state.me = me;
  wireDialogs();
  $('home-button').addEventListener('click', () => showHome());
  $('new-server').addEventListener('click', newServer);
  $('new-channel').addEventListener('click', newChannel);
  $('invite-button').addEventListener('click', invite);
  $('invite-copy').addEventListener('click', copyInvite);
  initPeople({ me, openConversation: (conversation) => selectConversation(conversation.id, conversation), conversationsChanged: loadConversations });
  // Someone may have invited us to a DM or sent a request while the tab was in the background.
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'visible') {
      loadConversations().catch(() => {});
      if (!$('people-panel').hidden) refreshPeople();
    }
  });

  try {
    await Promise.all([loadServers(), loadConversations()]);
  } catch (err) {
    notify(err.message);
  }
  const params = new URLSearchParams(location.search);
  if (params.get('server')) await selectServer(params.get('server'), params.get('channel'));
  else if (params.get('conversation')) await selectConversation(params.get('conversation'));
  else if (state.servers.length) await selectServer(state.servers[0].id);
  else showHome();
}

/** Keeps the address bar pointing at what is open, so a reload comes back to it. */
function remember(params) {
  const q = new URLSearchParams(params).toString();
  history.replaceState(null, '', `/${q ? `?${q}` : ''}`);
}

function markCurrent(listId, id) {
  for (const button of $(listId).querySelectorAll('button[data-id]')) {
    if (button.dataset.id === id) button.setAttribute('aria-current', 'true');
    else button.removeAttribute('aria-current');
  }
}

function markAll() {
  markCurrent('server-list', state.server && state.selection?.kind === 'channel' ? state.server.id : null);
  markCurrent('channel-list', state.selection?.kind === 'channel' ? state.selection.id : null);
  markCurrent('conversation-list', state.selection?.kind === 'conversation' ? state.selection.id : null);
  const home = $('home-button');
  if (!state.selection && !$('people-panel').hidden) home.setAttribute('aria-current', 'true');
  else home.removeAttribute('aria-current');
}

// ---- servers and channels -------------------------------------------------------------------

async function loadServers() {
  state.servers = await api('GET', '/api/servers');
  $('server-list').replaceChildren(...state.servers.map((server) => el('li', {},
    el('button', { type: 'button', class: 'nav-item', 'data-id': server.id, onclick: () => selectServer(server.id) }, server.name))));
  $('no-servers').hidden = state.servers.length > 0;
  markAll();
}

async function selectServer(serverId, channelId) {
  const server = state.servers.find((s) => s.id === serverId);
  if (!server) {
    notify('That server is not one of yours (or no longer exists).');
    return showHome();
  }
  state.server = server;
  $('people-panel').hidden = true;
  $('server-panel').hidden = false;
  $('server-name').textContent = server.name;
  $('channel-list').replaceChildren();
  try {
    const [channels, canManage] = await Promise.all([api('GET', `/api/servers/${server.id}/channels`), mayManage(server)]);
    if (state.server !== server) return; // another server was picked meanwhile
    state.channels = channels;
    state.canManage = canManage;
    $('new-channel').hidden = !canManage;
    renderChannels();
    const channel = channels.find((c) => c.id === channelId) || channels[0];
    if (channel) selectChannel(channel);
  } catch (err) {
    notify(err.message);
  }
}

/** Owner, or a member whose role has full_server_admin: may create channels, delete any message. */
async function mayManage(server) {
  if (server.owner_id === state.me.user_id) return true;
  const [members, roles] = await Promise.all([api('GET', `/api/servers/${server.id}/members`), api('GET', `/api/servers/${server.id}/roles`)]);
  const mine = members.find((m) => m.user_id === state.me.user_id);
  return Boolean(mine && roles.some((role) => role.full_server_admin && mine.roles.includes(role.name)));
}

function renderChannels() {
  $('channel-list').replaceChildren(...state.channels.map((channel) => el('li', {},
    el('button', { type: 'button', class: 'nav-item channel', 'data-id': channel.id, onclick: () => selectChannel(channel) }, `# ${channel.name}`))));
  markAll();
}

function selectChannel(channel) {
  const server = state.server;
  state.selection = { kind: 'channel', id: channel.id };
  remember({ server: server.id, channel: channel.id });
  openRoom({
    base: `/api/servers/${server.id}/channels/${channel.id}`,
    wsPath: `/api/channels/${channel.id}/ws`,
    title: `# ${channel.name} · ${server.name}`,
    me: state.me,
    canModerate: state.canManage,
    reportType: 'server_message',
  });
  markAll();
}

async function newServer() {
  const name = await ask({ title: 'New server', label: 'Server name', submit: 'Create server', maxLength: 100 });
  if (name === null) return;
  try {
    const server = await api('POST', '/api/servers', { name });
    await loadServers();
    await selectServer(server.id);
  } catch (err) {
    notify(err.message);
  }
}

async function newChannel() {
  const server = state.server;
  if (!server) return;
  const name = await ask({ title: `New channel in ${server.name}`, label: 'Channel name', submit: 'Create channel', maxLength: 100 });
  if (name === null) return;
  try {
    const channel = await api('POST', `/api/servers/${server.id}/channels`, { name });
    if (state.server !== server) return;
    state.channels.push(channel);
    renderChannels();
    selectChannel(channel);
  } catch (err) {
    notify(err.message);
  }
}

async function invite() {
  if (!state.server) return;
  try {
    const created = await api('POST', `/api/servers/${state.server.id}/invites`);
    $('invite-title').textContent = `Invite people to ${state.server.name}`;
    $('invite-url').value = created.url;
    $('invite-expires').textContent = `Valid until ${new Date(created.expires_at).toLocaleString()}.`;
    $('invite-dialog').showModal();
    $('invite-url').select();
  } catch (err) {
    notify(err.message);
  }
}

async function copyInvite() {
  const input = $('invite-url');
  input.select();
  try {
    await navigator.clipboard.writeText(input.value);
    $('invite-copy').textContent = 'Copied';
  } catch {
    notify('Copying was refused by the browser: the link is selected, copy it with Ctrl+C.', false);
  }
}

// ---- conversations ----------------------------------------------------------------------------

export function conversationTitle(conversation) {
  if (conversation.kind === 'group') return conversation.name;
  const other = conversation.members.find((m) => m.user_id !== state.me.user_id);
  return other ? other.username : 'just you';
}

async function loadConversations() {
  state.conversations = await api('GET', '/api/conversations');
  $('conversation-list').replaceChildren(...state.conversations.map((c) => el('li', {},
    el('button', { type: 'button', class: `nav-item ${c.kind}`, 'data-id': c.id, onclick: () => selectConversation(c.id) },
      c.kind === 'group' ? `${c.name} (${c.members.length})` : `@ ${conversationTitle(c)}`))));
  $('no-conversations').hidden = state.conversations.length > 0;
  markAll();
}

async function selectConversation(id, known) {
  let conversation = known || state.conversations.find((c) => c.id === id);
  if (!conversation) {
    try {
      conversation = await api('GET', `/api/conversations/${id}`);
    } catch (err) {
      notify(err.message);
      return showHome();
    }
  }
  if (!state.conversations.some((c) => c.id === conversation.id)) await loadConversations().catch(() => {});
  state.server = null;
  state.selection = { kind: 'conversation', id: conversation.id };
  remember({ conversation: conversation.id });
  showPeople();
  $('server-panel').hidden = true;
  const names = conversation.members.map((m) => m.username).join(', ');
  openRoom({
    base: `/api/conversations/${conversation.id}`,
    wsPath: `/api/conversations/${conversation.id}/ws`,
    title: conversation.kind === 'group' ? `${conversation.name} · ${names}` : `@ ${conversationTitle(conversation)}`,
    me: state.me,
    canModerate: false, // only the author deletes in a conversation
    reportType: 'conversation_message',
  });
  markAll();
}

function showHome() {
  closeRoom();
  state.server = null;
  state.selection = null;
  remember({});
  $('server-panel').hidden = true;
  showPeople();
  markAll();
}
