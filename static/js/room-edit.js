// @ts-check
// Editing a message of one's own in place, from its menu or with ↑ in an empty composer.
import { api } from './api.js';
import { el, toast } from './ui.js';
import { state, maySend } from './store.js';
import { findItem } from './room-state.js';
import { render } from './room-list.js';

/**
 * @typedef {import('../../types/room').Room} Room
 * @typedef {import('../../types/room').Opened} Opened
 * @typedef {import('../../types/client').Message} Message
 */

/**
 * Edits a message in place: Enter saves, Shift+Enter is a new line, Escape cancels.
 * @param {Opened} r
 * @param {Message} m
 */
export function startEdit(r, m) {
  const item = findItem(r.room, m.id);
  if (!item || r.editing) return;
  r.editing = m.id;
  const text = el('textarea', { value: m.content, rows: 2, maxLength: 4000, 'aria-label': 'Edit message', class: 'edit-text' });
  const finish = () => {
    r.editing = null;
    const latest = r.byId.get(m.id);
    if (latest) {
      const i = r.list.indexOf(latest);
      const fresh = render(r, latest, r.list[i - 1]);
      findItem(r.room, m.id)?.replaceWith(fresh);
      fresh.focus(); // back on the message, the list's tab stop (room-focus.js)
    }
  };
  const form = el(
    'form',
    { class: 'edit-form' },
    text,
    el(
      'div',
      { class: 'edit-hint muted' },
      'Escape to ',
      el('button', { type: 'button', class: 'link-button', onclick: finish }, 'cancel'),
      ' · Enter to ',
      el('button', { type: 'submit', class: 'link-button' }, 'save'),
    ),
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    if (!text.value.trim() && !(m.attachments || []).length) return toast('A message without attachments cannot be empty: delete it instead.');
    try {
      const updated = await api('PUT', `${r.base}/messages/${m.id}`, { content: text.value });
      r.byId.set(updated.id, updated);
      r.list[r.list.findIndex((x) => x.id === updated.id)] = updated;
      finish();
    } catch (err) {
      toast(err.message);
    }
  });
  text.addEventListener('keydown', (e) => {
    if (e.key === 'Escape') {
      e.preventDefault();
      e.stopPropagation();
      finish();
    } else if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      form.requestSubmit();
    }
  });
  const content = item.querySelector('.content');
  if (content) content.replaceWith(form);
  else item.querySelector('.msg-body').append(form);
  text.focus();
  text.setSelectionRange(text.value.length, text.value.length);
}

/**
 * ↑ in an empty composer: edit the newest message of mine in this room.
 * @param {Room} room
 */
export function editLastOwn(room) {
  const r = room.current;
  if (!r || !maySend(r.kind)) return false;
  const mine = [...r.list].reverse().find((m) => m.author_id === state.me.user_id);
  if (!mine) return false;
  findItem(room, mine.id)?.scrollIntoView({ block: 'nearest' });
  startEdit(r, mine);
  return true;
}
