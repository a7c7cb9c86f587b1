// @ts-check
// The friends view (friends with presence, requests in and out, add a friend, the users one
// blocked with Unblock) and the "New DM" / "New group" dialogs. Friends, blocks and the request
// count come from the store; the request lists are asked for when the view opens and whenever
// the stream says they changed.
import { api } from './api.js';
import { $, el, toast, ask, confirmAction, presenceDot, formatTime } from './ui.js';
import { icon } from './icons.js';
import { state, on, displayName, setIncomingRequests, removeFriend as forgetFriend } from './store.js';
import { userAvatar } from './names.js';
import { addFriend, reportUser, openDm, startConversation } from './members.js';
import { blockedUsers, blockUser, unblockUser } from './blocks.js';

let incoming = [];
let outgoing = [];

/** newServer(): the app's "Create a server" dialog. */
export function initPeople({ newServer }) {
  $('friend-form').addEventListener('submit', async (e) => {
    e.preventDefault();
    const input = $('friend-name', HTMLInputElement);
    const name = input.value.trim();
    if (!name) return;
    await addFriend(name);
    input.value = '';
  });
  $('welcome-create').addEventListener('click', () => newServer());
  $('welcome-invite').addEventListener('click', joinByInvite);
  on('nav', renderWelcome);
  $('new-dm').addEventListener('click', openDmDialog);
  $('new-group').addEventListener('click', openGroupDialog);
  $('dm-dialog').addEventListener('close', createDm);
  $('group-dialog').addEventListener('close', createGroup);
  on('friends', () => {
    if (!$('people-view').hidden) loadRequests();
  });
  on('presence', () => {
    if (!$('people-view').hidden) renderFriends();
  });
  on('users', () => {
    if ($('people-view').hidden) return;
    renderFriends();
    renderRequests();
    renderBlocked();
  });
  on('blocks', renderBlocked);
}

export function showPeople() {
  $('people-view').hidden = false;
  renderFriends();
  renderBlocked();
  loadRequests();
}

async function loadRequests() {
  try {
    [incoming, outgoing] = await Promise.all([api('GET', '/api/friends/requests'), api('GET', '/api/friends/requests?direction=outgoing')]);
    setIncomingRequests(incoming.length);
    renderRequests();
    renderFriends();
  } catch (err) {
    toast(err.message);
  }
}

function personCell(user, sub) {
  const presence = state.presence.get(user.user_id) || 'offline';
  const name = displayName(user);
  return el(
    'span',
    { class: 'person' },
    el('span', { class: 'avatar-wrap' }, userAvatar(user), sub === undefined ? presenceDot(presence) : null),
    el(
      'span',
      { class: 'person-text' },
      el(
        'span',
        { class: 'person-name', title: `@${user.username}` },
        name,
        name !== user.username ? el('span', { class: 'muted person-username', text: ` @${user.username}` }) : null,
      ),
      el('span', { class: 'muted person-sub', text: sub === undefined ? (presence === 'dnd' ? 'do not disturb' : presence) : sub }),
    ),
  );
}

function renderBlocked() {
  $('blocked-list').replaceChildren(
    ...blockedUsers.map((user) =>
      el(
        'li',
        { class: 'person-row' },
        personCell(user, `blocked ${formatTime(user.created_at)}`),
        el(
          'span',
          { class: 'row-actions' },
          el('button', { type: 'button', class: 'small', onclick: () => unblockUser(user), 'aria-label': `Unblock ${displayName(user)}` }, 'Unblock'),
        ),
      ),
    ),
  );
  $('blocked-section').hidden = blockedUsers.length === 0;
}

function renderFriends() {
  const order = { online: 0, idle: 1, dnd: 2, offline: 3 };
  const friends = [...state.friends].sort(
    (a, b) =>
      order[state.presence.get(a.user_id) || 'offline'] - order[state.presence.get(b.user_id) || 'offline'] || displayName(a).localeCompare(displayName(b)),
  );
  $('friend-list').replaceChildren(
    ...friends.map((friend) =>
      el(
        'li',
        { class: 'person-row', title: `friends since ${formatTime(friend.since)}` },
        personCell(friend),
        el(
          'span',
          { class: 'row-actions' },
          el('button', { type: 'button', class: 'small', onclick: () => openDm(friend.username) }, icon('chat'), ' Message'),
          el('button', { type: 'button', class: 'small', onclick: () => reportUser(friend) }, 'Report'),
          el('button', { type: 'button', class: 'small danger', onclick: () => blockUser(friend) }, 'Block'),
          el('button', { type: 'button', class: 'small danger', onclick: () => removeFriend(friend) }, 'Remove'),
        ),
      ),
    ),
  );
  $('no-friends').hidden = friends.length > 0;
  renderWelcome();
}

/** Someone with no server and no friend yet sees how to start instead of empty lists. */
function renderWelcome() {
  $('welcome').hidden = state.servers.length > 0 || state.friends.length > 0;
}

/** An invite link (or just its code) pasted in opens the invite page, which shows the server and joins. */
async function joinByInvite() {
  const value = await ask({
    title: 'Join a server',
    text: 'Paste the invite link someone sent you.',
    label: 'Invite link',
    submit: 'Open invite',
    maxLength: 2000,
  });
  if (value === null) return;
  const token = value
    .trim()
    .replace(/[?#].*$/, '')
    .replace(/\/+$/, '')
    .split('/')
    .pop();
  if (!token) return toast('That is not an invite link: it looks like https://…/invites/abc123.');
  location.assign(`/invites/${encodeURIComponent(token)}`);
}

function renderRequests() {
  const items = [
    ...incoming.map((request) =>
      el(
        'li',
        { class: 'person-row incoming' },
        personCell(request.from, 'wants to be your friend'),
        el(
          'span',
          { class: 'row-actions' },
          el('button', { type: 'button', class: 'small primary', onclick: () => answer(request, 'accept') }, 'Accept'),
          el('button', { type: 'button', class: 'small', onclick: () => answer(request, 'reject') }, 'Reject'),
        ),
      ),
    ),
    ...outgoing.map((request) => el('li', { class: 'person-row outgoing' }, personCell(request.to, 'request sent'))),
  ];
  $('request-list').replaceChildren(...items);
  $('no-requests').hidden = items.length > 0;
}

async function answer(request, verb) {
  try {
    await api('POST', `/api/friends/requests/${request.id}/${verb}`);
    loadRequests();
  } catch (err) {
    toast(err.message);
  }
}

async function removeFriend(friend) {
  if (
    !(await confirmAction(
      `Remove ${displayName(friend)} as a friend?`,
      'Your direct messages stay, but you can no longer start new ones until one of you asks again.',
      'Remove friend',
    ))
  )
    return;
  try {
    await api('DELETE', `/api/friends/${friend.user_id}`);
    forgetFriend(friend.user_id);
    renderFriends();
  } catch (err) {
    toast(err.message);
  }
}

// ---- dialogs ------------------------------------------------------------------------------

function openDmDialog() {
  const select = $('dm-friend', HTMLSelectElement);
  select.replaceChildren(
    ...state.friends.map((f) => el('option', { value: f.username, text: displayName(f) === f.username ? f.username : `${displayName(f)} (@${f.username})` })),
  );
  select.hidden = state.friends.length === 0;
  select.required = state.friends.length > 0; // a hidden required field would block the form
  $('dm-empty').hidden = state.friends.length > 0;
  $('dm-dialog', HTMLDialogElement).returnValue = '';
  $('dm-dialog', HTMLDialogElement).showModal();
}

function createDm() {
  if ($('dm-dialog', HTMLDialogElement).returnValue !== 'ok' || !$('dm-friend', HTMLSelectElement).value) return;
  openDm($('dm-friend', HTMLSelectElement).value);
}

function openGroupDialog() {
  if (state.standing >= 2) return toast('Your account standing (very limited) does not allow creating group chats.');
  $('group-name', HTMLInputElement).value = '';
  $('group-friends').replaceChildren(
    ...state.friends.map((f, i) =>
      el(
        'li',
        {},
        el('input', { type: 'checkbox', id: `group-friend-${i}`, value: f.username }),
        el('label', { for: `group-friend-${i}`, text: displayName(f) }),
      ),
    ),
  );
  $('group-empty').hidden = state.friends.length > 0;
  $('group-dialog', HTMLDialogElement).returnValue = '';
  $('group-dialog', HTMLDialogElement).showModal();
}

async function createGroup() {
  if ($('group-dialog', HTMLDialogElement).returnValue !== 'ok') return;
  const usernames = [...$('group-friends').querySelectorAll('input')].filter((box) => box.checked).map((box) => box.value);
  if (usernames.length === 0) return toast('Pick at least one friend for the group.');
  await startConversation('group', { name: $('group-name', HTMLInputElement).value, usernames });
}
