// @ts-check
// A room's message list: each message drawn (grouped with the one before, blocked authors
// collapsed), day separators and the "new messages" divider, and the list kept in step with what
// the room shows as messages arrive, change or go. What a message's buttons do beyond the list
// (reactions, its menu, a jump to the message it replies to) go through the room (room.actions
// and room.showMessage, set by createRoom() in room.js), so that those modules may in turn
// redraw the list.
import { el, formatDay, pickEmoji } from './ui.js';
import { buildMessage, buildBlocked, continues } from './message.js';
import { state, findServer, canManageServer, isBlocked, mentionsMe, mayIn, displayName } from './store.js';
import { paintRole } from './names.js';
import { openUserMenu } from './members.js';
import { learnUsers } from './users-data.js';
import { findItem, setReply, mayReadHistory, showEditHistory } from './room-state.js';
import { nearBottom, scrollToBottom, countUnseen } from './room-scroll.js';

/**
 * @typedef {import('../../types/room').Room} Room
 * @typedef {import('../../types/room').Opened} Opened
 * @typedef {import('../../types/client').Message} Message
 */

/**
 * Who @name is: 'everyone', 'me', another user the page knows (their record), or null.
 * @param {string} name
 */
function mentionKind(name) {
  const lower = name.toLowerCase();
  if (lower === 'everyone') return 'everyone';
  if (lower === state.me.username.toLowerCase()) return 'me';
  for (const user of state.users.values()) if (user.username.toLowerCase() === lower) return user;
  return null;
}

/**
 * A role the message mentions by this name (the server recognised it: `mention_roles`), with
 * the server's roles as the page holds them; null otherwise.
 * @param {Message} m
 * @param {string} name
 */
function mentionedRole(m, name) {
  if (!m.mention_roles?.length || !m.server_id) return null;
  const lower = name.toLowerCase();
  return (state.roles.get(m.server_id) || []).find((r) => m.mention_roles.includes(r.id) && r.name.toLowerCase() === lower) || null;
}

/**
 * How @name shows in a message: a role it mentions in the role's colour (bolder for its holders),
 * a person by their display name (as Discord shows it; @username is the tooltip), @everyone.
 * @param {Message} m
 * @param {string} name
 * @param {boolean} named whether the message mentions the reader
 */
function mentionShown(m, name, named) {
  const kind = mentionKind(name);
  const role = kind !== 'me' && mentionedRole(m, name);
  if (role) {
    const held = (findServer(m.server_id)?.role_ids || []).includes(role.id);
    return {
      text: `@${role.name}`,
      title: held ? 'A role you hold' : `Role ${role.name}`,
      paint: (span) => {
        span.classList.toggle('held', held);
        paintRole(span, role.color);
      },
    };
  }
  if (kind === 'everyone') return m.mention_everyone ? 'me' : null;
  if (kind === 'me') return { me: named, text: `@${displayName(state.me)}`, title: `@${state.me.username}` };
  // Someone the server recognised whom this client has not met: shown once their record is in.
  if (!kind) {
    if (m.mentions?.length) learnUsers(m.mentions);
    return null;
  }
  return { text: `@${displayName(kind)}`, title: `@${kind.username}` };
}

/**
 * @param {Opened} r
 * @param {Message} m
 * @param {Message | undefined} prev
 * @returns {HTMLElement}
 */
export function render(r, m, prev) {
  const { room } = r;
  const { actions } = room;
  const continued = continues(prev, m) && !(r.dividerAfter && prev && prev.id === r.dividerAfter);
  if (isBlocked(m.author_id) && !r.revealed.has(m.id)) {
    return buildBlocked(m, { continued, show: () => reveal(r, m.id) });
  }
  const mine = m.author_id === state.me.user_id;
  const server = r.kind === 'channel' ? findServer(r.serverId) : null;
  const named = !mine && mentionsMe(m);
  return buildMessage(m, {
    mine,
    continued,
    history: mayReadHistory(r, m) ? () => showEditHistory(r, m) : null,
    openUser: (anchor) => openUserMenu(m.author || { user_id: m.author_id, username: 'unknown' }, anchor),
    mentionsMe: named,
    mention: (name) => mentionShown(m, name, named),
    reply: () => setReply(r, m),
    react: mayIn(r, 'add_reactions') ? (anchor) => pickEmoji(anchor, (emoji) => actions.toggleReaction(r, m.id, emoji, true), r.serverId) : null,
    toggleReaction: (emoji, add) => actions.toggleReaction(r, m.id, emoji, add),
    // A poll: voting asks what reacting asks (docs/api.md "Polls"); its author may end it.
    myVotes: m.poll ? actions.myVotes(m.id) : null,
    vote: (answerId, add) => actions.vote(r, m.id, answerId, add),
    endPoll: mine && m.poll && !m.poll.ended ? () => actions.endPoll(r, m.id) : null,
    menu: (anchor) => actions.openMenu(r, m, anchor, { mine, canDelete: mine || (server && canManageServer(server)) }),
    jump: (id) => room.showMessage(id),
    open: (a) => import('./lightbox.js').then((lightbox) => lightbox.openLightbox(a)),
    imageLoaded: () => {
      if (nearBottom(room, 200)) scrollToBottom(room);
    },
    keepBottom: (change) => {
      const stick = nearBottom(room);
      change();
      if (stick) scrollToBottom(room);
    },
  });
}

/**
 * @param {Message} m
 */
function daySeparator(m) {
  return el('li', { class: 'day-sep' }, el('span', { role: 'separator', 'aria-label': formatDay(m.created_at), text: formatDay(m.created_at) }));
}

const newDivider = () => el('li', { class: 'new-divider' }, el('span', { role: 'separator', 'aria-label': 'New messages', text: 'New messages' }));

/**
 * @param {Message} a
 * @param {Message} b
 */
function sameDay(a, b) {
  return new Date(a.created_at).toDateString() === new Date(b.created_at).toDateString();
}

/**
 * Rebuilds the whole list (open, older page, delete).
 * @param {Opened} r
 */
export function renderAll(r) {
  const items = [];
  let prev = null;
  let dividerPlaced = false;
  for (const m of r.list) {
    if (!prev || !sameDay(prev, m)) items.push(daySeparator(m));
    // null: nothing was read yet, so the divider goes before the first message.
    if (!prev && r.dividerAfter === null) {
      items.push(newDivider());
      dividerPlaced = true;
    }
    items.push(render(r, m, prev));
    if (!dividerPlaced && r.dividerAfter && m.id === r.dividerAfter && m !== r.list.at(-1)) {
      items.push(newDivider());
      dividerPlaced = true;
    }
    prev = m;
  }
  const { parts } = r.room;
  parts.messages.replaceChildren(...items);
  parts.historyStart.hidden = r.hasOlder || r.list.length === 0;
  parts.empty.hidden = r.list.length > 0;
  // A reader is not asked to say hello: the composer already says why they cannot (issue 47 #9).
  parts.emptyText.textContent = mayIn(r, 'send_messages') ? SAY_HELLO : 'Nothing has been posted here yet.';
}

const SAY_HELLO = 'Say hello: what you write appears here for everyone in the room.';

/**
 * @param {Opened} r
 * @param {Message} m
 */
export function addMessage(r, m) {
  if (r.byId.has(m.id)) return;
  const { room } = r;
  const stick = nearBottom(room);
  const prev = r.list.at(-1);
  r.list.push(m);
  r.byId.set(m.id, m);
  const list = room.parts.messages;
  if (!prev || !sameDay(prev, m)) list.append(daySeparator(m));
  list.append(render(r, m, prev));
  room.parts.empty.hidden = true;
  room.parts.historyStart.hidden = r.hasOlder;
  if (stick || m.author_id === state.me.user_id) scrollToBottom(room);
  else countUnseen(room);
}

/**
 * Redraws one message in place, keeping keyboard focus where it was.
 * @param {Opened} r
 * @param {Message} m
 */
export function replaceMessage(r, m) {
  if (!r.byId.has(m.id)) return;
  const i = r.list.findIndex((x) => x.id === m.id);
  r.list[i] = m;
  r.byId.set(m.id, m);
  if (r.editing === m.id) return; // redrawn when the edit ends
  const old = findItem(r.room, m.id);
  if (!old) return;
  const focusables = [...old.querySelectorAll('button, a, [tabindex]')];
  const at = focusables.indexOf(document.activeElement);
  const fresh = render(r, m, r.list[i - 1]);
  old.replaceWith(fresh);
  const again = /** @type {HTMLElement} */ (fresh.querySelectorAll('button, a, [tabindex]')[at] || fresh.querySelector('.more-button'));
  if (at >= 0) again?.focus();
}

/**
 * @param {Opened} r
 * @param {string} id
 */
export function removeMessage(r, id) {
  if (!r.byId.delete(id)) return;
  r.list = r.list.filter((m) => m.id !== id);
  if (r.editing === id) r.editing = null;
  if (r.replyTo && r.replyTo.id === id) setReply(r, null);
  // Replies to it now show "deleted message", as the server will say from now on.
  r.list = r.list.map((m) => (m.reply_to === id && m.reply_preview ? { ...m, reply_preview: null } : m));
  r.byId = new Map(r.list.map((m) => [m.id, m]));
  keepingPosition(r.room, () => renderAll(r));
}

/**
 * @param {Opened} r
 * @param {string} id
 */
function reveal(r, id) {
  r.revealed.add(id);
  const m = r.byId.get(id);
  const i = r.list.indexOf(m);
  findItem(r.room, id)?.replaceWith(render(r, m, r.list[i - 1]));
}

/**
 * Redraws every message (a name, picture or block changed), keeping the reading position.
 * @param {Room} room
 */
export function redrawAll(room) {
  const r = room.current;
  if (!r || !r.list.length) return;
  keepingPosition(room, () => renderAll(r));
}

/**
 * Runs draw() and scrolls back to where the reader was (what they read stays put).
 * @param {Room} room
 * @param {() => void} draw
 */
export function keepingPosition(room, draw) {
  const scroller = room.parts.scroller;
  const top = scroller.scrollTop;
  draw();
  scroller.scrollTop = top;
}
