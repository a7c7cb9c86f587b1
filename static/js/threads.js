// @ts-check
// Threads and forums (issue 49). A thread opens in a pane beside its channel (on a phone, over
// the whole screen with a back button): a second room (room.js) with its own composer, history
// and live updates, made from the main room's markup. A message's menu starts one (Create
// thread); the message that started one shows "N replies · last reply …" (message.js), kept
// current here as replies arrive. A forum channel shows its posts as a list (title, first lines,
// tags, reply count, last activity, first image) sorted and filtered by tag, with New post; the thread's menu renames,
// archives, locks and retags it.
import { api } from './api.js';
import { $, el, toast, formatTime } from './ui.js';
import { icon } from './icons.js';
import { askForm } from './dialogs.js';
import { openPopup, menuKeys, menuItem } from './popup.js';
import { state, on, onEvent, findServer, findChannel, findThread, canManageServer } from './store.js';
import { createRoom } from './room.js';
import { createComposer } from './composer.js';
import { findItem } from './room-state.js';
import { threadSummary } from './message.js';

/**
 * @typedef {import('../../types/room').Room} Room
 * @typedef {import('../../types/room').Opened} Opened
 * @typedef {import('../../types/client').Message} Message
 * @typedef {import('../../types/client').Thread} Thread
 * @typedef {import('../../types/client').ListedThread} ListedThread
 * @typedef {import('../../types/client').ForumTag} ForumTag
 */

/** The main room (app.js), the pane's room and composer, and the thread the pane shows. */
let main = /** @type {Room | null} */ (null);
let pane = /** @type {Room | null} */ (null);
let paneComposer = /** @type {ReturnType<typeof createComposer> | null} */ (null);
/** @type {Thread | null} */
let shown = null;
/** The forum shown: its id and server, its posts, and the tag the list is filtered by ('' for none). */
const forum = { serverId: '', id: '', posts: /** @type {ListedThread[]} */ ([]), tag: '', sort: 'latest_activity' };

/**
 * Makes the thread pane from the main room's markup (ids dropped: the pane finds its parts by
 * their data-part names) and wires the topics message.js, room-menu.js and the store send.
 * @param {Room} room the page's main room
 */
export function initThreads(room) {
  main = room;
  const root = $('thread-pane');
  const body = /** @type {HTMLElement} */ (room.root.cloneNode(true));
  for (const node of body.querySelectorAll('[id]')) node.removeAttribute('id');
  for (const node of body.querySelectorAll('label[for]')) node.remove();
  body.querySelector('[data-part="messages"]')?.replaceChildren();
  body.querySelector('[data-part="jump-present"]')?.replaceChildren();
  body.querySelector('[data-part="composer-text"]')?.setAttribute('aria-label', 'Reply in the thread');
  body.classList.add('thread-main');
  root.append(body);
  pane = createRoom(body);
  paneComposer = createComposer(body, pane);
  $('thread-close').replaceChildren(icon('x'));
  $('thread-back').replaceChildren(icon('back'));
  $('thread-menu-button').replaceChildren(icon('dots'));
  $('thread-close').addEventListener('click', closeThread);
  $('thread-back').addEventListener('click', closeThread);
  $('thread-menu-button').addEventListener('click', (e) => openThreadMenu(/** @type {HTMLElement} */ (e.currentTarget)));
  $('new-post').addEventListener('click', newPost);
  $('threads-button').replaceChildren(icon('chat'));
  $('threads-button').addEventListener('click', (e) => listThreads(/** @type {HTMLElement} */ (e.currentTarget)));
  $('forum-tag').addEventListener('change', (e) => {
    forum.tag = /** @type {HTMLSelectElement} */ (e.target).value;
    renderForum();
  });
  $('forum-sort').addEventListener('change', (e) => {
    forum.sort = /** @type {HTMLSelectElement} */ (e.target).value;
    renderForum();
  });

  on('thread-open', ({ serverId, threadId }) => openThread(serverId, threadId));
  on('thread-create', ({ r, m }) => createFromMessage(r, m));
  on('threads', ({ serverId, thread, gone }) => {
    if (shown && thread.id === shown.id) {
      if (gone) closeThread();
      else {
        shown = { ...shown, ...thread };
        renderHead();
        paneComposer?.update();
      }
    }
    if (serverId === forum.serverId && thread.parent_id === forum.id) loadForum().catch((err) => toast(err.message));
  });
  // A reply in a thread: the message it started from counts it.
  onEvent('message', (ev) => {
    const m = ev.message;
    if (!m.channel_id || !m.server_id) return;
    const thread = findThread(m.server_id, m.channel_id) || (shown?.id === m.channel_id ? shown : null);
    if (!thread || !thread.starter_message_id) return;
    const r = main?.current;
    const starter = r?.byId.get(thread.starter_message_id);
    if (!starter?.thread) return;
    if (r?.byId.get(m.id)) return;
    starter.thread = { ...starter.thread, message_count: starter.thread.message_count + 1, last_message_at: m.created_at };
    const item = main && findItem(main, starter.id);
    item?.querySelector('.thread-summary')?.replaceWith(threadSummary(m.server_id, starter.thread));
  });
}

/**
 * Opens a thread in the pane (`known`: its record, just made).
 * @param {string} serverId
 * @param {string} threadId
 * @param {Thread} [known]
 */
export async function openThread(serverId, threadId, known) {
  if (!pane) return;
  try {
    const thread = known || findThread(serverId, threadId) || (await lookUp(serverId, threadId));
    if (!thread) return toast('That thread is not one you can see.');
    shown = thread;
    $('app').classList.add('thread-open');
    $('thread-pane').hidden = false;
    renderHead();
    const r = pane.open({ kind: 'channel', serverId, channelId: thread.id });
    paneComposer?.restoreDraft(r);
  } catch (err) {
    toast(err.message);
  }
}

/** Closes the pane (another channel, its close or back button, the thread gone). */
export function closeThread() {
  shown = null;
  pane?.close();
  $('thread-pane').hidden = true;
  $('app').classList.remove('thread-open');
}

/**
 * A thread the store does not hold (not active, or not yet told): among the threads of the
 * server's channels, active, then archived (their first page).
 * @param {string} serverId
 * @param {string} threadId
 */
async function lookUp(serverId, threadId) {
  const server = findServer(serverId);
  for (const query of ['', '?archived=true&limit=100']) {
    for (const channel of server?.channels || []) {
      const list = /** @type {Thread[]} */ (await api('GET', `/api/servers/${serverId}/channels/${channel.id}/threads${query}`));
      const found = list.find((x) => x.id === threadId);
      if (found) return found;
    }
  }
  return null;
}

function renderHead() {
  if (!shown) return;
  const marks = [shown.archived ? 'archived' : '', shown.locked ? 'locked' : '', shown.private ? 'private' : ''].filter(Boolean);
  $('thread-title').textContent = shown.name;
  $('thread-sub').textContent = marks.join(' · ');
}

/**
 * A message's menu, Create thread: its name, then the thread opens.
 * @param {Opened} r
 * @param {Message} m
 */
async function createFromMessage(r, m) {
  const answer = await askForm({
    title: 'Create thread',
    text: 'A side conversation about this message, in a pane beside the channel.',
    submit: 'Create thread',
    fields: [{ name: 'name', label: 'Thread name', value: (m.content || 'Thread').split('\n')[0].slice(0, 100), required: true, maxLength: 100 }],
  });
  if (!answer) return;
  try {
    /** @type {Thread} */
    const thread = await api('POST', `${r.base}/threads`, { name: answer.name, message_id: m.id });
    const starter = r.byId.get(m.id);
    if (starter && r.serverId) {
      starter.thread = {
        id: thread.id,
        name: thread.name,
        message_count: 0,
        last_message_at: null,
        archived: false,
        locked: false,
      };
      const item = findItem(r.room, m.id);
      item?.querySelector('.thread-summary')?.remove();
      item?.querySelector('.msg-body')?.append(threadSummary(r.serverId, starter.thread));
    }
    await openThread(thread.server_id, thread.id, thread);
  } catch (err) {
    toast(err.message);
  }
}

/** @param {HTMLElement} anchor */
function openThreadMenu(anchor) {
  const thread = shown;
  if (!thread) return;
  const manages = canManageServer(findServer(thread.server_id)) || findChannel(thread.server_id, thread.parent_id)?.permissions?.includes('manage_threads');
  const owner = thread.owner_id === state.me.user_id;
  const change = (/** @type {Record<string, unknown>} */ body) =>
    api('PATCH', `/api/servers/${thread.server_id}/channels/${thread.id}`, body)
      .then((after) => {
        shown = { ...thread, ...after };
        renderHead();
      })
      .catch((err) => toast(err.message));
  const parent = findChannel(thread.server_id, thread.parent_id);
  const items = [
    (owner || manages) &&
      menuItem('Rename', 'edit', async () => {
        const answer = await askForm({ title: 'Rename thread', fields: [{ name: 'name', label: 'Name', value: thread.name, required: true, maxLength: 100 }] });
        if (answer) change({ name: answer.name });
      }),
    (owner || manages) && menuItem(thread.archived ? 'Unarchive' : 'Archive', 'history', () => change({ archived: !thread.archived })),
    manages && menuItem(thread.locked ? 'Unlock' : 'Lock', 'lock', () => change({ locked: !thread.locked })),
    (owner || manages) &&
      parent?.type === 'forum' &&
      menuItem('Edit tags', 'edit', async () => {
        const tags = parent.available_tags || [];
        const answer = await askForm({
          title: 'Tags of this post',
          fields: tags.map((tag) => ({
            name: tag.id,
            label: `${tag.emoji ? `${tag.emoji} ` : ''}${tag.name}`,
            type: 'checkbox',
            value: thread.applied_tags.includes(tag.id),
          })),
        });
        if (answer) change({ applied_tags: tags.filter((tag) => answer[tag.id]).map((tag) => tag.id) });
      }),
  ].filter(Boolean);
  if (!items.length) return;
  const menu = el('div', { id: 'thread-menu', class: 'popup menu', role: 'menu', 'aria-label': 'Thread actions' }, ...items);
  menuKeys(menu);
  document.getElementById('thread-menu')?.remove();
  openPopup(menu, anchor);
  /** @type {HTMLElement | null} */ (menu.querySelector('[role="menuitem"]'))?.focus();
}

/**
 * The channel's threads, active then archived (the newest 25), from the header; one opens in the pane.
 * @param {HTMLElement} anchor
 */
async function listThreads(anchor) {
  const cur = state.current;
  if (cur?.kind !== 'channel' || !cur.serverId || !cur.channelId) return;
  const serverId = cur.serverId;
  const base = `/api/servers/${serverId}/channels/${cur.channelId}/threads`;
  try {
    /** @type {[Thread[], Thread[]]} */
    const [active, archived] = await Promise.all([api('GET', base), api('GET', `${base}?archived=true&limit=25`)]);
    const entry = (/** @type {Thread} */ x) =>
      menuItem(`${x.name} · ${x.message_count === 1 ? '1 message' : `${x.message_count} messages`}`, x.private ? 'lock' : 'chat', () =>
        openThread(serverId, x.id, x),
      );
    const heading = (/** @type {string} */ text) => el('p', { class: 'menu-heading muted', role: 'presentation', text });
    const menu = el(
      'div',
      { id: 'threads-menu', class: 'popup menu threads-menu', role: 'menu', 'aria-label': 'Threads' },
      heading(active.length ? 'Active threads' : 'No active threads'),
      ...active.map(entry),
      ...(archived.length ? [heading('Archived threads'), ...archived.map(entry)] : []),
    );
    menuKeys(menu);
    document.getElementById('threads-menu')?.remove();
    openPopup(menu, anchor);
    /** @type {HTMLElement | null} */ (menu.querySelector('[role="menuitem"]'))?.focus();
  } catch (err) {
    toast(err.message);
  }
}

// ---- forums ---------------------------------------------------------------------------------

/**
 * The room shows a channel: a forum shows its posts in place of messages; any other channel its
 * messages. The thread pane closes on any other channel than its own.
 * @param {{ kind: string, serverId?: string, channelId?: string } | null} place
 */
export function showPlace(place) {
  const channel = place?.kind === 'channel' && place.serverId && place.channelId ? findChannel(place.serverId, place.channelId) : null;
  if (shown && (!channel || channel.id !== shown.parent_id)) closeThread();
  const isForum = channel?.type === 'forum';
  $('threads-button').hidden = channel?.type !== 'text';
  $('room').classList.toggle('forum', isForum);
  $('forum-view').hidden = !isForum;
  if (!channel || !isForum) {
    forum.id = '';
    return;
  }
  if (forum.id !== channel.id) forum.tag = '';
  forum.serverId = channel.server_id;
  forum.id = channel.id;
  forum.sort = channel.default_sort || 'latest_activity';
  $('forum-guidelines').textContent = channel.topic || '';
  const select = /** @type {HTMLSelectElement} */ ($('forum-tag'));
  select.replaceChildren(
    el('option', { value: '', text: 'Every tag' }),
    ...(channel.available_tags || []).map((tag) => el('option', { value: tag.id, text: `${tag.emoji ? `${tag.emoji} ` : ''}${tag.name}` })),
  );
  select.value = forum.tag;
  /** @type {HTMLSelectElement} */ ($('forum-sort')).value = forum.sort;
  loadForum().catch((err) => toast(err.message));
}

/** The forum's posts: active ones, then the newest archived. */
async function loadForum() {
  if (!forum.id) return;
  const base = `/api/servers/${forum.serverId}/channels/${forum.id}/threads`;
  const wanted = forum.id;
  /** @type {[ListedThread[], ListedThread[]]} */
  const [active, archived] = await Promise.all([api('GET', base), api('GET', `${base}?archived=true&limit=50`)]);
  if (forum.id !== wanted) return;
  forum.posts = [...active, ...archived];
  renderForum();
}

function renderForum() {
  const channel = findChannel(forum.serverId, forum.id);
  const tags = new Map((channel?.available_tags || []).map((tag) => [tag.id, tag]));
  const activity = (/** @type {ListedThread} */ x) => x.last_message_at || x.created_at;
  const posts = forum.posts
    .filter((x) => !forum.tag || x.applied_tags.includes(forum.tag))
    .sort((a, b) => (forum.sort === 'creation' ? b.created_at.localeCompare(a.created_at) : activity(b).localeCompare(activity(a))));
  const list = $('forum-posts');
  list.replaceChildren(
    ...posts.map((post) => {
      const replies = Math.max(post.message_count - 1, 0);
      const first = post.first_message;
      return el(
        'li',
        { class: 'forum-post' },
        el(
          'button',
          { type: 'button', class: first?.image ? 'forum-post-open with-image' : 'forum-post-open', onclick: () => openThread(post.server_id, post.id) },
          // The first image: a thumbnail at the card's side, loaded as it scrolls into view.
          first?.image
            ? el('img', { class: 'forum-post-image', loading: 'lazy', src: first.image, alt: `Image from ${post.name}`, width: 72, height: 72 })
            : null,
          el('span', { class: 'forum-post-title', text: post.name }),
          // Its first lines as written, as text (never HTML).
          first?.content ? el('span', { class: 'forum-post-lines', text: first.content }) : null,
          el(
            'span',
            { class: 'forum-post-tags' },
            post.applied_tags
              .map((id) => tags.get(id))
              .filter((tag) => tag !== undefined)
              .map((tag) => el('span', { class: 'tag forum-tag', text: `${tag.emoji ? `${tag.emoji} ` : ''}${tag.name}` })),
          ),
          el('span', {
            class: 'forum-post-meta muted',
            text: `${replies === 1 ? '1 reply' : `${replies} replies`} · ${formatTime(activity(post))}${post.archived ? ' · archived' : ''}${post.locked ? ' · locked' : ''}`,
          }),
        ),
      );
    }),
  );
  $('forum-empty').hidden = posts.length > 0;
}

/** New post: its title, first message and tags; then it opens. */
async function newPost() {
  const channel = findChannel(forum.serverId, forum.id);
  if (!channel) return;
  const tags = /** @type {ForumTag[]} */ (channel.available_tags || []).filter((tag) => !tag.moderated || canManageServer(findServer(channel.server_id)));
  const answer = await askForm({
    title: 'New post',
    text: channel.topic || '',
    submit: 'Post',
    fields: [
      { name: 'name', label: 'Title', required: true, maxLength: 100 },
      { name: 'content', label: 'Message', type: 'textarea', rows: 4, required: true, maxLength: 4000 },
      ...tags.map((tag) => ({ name: `tag:${tag.id}`, label: `${tag.emoji ? `${tag.emoji} ` : ''}${tag.name}`, type: 'checkbox' })),
    ],
  });
  if (!answer) return;
  try {
    const post = await api('POST', `/api/servers/${channel.server_id}/channels/${channel.id}/threads`, {
      name: answer.name,
      content: answer.content,
      applied_tags: tags.filter((tag) => answer[`tag:${tag.id}`]).map((tag) => tag.id),
    });
    await loadForum();
    await openThread(post.server_id, post.id, post);
  } catch (err) {
    toast(err.message);
  }
}
