// The typing line under the open room's messages: "alice is typing…", "alice and bob are
// typing…", "Several people are typing…", each name dropped when its notice runs out.
import { $, el } from './ui.js';
import { state, displayName } from './store.js';
import { currentRoom } from './room-state.js';

let typingTimer = 0;
export function renderTyping() {
  clearTimeout(typingTimer);
  const line = $('typing-line');
  const r = currentRoom();
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
  if (next < Infinity) typingTimer = setTimeout(renderTyping, next - now + 50);
}
