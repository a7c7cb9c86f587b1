// @ts-check
// The title ("(3) #general · Book club · chat") and desktop notifications while the tab is
// hidden, as the user's notification settings say: every message, only mentions (a reply to the
// user is one), or nothing; never from a muted place. Permission is asked only when the user
// clicks "Enable desktop notifications", never on load.
import {
  state,
  on,
  onEvent,
  attentionCount,
  conversationTitle,
  findConversation,
  findServer,
  findChannel,
  displayName,
  mentionsMe,
  isMuted,
  notifyLevel,
} from './store.js';

let roomName = '';
/** @typedef {import('../../types/client').Place} Place */

/** @type {(place: Place) => void} */
let openPlace = () => {};

/**
 * @param {(place: Place) => void} onOpen
 */
export function initAlerts(onOpen) {
  openPlace = onOpen;
  on('nav', updateTitle);
  onEvent('message', (ev) => maybeNotify(ev.message));
}

export function setRoomName(name) {
  roomName = name;
  updateTitle();
}

export function updateTitle() {
  const n = attentionCount();
  document.title = `${n ? `(${n >= 100 ? '99+' : n}) ` : ''}${roomName ? `${roomName} · ` : ''}chat`;
  setBadge(n);
}

let badged = -1;
/** Signing out: the icon counts nothing any more. */
export const clearBadge = () => setBadge(0);
/**
 * The installed app's icon shows the same count (the Badging API, where the browser has it). The
 * count is also left where the service worker finds it, which adds a push's messages to it while
 * the app is closed (sw.js).
 * @param {number} n
 */
function setBadge(n) {
  if (n === badged || !('setAppBadge' in navigator)) return;
  badged = n;
  (n ? navigator.setAppBadge(n) : navigator.clearAppBadge()).catch(() => {});
  caches
    .open('badge')
    .then((cache) => cache.put('/badge', new Response(String(n))))
    .catch(() => {});
}

export const notificationsSupported = () => 'Notification' in window;
export const notificationsOn = () => notificationsSupported() && Notification.permission === 'granted' && localStorage.getItem('chat:notify') !== 'off';

/** Called from a click: asks the browser for permission (or turns notifications off again). */
export async function toggleNotifications(wantOn) {
  if (!notificationsSupported()) return 'unsupported';
  if (!wantOn) {
    localStorage.setItem('chat:notify', 'off');
    return 'off';
  }
  localStorage.removeItem('chat:notify');
  const answer = Notification.permission === 'granted' ? 'granted' : await Notification.requestPermission();
  return answer === 'granted' ? 'on' : answer;
}

/**
 * @param {import('../../types/client').Message} m
 */
function maybeNotify(m) {
  if (!notificationsOn() || !document.hidden || m.author_id === state.me.user_id) return;
  const id = m.conversation_id || m.channel_id;
  const level = notifyLevel(id, m.server_id);
  if (state.status === 'dnd' || isMuted(id, m.server_id) || level === 'nothing') return;
  if (level === 'mentions' && !mentionsMe(m) && m.reply_preview?.author?.user_id !== state.me.user_id) return;
  let where;
  if (m.conversation_id) {
    const c = findConversation(m.conversation_id);
    where = c && c.kind === 'group' ? conversationTitle(c) : 'Direct message';
  } else {
    where = `#${findChannel(m.server_id, m.channel_id)?.name || ''} · ${findServer(m.server_id)?.name || ''}`;
  }
  const card = m.embeds?.find((e) => e && (e.title || e.description));
  const body = m.content ? m.content.slice(0, 140) : card ? String(card.title || card.description).slice(0, 140) : `${m.attachments.length} attachment(s)`;
  // A webhook's message carries the name it was sent under.
  const author = m.webhook_id ? m.author?.display_name || m.author?.username : displayName(m.author);
  const title = `${author} (${where})`;
  const options = { body, tag: m.conversation_id || m.channel_id };
  let n;
  try {
    n = new Notification(title, options);
  } catch {
    // Android (and so an installed app there) shows notifications only through the service
    // worker, which opens the message when one is tapped (sw.js).
    const link = `/channels/${m.conversation_id ? `@me/${m.conversation_id}` : `${m.server_id}/${m.channel_id}`}/${m.id}`;
    navigator.serviceWorker
      ?.getRegistration('/')
      .then((worker) => worker?.showNotification(title, { ...options, data: { url: link } }))
      .catch(() => {});
    return;
  }
  n.addEventListener('click', () => {
    window.focus();
    openPlace(m.conversation_id ? { kind: 'conversation', id: m.conversation_id } : { kind: 'channel', serverId: m.server_id, channelId: m.channel_id });
    n.close();
  });
}
