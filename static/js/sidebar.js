// The server rail and the sidebar: servers with an unread dot and a mention badge, a server's
// channels (unread in bold, mention counts), and the direct messages and groups, most recent
// first, with unread badges. Everything is drawn from the store.
import { $, el, badgeText, presenceDot, initials, avatarClass } from './ui.js';
import { icon } from './icons.js';
import { state, on, serverUnread, serverMentions, conversationTitle, dmPartner, canManageServer } from './store.js';
import { userAvatar } from './names.js';

let select = () => {};

export function initSidebar(onSelect) {
  select = onSelect;
  on('nav', render);
  on('presence', render);
  on('users', render);
  on('members', render); // who may edit channels
  on('friends', renderRequestBadge);
  on('friends-count', renderRequestBadge);
}

function badge(count, label) {
  return count > 0 ? el('span', { class: 'badge-count', 'aria-label': label, text: badgeText(count) }) : null;
}

export function render() {
  if (!state.ready) return;
  const cur = state.current;
  // The rail: one round button per server.
  $('server-list').replaceChildren(...state.servers.map((server) => {
    const mentions = serverMentions(server);
    const unread = serverUnread(server);
    const selected = cur?.kind === 'channel' && cur.serverId === server.id;
    const label = `${server.name}${mentions ? `, ${mentions} mention${mentions === 1 ? '' : 's'}` : unread ? ', unread messages' : ''}`;
    return el('li', { class: `rail-entry${unread ? ' unread' : ''}${selected ? ' selected' : ''}` },
      el('span', { class: 'rail-pill', 'aria-hidden': 'true' }),
      el('button', {
        type: 'button', class: `rail-item server ${avatarClass(server.id)}`, 'data-id': server.id, 'aria-label': label, title: server.name,
        'aria-current': selected ? 'true' : null, onclick: () => select({ kind: 'channel', serverId: server.id }),
      }, el('span', { class: 'rail-initials', text: initials(server.name) })),
      badge(mentions, `${mentions} mentions`));
  }));
  const homeSelected = cur && cur.kind !== 'channel';
  if (homeSelected) $('home-button').setAttribute('aria-current', 'true');
  else $('home-button').removeAttribute('aria-current');
  $('home-button').closest('li').classList.toggle('selected', Boolean(homeSelected));
  const dmUnread = state.conversations.reduce((n, c) => n + c.unread_count, 0);
  $('home-button').closest('li').querySelector('.badge-count')?.remove();
  if (dmUnread) $('home-button').closest('li').append(badge(dmUnread, `${dmUnread} unread direct messages`));

  // The sidebar: the open server's channels, or the conversations.
  const server = cur?.kind === 'channel' ? state.servers.find((s) => s.id === cur.serverId) : null;
  $('channel-section').hidden = !server;
  $('dm-section').hidden = Boolean(server);
  $('server-menu-button').hidden = !server;
  $('sidebar-title').textContent = server ? server.name : 'Direct messages';
  if (server) {
    const manage = canManageServer(server);
    const channelEntry = (channel) => {
      const current = cur.channelId === channel.id;
      const unread = channel.unread_count > 0;
      return el('li', { class: `channel-entry${current ? ' current' : ''}` },
        el('button', {
          type: 'button', class: `nav-item channel${unread ? ' unread' : ''}`, 'data-id': channel.id, 'aria-current': current ? 'true' : null,
          'aria-label': `${channel.name}${channel.private ? ', private' : ''}${channel.mention_count ? `, ${channel.mention_count} mentions` : unread ? ', unread' : ''}`,
          onclick: () => select({ kind: 'channel', serverId: server.id, channelId: channel.id }),
        }, icon(channel.private ? 'lock' : 'hash', 'nav-icon'), el('span', { class: 'nav-label', text: channel.name }), badge(channel.mention_count, `${channel.mention_count} mentions`)),
        manage ? el('button', {
          type: 'button', class: 'icon-button small channel-gear', 'aria-label': `Edit #${channel.name}`, title: 'Edit channel',
          onclick: async () => (await import('./channel-settings.js')).editChannel(server, channel),
        }, icon('gear')) : null);
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
      const shown = folded ? inside.filter((c) => c.id === cur.channelId || c.unread_count > 0) : inside;
      return el('li', { class: 'category' },
        el('button', {
          type: 'button', class: 'category-head', 'aria-expanded': String(!folded), 'data-id': category.id,
          onclick: () => foldCategory(category.id, !folded),
        }, icon('chevron', `nav-icon category-chevron${folded ? ' folded' : ''}`), el('span', { text: category.name })),
        el('ul', { class: 'nav-list' }, shown.map(channelEntry)));
    });
    $('channel-list').replaceChildren(...loose.map(channelEntry), ...groups.filter(Boolean));
  }
  $('conversation-list').replaceChildren(...state.conversations.map((c) => {
    const current = cur?.kind === 'conversation' && cur.id === c.id;
    const unread = c.unread_count > 0;
    const partner = dmPartner(c);
    const lead = partner
      ? el('span', { class: 'avatar-wrap' }, userAvatar(partner, true), presenceDot(state.presence.get(partner.user_id)))
      : el('span', { class: 'avatar-wrap' }, el('span', { class: `${avatarClass(c.id)} small group-avatar`, 'aria-hidden': 'true' }, icon('users')));
    const title = conversationTitle(c);
    return el('li', {},
      el('button', {
        type: 'button', class: `nav-item conversation ${c.kind}${unread ? ' unread' : ''}`, 'data-id': c.id, 'aria-current': current ? 'true' : null,
        'aria-label': `${c.kind === 'dm' ? 'Direct message with ' : 'Group '}${title}${unread ? `, ${c.unread_count} unread` : ''}`,
        onclick: () => select({ kind: 'conversation', id: c.id }),
      }, lead,
      el('span', { class: 'nav-label' }, el('span', { class: 'nav-name', text: c.kind === 'group' ? title : `@ ${title}` }),
        c.kind === 'group' ? el('span', { class: 'nav-sub muted', text: `${c.members.length} members` }) : null),
      badge(c.unread_count, `${c.unread_count} unread`)));
  }));
  $('no-conversations').hidden = state.conversations.length > 0;
  if (cur?.kind === 'friends') $('friends-button').setAttribute('aria-current', 'true');
  else $('friends-button').removeAttribute('aria-current');
  renderRequestBadge();
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
