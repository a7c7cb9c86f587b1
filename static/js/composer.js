// @ts-check
// A room's composer: text with drafts per room (kept across reloads), Enter to send (Shift+Enter,
// or the new-line button on a phone, for a new line), ↑ to edit the last message, files as chips
// (checked for count and size before anything is sent) with drag-and-drop and paste, uploads
// with a progress bar and Cancel, @ and : (custom emoji) autocomplete, the emoji picker, stickers
// and polls (composer-extras.js, loaded on first use), typing notices, and the
// rules on who may write: standing, a timeout in the server, a blocked DM partner, slow mode
// (a countdown after each message, and the server's Retry-After when it says "too soon").
// Sending never clears what was typed after it began. createComposer(root, room) makes the
// composer of a room (room.js): it writes to that room, and finds its parts under root by their
// data-part names.
import { api, upload } from './api.js';
import { el, iconButton, toast, pickEmoji, formatSize, formatTime, slowmodeLabel, standingLabel, findParts } from './ui.js';
import { icon } from './icons.js';
import { openPopup, closePopup, isOpen } from './popup.js';
import {
  state,
  on,
  emit,
  findServer,
  maySend,
  conversationTitle,
  findConversation,
  findChannel,
  findThread,
  canManageServer,
  dmPartner,
  isBlocked,
  displayName,
  mayIn,
} from './store.js';
import { setReply } from './room-state.js';

export const MAX_FILES = 5;
export const MAX_FILE_BYTES = 25 * 1024 * 1024;
export const MAX_CHARS = 4000;
const DRAFT_PREFIX = 'chat:draft:';
const TYPING_EVERY_MS = 3000;

const slowUntil = new Map(); // channel id -> when slow mode lets the user send again (ms)
const refused = new Map(); // room key -> why the server refused to let the user write there (403)
const coarse = matchMedia('(pointer: coarse)');
/** @type {import('./custom-emoji.js') | null} custom-emoji.js, loaded at the first `:` typed */
let customEmoji = null;

/**
 * How a message writes a custom emoji, as Discord: <:name:id>, <a:name:id> animated.
 * @param {{ id: string, name: string, animated: boolean }} emoji
 */
const emojiText = (emoji) => `<${emoji.animated ? 'a' : ''}:${emoji.name}:${emoji.id}>`;

/** The elements a composer uses, by their data-part names under its root. */
const PARTS = /** @type {const} */ ({
  form: ['composer', HTMLFormElement],
  text: ['composer-text', HTMLTextAreaElement],
  box: 'composer-box',
  chips: 'file-chips',
  counter: 'char-counter',
  uploads: 'uploads',
  notice: 'composer-notice',
  hint: 'slowmode-hint',
  send: ['send-button', HTMLButtonElement],
  attach: ['attach-button', HTMLButtonElement],
  files: ['composer-files', HTMLInputElement],
  emoji: ['emoji-button', HTMLButtonElement],
  extras: ['extras-button', HTMLButtonElement],
  newline: ['newline-button', HTMLButtonElement],
  replyBar: 'reply-bar',
  replyText: 'reply-text',
  replyCancel: ['reply-cancel', HTMLButtonElement],
});
let made = 0; // composers made: the first one's popup keeps the plain id

// ---- who may write here -----------------------------------------------------------------

function standingSentence(kind) {
  if (state.standing >= 3) return `Your account standing is ${standingLabel(state.standing)}: it does not allow sending messages.`;
  if (state.standing >= 2 && kind === 'conversation')
    return `Your account standing is ${standingLabel(state.standing)}: it does not allow sending direct or group messages.`;
  return '';
}

const slowmodeOf = (r) => (r.kind === 'channel' ? findChannel(r.serverId, r.channelId)?.slowmode_seconds || 0 : 0);
const exempt = (r) => canManageServer(findServer(r.serverId));

/**
 * The user's own timeout in the room's server, or null.
 * @param {import('../../types/room').Opened} r
 * @returns {string | null}
 */
function myTimeout(r) {
  if (r.kind !== 'channel') return null;
  const mine = (state.members.get(r.serverId) || []).find((m) => m.user_id === state.me.user_id);
  return mine?.timeout_until && Date.parse(mine.timeout_until) > Date.now() ? mine.timeout_until : null;
}

/**
 * "in 12 s", "in 5 min", "in 3 h".
 * @param {number} ms
 */
function inTime(ms) {
  const s = Math.max(1, Math.ceil(ms / 1000));
  if (s < 60) return `in ${s} s`;
  if (s < 3600) return `in ${Math.ceil(s / 60)} min`;
  return `in ${Math.round(s / 3600)} h`;
}

/**
 * What holds the user back in this room: {closed: why they cannot write here at all, notice:
 * what to show above the composer, hint: a quiet word inside the composer (slow mode while it
 * does not hold the user back), wait: true while slow mode counts down, ticking: a countdown
 * runs}. Only what stops or delays the user takes the line above the composer.
 * @param {import('../../types/room').Opened | null} r
 * @returns {{ closed?: string, notice?: string, hint?: [string, string], wait?: boolean, ticking?: boolean }}
 */
function writeRule(r) {
  if (!r) return {};
  if (!maySend(r.kind)) return { closed: standingSentence(r.kind) };
  const until = myTimeout(r);
  if (until) {
    return {
      closed: `You are timed out in this server until ${formatTime(until)}.`,
      notice: `You are timed out until ${formatTime(until)} (${inTime(Date.parse(until) - Date.now())}): you can read, but not write, react or type here.`,
      ticking: true,
    };
  }
  if (r.kind === 'channel' && (state.members.get(r.serverId) || []).find((m) => m.user_id === state.me.user_id)?.pending)
    return { closed: "Accept this server's rules first: you can read, but not write or react, until you do." };
  const gate = r.kind === 'channel' ? findServer(r.serverId)?.posting_gate : null;
  const gateLeft = gate?.until ? Date.parse(gate.until) - Date.now() : Infinity;
  if (gate && gateLeft > 0) {
    const why = `${gate.reason[0].toUpperCase()}${gate.reason.slice(1)}`;
    const when = gate.until ? `: you can post and react here ${inTime(gateLeft)} (${formatTime(gate.until)})` : ' before you post or react here';
    return { closed: `${why}${when}.`, notice: `${why}${when}.`, ticking: Boolean(gate.until) };
  }
  // Read-only: the composer's own words are the one notice (issue 47 #9).
  if (!mayIn(r, 'send_messages')) return { closed: 'This channel is read-only for you: you can read it, not write in it.' };
  if (r.kind === 'conversation') {
    const partner = dmPartner(findConversation(r.conversationId) || { kind: 'group' });
    if (partner && isBlocked(partner.user_id)) return { closed: `You blocked ${displayName(partner)}. Unblock them to write here.` };
    if (refused.has(r.key)) return { closed: refused.get(r.key) };
  }
  const slow = slowmodeOf(r);
  if (!slow) return {};
  if (exempt(r))
    return {
      hint: [`Slow mode ${slowmodeLabel(slow)}`, `Slow mode is on (one message every ${slowmodeLabel(slow)}); as an administrator you are not slowed.`],
    };
  const left = (slowUntil.get(r.channelId) || 0) - Date.now();
  if (left > 0) return { wait: true, ticking: true, notice: `Slow mode: you can send again ${inTime(left)}.` };
  return { hint: [`Slow mode ${slowmodeLabel(slow)}`, `Slow mode is on: one message every ${slowmodeLabel(slow)}.`] };
}

// ---- the composer -------------------------------------------------------------------------

/**
 * Makes the composer of a room under root; what it sends goes to what the room shows.
 * dropZone: where files may be dropped (the root, unless the page gives a larger element).
 * @param {HTMLElement} root
 * @param {import('../../types/room').Room} room
 * @param {{ dropZone?: HTMLElement }} [options]
 */
export function createComposer(root, room, { dropZone = root } = {}) {
  let files = []; // File objects waiting to be sent with the next message
  let lastTyping = 0;
  let ticker = 0; // redraws a countdown (slow mode, timeout) once a second while one runs
  const parts = findParts(root, PARTS);
  made += 1;
  const text = () => parts.text;
  for (const [part, name] of [
    ['attach', 'paperclip'],
    ['emoji', 'smile'],
    ['extras', 'plus'],
    ['newline', 'newline'],
    ['send', 'send'],
    ['replyCancel', 'x'],
  ]) {
    parts[part].replaceChildren(icon(name));
  }

  // ---- drafts -----------------------------------------------------------------------------

  function saveDraft() {
    const r = room.current;
    if (!r) return;
    const value = text().value;
    if (value) localStorage.setItem(DRAFT_PREFIX + r.key, value);
    else localStorage.removeItem(DRAFT_PREFIX + r.key);
  }

  function restoreDraft(r) {
    refused.delete(r.key); // asked again on the next try
    text().value = localStorage.getItem(DRAFT_PREFIX + r.key) || '';
    files = [];
    renderChips();
    updateCounter();
    updateComposer();
  }

  // ---- files ------------------------------------------------------------------------------

  /** Adds files after checking the caps; refusals are said at once, before any byte is sent. */
  function addFiles(list) {
    const problems = [];
    for (const file of list) {
      if (files.length >= MAX_FILES) {
        problems.push(`A message may carry at most ${MAX_FILES} files: ${file.name} was left out.`);
        continue;
      }
      if (file.size > MAX_FILE_BYTES) {
        problems.push(`${file.name} is ${formatSize(file.size)}; each file may be at most 25 MB.`);
        continue;
      }
      files.push(file);
    }
    renderChips();
    if (problems.length) toast(problems.join(' '));
    text().focus();
  }

  function renderChips() {
    const box = parts.chips;
    box.replaceChildren(
      ...files.map((file, i) =>
        el(
          'li',
          { class: 'chip' },
          icon(file.type.startsWith('image/') ? 'file' : 'paperclip'),
          el('span', { class: 'chip-name', text: file.name }),
          el('span', { class: 'chip-size muted', text: formatSize(file.size) }),
          iconButton(
            'x',
            `Remove ${file.name}`,
            () => {
              files.splice(i, 1);
              renderChips();
              text().focus();
            },
            { class: 'chip-remove' },
          ),
        ),
      ),
    );
    box.hidden = files.length === 0;
  }

  // ---- sending ----------------------------------------------------------------------------

  function updateCounter() {
    const n = [...text().value].length;
    const counter = parts.counter;
    counter.textContent = n > MAX_CHARS - 500 ? `${MAX_CHARS - n}` : '';
    counter.classList.toggle('over', n > MAX_CHARS);
  }

  /**
   * Puts a message that was not sent (refused, or its upload cancelled) back where it was written:
   * its text if the composer is empty, its files beside any chosen since, its reply if none is set.
   * If the user has moved to another room, the text waits there as that room's draft.
   */
  function putBack(r, content, sending, replyTo) {
    if (room.current !== r) {
      if (content && !localStorage.getItem(DRAFT_PREFIX + r.key)) localStorage.setItem(DRAFT_PREFIX + r.key, content);
      return;
    }
    if (!text().value) {
      text().value = content;
      saveDraft();
      updateCounter();
    }
    files = [...sending, ...files.filter((f) => !sending.includes(f))].slice(0, MAX_FILES);
    renderChips();
    if (replyTo && !r.replyTo) setReply(r, replyTo);
    text().focus();
  }

  /**
   * Sends what the composer holds. The text, files and reply are taken at once and the composer
   * is cleared, so the user can go on typing (or send again) while an upload runs; a failed or
   * cancelled send puts them back.
   */
  async function send() {
    const r = room.current;
    if (!r) return;
    const rule = writeRule(r);
    if (rule.closed) return toast(rule.closed);
    if (rule.wait) return updateComposer();
    const content = text().value;
    const sending = files;
    if (!content.trim() && sending.length === 0) return;
    if ([...content].length > MAX_CHARS) return toast(`A message may be at most ${MAX_CHARS} characters; this one has ${[...content].length}.`);
    const replyTo = r.replyTo;
    text().value = '';
    files = [];
    renderChips();
    saveDraft();
    updateCounter();
    setReply(r, null);
    const restore = (err) => {
      if (err.status === 429 && r.kind === 'channel' && slowmodeOf(r)) {
        // Slow mode: the server says when. The notice counts down instead of an error.
        slowUntil.set(r.channelId, Date.now() + (err.retryAfter || slowmodeOf(r)) * 1000);
        updateComposer();
      } else {
        toast(err.message);
        if (err.status === 403 && r.kind === 'conversation') {
          refused.set(r.key, err.message);
          updateComposer();
        }
      }
      putBack(r, content, sending, replyTo);
    };
    const sent = () => startSlowmode(r);
    if (sending.length === 0) {
      try {
        // Text alone goes as JSON: multipart encoding turns every line break into CRLF (HTML spec).
        const message = await api('POST', `${r.base}/messages`, { content, reply_to: replyTo ? replyTo.id : null });
        sent();
        room.addOwnMessage(message);
      } catch (err) {
        restore(err);
      }
      return;
    }
    const form = new FormData();
    form.append('content', content);
    if (replyTo) form.append('reply_to', replyTo.id);
    for (const file of sending) form.append('attachments', file, file.name);
    const total = sending.reduce((n, f) => n + f.size, 0);
    const bar = el('progress', { max: 100, value: 0, 'aria-label': 'Upload progress' });
    const label = el('span', {
      class: 'upload-label',
      text: `Uploading ${sending.length === 1 ? sending[0].name : `${sending.length} files`} · ${formatSize(total)}`,
    });
    const job = upload(`${r.base}/messages`, form, (sent, all) => {
      bar.value = Math.round((sent / all) * 100);
    });
    const row = el(
      'li',
      { class: 'upload' },
      icon('paperclip'),
      label,
      bar,
      el('button', { type: 'button', class: 'small', onclick: () => job.abort() }, 'Cancel'),
    );
    parts.uploads.append(row);
    try {
      const message = await job.promise;
      sent();
      room.addOwnMessage(message);
    } catch (err) {
      if (err.status === -1) {
        toast('Upload cancelled: your text and files are back in the composer.', false);
        putBack(r, content, sending, replyTo);
      } else {
        restore(err);
      }
    } finally {
      row.remove();
    }
  }

  function startSlowmode(r) {
    if (r.kind === 'channel' && slowmodeOf(r) && !exempt(r)) {
      slowUntil.set(r.channelId, Date.now() + slowmodeOf(r) * 1000);
      updateComposer();
    }
  }

  /**
   * Sends a message of a sticker or a poll (JSON: sticker_ids or poll), as a reply when one is
   * set; the text being typed stays. Resolves to whether it was sent.
   * @param {{ sticker_ids?: string[], poll?: object }} body
   */
  async function sendExtra(body) {
    const r = room.current;
    if (!r) return false;
    const rule = writeRule(r);
    if (rule.closed || rule.wait) {
      toast(rule.closed || rule.notice || 'Not yet.');
      return false;
    }
    try {
      const message = await api('POST', `${r.base}/messages`, { content: '', ...body, reply_to: r.replyTo ? r.replyTo.id : null });
      if (r.replyTo) setReply(r, null);
      startSlowmode(r);
      room.addOwnMessage(message);
      return true;
    } catch (err) {
      toast(err.message);
      return false;
    }
  }

  async function openExtras(anchor) {
    const r = room.current;
    if (!r) return;
    const { openExtrasMenu } = await import('./composer-extras.js');
    openExtrasMenu(anchor, { serverId: r.serverId || null, polls: mayIn(r, 'send_polls'), send: sendExtra });
  }

  // ---- typing, autocomplete ---------------------------------------------------------------

  function typing() {
    const r = room.current;
    if (!r || !text().value.trim() || writeRule(r).closed) return;
    const now = Date.now();
    if (now - lastTyping < TYPING_EVERY_MS) return;
    lastTyping = now;
    api('POST', `${r.base}/typing`).catch(() => {});
  }

  let suggest = null; // {start, items, index, emoji: custom emoji (:name) rather than people (@name)}
  let emojiAsked = false; // the custom emoji were asked for once (custom-emoji.js keeps them)
  const suggestId = made === 1 ? 'mention-suggest' : `mention-suggest-${made}`;
  const suggestBox = el('ul', { id: suggestId, class: 'popup suggest', role: 'listbox', 'aria-label': 'People to mention' });

  function candidates() {
    const r = room.current;
    if (!r) return [];
    if (r.kind === 'channel') {
      const members = state.members.get(r.serverId) || [];
      /** @type {{ user_id: string, username: string, display_name?: string | null, group?: boolean }[]} */
      const list = members.map((m) => ({ user_id: m.user_id, username: m.username, display_name: m.display_name }));
      // @everyone and @rolename (a mentionable role whose name can be typed) count only from who
      // has mention_everyone here (the owner and full server administrators always): to anyone
      // else they are not offered.
      if (mayIn(r, 'mention_everyone')) {
        list.push({ user_id: 'everyone', username: 'everyone', group: true });
        for (const role of state.roles.get(r.serverId) || []) {
          if (role.mentionable && /^[A-Za-z0-9_-]{3,32}$/.test(role.name)) list.push({ user_id: `role:${role.id}`, username: role.name, group: true });
        }
      }
      return list;
    }
    return findConversation(r.conversationId)?.members || [];
  }

  /**
   * `:na` offers the custom emoji of the user's servers whose names hold "na" (the room's server
   * first), as Discord's autocomplete; choosing one writes <:name:id>.
   * @param {string} before the text before the caret
   * @param {string} typed what follows the colon
   */
  function suggestEmoji(before, typed) {
    const r = room.current;
    if (!emojiAsked) {
      emojiAsked = true;
      import('./custom-emoji.js')
        .then((loaded) => (customEmoji = loaded).allCustomEmoji(r?.serverId))
        .then(() => {
          if (document.activeElement === text()) updateSuggest();
        });
    }
    if (!customEmoji) return hideSuggest();
    const partial = typed.toLowerCase();
    const known = customEmoji.knownCustomEmoji(r?.serverId);
    const items = [...known.filter((e) => e.name.toLowerCase().startsWith(partial)), ...known.filter((e) => e.name.toLowerCase().slice(1).includes(partial))]
      .filter((e, i, all) => all.indexOf(e) === i)
      .slice(0, 8);
    if (!items.length) return hideSuggest();
    suggest = { start: before.length - typed.length - 1, items, index: 0, emoji: true };
    showSuggest('Custom emoji');
  }

  function showSuggest(label) {
    suggestBox.setAttribute('aria-label', label);
    renderSuggest();
    if (!isOpen(suggestBox)) openPopup(suggestBox, parts.box, { focus: false });
    text().setAttribute('aria-controls', suggestId);
  }

  function updateSuggest() {
    const area = text();
    const before = area.value.slice(0, area.selectionStart);
    const colon = /(^|[^A-Za-z0-9_<:]):([A-Za-z0-9_]{2,32})$/.exec(before);
    if (colon) return suggestEmoji(before, colon[2]);
    const match = /(^|[^A-Za-z0-9_.@+-])@([A-Za-z0-9_-]{0,32})$/.exec(before);
    if (!match) return hideSuggest();
    const partial = match[2].toLowerCase();
    const items = candidates()
      .filter((u) => u.user_id !== state.me.user_id && (u.username.toLowerCase().startsWith(partial) || displayName(u).toLowerCase().startsWith(partial)))
      .sort((a, b) => a.username.localeCompare(b.username))
      .slice(0, 8);
    if (!items.length) return hideSuggest();
    suggest = { start: before.length - match[2].length - 1, items, index: 0 };
    showSuggest('People to mention');
  }

  function renderSuggest() {
    suggestBox.replaceChildren(
      ...suggest.items.map((u, i) =>
        el(
          'li',
          {
            role: 'option',
            id: `${suggestId}-${i}`,
            class: 'suggest-item',
            'aria-selected': String(i === suggest.index),
            onmousedown: (e) => {
              e.preventDefault();
              choose(i);
            },
          },
          suggest.emoji
            ? [
                el('img', { class: 'custom-emoji', src: u.url, alt: '', width: 20, height: 20 }),
                el('span', { class: 'suggest-name', text: ` :${u.name}:` }),
                el('span', { class: 'suggest-at', text: ` ${u.serverName}` }),
              ]
            : u.group
              ? [
                  el('span', { class: 'suggest-at', text: '@' }),
                  el('span', { text: u.username }),
                  u.user_id === 'everyone' ? null : el('span', { class: 'suggest-at', text: ' role' }),
                ]
              : [el('span', { class: 'suggest-name', text: displayName(u) }), el('span', { class: 'suggest-at', text: ` @${u.username}` })],
        ),
      ),
    );
    text().setAttribute('aria-activedescendant', `${suggestId}-${suggest.index}`);
  }

  function hideSuggest() {
    suggest = null;
    text().removeAttribute('aria-activedescendant');
    text().removeAttribute('aria-controls');
    if (isOpen(suggestBox)) closePopup();
  }

  function choose(i) {
    const area = text();
    const u = suggest.items[i];
    const end = area.selectionStart;
    const insert = suggest.emoji ? `${emojiText(u)} ` : `@${u.username} `;
    area.value = area.value.slice(0, suggest.start) + insert + area.value.slice(end);
    const caret = suggest.start + insert.length;
    area.setSelectionRange(caret, caret);
    hideSuggest();
    saveDraft();
    area.focus();
  }

  function insertAtCaret(value) {
    const area = text();
    const start = area.selectionStart ?? area.value.length;
    const end = area.selectionEnd ?? start;
    area.value = area.value.slice(0, start) + value + area.value.slice(end);
    area.setSelectionRange(start + value.length, start + value.length);
    area.focus();
    saveDraft();
    updateCounter();
  }

  /** Enables or disables the composer and says why, for what the room shows. */
  function updateComposer() {
    const r = room.current;
    const rule = writeRule(r);
    const offline = state.connection === 'signed-out' || state.connection === 'suspended';
    const closed = Boolean(rule.closed) || offline;
    text().disabled = closed;
    parts.send.disabled = closed || Boolean(rule.wait);
    parts.attach.disabled = closed || !mayIn(r, 'attach_files');
    parts.emoji.disabled = closed;
    parts.extras.disabled = closed;
    parts.newline.disabled = closed;
    if (rule.closed) text().placeholder = rule.closed;
    else if (r)
      text().placeholder = `Message ${r.kind === 'channel' ? `#${findChannel(r.serverId, r.channelId)?.name || findThread(r.serverId, r.channelId)?.name || ''}` : `@${conversationTitle(findConversation(r.conversationId) || { kind: 'group', name: '', members: [] })}`}`;
    parts.form.classList.toggle('blocked', closed);
    const notice = parts.notice;
    notice.replaceChildren(...(rule.notice ? [icon('clock'), el('span', { text: rule.notice })] : []));
    notice.hidden = !rule.notice;
    notice.classList.toggle('waiting', Boolean(rule.wait || rule.closed));
    const hint = parts.hint;
    hint.replaceChildren(
      ...(rule.hint ? [icon('clock'), el('span', { text: rule.hint[0] }), el('span', { class: 'visually-hidden', text: `: ${rule.hint[1]}` })] : []),
    );
    hint.title = rule.hint ? rule.hint[1] : '';
    hint.hidden = !rule.hint;
    clearTimeout(ticker);
    if (rule.ticking) {
      ticker = setTimeout(() => {
        const before = Boolean(myTimeout(r));
        updateComposer();
        // A timeout just ended: the member list drops its mark too.
        if (before !== Boolean(myTimeout(r)) && r.serverId) emit('members', r.serverId);
      }, 1000);
    }
  }

  /** Each server's posting_gate as the server sees it now (GET /api/servers answers the caller's own). */
  function refreshGates() {
    api('GET', '/api/servers')
      .then((/** @type {{ id: string, posting_gate: import('../../types/client').ServerEntry['posting_gate'] }[]} */ list) => {
        for (const entry of list) {
          const server = findServer(entry.id);
          if (server) server.posting_gate = entry.posting_gate;
        }
        updateComposer();
      })
      .catch(() => {});
  }

  /** The reply bar says what the room's reply is to (room.setReply), or hides. */
  function showReply(message) {
    parts.replyBar.hidden = !message;
    if (message) {
      const preview = message.content ? message.content.slice(0, 80) : '(attachment)';
      parts.replyText.replaceChildren('Replying to ', el('strong', { text: displayName(message.author) }), `: ${preview}`);
      text().focus();
    }
  }

  // ---- wiring -----------------------------------------------------------------------------

  const area = text();
  parts.form.addEventListener('submit', (e) => {
    e.preventDefault();
    send();
  });
  area.addEventListener('keydown', (e) => {
    if (suggest) {
      if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
        e.preventDefault();
        suggest.index = (suggest.index + (e.key === 'ArrowDown' ? 1 : -1) + suggest.items.length) % suggest.items.length;
        return renderSuggest();
      }
      if (e.key === 'Enter' || e.key === 'Tab') {
        e.preventDefault();
        return choose(suggest.index);
      }
      if (e.key === 'Escape') {
        e.preventDefault();
        return hideSuggest();
      }
    }
    if (e.key === 'Escape' && room.current?.replyTo) {
      e.preventDefault();
      setReply(room.current, null);
      return;
    }
    if (e.key === 'ArrowUp' && !area.value && !e.shiftKey && !e.altKey && !e.ctrlKey && !e.metaKey) {
      if (room.editLastOwn()) e.preventDefault();
      return;
    }
    // On a touch screen the keyboard's Enter makes a new line and the send button sends.
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing && !coarse.matches) {
      e.preventDefault();
      send();
    }
  });
  area.addEventListener('input', () => {
    saveDraft();
    updateCounter();
    typing();
    updateSuggest();
  });
  area.addEventListener('click', updateSuggest);
  area.addEventListener('blur', () =>
    setTimeout(() => {
      if (document.activeElement !== area) hideSuggest();
    }, 100),
  );
  area.addEventListener('paste', (e) => {
    const pasted = [...(e.clipboardData?.files || [])];
    if (pasted.length) {
      e.preventDefault();
      addFiles(pasted);
    }
  });
  parts.attach.addEventListener('click', () => parts.files.click());
  parts.files.addEventListener('change', () => {
    addFiles([...parts.files.files]);
    parts.files.value = '';
  });
  parts.emoji.addEventListener('click', (e) =>
    pickEmoji(/** @type {Element} */ (e.currentTarget), (emoji) => insertAtCaret(typeof emoji === 'string' ? emoji : emojiText(emoji)), room.current?.serverId),
  );
  // Stickers and polls: one button (a phone's composer has little room), its menu loaded on use.
  parts.extras.addEventListener('click', (e) => openExtras(e.currentTarget));
  parts.newline.addEventListener('click', () => insertAtCaret('\n'));
  parts.replyCancel.addEventListener('click', () => setReply(room.current, null));

  // Files dropped anywhere on the room go to the composer.
  const zone = dropZone;
  const dropping = new AbortController(); // removes these listeners again (destroy)
  const { signal } = dropping;
  let depth = 0;
  zone.addEventListener(
    'dragenter',
    (e) => {
      if (![...(e.dataTransfer?.types || [])].includes('Files')) return;
      depth += 1;
      zone.classList.add('dropping');
    },
    { signal },
  );
  zone.addEventListener(
    'dragleave',
    () => {
      depth = Math.max(0, depth - 1);
      if (!depth) zone.classList.remove('dropping');
    },
    { signal },
  );
  zone.addEventListener(
    'dragover',
    (e) => {
      if ([...(e.dataTransfer?.types || [])].includes('Files')) e.preventDefault();
    },
    { signal },
  );
  zone.addEventListener(
    'drop',
    (e) => {
      depth = 0;
      zone.classList.remove('dropping');
      const dropped = [...(e.dataTransfer?.files || [])];
      if (!dropped.length) return;
      e.preventDefault();
      const r = room.current;
      if (r && !writeRule(r).closed) addFiles(dropped);
    },
    { signal },
  );
  const stops = [
    () => dropping.abort(),
    room.on('reply', showReply),
    on('account', updateComposer),
    on('connection', updateComposer),
    on('members', (serverId) => {
      if (room.current?.serverId === serverId) updateComposer();
    }),
    on('nav', updateComposer), // slow mode or a channel's name changed; a DM was opened
    on('blocks', updateComposer),
    // The server's verification level changed, or the user's roles (a moderator is exempt): their gate anew.
    on('gate', refreshGates),
  ];
  return {
    /** A place was opened in the room: its draft back in the field, no files, the rules applied. */
    restoreDraft,
    /** Enables or disables the composer and says why, for what the room shows. */
    update: updateComposer,
    addFiles,
    /**
     * What another app shared (share.js): the text after any draft, the files as chips; nothing
     * is sent until the user sends it.
     * @param {string} value
     * @param {File[]} shared
     */
    share: (value, shared) => {
      const area = text();
      if (value) area.value = area.value ? `${area.value}\n${value}` : value;
      updateCounter();
      saveDraft();
      if (shared.length) addFiles(shared);
      area.focus();
    },
    destroy: () => {
      clearTimeout(ticker);
      for (const stop of stops) stop();
    },
  };
}
