// @ts-check
// The signed-in app: wires the views (sidebar, room, composer, members, people, settings,
// search, pins, switcher, alerts) to the store and the user stream, and decides what is open:
// the address (?server=&channel=, ?conversation=, ?view=friends) and the phone pane follow the
// selection; a message link (&message=, or /channels/…) opens its room around it. The page's
// main room and its composer are made here (createRoom, createComposer), and its header (name,
// topic, group menu) is drawn here.
import { api } from './api.js';
import { $, el, toast, ask, wireDialogs, presenceDot, standingLabel, STANDING_HELP, submitButton } from './ui.js';
import { icon } from './icons.js';
import { toggleTheme, currentTheme } from './theme.js';
import { openPopup, closePopup, menuKeys, menuItem } from './popup.js';
import {
  state,
  on,
  onEvent,
  emit,
  findServer,
  findChannel,
  findConversation,
  conversationTitle,
  dmPartner,
  canManageServer,
  displayName,
  setCurrent,
  startSession,
  applyStatus,
  addServer,
  forgetServer,
  mentionsMe,
} from './store.js';
import { userAvatar } from './names.js';
import { connect, onReady, reconnectNow } from './stream.js';
import { initSidebar } from './sidebar.js';
import { initVoice } from './voice.js';
import { createRoom } from './room.js';
import { initThreads, showPlace } from './threads.js';
import { initKeyboard, openShortcuts } from './keyboard.js';
import { createComposer } from './composer.js';
import { loadMembers, renderMembers } from './members.js';
import { initPeople, showPeople } from './people.js';
import { initSwitcher } from './switcher.js';
import { initAlerts, setRoomName, toggleNotifications, notificationsOn, notificationsSupported, clearBadge } from './alerts.js';
import { initSearch, closeSearch, roomChanged } from './search.js';
import { initPins } from './pins.js';
import { openGroupMenu } from './groups.js';
import { loadBlocks } from './blocks.js';
import { forgetRemembered, logIn, codeStep, passkeysSupported, CODE_REQUIRED, CODE_WRONG } from './signin.js';

/** @typedef {import('../../types/client').Place} Place */

const LAST_PLACE = 'chat:last-place';
/** How long after the first room shows the installed app's side (pwa.js) loads. */
const PWA_DELAY_MS = 1000;
const LAST_CHANNEL = 'chat:last-channel:';
let started = false;
/** The page's main room and its composer (startApp). */
let room = null;
let composer = null;

function fillIcons() {
  const put = (id, name) => $(id).replaceChildren(icon(name));
  put('home-button', 'chat');
  put('new-server', 'plus');
  put('server-menu-button', 'dots');
  put('new-channel', 'plus');
  put('new-dm', 'plus');
  put('new-group', 'users');
  put('room-back', 'back');
  put('people-back', 'back');
  put('members-button', 'users');
  put('settings-close', 'x');
  put('pins-button', 'pin');
  put('room-menu-button', 'dots');
  put('search-close', 'x');
  put('search-back', 'back');
  $('search-form').prepend(icon('search', 'search-icon'));
  $('switcher-button').prepend(icon('search'));
  $('friends-button').prepend(icon('users', 'nav-icon'));
}

// ---- phone panes ------------------------------------------------------------------------

/** Below 760 px one pane shows at a time: the lists (nav), the room, or its members. */
function setPane(pane) {
  const app = $('app');
  app.classList.remove('pane-nav', 'pane-room', 'pane-members', 'pane-search');
  app.classList.add(`pane-${pane}`);
}

// ---- selection --------------------------------------------------------------------------

function remember(params) {
  const q = new URLSearchParams(params).toString();
  history.replaceState(null, '', `/${q ? `?${q}` : ''}`);
  localStorage.setItem(LAST_PLACE, q);
}

function showMain(which) {
  $('no-room').hidden = which !== 'none';
  $('people-view').hidden = which !== 'people';
  $('room').hidden = which !== 'room';
}

/** The room header: name, server or members, the channel's topic, the group's menu. */
function renderRoomHead() {
  const cur = state.current;
  const topic = $('room-topic');
  topic.hidden = true;
  $('room-menu-button').hidden = true;
  if (cur?.kind === 'channel') {
    const server = findServer(cur.serverId);
    const channel = findChannel(cur.serverId, cur.channelId);
    if (!server || !channel) return;
    $('room-icon').replaceChildren(icon(channel.type === 'voice' ? 'volume' : channel.private ? 'lock' : 'hash'));
    $('room-title').textContent = channel.name;
    $('room-sub').textContent = server.name;
    topic.textContent = channel.topic || '';
    topic.title = channel.topic || '';
    topic.hidden = !channel.topic;
    setRoomName(`#${channel.name} · ${server.name}`);
  } else if (cur?.kind === 'conversation') {
    const conversation = findConversation(cur.id);
    if (!conversation) return;
    const partner = dmPartner(conversation);
    $('room-icon').replaceChildren(partner ? userAvatar(partner, true) : icon('users'));
    $('room-title').textContent = conversationTitle(conversation);
    $('room-title').title = partner ? `@${partner.username}` : '';
    $('room-sub').textContent = partner ? 'Direct message' : conversation.members.map((m) => displayName(m)).join(', ');
    $('room-menu-button').hidden = conversation.kind !== 'group';
    setRoomName(partner ? `@${displayName(partner)}` : conversationTitle(conversation));
  }
}

// Said of a linked message the user cannot see, whether or not it exists.
const CANNOT_SEE = 'You cannot see this message.';

/**
 * Opens a place: {kind: 'channel', serverId, channelId?} | {kind: 'conversation', id} |
 * {kind: 'friends'}; with `around` (a message id) the room opens at that message, and with
 * `link` (a message link) a room the user cannot see says only CANNOT_SEE.
 * @param {Place} place
 * @param {{ focusRoom?: boolean }} [options]
 */
export function select(place, { focusRoom = true } = {}) {
  /** The room shows the channel or conversation now current, with its draft and its members. */
  const showRoom = (current, address) => {
    const { around, link } = /** @type {{ around?: string, link?: boolean }} */ (place);
    setCurrent(current);
    remember(address);
    showMain('room');
    const r = room.open({ ...current, around, link: link && CANNOT_SEE });
    showPlace(current);
    renderRoomHead();
    composer.restoreDraft(r);
    renderMembers();
  };
  closePopup();
  if (place.kind === 'channel') {
    const server = findServer(place.serverId);
    if (place.link && !findChannel(place.serverId, place.channelId)) {
      toast(CANNOT_SEE);
      return select({ kind: 'friends' });
    }
    if (!server) {
      toast('That server is not one of yours (or no longer exists).');
      return select({ kind: 'friends' });
    }
    const channel = findChannel(server.id, place.channelId) || findChannel(server.id, localStorage.getItem(LAST_CHANNEL + server.id)) || server.channels[0];
    if (!channel) return;
    localStorage.setItem(LAST_CHANNEL + server.id, channel.id);
    showRoom({ kind: 'channel', serverId: server.id, channelId: channel.id }, { server: server.id, channel: channel.id });
    loadMembers(server.id)
      .then(() => screen(server))
      .catch((err) => toast(err.message));
  } else if (place.kind === 'conversation') {
    const conversation = findConversation(place.id);
    if (!conversation) {
      toast(place.link ? CANNOT_SEE : 'That conversation is not one of yours.');
      return select({ kind: 'friends' });
    }
    showRoom({ kind: 'conversation', id: conversation.id }, { conversation: conversation.id });
  } else {
    room.close();
    closeSearch();
    setCurrent({ kind: 'friends' });
    remember({ view: 'friends' });
    showMain('people');
    showPeople();
    setRoomName('Friends');
  }
  composer.update();
  roomChanged();
  setPane('room');
  emit('nav');
  if (focusRoom && place.kind !== 'friends' && !matchMedia('(pointer: coarse)').matches && !$('composer-text', HTMLTextAreaElement).disabled)
    $('composer-text').focus();
}

/** Membership screening: a pending member opening the server reads its rules first (onboarding.js). */
function screen(server) {
  const mine = (state.members.get(server.id) || []).find((m) => m.user_id === state.me.user_id);
  if (mine?.pending)
    import('./onboarding.js').then((o) => o.showOnboarding(server, (channelId) => select({ kind: 'channel', serverId: server.id, channelId })));
}

/**
 * The place an address names: a message link (`?server=&channel=&message=`,
 * `?conversation=&message=`, or `/channels/<server id>/<channel id>/<message id>` and
 * `/channels/@me/<conversation id>/<message id>` where the server serves the app there),
 * `?server=&channel=`, `?conversation=`, `?view=friends`; null when it names none. `named`: the
 * address named it (a phone shows it rather than the lists).
 * @param {{ pathname: string, search: string }} address
 * @returns {Place | null}
 */
export function placeAt(address) {
  const params = new URLSearchParams(address.search);
  const [, scope, room, message] = address.pathname.match(/^\/channels\/([^/]+)\/([^/]+)(?:\/([^/]+))?/) || [];
  if (scope) {
    params.set(scope === '@me' ? 'conversation' : 'server', scope === '@me' ? room : scope);
    if (scope !== '@me') params.set('channel', room);
    if (message) params.set('message', message);
  }
  return placeIn(params, { around: params.get('message') || undefined, link: params.has('message'), named: true });
}

/** @param {URLSearchParams} p @param {object} [more] @returns {Place | null} */
function placeIn(p, more = {}) {
  if (p.get('server')) return { kind: 'channel', serverId: p.get('server'), channelId: p.get('channel'), ...more };
  if (p.get('conversation')) return { kind: 'conversation', id: p.get('conversation'), ...more };
  if (p.get('view') === 'friends') return { kind: 'friends' };
  return null;
}

/** What to open first: the address, else the last place, else the first server, else friends. */
function firstPlace() {
  return (
    placeAt(location) ||
    placeIn(new URLSearchParams(localStorage.getItem(LAST_PLACE) || '')) ||
    (state.servers.length ? { kind: 'channel', serverId: state.servers[0].id } : { kind: 'friends' })
  );
}

/** @type {Promise<typeof import('./settings.js')> | null} */
let settingsLoaded = null;
/**
 * Server settings and the server menu (settings.js), loaded on first use: the first screen needs
 * none of it. A load the network cut is tried again at the next use.
 * @returns {Promise<typeof import('./settings.js')>}
 */
function withSettings() {
  settingsLoaded ??= import('./settings.js').then((settings) => {
    settings.initSettings({
      leftServer: (id) => {
        forgetServer(id);
        select({ kind: 'friends' });
      },
      openChannel: (serverId, channelId) => select({ kind: 'channel', serverId, channelId }),
    });
    return settings;
  });
  settingsLoaded.catch(() => {
    settingsLoaded = null;
    toast('This part of the app could not load. Check the connection and try again.');
  });
  return settingsLoaded;
}

/** @type {Promise<typeof import('./pwa.js')> | null} */
let pwaLoaded = null;
/**
 * The installed app's side (pwa.js), loaded and started once, then `fn` with it. A load the
 * network cut (the server restarting) is tried again at the next call, the next reconnect.
 * @param {(pwa: typeof import('./pwa.js')) => void} fn
 */
function withPwa(fn) {
  pwaLoaded ??= import('./pwa.js').then(async (pwa) => {
    await pwa.initPwa(openAddress);
    return pwa;
  });
  pwaLoaded.then(fn, () => {
    pwaLoaded = null;
  });
}

/**
 * An address of the app opened while it runs (a notification tapped: sw.js tells the page): its
 * place opens in place, the page comes to the front.
 * @param {string} address
 */
function openAddress(address) {
  const place = placeAt(new URL(address, location.origin));
  if (!place) return;
  window.focus();
  select(place);
}

// ---- header pieces: connection, standing, the user panel ----------------------------------

function renderConnection() {
  const bar = $('connection-bar');
  const c = state.connection;
  if (c === 'offline') {
    bar.replaceChildren(
      el('span', { text: `Connection lost. Reconnecting in ${state.retryIn} s…` }),
      el('button', { type: 'button', class: 'link-button', onclick: reconnectNow }, 'Retry now'),
    );
  } else if (c === 'connecting' && started) {
    bar.replaceChildren(el('span', { text: 'Reconnecting…' }));
  } else if (c === 'signed-out') {
    bar.replaceChildren(el('span', { text: 'You were signed out.' }), el('button', { type: 'button', class: 'link-button', onclick: openSignIn }, 'Sign in'));
    openSignIn();
  } else if (c === 'suspended') {
    bar.replaceChildren(el('span', { text: 'Your account is suspended.' }), el('a', { href: '/account/warnings' }, 'See why'));
  } else {
    bar.replaceChildren();
  }
  bar.hidden = !bar.childNodes.length;
  bar.classList.toggle('error', c === 'signed-out' || c === 'suspended');
  $('me-button').classList.toggle('offline', c !== 'live');
}

let signInCode = null; // the dialog's two-factor code field (signin.js), made on first use

function openSignIn() {
  const dialog = $('signin-dialog', HTMLDialogElement);
  if (dialog.open) return;
  signInCode ??= codeStep('signin');
  signInCode.hide();
  $('signin-username', HTMLInputElement).value = state.me?.username || '';
  $('signin-password', HTMLInputElement).value = '';
  $('signin-problem').hidden = true;
  const link = /** @type {HTMLAnchorElement} */ (dialog.querySelector('a.button-link'));
  link.href = `/?next=${encodeURIComponent(location.pathname + location.search)}`;
  dialog.showModal();
  $('signin-password').focus();
}

/** Signed in from the dialog: on where the user was (another account: the app starts over for it). */
function signedInAgain(result) {
  if (result.suspended) return void location.assign('/account/warnings');
  if (state.me && result.user_id !== state.me.user_id) return void location.assign('/');
  $('signin-dialog', HTMLDialogElement).close();
  toast('Signed in again.', false);
  reconnectNow();
  // Back to writing where the user was (the dialog opened by itself, so it has no opener to return to).
  if (!$('composer-text', HTMLTextAreaElement).disabled && !$('room').hidden) $('composer-text').focus();
}

/** The dialog's passkey: for an account without a password, the only way back in from here. */
async function signInAgainWithPasskey() {
  $('signin-problem').hidden = true;
  try {
    const { signInWithPasskey } = await import('./passkeys.js');
    signedInAgain(await signInWithPasskey({ remember: $('signin-remember', HTMLInputElement).checked }));
  } catch (err) {
    $('signin-problem').hidden = false;
    $('signin-problem').textContent =
      err instanceof DOMException ? 'No passkey was used.' : err.status === 401 ? 'That passkey did not sign you in.' : err.message;
  }
}

async function signInAgain(e) {
  e.preventDefault();
  const button = submitButton($('signin-form'));
  button.disabled = true;
  try {
    const result = await logIn(
      $('signin-username', HTMLInputElement).value,
      $('signin-password', HTMLInputElement).value,
      signInCode.value(),
      $('signin-remember', HTMLInputElement).checked,
    );
    signedInAgain(result);
  } catch (err) {
    if (err.status === 401 && err.reason === CODE_REQUIRED) {
      // The password was right and stays typed: now the code.
      $('signin-problem').hidden = true;
      signInCode.show();
      signInCode.retry();
      return;
    }
    $('signin-problem').hidden = false;
    if (err.status === 401 && err.reason === CODE_WRONG) {
      $('signin-problem').textContent = 'That code is not right. Try the current one, or a recovery code.';
      signInCode.retry();
      return;
    }
    if (err.status === 401) signInCode.hide();
    $('signin-problem').textContent = err.status === 401 ? 'Wrong username or password.' : err.message;
    $('signin-password', HTMLInputElement).value = '';
    $('signin-password').focus();
  } finally {
    button.disabled = false;
  }
}

function renderStanding() {
  const banner = $('standing-banner');
  const s = state.connection === 'suspended' ? 4 : state.standing;
  if (!s) {
    banner.hidden = true;
    return;
  }
  banner.replaceChildren(
    icon('shield'),
    el('span', { text: `Your account standing is ${standingLabel(s)}. ${STANDING_HELP[s]}` }),
    el('a', { href: '/account/warnings' }, 'See your account'),
  );
  banner.classList.toggle('severe', s >= 3);
  banner.hidden = false;
}

const STATUS_LABELS = { online: 'Online', idle: 'Idle', dnd: 'Do not disturb', invisible: 'Invisible' };

function renderMe() {
  if (!state.me) return;
  const shown = state.status === 'invisible' ? 'offline' : state.status;
  $('me-button').replaceChildren(
    el('span', { class: 'avatar-wrap', 'aria-hidden': 'true' }, userAvatar(state.me, true), presenceDot(shown)),
    el(
      'span',
      { class: 'me-text', 'aria-hidden': 'true' },
      el('span', { class: 'me-name', text: displayName(state.me), title: `@${state.me.username}` }),
      el('span', { class: 'me-status muted', text: STATUS_LABELS[state.status] || state.status }),
    ),
    el('span', { class: 'visually-hidden', text: `${displayName(state.me)}, ${STATUS_LABELS[state.status] || state.status}: status and account menu` }),
  );
  const dark = currentTheme() === 'dark';
  $('theme-button').replaceChildren(icon(dark ? 'sun' : 'moon'));
  $('theme-button').setAttribute('aria-label', dark ? 'Switch to the light theme' : 'Switch to the dark theme');
}

let meMenu = null;
function openMeMenu(anchor) {
  if (!meMenu) {
    meMenu = el('div', { id: 'me-menu', class: 'popup menu', role: 'menu', 'aria-label': 'Status and account' });
    menuKeys(meMenu);
  }
  const statusItem = (value) =>
    el(
      'button',
      {
        type: 'button',
        role: 'menuitemradio',
        class: 'menu-item',
        'aria-checked': String(state.status === value),
        onclick: () => {
          closePopup();
          setStatus(value);
        },
      },
      presenceDot(value === 'invisible' ? 'offline' : value),
      el('span', { text: STATUS_LABELS[value] }),
    );
  const notifyLabel = !notificationsSupported() ? null : notificationsOn() ? 'Turn off desktop notifications' : 'Enable desktop notifications';
  // Conditional items are `false` or `null` when they do not apply; replaceChildren would print them.
  meMenu.replaceChildren(
    ...[
      el('div', { class: 'menu-label', text: 'Status' }),
      ...['online', 'idle', 'dnd', 'invisible'].map(statusItem),
      el('div', { class: 'menu-sep', role: 'separator' }),
      notifyLabel &&
        menuItem(notifyLabel, 'bell', async () => {
          const result = await toggleNotifications(!notificationsOn() || notifyLabel.startsWith('Enable'));
          toast(
            result === 'on'
              ? 'Desktop notifications are on while this tab is hidden, as your notification settings say.'
              : result === 'off'
                ? 'Desktop notifications are off.'
                : 'The browser did not allow notifications.',
            result !== 'on' && result !== 'off',
          );
        }),
      // Pushes reach a phone whose browser is in the background, where desktop notifications do not (issue 47 #12).
      'PushManager' in window && menuItem('Notify me on this device…', 'bell', offerPushFromMenu),
      menuItem('Account and standing', 'user', () => location.assign('/account/warnings')),
      menuItem('Keyboard shortcuts', 'menu', openShortcuts),
      state.isAdmin && menuItem('Administration', 'shield', () => location.assign('/admin')),
      menuItem('Log out', 'logout', logOut, { danger: true }),
    ].filter(Boolean),
  );
  openPopup(meMenu, anchor);
  meMenu.querySelector('[role^="menuitem"]')?.focus();
}

async function offerPushFromMenu() {
  const setup = await import('./push-setup.js');
  if (await setup.pushOnHere().catch(() => false))
    return toast('Notifications are already on for this device. The account page says which devices get them, and with what.', false);
  (await import('./push-offer.js')).turnOnPush();
}

/** The first mention while pushes are off on this device: offer them, once (push-offer.js). */
function offerPushAfterMention(m) {
  if (!('PushManager' in window) || m.author_id === state.me.user_id || !mentionsMe(m) || localStorage.getItem('chat:push-offered')) return;
  import('./push-setup.js')
    .then((setup) => setup.pushOnHere())
    .then(async (on) => on || (await import('./push-offer.js')).offerPushOnce())
    .catch(() => {});
}

async function setStatus(status) {
  try {
    applyStatus(await api('PUT', '/api/account/presence', { status }));
  } catch (err) {
    toast(err.message);
  }
}

async function logOut() {
  clearBadge();
  try {
    await api('POST', '/api/logout');
    forgetRemembered();
  } catch {
    // signed out already: the sign-in page is where we go either way
  }
  location.assign('/');
}

async function newServer() {
  const name = await ask({
    title: 'Create a server',
    text: 'You will own it; it comes with a #general channel. Invite people from its menu.',
    label: 'Server name',
    submit: 'Create server',
    maxLength: 100,
    more: el('p', { class: 'dialog-text dialog-more' }, 'Bringing a community over? ', el('a', { href: '/import' }, 'Import from Discord')),
  });
  if (name === null) return;
  try {
    const server = await api('POST', '/api/servers', { name });
    // server_joined arrives on the stream too; add it now so it opens at once.
    if (!findServer(server.id)) {
      const channels = await api('GET', `/api/servers/${server.id}/channels`);
      if (!findServer(server.id)) addServer({ ...server, unread: false, mention_count: 0, role_ids: [], channels });
    }
    select({ kind: 'channel', serverId: server.id });
  } catch (err) {
    toast(err.message);
  }
}

// ---- start ------------------------------------------------------------------------------

/**
 * @param {import('../../types/client').Account} account
 */
export async function startApp(account) {
  startSession(account);
  fillIcons();
  wireDialogs();
  initSidebar(select);
  initVoice();
  room = createRoom(document.querySelector('#room .room-main'));
  composer = createComposer(room.root, room, { dropZone: $('room') });
  initThreads(room);
  initKeyboard(room);
  initPeople({ newServer });
  initSwitcher(select);
  initAlerts(select);
  initSearch(select);
  initPins(room);
  on('open', (place) => select(place));

  $('home-button').addEventListener('click', () => select({ kind: 'friends' }));
  $('friends-button').addEventListener('click', () => select({ kind: 'friends' }));
  $('new-server').addEventListener('click', newServer);
  $('server-menu-button').addEventListener('click', (e) => {
    const server = state.current?.kind === 'channel' && findServer(state.current.serverId);
    const anchor = /** @type {HTMLElement} */ (e.currentTarget);
    if (server) withSettings().then((settings) => settings.openServerMenu(server, anchor));
  });
  $('new-channel').addEventListener('click', () => {
    const server = state.current?.kind === 'channel' && findServer(state.current.serverId);
    if (server) withSettings().then((settings) => settings.newChannel(server));
  });
  $('room-back').addEventListener('click', () => setPane('nav'));
  // A touch screen's gestures (touch.js, not loaded elsewhere): a long press for a message's menu,
  // and the phone layout's back gesture, a swipe in from the left edge back to the lists.
  if (matchMedia('(pointer: coarse)').matches) {
    import('./touch.js')
      .then((touch) =>
        touch.initTouch({
          messages: room.root.querySelector('[data-part="messages"]'),
          main: $('main'),
          back: () => {
            if (matchMedia('(max-width: 760px)').matches && !$('app').classList.contains('pane-nav')) setPane('nav');
          },
        }),
      )
      .catch(() => {}); // (no connection: the gestures come with the next start)
  }
  $('people-back').addEventListener('click', () => setPane('nav'));
  $('members-button').addEventListener('click', () => {
    if (matchMedia('(max-width: 760px)').matches) {
      closeSearch();
      setPane($('app').classList.contains('pane-members') ? 'room' : 'members');
      return;
    }
    // The search results take the members' place; the members button brings them back.
    if ($('app').classList.contains('searching')) {
      closeSearch();
      $('app').classList.remove('members-hidden');
    } else {
      $('app').classList.toggle('members-hidden');
    }
    $('members-button').setAttribute('aria-pressed', String(!$('app').classList.contains('members-hidden')));
  });
  $('room-menu-button').addEventListener('click', (e) => {
    const conversation = state.current?.kind === 'conversation' && findConversation(state.current.id);
    if (conversation && conversation.kind === 'group') openGroupMenu(conversation, e.currentTarget);
  });
  $('me-button').addEventListener('click', (e) => openMeMenu(e.currentTarget));
  $('theme-button').addEventListener('click', () => {
    toggleTheme();
    renderMe();
  });
  $('signin-form').addEventListener('submit', signInAgain);
  $('signin-passkey').hidden = !passkeysSupported();
  $('signin-passkey').addEventListener('click', signInAgainWithPasskey);

  on('connection', renderConnection);
  on('connection', renderStanding);
  on('account', renderStanding);
  on('account', renderMe);
  on('presence', renderMe);
  on('users', renderMe);
  on('users', renderRoomHead);
  on('members', (serverId) => {
    const cur = state.current;
    if (cur?.kind === 'channel' && cur.serverId === serverId) $('new-channel').hidden = !canManage(serverId);
  });
  // `removed`: the channel just gone from the list. The server says channel_deleted both when a
  // channel is deleted and when one stops seeing it, and does not say which (a hidden channel's
  // existence is not told), so the words are the ones true of both.
  on('nav', (removed) => {
    const cur = state.current;
    if (cur?.kind === 'channel') {
      $('new-channel').hidden = !canManage(cur.serverId);
      if (!findServer(cur.serverId)) {
        toast('You are no longer a member of that server.', false);
        select({ kind: 'friends' });
      } else if (!findChannel(cur.serverId, cur.channelId)) {
        const name = removed?.id === cur.channelId ? `#${removed.name}` : 'that channel';
        toast(`You no longer have access to ${name}.`, false, true);
        select({ kind: 'channel', serverId: cur.serverId });
      } else {
        renderRoomHead();
      }
    } else if (cur?.kind === 'conversation') {
      if (!findConversation(cur.id)) {
        toast('You are no longer in that conversation.', false);
        select({ kind: 'friends' });
      } else {
        renderRoomHead();
      }
    }
  });
  onEvent('message', (ev) => offerPushAfterMention(ev.message));
  onEvent('server_left', (ev) => {
    const name = ev.server?.name || 'a server';
    if (ev.reason === 'banned') toast(`You were banned from ${name}.`);
    else if (ev.reason === 'kicked') toast(`You were removed from ${name}.`);
    else if (ev.reason === 'deleted' && ev.server?.owner_id !== state.me.user_id) toast(`${name} was deleted by its owner.`);
  });
  // Raid protection (issue 53): moderators hear of a wave of joins.
  onEvent('join_rate_alert', (ev) =>
    toast(
      `${findServer(ev.server_id)?.name ?? 'A server'}: ${ev.joins} joins in a minute${ev.joins_paused ? '. New joins are paused (Server settings, Safety).' : '.'}`,
    ),
  );

  onReady(() => {
    renderMe();
    renderStanding();
    loadBlocks();
    if (!started) {
      started = true;
      // Read before select() writes the place's own address: what another app shared (/share),
      // and the manifest's Search shortcut (?search=1).
      const sharing = location.pathname === '/share' ? new URLSearchParams(location.search) : null;
      const searching = new URLSearchParams(location.search).has('search');
      const place = firstPlace();
      select(place, { focusRoom: true });
      // On a phone, a fresh start shows the lists first unless the address named a room.
      if (!place.named && !searching) setPane('nav');
      if (searching) $('search-input').focus();
      if (sharing) {
        import('./share.js')
          .then((share) =>
            share.receiveShare(sharing, (to, text, files) => {
              select(to);
              composer.share(text, files);
            }),
          )
          .catch(() => toast('What was shared could not be opened. Share it again.'));
      }
      // The service worker and the rest of the installed app's side, once the app is up: nothing
      // of it is needed to show the first room.
      setTimeout(() => withPwa(() => {}), PWA_DELAY_MS);
      return;
    }
    // A reconnect: the server may have been upgraded meanwhile (a new version of the app's files).
    withPwa((pwa) => pwa.checkForUpdate());
    // The sidebar is fresh from ready; the open room fetches what it missed.
    if (room.current) room.catchUp();
    if (state.current?.kind === 'channel') loadMembers(state.current.serverId).catch(() => {});
    emit('nav');
  });
  connect();
}

const canManage = (serverId) => canManageServer(findServer(serverId));
