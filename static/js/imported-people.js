// @ts-check
// Server settings → Imported people (the owner and full server administrators; loaded when first
// opened): the placeholder accounts an import from Discord made, each with its one-time claim
// code to hand over, who claimed it and when, and whether its claimer hid it again.
import { api } from './api.js';
import { el, toast, formatTime } from './ui.js';
import { userAvatar } from './names.js';

/** The import's style sheet (the /import page's too), fetched with the tab: the app page loads none of it. */
let sheet = null;
function loadSheet() {
  sheet ??= new Promise((resolve) => {
    // Unstyled, the table still reads: a failed sheet is no reason to hold the tab back.
    document.head.append(el('link', { rel: 'stylesheet', href: new URL('../css/import.css', import.meta.url).href, onload: resolve, onerror: resolve }));
  });
  return sheet;
}

/** Copies a code; where the browser refuses (no clipboard outside https), selects it for Ctrl+C. */
async function copyCode(code, node, button) {
  try {
    await navigator.clipboard.writeText(code);
    button.textContent = 'Copied';
  } catch {
    const range = document.createRange();
    range.selectNodeContents(node);
    getSelection().removeAllRanges();
    getSelection().addRange(range);
    toast('Copying was refused by the browser: the code is selected, copy it with Ctrl+C.', false);
  }
}

const nameOf = (user) => user.display_name || user.username;

function personRow(p) {
  const code = p.claim_code ? el('code', { class: 'claim-code', text: p.claim_code }) : null;
  const copy = code ? el('button', { type: 'button', class: 'small', 'aria-label': `Copy the claim code of ${p.discord_name}` }, 'Copy') : null;
  copy?.addEventListener('click', () => copyCode(p.claim_code, code, copy));
  return el(
    'tr',
    { 'data-discord-id': p.discord_id },
    el(
      'td',
      {},
      el(
        'span',
        { class: 'person-cell' },
        userAvatar(p, true),
        el(
          'span',
          {},
          el('span', { class: 'cell-title', text: nameOf(p), title: `@${p.username}` }),
          el('span', { class: 'muted sub discord-name', text: `Discord: ${p.discord_name}`, title: `Discord id ${p.discord_id}` }),
        ),
      ),
    ),
    el('td', { class: 'number', text: String(p.messages) }),
    el('td', {}, code ? el('span', { class: 'code-cell' }, code, copy) : el('span', { class: 'muted', text: 'used' })),
    el(
      'td',
      {},
      p.claimed_by
        ? [el('span', { text: nameOf(p.claimed_by), title: `@${p.claimed_by.username}` }), el('span', { class: 'muted sub', text: formatTime(p.claimed_at) })]
        : el('span', { class: 'muted', text: 'not yet' }),
    ),
    el('td', {}, p.hidden ? el('span', { class: 'tag', text: 'hidden' }) : el('span', { class: 'muted', text: 'no' })),
  );
}

/** Server settings → Imported people: {nodes, update}. */
export async function importedPeoplePanel(server) {
  const body = el('tbody', { id: 'imported-people-rows' });
  const table = el(
    'table',
    { class: 'data-table imported-people', 'aria-label': 'Imported people' },
    el(
      'thead',
      {},
      el(
        'tr',
        {},
        [['Placeholder'], ['Messages', 'number'], ['Claim code'], ['Claimed by'], ['Hidden']].map(([h, cls]) =>
          el('th', { scope: 'col', class: cls, text: h }),
        ),
      ),
    ),
    body,
  );
  const empty = el('p', { class: 'muted empty-note', text: 'No one was imported into this server.' });
  const wrap = el('div', { class: 'table-wrap' }, table);

  async function load() {
    try {
      const people = await api('GET', `/api/servers/${server.id}/imported-people`);
      body.replaceChildren(...people.map(personRow));
      wrap.hidden = people.length === 0;
      empty.hidden = people.length > 0;
    } catch (err) {
      toast(err.message);
    }
  }
  await Promise.all([loadSheet(), load()]);
  return {
    nodes: [
      el('h3', { text: 'Imported people' }),
      el('p', {
        class: 'muted',
        text: 'Everyone an import from Discord named has a placeholder account here, holding their messages. Send each person their claim code (a direct message on Discord, say): they sign up here, open their account page → Your Discord history and enter it, and the history becomes theirs. Each code works once.',
      }),
      wrap,
      empty,
      el('div', { class: 'button-row' }, el('button', { type: 'button', class: 'small', onclick: load }, 'Refresh')),
    ],
  };
}
