// @ts-check
// The menu of a server (the rail), a channel or a conversation (the sidebar) and its
// notification settings dialog (docs/api.md "Notifications"), and the address of a place or a
// message ("Copy link"). Loaded on the first right click, touch or context-menu key on a place
// (sidebar.js), the server menu's "Notification settings" or a message's "Copy link".
// Every change is saved at once (PUT or DELETE) and the store keeps the answer; the other tabs
// and devices of the user hear it as a notification_settings event.
import { api } from './api.js';
import { $, el, toast, showText, formatTime, copyText } from './ui.js';
import { icon } from './icons.js';
import { openPopup, menuKeys, menuItem } from './popup.js';
import { state, onEvent, findServer, findChannel, findConversation, conversationTitle, applyRead, setNotify, isMuted, notifyLevel } from './store.js';

/** "Until turned off": the API's time in the year 9999. */
const FOREVER = '9999-12-31T23:59:59Z';
/** @type {[string, number][]} The mute choices: [label, minutes] (0: until turned off). */
const MUTE_FOR = [
  ['For 15 minutes', 15],
  ['For 1 hour', 60],
  ['For 8 hours', 480],
  ['For 24 hours', 1440],
  ['Until I turn it off', 0],
];
const LEVELS = [
  ['all', 'All messages'],
  ['mentions', 'Only @mentions'],
  ['nothing', 'Nothing'],
];

/**
 * A place of the lists: {kind: 'server' | 'channel' | 'conversation', id, serverId (a channel's),
 * name, record (the store's server, channel or conversation)}, or null when it is gone.
 */
export function placeOf(kind, id, serverId) {
  if (kind === 'server') {
    const server = findServer(id);
    return server && { kind, id, name: server.name, record: server };
  }
  if (kind === 'channel') {
    const channel = findChannel(serverId, id);
    return channel && { kind, id, serverId, name: `#${channel.name}`, record: channel };
  }
  const conversation = findConversation(id);
  return conversation && { kind, id, name: conversationTitle(conversation), record: conversation };
}

const current = (place) => placeOf(place.kind, place.id, place.serverId);
const own = (place) => state.notify.get(place.id);
const ownMuted = (place) => isMuted(place.id);

/** "until 18:30", "until 28/11 18:30" or "until you turn it off". */
const until = (setting) => (setting.muted_until >= '9999' ? 'until you turn it off' : `until ${formatTime(setting.muted_until)}`);

/**
 * The address of a server, channel or conversation ({serverId, channelId, conversationId}), or of
 * a message in it: what "Copy link" copies; app.js opens it (and the /channels/… form).
 * @param {{ serverId?: string, channelId?: string, conversationId?: string }} place
 * @param {string} [messageId]
 */
export function linkTo({ serverId, channelId, conversationId }, messageId) {
  // A message's link is the server's /channels/… address (docs/api.md "Message links").
  if (messageId && conversationId) return `${location.origin}/channels/@me/${conversationId}/${messageId}`;
  if (messageId && channelId) return `${location.origin}/channels/${serverId}/${channelId}/${messageId}`;
  const q = new URLSearchParams(conversationId ? { conversation: conversationId } : { server: serverId });
  if (channelId) q.set('channel', channelId);
  if (messageId) q.set('message', messageId);
  return `${location.origin}/?${q}`;
}

// ---- opening the menu: right click, context-menu key, long press ------------------------

const LONG_PRESS_MS = 500;
const CLICK_WAIT_MS = 100;
const watched = new WeakSet();
let touching = null; // the button a finger is on
let pressed = null; // the button held long enough
let timer = 0;

function openPressed() {
  if (pressed) openPlaceMenu(pressed);
  pressed = null;
}

/**
 * An event sidebar.js passed on: a right click or the context-menu key opens the menu at once;
 * a touch held LONG_PRESS_MS opens it when the finger lifts (a popup opened during the press
 * would be closed by the release, the popover API's light dismiss), and the click that ends
 * the press selects nothing.
 */
export function placeEvent(e, button, list) {
  if (!watched.has(list)) {
    watched.add(list);
    for (const type of ['pointerup', 'pointercancel']) {
      list.addEventListener(type, () => {
        clearTimeout(timer);
        touching = null;
        // The click that may follow the release opens it; without one, a moment later.
        if (pressed) setTimeout(openPressed, CLICK_WAIT_MS);
      });
    }
    list.addEventListener(
      'click',
      (click) => {
        if (!pressed) return;
        click.stopPropagation();
        openPressed();
      },
      true,
    );
  }
  if (e.type === 'pointerdown') {
    // (Loading this module the first time may take longer than a press: then it is not one.)
    const left = LONG_PRESS_MS - (performance.now() - e.timeStamp);
    pressed = null;
    touching = left > 0 && button.isConnected ? button : null;
    if (touching)
      timer = setTimeout(() => {
        pressed = touching;
      }, left);
  } else if (e.type === 'contextmenu' && e.pointerType === 'touch') {
    pressed = button; // a long press the browser saw too: opened on release
  } else {
    openPlaceMenu(button);
  }
}

// ---- the menu ---------------------------------------------------------------------------

let menu = null;

/** The menu of a sidebar button: a server on the rail, a channel, a conversation. */
export function openPlaceMenu(button) {
  const kind = ['server', 'channel', 'conversation'].find((k) => button.classList.contains(k));
  const place = placeOf(kind, button.dataset.id, button.dataset.server);
  if (!place) return;
  if (!menu) {
    menu = el('div', { id: 'place-menu', class: 'popup menu', role: 'menu' });
    menuKeys(menu);
  }
  fillMenu(place, button);
  openPopup(menu, button);
}

function focusFirst() {
  menu.querySelector('[role="menuitem"]:not([disabled])')?.focus();
}

function fillMenu(place, anchor) {
  const unread = (place.kind === 'server' ? place.record.channels : [place.record]).some((c) => c.unread_count > 0 || c.mention_count > 0);
  const setting = own(place);
  menu.setAttribute('aria-label', `${place.name}: actions`);
  menu.replaceChildren(
    menuItem('Mark as read', 'check', () => markRead(place), { disabled: !unread }),
    ownMuted(place)
      ? menuItem(`Unmute (muted ${until(setting)})`, 'bell', () => save(place, { muted_until: null }))
      : el(
          'button',
          { type: 'button', role: 'menuitem', class: 'menu-item', 'aria-haspopup': 'menu', onclick: () => muteChoices(place, anchor) },
          icon('mute'),
          el('span', { text: 'Mute' }),
        ),
    menuItem('Notification settings…', 'bell', () => openNotificationSettings(place)),
    menuItem('Copy link', 'link', () =>
      copyText(
        linkTo(place.kind === 'conversation' ? { conversationId: place.id } : { serverId: place.serverId || place.id, channelId: place.serverId && place.id }),
      ),
    ),
  );
  focusFirst();
}

/** Mute's choices, in the same menu, with a way back. */
function muteChoices(place, anchor) {
  menu.replaceChildren(
    el('button', { type: 'button', role: 'menuitem', class: 'menu-item', onclick: () => fillMenu(place, anchor) }, icon('back'), el('span', { text: 'Back' })),
    el('div', { class: 'menu-label', text: `Mute ${place.name}` }),
    ...MUTE_FOR.map(([label, minutes]) => menuItem(label, null, () => mute(place, minutes))),
  );
  focusFirst();
}

async function markRead(place) {
  try {
    if (place.kind === 'server') {
      for (const read of await api('POST', `/api/servers/${place.id}/read`)) applyRead(read);
      return;
    }
    const messageId = place.record.last_message_id;
    if (!messageId) return;
    if (place.kind === 'channel') {
      const read = await api('PUT', `/api/servers/${place.serverId}/channels/${place.id}/read`, { message_id: messageId });
      applyRead({ ...read, server_id: place.serverId, channel_id: place.id });
    } else {
      const read = await api('PUT', `/api/conversations/${place.id}/read`, { message_id: messageId });
      applyRead({ ...read, conversation_id: place.id });
    }
  } catch (err) {
    toast(err.message);
  }
}

const mute = (place, minutes) => save(place, { muted_until: minutes ? new Date(Date.now() + minutes * 60_000).toISOString() : FOREVER });

/**
 * Saves a change to the place's own setting: what it holds now (for a channel without one, its
 * server's level), with `patch` over it. A channel set to follow its server (level 'inherit'), or
 * left unmuted at its server's level, has its setting removed: it inherits again. The API keeps
 * one setting per place, so following the server also ends the channel's own mute.
 */
async function save(place, patch) {
  const setting = own(place);
  const next = {
    level: setting?.level || notifyLevel(place.id, place.serverId),
    muted_until: setting?.muted_until ?? null,
    ...(place.kind === 'server' ? { suppress_everyone: Boolean(setting?.suppress_everyone), suppress_roles: Boolean(setting?.suppress_roles) } : {}),
    ...patch,
  };
  const inherit = next.level === 'inherit' || (place.kind === 'channel' && !patch.level && !next.muted_until && next.level === notifyLevel(place.serverId));
  const path = `/api/account/notifications/${place.id}`;
  try {
    if (inherit) {
      await api('DELETE', path);
      setNotify(place.id, null);
    } else {
      setNotify(place.id, await api('PUT', path, next));
    }
  } catch (err) {
    toast(err.message);
  }
  syncDialog();
}

// ---- the dialog -------------------------------------------------------------------------

let shown = null; // the place the dialog shows

/** The notification settings of a server, channel or conversation, in a dialog. */
export function openNotificationSettings(place) {
  let dialog = $('notify-dialog', HTMLDialogElement);
  if (!dialog) {
    dialog = el('dialog', { id: 'notify-dialog', 'aria-labelledby': 'notify-title' });
    document.body.append(dialog);
    // Another tab or device changed a setting: the dialog shows it.
    onEvent('notification_settings', syncDialog);
  }
  shown = place;
  const radio = ([value, label]) =>
    el(
      'div',
      { class: 'check-line' },
      el('input', { type: 'radio', name: 'notify-level', id: `notify-level-${value}`, value, onchange: () => save(shown, { level: value }) }),
      el('label', { for: `notify-level-${value}`, id: `notify-level-${value}-label`, text: label }),
    );
  const check = (name, label) =>
    el(
      'div',
      { class: 'check-line' },
      el('input', { type: 'checkbox', id: `notify-${name}`, onchange: (e) => save(shown, { [name]: e.target.checked }) }),
      el('label', { for: `notify-${name}`, text: label }),
    );
  dialog.replaceChildren(
    el(
      'form',
      { method: 'dialog', class: 'dialog-form notify-form' },
      el('h2', { id: 'notify-title', text: `Notifications: ${place.name}` }),
      el('p', { id: 'notify-state', class: 'dialog-text', role: 'status' }),
      el('fieldset', {}, el('legend', { text: 'Notify me of' }), (place.kind === 'channel' ? [['inherit', ''], ...LEVELS] : LEVELS).map(radio)),
      el('label', { for: 'notify-mute', text: 'Mute' }),
      el('select', {
        id: 'notify-mute',
        onchange: (e) => {
          const value = e.target.value;
          if (value === 'off') save(shown, { muted_until: null });
          else if (value !== 'keep') mute(shown, Number(value));
        },
      }),
      place.kind === 'server'
        ? el(
            'fieldset',
            {},
            el('legend', { text: 'Mentions' }),
            check('suppress_everyone', 'Suppress @everyone and @here'),
            check('suppress_roles', 'Suppress all role mentions'),
          )
        : null,
      el('p', { class: 'field-hint', text: 'Changes apply at once, on all your devices.' }),
      el('div', { class: 'button-row' }, el('button', { type: 'submit', class: 'primary' }, 'Done')),
    ),
  );
  syncDialog();
  dialog.showModal();
  /** @type {HTMLInputElement} */ (dialog.querySelector('input:checked'))?.focus();
}

/** The dialog's controls show the place's settings as the store holds them now. */
function syncDialog() {
  const dialog = $('notify-dialog', HTMLDialogElement);
  const place = dialog && shown && current(shown);
  if (!place) {
    dialog?.close();
    return;
  }
  const setting = own(place);
  const level = setting?.level || (place.kind === 'channel' ? 'inherit' : 'all');
  for (const input of /** @type {NodeListOf<HTMLInputElement>} */ (dialog.querySelectorAll('[name="notify-level"]'))) input.checked = input.value === level;
  const inherited = $('notify-level-inherit-label');
  if (inherited)
    inherited.textContent = `Follow ${findServer(place.serverId)?.name || 'the server'} (${LEVELS.find(([v]) => v === notifyLevel(place.serverId))[1]})`;
  const muted = ownMuted(place);
  $('notify-mute').replaceChildren(
    ...[
      muted ? ['keep', `Muted ${until(setting)}`] : ['off', 'Not muted'],
      ...MUTE_FOR.map(([label, minutes]) => [String(minutes), `Mute ${label[0].toLowerCase()}${label.slice(1)}`]),
      muted && ['off', 'Unmute'],
    ]
      .filter(Boolean)
      .map(([value, label], i) => el('option', { value, text: label, selected: i === 0 })),
  );
  for (const name of ['suppress_everyone', 'suppress_roles']) {
    const box = $(`notify-${name}`, HTMLInputElement);
    if (box) box.checked = Boolean(setting?.[name]);
  }
  showText(
    'notify-state',
    muted
      ? `Muted ${until(setting)}: no unread marks and no notifications; mentions still show.`
      : place.serverId && isMuted(place.serverId)
        ? `${findServer(place.serverId).name} is muted, and this channel with it.`
        : '',
  );
}
