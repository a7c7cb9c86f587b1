// @ts-check
// The Roles page of the server menu (issue 53, docs/moderation.md "Self-assigned roles"): the
// server's self-assignable roles, each a toggle; taking one may open channels (its overwrites).
// Loaded when first opened.
import { api } from './api.js';
import { el, toast } from './ui.js';
import { showDialog } from './dialogs.js';
import { state, holdsRole } from './store.js';
import { loadMembers } from './members-data.js';

/** @typedef {import('../../types/client').ServerEntry} ServerEntry */

/** @param {ServerEntry} server */
export async function openSelfRoles(server) {
  try {
    await loadMembers(server.id);
  } catch (err) {
    return toast(err.message);
  }
  const list = el('ul', { class: 'settings-list', id: 'self-roles' });
  const render = () => {
    const me = (state.members.get(server.id) || []).find((m) => m.user_id === state.me.user_id);
    const roles = (state.roles.get(server.id) || []).filter((r) => r.self_assignable);
    list.replaceChildren(
      ...roles.map((r) => {
        const held = holdsRole(me, r.id);
        return el(
          'li',
          { class: 'role-row' },
          el('span', { text: r.name }),
          el(
            'button',
            {
              type: 'button',
              class: held ? 'small primary' : 'small',
              'aria-pressed': String(held),
              'aria-label': `${held ? 'Drop' : 'Take'} the role ${r.name}`,
              onclick: async () => {
                try {
                  await api(held ? 'DELETE' : 'PUT', `/api/servers/${server.id}/members/@me/roles/${r.id}`);
                  await loadMembers(server.id, true);
                  render();
                } catch (err) {
                  toast(err.message);
                }
              },
            },
            held ? 'Taken' : 'Take',
          ),
        );
      }),
    );
    if (roles.length === 0) list.append(el('li', { class: 'muted', text: 'This server has no roles members take themselves.' }));
  };
  render();
  showDialog('self-roles-dialog', `Roles in ${server.name}`, el('p', { class: 'muted', text: 'Take the roles you want; some open channels.' }), list);
}
