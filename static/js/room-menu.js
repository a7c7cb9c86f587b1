// @ts-check
// A message's menu ("…", a right click or a long press): reply, react, copy its text or link, pin, the edit
// history, edit, and the two that ask first: delete (a moderator may give a reason for the
// audit log) and report.
import { api, apiWithReason } from './api.js';
import { el, toast, copyText, pickEmoji } from './ui.js';
import { askForm } from './dialogs.js';
import { openPopup, menuKeys, menuItem } from './popup.js';
import { state, maySend, displayName, emit, findChannel, mayIn } from './store.js';
import { setPinned } from './pins.js';
import { findItem, setReply, mayPin, mayReadHistory, showEditHistory } from './room-state.js';
import { removeMessage, replaceMessage } from './room-list.js';
import { toggleReaction } from './room-reactions.js';
import { startEdit } from './room-edit.js';
import { report } from './reports.js';

/**
 * @typedef {import('../../types/room').Room} Room
 * @typedef {import('../../types/room').Opened} Opened
 * @typedef {import('../../types/client').Message} Message
 */

let menuEl = null;
/**
 * @param {Opened} r
 * @param {Message} m
 * @param {HTMLElement} anchor
 * @param {{ mine: boolean, canDelete: boolean }} options
 */
export function openMenu(r, m, anchor, { mine, canDelete }) {
  const mayWrite = maySend(r.kind);
  const items = [
    menuItem('Reply', 'reply', () => setReply(r, m)),
    menuItem('Add reaction', 'smile', () =>
      pickEmoji(findItem(r.room, m.id)?.querySelector('.react-button') || anchor, (emoji) => toggleReaction(r, m.id, emoji, true), r.serverId),
    ),
    m.content && menuItem('Copy text', 'copy', () => copyText(m.content)),
    // A thread from a message of a text channel (threads.js asks for its name and opens it).
    r.kind === 'channel' &&
      !m.thread &&
      findChannel(r.serverId, r.channelId)?.type === 'text' &&
      mayIn(r, 'create_public_threads') &&
      menuItem('Create thread', 'reply', () => emit('thread-create', { r, m })),
    menuItem('Copy link', 'link', () => import('./place-menu.js').then((places) => copyText(places.linkTo(r, m.id)))),
    mayPin(r) && menuItem(m.pinned ? 'Unpin' : 'Pin', 'pin', () => setPinned(r, m, !m.pinned)),
    m.edited_at && mayReadHistory(r, m) && menuItem('Edit history', 'history', () => showEditHistory(r, m)),
    mine && mayWrite && menuItem('Edit', 'edit', () => startEdit(r, m)),
    mine && m.embeds?.some((e) => e.type !== 'rich') && menuItem('Remove previews', 'x', () => removePreviews(r, m)),
    canDelete && menuItem('Delete', 'trash', () => deleteMessage(r, m), { danger: true }),
    !mine && menuItem('Report', 'flag', () => reportMessage(r, m), { danger: true }),
  ].filter(Boolean);
  if (!menuEl) {
    menuEl = el('div', { id: 'message-menu', class: 'popup menu', role: 'menu', 'aria-label': 'Message actions' });
    menuKeys(menuEl);
  }
  menuEl.replaceChildren(...items);
  openPopup(menuEl, anchor);
  menuEl.querySelector('[role="menuitem"]')?.focus();
}

/**
 * Removes a message's link previews for good (PATCH {"suppress_embeds": true}).
 * @param {Opened} r
 * @param {Message} m
 */
async function removePreviews(r, m) {
  try {
    replaceMessage(r, await api('PATCH', `${r.base}/messages/${m.id}`, { suppress_embeds: true }));
  } catch (err) {
    toast(err.message);
  }
}

/**
 * Deletes a message after asking (its menu, and Delete on the focused message).
 * @param {Opened} r
 * @param {Message} m
 */
export async function deleteMessage(r, m) {
  const mine = m.author_id === state.me.user_id;
  // A moderator's delete is audited: it may say why.
  const answer = await askForm({
    title: 'Delete this message?',
    text: mine
      ? 'It is removed for everyone, with its attachments. This cannot be undone.'
      : `${displayName(m.author)}'s message is removed for everyone. This cannot be undone.`,
    submit: 'Delete',
    danger: true,
    fields: mine ? [] : [{ name: 'reason', label: 'Reason (optional, kept in the audit log)', type: 'textarea', rows: 2, maxLength: 512 }],
  });
  if (!answer) return;
  try {
    await apiWithReason('DELETE', `${r.base}/messages/${m.id}`, undefined, answer.reason);
    removeMessage(r, m.id);
  } catch (err) {
    toast(err.message);
  }
}

/**
 * @param {Opened} r
 * @param {Message} m
 */
const reportMessage = (r, m) =>
  report(r.kind === 'channel' ? 'server_message' : 'conversation_message', m.id, `Report ${displayName(m.author)}'s message`, 'What is wrong with it?');
