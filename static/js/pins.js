// @ts-check
// Pinned messages: pin and unpin (in a channel, the owner and full server administrators; in
// a conversation, any member), and the pins panel of the page's main room (initPins(room)),
// opened from the header, kept current by the stream's message_pinned and message_unpinned
// events.
import { api } from './api.js';
import { $, el, toast, formatTime } from './ui.js';
import { icon } from './icons.js';
import { openPopup, isOpen } from './popup.js';
import { onEvent, isBlocked, displayName } from './store.js';
import { userAvatar, nameText } from './names.js';
import { mayPin } from './room-state.js';

let panel = null;

/**
 * The header's pin button, for the room it shows the pins of.
 * @param {import('../../types/room').Room} room
 */
export function initPins(room) {
  $('pins-button').addEventListener('click', (e) => togglePins(room, /** @type {HTMLElement} */ (e.currentTarget)));
  const pinsChanged = (ev) => {
    if (!panel || !isOpen(panel)) return;
    const r = room.current;
    if (r && ((ev.message.channel_id === r.channelId && r.channelId) || (ev.message.conversation_id === r.conversationId && r.conversationId))) loadPins(r);
  };
  onEvent('message_pinned', pinsChanged);
  onEvent('message_unpinned', pinsChanged);
}

/**
 * @param {import('../../types/room').Opened} r
 * @param {import('../../types/client').Message} message
 * @param {boolean} pinned
 */
export async function setPinned(r, message, pinned) {
  try {
    await api(pinned ? 'PUT' : 'DELETE', `${r.base}/pins/${message.id}`);
    toast(pinned ? 'Pinned. Everyone here finds it under the pin in the header.' : 'Unpinned.', false);
    if (panel && isOpen(panel)) loadPins(r);
  } catch (err) {
    toast(err.message);
  }
}

/**
 * @param {import('../../types/room').Room} room
 * @param {HTMLElement} anchor
 */
function togglePins(room, anchor) {
  const r = room.current;
  if (!r) return;
  if (!panel) {
    panel = el('div', { id: 'pins-panel', class: 'popup pins-panel', role: 'dialog', 'aria-labelledby': 'pins-title' });
  }
  if (isOpen(panel)) return panel.hidePopover();
  panel.replaceChildren(
    el('h3', { id: 'pins-title', class: 'pins-title' }, icon('pin'), ' Pinned messages'),
    el('p', { class: 'muted empty-note', text: 'Loading…' }),
  );
  openPopup(panel, anchor);
  loadPins(r);
}

/**
 * @param {import('../../types/room').Opened} r
 */
async function loadPins(r) {
  try {
    const pins = await api('GET', `${r.base}/pins`);
    if (r.room.current !== r || !panel) return;
    const mayUnpin = mayPin(r);
    const items = pins.map((m) =>
      el(
        'li',
        { class: 'pin', 'data-id': m.id },
        el(
          'div',
          { class: 'pin-head' },
          userAvatar(m.author, true),
          nameText(m.author, 'pin-author'),
          el('time', { class: 'muted', dateTime: m.created_at, text: formatTime(m.created_at) }),
        ),
        el('p', { class: 'pin-text', text: isBlocked(m.author_id) ? 'Blocked message' : m.content || `${(m.attachments || []).length} attachment(s)` }),
        el(
          'div',
          { class: 'pin-actions' },
          el(
            'button',
            {
              type: 'button',
              class: 'small',
              onclick: () => {
                panel.hidePopover();
                r.room.showMessage(m.id);
              },
              'aria-label': `Jump to ${displayName(m.author)}'s message`,
            },
            'Jump',
          ),
          mayUnpin ? el('button', { type: 'button', class: 'small', onclick: () => setPinned(r, m, false) }, 'Unpin') : null,
        ),
      ),
    );
    panel.replaceChildren(
      el('h3', { id: 'pins-title', class: 'pins-title' }, icon('pin'), ` Pinned messages${pins.length ? ` — ${pins.length}` : ''}`),
      pins.length
        ? el('ol', { class: 'pin-list' }, items)
        : el('p', {
            class: 'muted empty-note',
            text: mayUnpin ? 'Nothing is pinned here yet. Pin a message from its menu (…).' : 'Nothing is pinned here yet.',
          }),
    );
  } catch (err) {
    toast(err.message);
  }
}
