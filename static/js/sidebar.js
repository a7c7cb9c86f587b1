// @ts-check
// The server rail and the sidebar: servers with an unread dot and a mention badge, a server's
// channels (unread in bold, mention counts), and the direct messages and groups, most recent
// first, with unread badges. Everything is drawn from the store. A muted server, channel or
// conversation is dimmed, carries a muted mark and shows no unread state (mentions still show).
// A right click, a long press, or the context-menu key (Shift+F10) on any of them opens its menu
// (place-menu.js, loaded on first use).
import { $, el, badgeText, presenceDot, initials, avatarClass } from './ui.js';
import { icon } from './icons.js';
import { moveAnchor } from './popup.js';
import { state, on, emit, findServer, serverUnread, serverMentions, conversationTitle, dmPartner, canManageServer, isMuted } from './store.js';
import { userAvatar } from './names.js';
import { call, joinVoice, userName, voiceIn } from './voice.js';

/** @typedef {import('../../types/client').Place} Place */

/** @type {(place: Place) => void} */
let select = () => {};

export function initSidebar(onSelect) {
  select = onSelect;
  on('nav', render);
  on('threads', render);
  on('presence', render);
  on('users', render);
  on('members', render); // who may edit channels
  on('voice', render); // who is in the voice channels, and how
  on('friends', renderRequestBadge);
  on('friends-count', renderRequestBadge);
  for (const id of ['server-list', 'channel-list', 'conversation-list']) placeMenus($(id));
}

const PLACE = '.rail-item.server, .nav-item.channel, .nav-item.conversation';

/** A right click, touch, or context-menu key (Shift+F10) on a place: place-menu.js takes it. */
function placeMenus(list) {
  const take = (e) => {
    const button = e.target.closest(PLACE);
    if (
      !button ||
      (e.type === 'keydown' && e.key !== 'ContextMenu' && !(e.shiftKey && e.key === 'F10')) ||
      (e.type === 'pointerdown' && e.pointerType !== 'touch')
    )
      return;
    if (e.type !== 'pointerdown') e.preventDefault();
    import('./place-menu.js').then((m) => m.placeEvent(e, button, list));
  };
  for (const type of ['contextmenu', 'keydown', 'pointerdown']) list.addEventListener(type, take);
}

/**
 * Who is in a voice channel, under it: their picture (ringed while speaking), their name, and
 * marks for muted, deafened, camera and screen (a server mute or deafen shows in red).
 * @param {string} channelId
 */
function voiceOccupants(channelId) {
  const people = voiceIn(channelId);
  if (people.length === 0) return null;
  const mark = (name, label, server = false) =>
    el('span', { class: `voice-mark${server ? ' by-server' : ''}`, role: 'img', 'aria-label': label, title: label }, icon(name));
  return el(
    'li',
    { class: 'voice-occupants' },
    el(
      'ul',
      { 'aria-label': 'In voice' },
      people.map((s) => {
        const known = state.users.get(s.user_id) ?? { user_id: s.user_id, username: userName(s.user_id) };
        const me = s.user_id === state.me?.user_id && call.channelId === channelId;
        return el(
          'li',
          { class: `voice-occupant${s.speaking ? ' speaking' : ''}${me ? ' me' : ''}`, 'data-user': s.user_id, 'data-speaking': String(s.speaking) },
          el('span', { class: 'voice-avatar' }, userAvatar(known, true)),
          el('span', { class: 'nav-label', text: userName(s.user_id) }),
          s.stream ? mark('screen', 'sharing the screen') : null,
          s.video ? mark('camera', 'camera on') : null,
          s.mute ? mark('mic-off', 'muted by the server', true) : s.self_mute ? mark('mic-off', 'muted') : null,
          s.deaf ? mark('deaf', 'deafened by the server', true) : s.self_deaf ? mark('deaf', 'deafened') : null,
        );
      }),
    ),
  );
}

/** The muted mark beside a muted server, channel or conversation. */
const mutedMark = (muted) => (muted ? el('span', { class: 'muted-mark', role: 'img', 'aria-label': 'Muted', title: 'Muted' }, icon('mute')) : null);

function badge(count, label) {
  return count > 0 ? el('span', { class: 'badge-count', 'aria-label': label, text: badgeText(count) }) : null;
}

export function render() {
  if (!state.ready) return;
  const cur = state.current;
  const focused = /** @type {HTMLElement} */ (document.activeElement);
  // The rail: one round button per server.
  $('server-list').replaceChildren(
    ...state.servers.map((server) => {
      const mentions = serverMentions(server);
      const unread = serverUnread(server);
      const muted = isMuted(server.id);
      const selected = cur?.kind === 'channel' && cur.serverId === server.id;
      const label = `${server.name}${muted ? ', muted' : ''}${mentions ? `, ${mentions} mention${mentions === 1 ? '' : 's'}` : unread ? ', unread messages' : ''}`;
      return el(
        'li',
        { class: `rail-entry${unread ? ' unread' : ''}${selected ? ' selected' : ''}${muted ? ' muted' : ''}` },
        el('span', { class: 'rail-pill', 'aria-hidden': 'true' }),
        el(
          'button',
          {
            type: 'button',
            class: `rail-item server ${avatarClass(server.id)}`,
            'data-id': server.id,
            title: server.name,
            'aria-current': selected ? 'true' : null,
            onclick: () => select({ kind: 'channel', serverId: server.id }),
          },
          el('span', { class: 'rail-initials', 'aria-hidden': 'true', text: initials(server.name) }),
          el('span', { class: 'visually-hidden', text: label }),
        ),
        badge(mentions, `${mentions} mentions`),
        mutedMark(muted),
      );
    }),
  );
  const homeSelected = cur && cur.kind !== 'channel';
  if (homeSelected) $('home-button').setAttribute('aria-current', 'true');
  else $('home-button').removeAttribute('aria-current');
  $('home-button').closest('li').classList.toggle('selected', Boolean(homeSelected));
  const dmUnread = state.conversations.reduce((n, c) => n + (isMuted(c.id) ? 0 : c.unread_count), 0);
  $('home-button').closest('li').querySelector('.badge-count')?.remove();
  if (dmUnread)
    $('home-button')
      .closest('li')
      .append(badge(dmUnread, `${dmUnread} unread direct messages`));

  // The sidebar: the open server's channels, or the conversations.
  const channelId = cur?.kind === 'channel' ? cur.channelId : null;
  const server = cur?.kind === 'channel' ? state.servers.find((s) => s.id === cur.serverId) : null;
  $('channel-section').hidden = !server;
  $('dm-section').hidden = Boolean(server);
  $('server-menu-button').hidden = !server;
  $('sidebar-title').textContent = server ? server.name : 'Direct messages';
  if (server) {
    const manage = canManageServer(server);
    const channelEntry = (channel) => {
      const current = channelId === channel.id;
      const muted = isMuted(channel.id, server.id);
      const unread = channel.unread_count > 0 && !muted;
      const voice = channel.type === 'voice';
      const entry = el(
        'li',
        { class: `channel-entry${current ? ' current' : ''}` },
        el(
          'button',
          {
            type: 'button',
            class: `nav-item channel${unread ? ' unread' : ''}${muted ? ' muted' : ''}`,
            'data-id': channel.id,
            'data-server': server.id,
            'aria-current': current ? 'true' : null,
            'aria-label': `${channel.name}${channel.private ? ', private' : ''}${muted ? ', muted' : ''}${channel.mention_count ? `, ${channel.mention_count} mentions` : unread ? ', unread' : ''}`,
            onclick: () => {
              select({ kind: 'channel', serverId: server.id, channelId: channel.id });
              // A voice channel: one click joins it too (and opens its text chat).
              if (voice) void joinVoice(server.id, channel.id);
            },
          },
          icon(voice ? 'volume' : channel.private ? 'lock' : 'hash', 'nav-icon'),
          el('span', { class: 'nav-label', text: channel.name }),
          mutedMark(muted),
          badge(channel.mention_count, `${channel.mention_count} mentions`),
        ),
        followedThreads(server.id, channel.id),
        manage
          ? el(
              'button',
              {
                type: 'button',
                class: 'icon-button small channel-gear',
                'aria-label': `Edit #${channel.name}`,
                title: 'Edit channel',
                onclick: async () => (await import('./channel-settings.js')).editChannel(server, channel),
              },
              icon('gear'),
            )
          : null,
      );
      return voice ? [entry, voiceOccupants(channel.id)] : [entry];
    };
    // Channels under no category first, then each category's, in order; a folded category
    // still shows its current channel and those with unread messages.
    const categories = server.categories || [];
    const known = new Set(categories.map((c) => c.id));
    const loose = server.channels.filter((c) => !known.has(c.category_id));
    const groups = categories.map((category) => {
      const folded = foldedCategories().includes(category.id);
      const inside = server.channels.filter((c) => c.category_id === category.id);
      // A category with nothing the member may see is no heading for them (those who manage see every one).
      if (!inside.length && !manage) return null;
      const shown = folded ? inside.filter((c) => c.id === channelId || c.mention_count > 0 || (c.unread_count > 0 && !isMuted(c.id, server.id))) : inside;
      return el(
        'li',
        { class: 'category' },
        el(
          'button',
          {
            type: 'button',
            class: 'category-head',
            'aria-expanded': String(!folded),
            'data-id': category.id,
            onclick: () => foldCategory(category.id, !folded),
          },
          icon('chevron', `nav-icon category-chevron${folded ? ' folded' : ''}`),
          el('span', { text: category.name }),
        ),
        el('ul', { class: 'nav-list' }, shown.map(channelEntry)),
      );
    });
    $('channel-list').replaceChildren(...loose.flatMap(channelEntry), ...groups.filter(Boolean));
  }
  $('conversation-list').replaceChildren(
    ...state.conversations.map((c) => {
      const current = cur?.kind === 'conversation' && cur.id === c.id;
      const muted = isMuted(c.id);
      const unread = c.unread_count > 0 && !muted;
      const partner = dmPartner(c);
      const lead = partner
        ? el('span', { class: 'avatar-wrap' }, userAvatar(partner, true), presenceDot(state.presence.get(partner.user_id)))
        : el('span', { class: 'avatar-wrap' }, el('span', { class: `${avatarClass(c.id)} small group-avatar`, 'aria-hidden': 'true' }, icon('users')));
      const title = conversationTitle(c);
      return el(
        'li',
        {},
        el(
          'button',
          {
            type: 'button',
            class: `nav-item conversation ${c.kind}${unread ? ' unread' : ''}${muted ? ' muted' : ''}`,
            'data-id': c.id,
            'aria-current': current ? 'true' : null,
            'aria-label': `${c.kind === 'dm' ? 'Direct message with ' : 'Group '}${title}${muted ? ', muted' : ''}${unread ? `, ${c.unread_count} unread` : ''}`,
            onclick: () => select({ kind: 'conversation', id: c.id }),
          },
          lead,
          el(
            'span',
            { class: 'nav-label' },
            el('span', { class: 'nav-name', text: c.kind === 'group' ? title : `@ ${title}` }),
            c.kind === 'group' ? el('span', { class: 'nav-sub muted', text: `${c.members.length} members` }) : null,
          ),
          mutedMark(muted),
          badge(unread && c.unread_count, `${c.unread_count} unread`),
        ),
      );
    }),
  );
  $('no-conversations').hidden = state.conversations.length > 0;
  if (cur?.kind === 'friends') $('friends-button').setAttribute('aria-current', 'true');
  else $('friends-button').removeAttribute('aria-current');
  renderRequestBadge();
  // What was focused, or had its menu open, is the same button drawn anew.
  /** @type {(old: HTMLElement) => HTMLButtonElement} */
  const again = (old) => old.dataset.id && /** @type {HTMLButtonElement} */ ($('app').querySelector(`button[data-id="${CSS.escape(old.dataset.id)}"]`));
  moveAnchor(again);
  if (focused && !focused.isConnected) again(focused)?.focus();
}

const FOLDED_KEY = 'chat.folded-categories';
/** The categories this browser folded (ids, kept across reloads). */
function foldedCategories() {
  try {
    const ids = JSON.parse(localStorage.getItem(FOLDED_KEY) || '[]');
    return Array.isArray(ids) ? ids : [];
  } catch {
    return [];
  }
}
function foldCategory(id, fold) {
  const ids = foldedCategories().filter((x) => x !== id);
  localStorage.setItem(FOLDED_KEY, JSON.stringify(fold ? [...ids, id] : ids));
  render();
}

function renderRequestBadge() {
  const n = state.incomingRequests;
  const b = $('request-badge');
  b.hidden = n === 0;
  b.textContent = badgeText(n);
  b.setAttribute('aria-label', `${n} pending friend request${n === 1 ? '' : 's'}`);
}

/**
 * The active threads of a channel the user follows, under it, each with its unread mark; a
 * thread opens in the pane beside its channel (threads.js).
 * @param {string} serverId
 * @param {string} channelId
 */
function followedThreads(serverId, channelId) {
  const threads = (findServer(serverId)?.threads || []).filter((x) => x.parent_id === channelId && x.following);
  if (!threads.length) return null;
  return el(
    'ul',
    { class: 'thread-entries', 'aria-label': 'Followed threads' },
    threads.map((thread) => {
      const unread = (thread.unread_count || 0) > 0 && !isMuted(thread.id, serverId);
      return el(
        'li',
        {},
        el(
          'button',
          {
            type: 'button',
            class: `nav-item thread-entry${unread ? ' unread' : ''}`,
            'data-id': thread.id,
            'aria-label': `Thread ${thread.name}${thread.mention_count ? `, ${thread.mention_count} mentions` : unread ? ', unread' : ''}`,
            onclick: () => {
              const cur = state.current;
              if (cur?.kind !== 'channel' || cur.channelId !== channelId) emit('open', { kind: 'channel', serverId, channelId });
              emit('thread-open', { serverId, threadId: thread.id });
            },
          },
          el('span', { class: 'nav-label', text: thread.name }),
          badge(thread.mention_count || 0, `${thread.mention_count} mentions`),
        ),
      );
    }),
  );
}
