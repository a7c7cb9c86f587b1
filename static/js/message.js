// @ts-check
// One message as DOM. Pure rendering: what its buttons do comes from the caller (room.js).
// The text goes through markdown.js (markdown-it, then DOMPurify); names, file names and
// everything else go in as text. Attachment URLs are built from the id alone.
import { el, iconButton, formatTime, formatClock, formatSize } from './ui.js';
import { icon } from './icons.js';
import { renderMarkdown } from './markdown.js';
import { isBlocked, emit } from './store.js';
import { displayName, fullName, userAvatar, isDeletedUser } from './names.js';

/** @typedef {import('../../types/client').Message} Message */

const GROUP_WINDOW_MS = 7 * 60 * 1000;

/**
 * Does `m` continue `prev` (same author, a few minutes apart, same day, not a reply)?
 * @param {Message | null | undefined} prev
 * @param {Message} m
 */
export function continues(prev, m) {
  if (!prev || m.reply_to) return false;
  if (prev.author_id !== m.author_id) return false;
  // A webhook names each message as it likes: a new name starts a new group.
  if (m.webhook_id && prev.author?.display_name !== m.author?.display_name) return false;
  const a = new Date(prev.created_at);
  const b = new Date(m.created_at);
  return b.getTime() - a.getTime() < GROUP_WINDOW_MS && a.toDateString() === b.toDateString();
}

/**
 * m: a message record. on: {continued, mine, mentionsMe, mention(name), reply(), react(anchor),
 * toggleReaction(emoji, add), myVotes (a poll's answers the user voted for), vote(answerId, add),
 * endPoll() (null unless the user may end its poll), menu(anchor), openUser(anchor), history() (null when the edit
 * history is not for this user), jump(id), open(attachment), imageLoaded(), keepBottom(change)}.
 * @param {Message} m
 * @param {Record<string, any>} on
 * @returns {HTMLLIElement}
 */
export function buildMessage(m, on) {
  const classes = ['msg'];
  if (on.mine) classes.push('mine');
  if (on.continued) classes.push('continued');
  if (on.mentionsMe) classes.push('mentions-me');
  if (m.pinned) classes.push('pinned');
  /** @type {import('../../types/client').UserRef} */
  const author = m.author || { user_id: m.author_id, username: 'unknown', display_name: null, avatar_url: null };
  // A webhook's message carries the name it was sent under; the store holds only the latest.
  const name = m.webhook_id ? author.display_name || author.username : displayName(author);
  // Focusable (room-focus.js makes one message of the list its tab stop).
  const item = el('li', {
    class: classes.join(' '),
    'data-id': m.id,
    tabIndex: -1,
    'aria-label': `${name}, ${formatTime(m.created_at)}${m.pinned ? ', pinned' : ''}`,
  });

  const pinnedMark = () => (m.pinned ? el('span', { class: 'pinned-mark', title: 'Pinned' }, icon('pin')) : null);
  // A continued message has no header: its pin shows in the gutter, where its time shows on hover.
  const gutter = on.continued
    ? el(
        'div',
        { class: 'msg-gutter' },
        el('time', { class: 'hover-time', dateTime: m.created_at, title: new Date(m.created_at).toLocaleString(), text: formatClock(m.created_at) }),
        pinnedMark(),
      )
    : el('div', { class: 'msg-gutter' }, webhookAvatar(m) || userAvatar(author));

  const body = el('div', { class: 'msg-body' });
  body.append(
    on.continued
      ? el('span', { class: 'visually-hidden author-hidden', text: name })
      : el(
          'div',
          { class: 'msg-head' },
          // A webhook is no one to open a menu of: its name is text.
          m.webhook_id
            ? el('span', { class: 'author', text: name })
            : el('button', {
                type: 'button',
                class: 'author',
                text: name,
                title: isDeletedUser(author) ? null : `@${author.username}`,
                'aria-label': `${fullName(author)}: open their menu`,
                'aria-haspopup': 'menu',
                onclick: (e) => on.openUser(e.currentTarget),
              }),
          author.bot ? el('span', { class: 'tag bot-tag', text: 'BOT', title: m.webhook_id ? 'Sent through a webhook' : 'A bot account' }) : null,
          el('time', { dateTime: m.created_at, title: new Date(m.created_at).toLocaleString(), text: formatTime(m.created_at) }),
          pinnedMark(),
        ),
  );
  if (m.reply_to) body.append(replyPreview(m, on));
  const edited = () =>
    on.history
      ? el(
          'button',
          { type: 'button', class: 'edited', title: `edited ${new Date(m.edited_at).toLocaleString()}: show every version`, onclick: on.history },
          '(edited)',
        )
      : el('span', { class: 'edited', title: `edited ${new Date(m.edited_at).toLocaleString()}`, text: '(edited)' });
  if (m.content) {
    const content = el('div', { class: 'content' });
    content.append(renderMarkdown(m.content, on.mention));
    if (m.edited_at) {
      // Inside the last paragraph, so "(edited)" follows the text on its line.
      const last = content.lastElementChild;
      (last && last.tagName === 'P' ? last : content).append(' ', edited());
    }
    body.append(content);
  } else if (m.edited_at) {
    body.append(edited());
  }
  if (Array.isArray(m.embeds) && m.embeds.length) body.append(embeds(m, on));
  if (m.attachments && m.attachments.length) {
    body.append(
      el(
        'div',
        { class: 'attachments' },
        m.attachments.map((a) => attachment(a, on)),
      ),
    );
  }
  if (m.stickers?.length) body.append(stickers(m.stickers));
  if (m.poll) body.append(poll(m.poll, on));
  body.append(reactions(m, on));
  if (m.thread && m.server_id) body.append(threadSummary(m.server_id, m.thread));
  item.append(gutter, body, toolbar(m, on));
  // A right click (a long press on a touch screen is touch.js's, which opens the same menu).
  item.addEventListener('contextmenu', (e) => {
    if (/** @type {Element} */ (e.target).closest('a, img, video, audio, textarea, input')) return;
    e.preventDefault();
    on.menu(item.querySelector('.more-button'));
  });
  return item;
}

/**
 * The thread a message started, as "N replies · last reply …": it opens the thread (threads.js).
 * @param {string} serverId
 * @param {NonNullable<Message['thread']>} thread
 */
export function threadSummary(serverId, thread) {
  const replies = thread.message_count === 1 ? '1 reply' : `${thread.message_count} replies`;
  const last = thread.last_message_at ? ` · last reply ${formatTime(thread.last_message_at)}` : '';
  return el(
    'button',
    { type: 'button', class: 'thread-summary', 'data-thread': thread.id, onclick: () => emit('thread-open', { serverId, threadId: thread.id }) },
    icon('reply'),
    el('strong', { class: 'thread-name', text: thread.name }),
    el('span', { class: 'thread-count', text: ` ${replies}${last}` }),
  );
}

/**
 * The picture a webhook gave for its message, through our media proxy (never the original).
 * @param {Message} m
 */
function webhookAvatar(m) {
  const src = m.webhook_avatar_proxy_url;
  if (typeof src !== 'string' || !src.startsWith('/api/media/')) return null;
  return el('img', { class: 'avatar picture', src, alt: '', 'aria-hidden': 'true', loading: 'lazy', decoding: 'async' });
}

/**
 * The message's cards, drawn by embeds.js, loaded on the first message that has any. They arrive
 * a moment after the message: on.keepBottom(change) keeps the list at the bottom if it was there.
 * @param {Message} m
 * @param {Record<string, any>} on
 */
function embeds(m, on) {
  const box = el('div', { class: 'embeds' });
  const grow = on.keepBottom || ((change) => change());
  import('./embeds.js').then(
    // An AutoMod alert's quick actions only on AutoMod's own messages (a name no account can take:
    // no dot in a username), never on a look-alike card a bot or a webhook posts.
    (module) => grow(() => box.append(...module.buildEmbeds(m.embeds, on.mention, m.author?.username === `automod.${m.server_id}`))),
    () => box.append(el('span', { class: 'muted', text: '(a card of this message could not be shown: reload the page)' })),
  );
  return box;
}

/**
 * @param {Message} m
 * @param {Record<string, any>} on
 */
function replyPreview(m, on) {
  const p = m.reply_preview;
  // The server sends null once the message answered is deleted; reply_to stays.
  if (!p) return el('div', { class: 'reply-preview deleted' }, icon('reply', 'flip'), el('span', { text: 'deleted message' }));
  const blocked = p.author && isBlocked(p.author.user_id);
  return el(
    'button',
    { type: 'button', class: 'reply-preview', title: 'Show the message this answers', onclick: () => on.jump(p.id) },
    icon('reply', 'flip'),
    el('strong', { text: p.author ? displayName(p.author) : 'unknown' }),
    ' ',
    el('span', { class: blocked ? 'blocked-text' : null, text: blocked ? 'Blocked message' : p.content || '(attachment)' }),
  );
}

/**
 * @param {import('../../types/client').Attachment} a
 * @param {Record<string, any>} on
 */
function attachment(a, on) {
  const url = `/uploads/${encodeURIComponent(a.id)}`;
  const label = `${a.name} (${formatSize(a.size)})`;
  if (a.preview_kind === 'image') {
    const img = el('img', { src: url, alt: a.name, loading: 'lazy' });
    img.addEventListener('load', on.imageLoaded, { once: true });
    return el('button', { type: 'button', class: 'attachment image', title: label, 'aria-label': `Open image ${a.name}`, onclick: () => on.open(a) }, img);
  }
  if (a.preview_kind === 'audio' || a.preview_kind === 'video') {
    return el(
      'figure',
      { class: `attachment media ${a.preview_kind}` },
      el(a.preview_kind, { src: url, controls: true, preload: 'metadata' }),
      el(
        'figcaption',
        {},
        el('span', { class: 'file-name', text: a.name }),
        el('span', { class: 'muted', text: ` ${formatSize(a.size)}` }),
        el('a', { href: url, download: a.name, class: 'icon-link', 'aria-label': `Download ${a.name}`, title: 'Download' }, icon('download')),
      ),
    );
  }
  // Everything else (text, documents, SVG, unknown) is a download, never shown inline.
  return el(
    'a',
    { class: 'attachment file', href: url, download: a.name, title: `Download ${label}` },
    icon('file', 'file-icon'),
    el('span', { class: 'file-meta' }, el('span', { class: 'file-name', text: a.name }), el('span', { class: 'muted file-size', text: formatSize(a.size) })),
    icon('download', 'download-icon'),
  );
}

/**
 * Stickers (issue 50): images under the text, their name once deleted.
 * @param {NonNullable<Message['stickers']>} list
 */
function stickers(list) {
  return el(
    'div',
    { class: 'stickers' },
    list.map((s) =>
      s.available
        ? el('img', { class: 'sticker', src: s.url, alt: s.name, title: s.name, width: 160, height: 160 })
        : el('span', { class: 'sticker-gone', text: `[${s.name}]` }),
    ),
  );
}

/**
 * A poll (issue 50): each answer a button with its count and a bar of its share, the user's own
 * votes pressed; the total and when it ends below, with "End poll" for its author.
 * @param {NonNullable<Message['poll']>} p
 * @param {Record<string, any>} on
 */
function poll(p, on) {
  const total = p.results.reduce((n, x) => n + x.count, 0);
  const closed = p.ended || Date.parse(p.expires_at) <= Date.now();
  /** @type {Set<string>} */
  const mine = on.myVotes || new Set();
  return el(
    'div',
    { class: closed ? 'poll ended' : 'poll', role: 'group', 'aria-label': `Poll: ${p.question}` },
    el('p', { class: 'poll-question', text: p.question }),
    el('p', { class: 'poll-hint muted', text: closed ? 'Final results' : p.allow_multiselect ? 'Choose one or more answers' : 'Choose one answer' }),
    el(
      'ul',
      { class: 'poll-answers' },
      p.answers.map((a) => {
        const count = p.results.find((x) => x.answer_id === a.answer_id)?.count || 0;
        const share = total ? Math.round((count * 100) / total) : 0;
        const chosen = mine.has(a.answer_id);
        const bar = el('span', { class: 'poll-bar' });
        bar.style.width = `${share}%`; // the CSSOM, which the CSP allows (a style attribute it would refuse)
        const label = `${a.emoji ? `${a.emoji} ` : ''}${a.text}`;
        return el(
          'li',
          {},
          el(
            'button',
            {
              type: 'button',
              class: chosen ? 'poll-answer chosen' : 'poll-answer',
              'aria-pressed': String(chosen),
              'aria-label': `${label}: ${count} ${count === 1 ? 'vote' : 'votes'}${chosen ? ', including yours' : ''}`,
              'data-answer': a.answer_id,
              disabled: closed || !on.vote,
              onclick: () => on.vote(a.answer_id, !chosen),
            },
            bar,
            el('span', { class: 'poll-text', text: label }),
            el('span', { class: 'poll-count', text: String(count) }),
            el('span', { class: 'poll-share muted', text: `${share}%` }),
          ),
        );
      }),
    ),
    el(
      'p',
      { class: 'poll-foot muted' },
      `${total} ${total === 1 ? 'vote' : 'votes'} · ${closed ? 'the poll has ended' : `ends ${formatTime(p.expires_at)}`}`,
      on.endPoll && !closed ? el('button', { type: 'button', class: 'small poll-end', onclick: on.endPoll }, 'End poll') : null,
    ),
  );
}

/**
 * @param {Message} m
 * @param {Record<string, any>} on
 */
function reactions(m, on) {
  const list = el(
    'div',
    { class: 'reactions' },
    (m.reactions || []).map((reaction) => {
      const custom = typeof reaction.emoji === 'string' ? null : reaction.emoji;
      const label = custom ? `:${custom.name}:` : /** @type {string} */ (reaction.emoji);
      return el(
        'button',
        {
          type: 'button',
          class: reaction.reacted ? 'reaction reacted' : 'reaction',
          'aria-pressed': String(reaction.reacted),
          'aria-label': `${label} ${reaction.count}${reaction.reacted ? ', including you' : ''}`,
          title: reaction.reacted ? `Remove your ${label}` : `React with ${label}`,
          onclick: () => on.toggleReaction(reaction.emoji, !reaction.reacted),
          // Without add_reactions one may take one's own back (a deleted custom emoji too), not add.
          disabled: !reaction.reacted && (!on.react || (custom !== null && !custom.available)),
        },
        // A custom emoji is its image while it exists, its :name: as text once deleted.
        custom?.available
          ? el('img', { class: 'r-emoji custom-emoji', src: `/emojis/${custom.id}`, alt: label, width: 20, height: 20 })
          : el('span', { class: 'r-emoji', text: label }),
        ' ',
        el('span', { class: 'r-count', text: String(reaction.count) }),
      );
    }),
  );
  if ((m.reactions || []).length && on.react) {
    list.append(iconButton('smile', 'Add a reaction', (e) => on.react(e.currentTarget), { class: 'add-reaction' }));
  }
  return list;
}

/**
 * @param {Message} m
 * @param {Record<string, any>} on
 */
function toolbar(m, on) {
  return el(
    'div',
    { class: 'msg-toolbar', role: 'toolbar', 'aria-label': 'Message actions' },
    on.react ? iconButton('smile', 'React', (e) => on.react(e.currentTarget), { class: 'react-button' }) : null,
    iconButton('reply', 'Reply', on.reply),
    iconButton('dots', 'More actions', (e) => on.menu(e.currentTarget), { class: 'more-button', 'aria-haspopup': 'menu' }),
  );
}

/**
 * A message of a blocked user, collapsed until the reader asks to see it.
 * @param {Message} m
 * @param {{ continued: boolean, show: () => void }} on
 * @returns {HTMLLIElement}
 */
export function buildBlocked(m, on) {
  return el(
    'li',
    {
      class: `msg blocked-msg${on.continued ? ' continued' : ''}`,
      'data-id': m.id,
      tabIndex: -1,
      'aria-label': `Blocked message, ${formatTime(m.created_at)}`,
    },
    el('div', { class: 'msg-gutter' }, icon('hidden', 'blocked-icon')),
    el(
      'div',
      { class: 'msg-body' },
      el('span', { class: 'muted', text: 'Blocked message — ' }),
      el(
        'button',
        { type: 'button', class: 'link-button', onclick: on.show, 'aria-label': `Show the blocked message from ${formatTime(m.created_at)}` },
        'show',
      ),
    ),
  );
}
