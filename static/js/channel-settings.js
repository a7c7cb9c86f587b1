// @ts-check
// A server's channels as its owner and full server administrators manage them: create, edit
// (name, topic, slow mode), reorder (drag a row, or its up and down buttons) and delete. Loaded
// when first needed (settings, a channel's gear, Create channel): most visits change no channel. The
// answers update the store at once; the stream's channel events bring the same to everyone.
import { api } from './api.js';
import { el, toast, iconButton, confirmAction, reorderable, slowmodeLabel, fieldForm } from './ui.js';
import { icon } from './icons.js';
import { askForm } from './dialogs.js';
import { emit, findServer, canManageServer, addChannel, applyChannel, removeChannel, orderChannels } from './store.js';

export const MAX_SLOWMODE_SECONDS = 21600;
const SLOWMODES = [0, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 21600];
/** A voice channel's bitrates offered (8 to 96 kbit/s, as the server takes them). */
const BITRATES = [8000, 16000, 32000, 48000, 64000, 96000];

/** @param {string} [type] 'text' (the default), 'voice' or 'forum' */
export async function createChannel(server, name, type = 'text') {
  const channel = await api('POST', `/api/servers/${server.id}/channels`, type === 'text' ? { name } : { name, type });
  // channel_created arrives on the stream too; add it now so it can open at once.
  addChannel(server.id, channel);
  return channel;
}

export async function editChannel(server, channel) {
  const voice = channel.type === 'voice';
  const choices = SLOWMODES.includes(channel.slowmode_seconds) ? SLOWMODES : [...SLOWMODES, channel.slowmode_seconds].sort((a, b) => a - b);
  const answer = await askForm({
    title: `Edit #${channel.name}`,
    submit: 'Save',
    fields: [
      { name: 'name', label: 'Channel name', value: channel.name, required: true, maxLength: 100 },
      { name: 'topic', label: 'Topic', type: 'textarea', value: channel.topic || '', maxLength: 1024, rows: 2, hint: 'Shown in the header of the channel.' },
      {
        name: 'slowmode',
        label: 'Slow mode',
        type: 'select',
        value: channel.slowmode_seconds || 0,
        options: choices.map((s) => [s, slowmodeLabel(s)]),
        hint: 'How long members wait between their messages. The owner and administrators are not slowed.',
      },
      {
        name: 'category',
        label: 'Category',
        type: 'select',
        value: channel.category_id || '',
        options: [['', 'No category'], ...(server.categories || []).map((c) => [c.id, c.name])],
      },
      ...(voice
        ? [
            {
              name: 'user_limit',
              label: 'User limit',
              value: String(channel.user_limit ?? 0),
              hint: 'At most this many people in it at once, 0 to 99; 0 is no limit.',
            },
            {
              name: 'bitrate',
              label: 'Bitrate',
              type: 'select',
              value: channel.bitrate ?? 64000,
              options: [...new Set([...BITRATES, channel.bitrate ?? 64000])].sort((a, b) => a - b).map((b) => [b, `${b / 1000} kbit/s`]),
              hint: 'The audio quality its people send; for the next who join.',
            },
          ]
        : []),
    ],
  });
  if (!answer) return;
  try {
    const updated = await api('PATCH', `/api/servers/${server.id}/channels/${channel.id}`, {
      name: answer.name,
      topic: answer.topic,
      slowmode_seconds: Number(answer.slowmode),
      category_id: answer.category || null,
      ...(voice ? { user_limit: Number(answer.user_limit), bitrate: Number(answer.bitrate) } : {}),
    });
    applyChannel(server.id, updated);
    toast(`#${updated.name} saved.`, false);
  } catch (err) {
    toast(err.message);
  }
}

export async function deleteChannel(server, channel) {
  if (server.channels.length <= 1) return toast('A server keeps at least one channel: create another before deleting this one.');
  if (!(await confirmAction(`Delete #${channel.name}?`, 'Its messages and files are deleted for everyone. This cannot be undone.', 'Delete channel'))) return;
  try {
    await api('DELETE', `/api/servers/${server.id}/channels/${channel.id}`);
    removeChannel(server.id, channel.id);
    toast(`#${channel.name} was deleted.`, false);
  } catch (err) {
    toast(err.message);
  }
}

/** Moves a channel to a 0-based position: the server renumbers the others. */
async function moveChannel(server, channel, position) {
  const list = findServer(server.id)?.channels;
  if (!list || position < 0 || position >= list.length) return;
  // Show the new order at once; the answer and the channel_updated events confirm it.
  const order = list.filter((c) => c.id !== channel.id);
  order.splice(position, 0, channel);
  orderChannels(server.id, order);
  try {
    applyChannel(server.id, await api('PATCH', `/api/servers/${server.id}/channels/${channel.id}`, { position }));
  } catch (err) {
    toast(err.message);
  }
}

/** Server settings → Channels: {nodes, update}. */
export function channelsPanel(server) {
  const list = el('ol', { id: 'channel-settings-list', class: 'settings-list channel-rows', 'aria-label': 'Channels in order' });
  const dragRow = reorderable();
  const update = () => {
    const s = findServer(server.id);
    if (!s) return;
    const manage = canManageServer(s);
    list.replaceChildren(
      ...s.channels.map((c, i) => {
        const row = el(
          'li',
          { class: 'channel-row', 'data-id': c.id },
          manage ? el('span', { class: 'drag-handle', title: 'Drag to reorder' }, icon('grip')) : null,
          icon(c.private ? 'lock' : 'hash', 'nav-icon'),
          el(
            'span',
            { class: 'row-text' },
            el('span', { class: 'row-title', text: c.name }),
            c.topic ? el('span', { class: 'muted row-sub', text: c.topic }) : null,
          ),
          c.slowmode_seconds ? el('span', { class: 'tag', title: 'Slow mode', text: `slow ${slowmodeLabel(c.slowmode_seconds)}` }) : null,
          manage
            ? el(
                'span',
                { class: 'row-actions' },
                iconButton('up', `Move #${c.name} up`, () => moveChannel(s, c, i - 1), { class: 'small', disabled: i === 0 }),
                iconButton('chevron', `Move #${c.name} down`, () => moveChannel(s, c, i + 1), { class: 'small', disabled: i === s.channels.length - 1 }),
                el('button', { type: 'button', class: 'small', onclick: () => editChannel(s, c), 'aria-label': `Edit #${c.name}` }, 'Edit'),
                el(
                  'button',
                  { type: 'button', class: 'small', onclick: () => emit('permissions', c), 'aria-label': `Permissions of #${c.name}` },
                  'Permissions',
                ),
                el('button', { type: 'button', class: 'small', onclick: () => emit('webhooks', c), 'aria-label': `Webhooks of #${c.name}` }, 'Webhooks'),
                el('button', { type: 'button', class: 'small danger', onclick: () => deleteChannel(s, c), 'aria-label': `Delete #${c.name}` }, 'Delete'),
              )
            : null,
        );
        if (manage) dragRow(row, c, c.name, (dragged) => moveChannel(s, dragged, i));
        return row;
      }),
    );
  };
  update();
  const manage = canManageServer(server);
  const form = fieldForm({
    id: 'new-channel-name',
    label: 'New channel',
    button: 'Create channel',
    field: { maxLength: 100, placeholder: 'new-channel' },
    create: (name) => createChannel(server, name),
    done: (channel) => toast(`#${channel.name} created.`, false),
  });
  const categories = categoriesSection(server);
  return {
    nodes: [
      el('h3', { text: 'Channels' }),
      el('p', {
        class: 'muted',
        text: manage
          ? 'Drag a channel, or use its arrows, to change the order everyone sees. Its Edit form puts it in a category.'
          : 'Only the owner and full server administrators manage channels.',
      }),
      list,
      manage ? form : null,
      categories.node,
    ],
    update: () => {
      update();
      categories.update();
    },
  };
}

/** The categories channels are listed under: made, renamed, moved and deleted here. */
function categoriesSection(server) {
  const list = el('ol', { class: 'settings-list', 'aria-label': 'Categories in order' });
  const dragRow = reorderable();
  const update = () => {
    const s = findServer(server.id);
    if (!s) return;
    const manage = canManageServer(s);
    const categories = s.categories || [];
    const draggable = (row, c, i) => {
      if (manage) dragRow(row, c, c.name, (dragged) => changeCategory(s, dragged, { position: i }));
      return row;
    };
    list.replaceChildren(
      ...categories.map((c, i) =>
        draggable(
          el(
            'li',
            { class: 'channel-row' },
            manage ? el('span', { class: 'drag-handle', title: 'Drag to reorder' }, icon('grip')) : null,
            el(
              'span',
              { class: 'row-text' },
              el('span', { class: 'row-title', text: c.name }),
              el('span', { class: 'muted row-sub', text: channelCount(s.channels.filter((ch) => ch.category_id === c.id).length) }),
            ),
            manage
              ? el(
                  'span',
                  { class: 'row-actions' },
                  iconButton('up', `Move category ${c.name} up`, () => changeCategory(s, c, { position: i - 1 }), { class: 'small', disabled: i === 0 }),
                  iconButton('chevron', `Move category ${c.name} down`, () => changeCategory(s, c, { position: i + 1 }), {
                    class: 'small',
                    disabled: i === categories.length - 1,
                  }),
                  el('button', { type: 'button', class: 'small', 'aria-label': `Rename category ${c.name}`, onclick: () => renameCategory(s, c) }, 'Rename'),
                  el(
                    'button',
                    { type: 'button', class: 'small danger', 'aria-label': `Delete category ${c.name}`, onclick: () => deleteCategory(s, c) },
                    'Delete',
                  ),
                )
              : null,
          ),
          c,
          i,
        ),
      ),
    );
  };
  update();
  const form = fieldForm({
    id: 'new-category-name',
    label: 'New category',
    button: 'Create category',
    field: { maxLength: 100, placeholder: 'Category name' },
    create: (name) => api('POST', `/api/servers/${server.id}/categories`, { name }),
    done: (category) => toast(`Category ${category.name} created.`, false),
  });
  const manage = canManageServer(server);
  return {
    node: el(
      'section',
      { class: 'categories-settings' },
      el('h3', { text: 'Categories' }),
      el('p', {
        class: 'muted',
        text: 'Channels are listed under their category in the sidebar; anyone can fold a category there. Deleting a category keeps its channels.',
      }),
      list,
      manage ? form : null,
    ),
    update,
  };
}

async function changeCategory(server, category, change) {
  try {
    await api('PATCH', `/api/servers/${server.id}/categories/${category.id}`, change);
  } catch (err) {
    toast(err.message);
  }
}

async function renameCategory(server, category) {
  const answer = await askForm({
    title: `Rename ${category.name}`,
    submit: 'Save',
    fields: [{ name: 'name', label: 'Category name', value: category.name, required: true, maxLength: 100 }],
  });
  if (answer) await changeCategory(server, category, { name: answer.name });
}

async function deleteCategory(server, category) {
  if (!(await confirmAction(`Delete the category ${category.name}?`, 'Its channels stay, listed under no category.', 'Delete category'))) return;
  try {
    await api('DELETE', `/api/servers/${server.id}/categories/${category.id}`);
    toast(`Category ${category.name} deleted.`, false);
  } catch (err) {
    toast(err.message);
  }
}

const channelCount = (n) => `${n} channel${n === 1 ? '' : 's'}`;
