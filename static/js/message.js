// One message as DOM. Pure rendering: what its buttons do comes from the caller (room.js).
// Everything users wrote goes in as text; attachment URLs are built from the id alone.
import { el, formatTime, formatSize } from './ui.js';

const QUICK_EMOJI = ['👍', '❤️', '😂', '🎉', '😮', '😢'];

/**
 * m: a message record. on: {mine, canDelete, canReport, reply(), react(emoji, add), edit(),
 * remove(), report(), jump(id), imageLoaded()}.
 */
export function buildMessage(m, on) {
  const item = el('li', { class: on.mine ? 'msg mine' : 'msg', 'data-id': m.id });
  item.append(
    el('div', { class: 'msg-head' },
      el('span', { class: 'author', text: m.author ? m.author.username : 'unknown' }),
      el('time', { dateTime: m.created_at, title: new Date(m.created_at).toLocaleString(), text: formatTime(m.created_at) }),
      m.edited_at && el('span', { class: 'edited', title: `edited ${new Date(m.edited_at).toLocaleString()}`, text: '(edited)' })),
  );
  if (m.reply_to) item.append(replyPreview(m, on));
  if (m.content) item.append(el('div', { class: 'content', text: m.content }));
  if (m.attachments && m.attachments.length) {
    item.append(el('div', { class: 'attachments' }, m.attachments.map((a) => attachment(a, on))));
  }
  item.append(reactions(m, on), tools(m, on));
  return item;
}

function replyPreview(m, on) {
  const p = m.reply_preview;
  // The server sends null once the message answered is deleted; reply_to stays.
  if (!p) return el('div', { class: 'reply-preview deleted', text: '↪ deleted message' });
  return el('button', { type: 'button', class: 'reply-preview', title: 'Show the message this answers', onclick: () => on.jump(p.id) },
    '↪ ', el('strong', { text: p.author ? p.author.username : 'unknown' }), ' ', el('span', { text: p.content }));
}

function attachment(a, on) {
  const url = `/uploads/${encodeURIComponent(a.id)}`;
  const label = `${a.name} (${formatSize(a.size)})`;
  if (a.preview_kind === 'image') {
    const img = el('img', { src: url, alt: a.name, loading: 'lazy' });
    img.addEventListener('load', on.imageLoaded, { once: true });
    return el('a', { class: 'attachment image', href: url, target: '_blank', rel: 'noopener', title: label }, img);
  }
  if (a.preview_kind === 'audio' || a.preview_kind === 'video') {
    return el('figure', { class: 'attachment' },
      el(a.preview_kind, { src: url, controls: true, preload: 'metadata' }),
      el('figcaption', { text: label }));
  }
  // Everything else (text, documents, SVG, unknown) is a download, never shown inline.
  return el('a', { class: 'attachment file', href: url, download: a.name }, `⭳ ${a.name}`, el('small', { text: ` ${formatSize(a.size)}` }));
}

function reactions(m, on) {
  return el('div', { class: 'reactions' }, (m.reactions || []).map((reaction) => el('button', {
    type: 'button',
    class: reaction.reacted ? 'reaction reacted' : 'reaction',
    'aria-pressed': String(reaction.reacted),
    title: reaction.reacted ? `Remove your ${reaction.emoji}` : `React with ${reaction.emoji}`,
    onclick: () => on.react(reaction.emoji, !reaction.reacted),
  }, `${reaction.emoji} ${reaction.count}`)));
}

function tools(m, on) {
  const picker = el('div', { class: 'emoji-picker', hidden: true, role: 'group', 'aria-label': 'Pick a reaction' },
    QUICK_EMOJI.map((emoji) => el('button', {
      type: 'button',
      class: 'emoji',
      'aria-label': `React with ${emoji}`,
      title: `React with ${emoji}`,
      onclick: () => {
        picker.hidden = true;
        const existing = (m.reactions || []).find((x) => x.emoji === emoji);
        on.react(emoji, !(existing && existing.reacted));
      },
    }, emoji)));
  const toggle = el('button', { type: 'button', class: 'small', 'aria-expanded': 'false' }, 'React');
  toggle.addEventListener('click', () => {
    picker.hidden = !picker.hidden;
    toggle.setAttribute('aria-expanded', String(!picker.hidden));
  });
  const actions = el('div', { class: 'msg-actions' },
    el('button', { type: 'button', class: 'small', onclick: on.reply }, 'Reply'),
    toggle,
    on.mine && el('button', { type: 'button', class: 'small', onclick: on.edit }, 'Edit'),
    on.canDelete && el('button', { type: 'button', class: 'small danger', onclick: on.remove }, 'Delete'),
    on.canReport && el('button', { type: 'button', class: 'small', onclick: on.report }, 'Report'));
  return el('div', { class: 'msg-tools' }, actions, picker);
}
