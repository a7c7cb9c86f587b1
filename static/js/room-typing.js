// @ts-check
// The typing line under a room's messages: "alice is typing…", "alice and bob are
// typing…", "Several people are typing…", each name dropped when its notice runs out.
import { el } from './ui.js';
import { state, displayName } from './store.js';

/**
 * @typedef {import('../../types/room').Room} Room
 * @typedef {import('../../types/room').Opened} Opened
 * @typedef {import('../../types/client').Message} Message
 */

/**
 * @param {Room} room
 */
export function renderTyping(room) {
  clearTimeout(room.typingTimer);
  const line = room.parts.typing;
  const r = room.current;
  const typers = r ? state.typing.get(r.key) : null;
  const now = Date.now();
  const names = [];
  let next = Infinity;
  for (const [id, t] of typers || []) {
    if (t.until <= now) typers.delete(id);
    else {
      names.push(displayName(t));
      next = Math.min(next, t.until);
    }
  }
  let text = '';
  if (names.length === 1) text = `${names[0]} is typing…`;
  else if (names.length === 2) text = `${names[0]} and ${names[1]} are typing…`;
  else if (names.length > 2) text = 'Several people are typing…';
  line.replaceChildren(...(text ? [el('span', { class: 'typing-dots', 'aria-hidden': 'true' }, el('i'), el('i'), el('i')), el('span', { text })] : []));
  line.classList.toggle('active', Boolean(text));
  if (next < Infinity) room.typingTimer = setTimeout(() => renderTyping(room), next - now + 50);
}
