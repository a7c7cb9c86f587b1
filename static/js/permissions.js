// @ts-check
// Server settings → Permissions (loaded when first opened): what everyone may do in the server's
// channels, and a channel's or category's overwrites: a row for everyone, for each role and for
// each member given one, with a three-state toggle per flag (deny, inherit, allow). Each click
// saves that row at once; the stream tells everyone it changes something for.
import { api } from './api.js';
import { el, toast } from './ui.js';
import { state, findServer, displayName, applyServer, applyChannel } from './store.js';

export const FLAGS = [
  ['view_channel', 'See the channel'],
  ['send_messages', 'Send messages'],
  ['attach_files', 'Attach files'],
  ['add_reactions', 'Add reactions'],
  ['mention_everyone', 'Mention @everyone and roles'],
  ['read_history', 'Read earlier messages'],
  ['create_public_threads', 'Start threads'],
  ['create_private_threads', 'Start private threads'],
  ['send_messages_in_threads', 'Send messages in threads'],
  ['manage_threads', 'Manage threads'],
  ['connect', 'Connect to voice'],
  ['speak', 'Speak in voice'],
  ['video', 'Camera and screen share'],
  ['mute_members', 'Mute members in voice'],
  ['deafen_members', 'Deafen members in voice'],
  ['move_members', 'Move members in voice'],
  ['manage_emojis', 'Manage emoji and stickers (server-wide)'],
  ['send_polls', 'Send polls'],
  // The moderators' flags (docs/moderation.md): each acts only on members and roles below one's highest role.
  ['manage_messages', "Delete and pin others' messages"],
  ['moderate_members', 'Time out members (server-wide)'],
  ['kick_members', 'Kick members (server-wide)'],
  ['ban_members', 'Ban members (server-wide)'],
  ['manage_channels', 'Manage channels'],
  ['manage_roles', 'Manage roles and channel permissions'],
  ['manage_server', 'Manage the server (server-wide)'],
  ['manage_webhooks', 'Manage webhooks'],
  ['view_audit_log', 'Read the audit log (server-wide)'],
];

/** Checkboxes for a set of flags (everyone's, or a role's): {node, value()}. */
export function flagChecks(prefix, chosen) {
  const boxes = FLAGS.map(([flag, label]) => {
    const box = el('input', { type: 'checkbox', id: `${prefix}-${flag}`, checked: chosen.includes(flag) });
    return /** @type {const} */ ([flag, box, el('div', { class: 'check-line' }, box, el('label', { for: box.id, text: label }))]);
  });
  return {
    node: el(
      'div',
      { class: 'flag-checks' },
      boxes.map(([, , line]) => line),
    ),
    value: () => boxes.filter(([, box]) => box.checked).map(([flag]) => flag),
  };
}

/** Server settings → Permissions: {nodes, update}; `focus`: a channel id to open on. */
export function permissionsPanel(server, focus = null) {
  const base = `/api/servers/${server.id}`;
  const everyone = flagChecks('everyone-flag', server.permissions || []);
  const saveEveryone = el('button', { type: 'button', class: 'primary small', text: 'Save' });
  saveEveryone.addEventListener('click', async () => {
    try {
      applyServer(server.id, await api('PATCH', base, { permissions: everyone.value() }));
      toast("Everyone's permissions saved.", false);
    } catch (err) {
      toast(err.message);
    }
  });

  const picker = el('select', { id: 'permissions-scope', 'aria-label': 'Channel or category' });
  const rows = el('div', { id: 'overwrite-rows', class: 'overwrite-rows' });
  const note = el('p', { class: 'muted', id: 'permissions-note' });
  const scopes = () => {
    const s = findServer(server.id) || server;
    return [
      ...s.channels.map((c) => ({ key: `channel:${c.id}`, label: `#${c.name}`, path: `${base}/channels/${c.id}/overwrites`, channel: c })),
      ...(s.categories || []).map((c) => ({ key: `category:${c.id}`, label: `Category: ${c.name}`, path: `${base}/categories/${c.id}/overwrites` })),
    ];
  };
  let chosen = focus ? `channel:${focus}` : null;
  picker.addEventListener('change', () => {
    chosen = picker.value;
    load();
  });

  async function load() {
    const scope = scopes().find((x) => x.key === chosen) || scopes()[0];
    if (!scope) return;
    chosen = scope.key;
    let list;
    try {
      list = await api('GET', scope.path);
    } catch (err) {
      return toast(err.message);
    }
    if (chosen !== scope.key) return;
    const s = findServer(server.id) || server;
    const category = scope.channel?.category_id ? (s.categories || []).find((c) => c.id === scope.channel.category_id) : null;
    note.textContent = !scope.channel
      ? 'Channels synced with this category follow these rows.'
      : category && scope.channel.permissions_synced
        ? `Synced with the category ${category.name}: a change here gives #${scope.channel.name} rows of its own.`
        : category
          ? `Not synced with the category ${category.name}.`
          : 'A flag left on the middle setting follows the server and the roles.';
    const byTarget = new Map(list.map((o) => [o.target_id, o]));
    const targets = [
      { id: server.id, kind: 'everyone', name: '@everyone' },
      ...(state.roles.get(server.id) || []).map((r) => ({ id: r.id, kind: 'role', name: r.name })),
      ...list.filter((o) => o.kind === 'member').map((o) => ({ id: o.target_id, kind: 'member', name: memberName(o.target_id) })),
    ];
    rows.replaceChildren(...targets.map((t) => overwriteRow(scope, t, byTarget.get(t.id))), addMember(scope, targets));
    if (category && !scope.channel.permissions_synced) {
      rows.append(
        el('button', {
          type: 'button',
          class: 'small',
          text: `Sync with ${category.name}`,
          onclick: async () => {
            try {
              applyChannel(server.id, await api('PATCH', `${base}/channels/${scope.channel.id}`, { permissions_synced: true }));
              load();
            } catch (err) {
              toast(err.message);
            }
          },
        }),
      );
    }
  }

  function memberName(userId) {
    const m = (state.members.get(server.id) || []).find((x) => x.user_id === userId);
    return m ? displayName(m) : 'a former member';
  }

  /** One target's row: a toggle of three per flag; a click saves the row. */
  function overwriteRow(scope, target, current) {
    const value = new Map(FLAGS.map(([flag]) => [flag, current?.allow.includes(flag) ? 'allow' : current?.deny.includes(flag) ? 'deny' : 'inherit']));
    const save = async () => {
      const allow = FLAGS.map(([f]) => f).filter((f) => value.get(f) === 'allow');
      const deny = FLAGS.map(([f]) => f).filter((f) => value.get(f) === 'deny');
      try {
        if (allow.length || deny.length || target.kind === 'everyone') await api('PUT', `${scope.path}/${target.id}`, { allow, deny });
        else if (current) await api('DELETE', `${scope.path}/${target.id}`);
        if (scope.channel) applyChannel(server.id, { id: scope.channel.id, permissions_synced: false });
        load();
      } catch (err) {
        toast(err.message);
        load();
      }
    };
    const toggles = FLAGS.map(([flag, label]) =>
      el(
        'div',
        { class: 'tri', role: 'group', 'aria-label': `${label}, for ${target.name}` },
        ...[
          ['deny', '✕', 'Deny'],
          ['inherit', '/', 'Inherit'],
          ['allow', '✓', 'Allow'],
        ].map(([mode, mark, word]) =>
          el('button', {
            type: 'button',
            class: `tri-${mode}`,
            text: mark,
            title: `${word}: ${label}`,
            'aria-label': `${word} ${label.toLowerCase()} for ${target.name}`,
            'aria-pressed': String(value.get(flag) === mode),
            onclick: () => {
              value.set(flag, mode);
              save();
            },
          }),
        ),
      ),
    );
    return el(
      'div',
      { class: 'overwrite-row', 'data-target': target.id },
      el('span', { class: 'overwrite-name', text: target.name }),
      el(
        'div',
        { class: 'overwrite-flags' },
        FLAGS.map(([, label], i) => el('div', { class: 'overwrite-flag' }, el('span', { class: 'muted', text: label }), toggles[i])),
      ),
    );
  }

  /** A select of the members without a row, to give one theirs. */
  function addMember(scope, targets) {
    const shown = new Set(targets.map((t) => t.id));
    const others = (state.members.get(server.id) || []).filter((m) => !shown.has(m.user_id) && !m.is_owner);
    if (!others.length) return el('span');
    const select = el(
      'select',
      { 'aria-label': 'Give a member their own row' },
      el('option', { value: '', text: 'Add a member…' }),
      others.map((m) => el('option', { value: m.user_id, text: displayName(m) })),
    );
    select.addEventListener('change', () => {
      const m = others.find((x) => x.user_id === select.value);
      if (m) rows.insertBefore(overwriteRow(scope, { id: m.user_id, kind: 'member', name: displayName(m) }, null), select);
    });
    return select;
  }

  const update = () => {
    picker.replaceChildren(...scopes().map((x) => el('option', { value: x.key, text: x.label, selected: x.key === chosen })));
  };
  update();
  load();
  return {
    nodes: [
      el('h3', { text: "Everyone's permissions" }),
      el('p', {
        class: 'muted',
        text: 'What every member may do in every channel, unless a channel or its category says otherwise. The owner and full server administrators may always do everything.',
      }),
      everyone.node,
      saveEveryone,
      el('h3', { text: 'A channel or category' }),
      el('p', {
        class: 'muted',
        text: 'Deny (✕) or allow (✓) a flag for everyone, a role or one member; the middle (/) inherits. A member’s own row beats their roles, and any role allowing beats another denying. A private channel: deny “See the channel” to @everyone and allow it to a role.',
      }),
      picker,
      note,
      rows,
    ],
    update,
  };
}
