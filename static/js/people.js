// The people panel (friends, friend requests) and the "New DM" / "New group" dialogs.
import { api } from './api.js';
import { $, el, notify, formatTime } from './ui.js';

let hooks = null; // {me, openConversation(record), conversationsChanged()}
let friends = [];

export function initPeople(options) {
  hooks = options;
  $('friend-form').addEventListener('submit', sendRequest);
  $('new-dm').addEventListener('click', openDmDialog);
  $('new-group').addEventListener('click', openGroupDialog);
  $('dm-dialog').addEventListener('close', createDm);
  $('group-dialog').addEventListener('close', createGroup);
}

/** Shows the people panel in the middle column and refreshes it. */
export function showPeople() {
  $('people-panel').hidden = false;
  refreshPeople();
}

export async function refreshPeople() {
  try {
    const [list, incoming, outgoing] = await Promise.all([
      api('GET', '/api/friends'),
      api('GET', '/api/friends/requests'),
      api('GET', '/api/friends/requests?direction=outgoing'),
    ]);
    friends = list;
    renderFriends();
    renderRequests(incoming, outgoing);
  } catch (err) {
    notify(err.message);
  }
}

function renderFriends() {
  $('friend-list').replaceChildren(...friends.map((friend) => el('li', {},
    el('span', { class: 'person', text: friend.username, title: `friends since ${formatTime(friend.since)}` }),
    el('span', { class: 'button-row' },
      el('button', { type: 'button', class: 'small', onclick: () => openDm(friend.username) }, 'Message'),
      el('button', { type: 'button', class: 'small danger', onclick: () => removeFriend(friend) }, 'Remove')))));
  $('no-friends').hidden = friends.length > 0;
}

function renderRequests(incoming, outgoing) {
  const items = [
    ...incoming.map((request) => el('li', {},
      el('span', { class: 'person', text: request.from.username }),
      el('span', { class: 'button-row' },
        el('button', { type: 'button', class: 'small primary', onclick: () => answer(request, 'accept') }, 'Accept'),
        el('button', { type: 'button', class: 'small', onclick: () => answer(request, 'reject') }, 'Reject')))),
    ...outgoing.map((request) => el('li', { class: 'outgoing' },
      el('span', { class: 'person', text: request.to.username }),
      el('span', { class: 'muted', text: 'request sent' }))),
  ];
  $('request-list').replaceChildren(...items);
  $('no-requests').hidden = items.length > 0;
}

async function sendRequest(e) {
  e.preventDefault();
  const input = $('friend-name');
  try {
    const request = await api('POST', '/api/friends/requests', { username: input.value.trim() });
    input.value = '';
    notify(`Friend request sent to ${request.to.username}.`, false);
    refreshPeople();
  } catch (err) {
    notify(err.message);
  }
}

async function answer(request, verb) {
  try {
    await api('POST', `/api/friends/requests/${request.id}/${verb}`);
    refreshPeople();
  } catch (err) {
    notify(err.message);
  }
}

async function removeFriend(friend) {
  try {
    await api('DELETE', `/api/friends/${friend.user_id}`);
    refreshPeople();
  } catch (err) {
    notify(err.message);
  }
}

async function openDm(username) {
  try {
    const conversation = await api('POST', '/api/conversations/dm', { usernames: [username] });
    await hooks.conversationsChanged();
    hooks.openConversation(conversation);
  } catch (err) {
    notify(err.message);
  }
}

// ---- dialogs ------------------------------------------------------------------------------

async function loadFriends() {
  try {
    friends = await api('GET', '/api/friends');
  } catch (err) {
    notify(err.message);
  }
}

async function openDmDialog() {
  await loadFriends();
  const select = $('dm-friend');
  select.replaceChildren(...friends.map((f) => el('option', { value: f.username, text: f.username })));
  select.hidden = friends.length === 0;
  select.required = friends.length > 0; // a hidden required field would block the form
  $('dm-empty').hidden = friends.length > 0;
  $('dm-dialog').returnValue = '';
  $('dm-dialog').showModal();
}

function createDm() {
  if ($('dm-dialog').returnValue !== 'ok' || !$('dm-friend').value) return;
  openDm($('dm-friend').value);
}

async function openGroupDialog() {
  await loadFriends();
  $('group-name').value = '';
  $('group-friends').replaceChildren(...friends.map((f, i) => el('li', {},
    el('input', { type: 'checkbox', id: `group-friend-${i}`, value: f.username }),
    el('label', { for: `group-friend-${i}`, text: f.username }))));
  $('group-empty').hidden = friends.length > 0;
  $('group-dialog').returnValue = '';
  $('group-dialog').showModal();
}

async function createGroup() {
  if ($('group-dialog').returnValue !== 'ok') return;
  const usernames = [...$('group-friends').querySelectorAll('input:checked')].map((box) => box.value);
  if (usernames.length === 0) return notify('Pick at least one friend for the group.');
  try {
    const conversation = await api('POST', '/api/conversations/group', { name: $('group-name').value, usernames });
    await hooks.conversationsChanged();
    hooks.openConversation(conversation);
  } catch (err) {
    notify(err.message);
  }
}
