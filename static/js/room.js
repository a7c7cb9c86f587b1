// The open channel or conversation: its history, its live socket and the composer.
// One room is open at a time; openRoom() replaces it.
import { api, query } from './api.js';
import { $, el, notify, ask } from './ui.js';
import { buildMessage } from './message.js';

const PAGE_SIZE = 50;
const CATCH_UP_PAGE = 100;
const MAX_FILES = 5;

/**
 * The open room: {base, wsPath, title, me, canModerate, reportType, messages: Map id -> record,
 * socket, retries, timer, closed, replyTo, editing}. `base` is the REST path the messages live
 * under (…/channels/{id} or /api/conversations/{id}).
 */
let room = null;

export function openRoom(options) {
  closeRoom();
  const r = { ...options, messages: new Map(), retries: 0, timer: 0, closed: false, replyTo: null, editing: null };
  room = r;
  $('room-title').textContent = options.title;
  $('messages').replaceChildren();
  $('load-older').hidden = true;
  $('history-start').hidden = true;
  $('no-room').hidden = true;
  $('room').hidden = false;
  setReply(r, null);
  setLive('connecting…');
  r.loading = loadNewest(r).catch((err) => notify(err.message));
  connect(r);
}

export function closeRoom() {
  if (!room) return;
  const r = room;
  room = null;
  r.closed = true;
  clearTimeout(r.timer);
  closeSocket(r.socket);
  $('room').hidden = true;
  $('no-room').hidden = false;
}

// Closing a socket that is still connecting makes the browser log an error: let it open first.
function closeSocket(ws) {
  if (!ws) return;
  if (ws.readyState === WebSocket.CONNECTING) ws.addEventListener('open', () => ws.close(1000));
  else if (ws.readyState === WebSocket.OPEN) ws.close(1000);
}

function setLive(text) {
  $('live-state').textContent = text;
  $('live-state').classList.toggle('ok', text === 'live');
}

// ---- history ----------------------------------------------------------------------------

/** Replaces the list with the newest page (oldest of it at the top). */
async function loadNewest(r) {
  const page = await api('GET', `${r.base}/messages${query({ limit: PAGE_SIZE })}`);
  if (r.closed) return;
  r.messages.clear();
  $('messages').replaceChildren();
  for (const message of page.reverse()) addMessage(r, message, false);
  showHistoryEdge(page.length === PAGE_SIZE);
  scrollToBottom();
}

function showHistoryEdge(hasOlder) {
  $('load-older').hidden = !hasOlder;
  $('history-start').hidden = hasOlder;
}

async function loadOlder() {
  const r = room;
  if (!r) return;
  const button = $('load-older');
  button.disabled = true;
  try {
    // The oldest message may have been deleted meanwhile (400): try the next one we hold.
    const ids = [...$('messages').children].map((li) => li.dataset.id);
    let page = null;
    for (const id of ids.slice(0, 5)) {
      try {
        page = await api('GET', `${r.base}/messages${query({ before: id, limit: PAGE_SIZE })}`);
        break;
      } catch (err) {
        if (err.status !== 400) throw err;
      }
    }
    if (r.closed || !page) return;
    const scroller = $('message-scroll');
    const fromBottom = scroller.scrollHeight - scroller.scrollTop;
    const list = $('messages');
    for (const message of page) {
      if (r.messages.has(message.id)) continue;
      r.messages.set(message.id, message);
      list.prepend(renderMessage(r, message));
    }
    scroller.scrollTop = scroller.scrollHeight - fromBottom; // keep what the reader was looking at
    showHistoryEdge(page.length === PAGE_SIZE);
  } catch (err) {
    notify(err.message);
  } finally {
    button.disabled = false;
  }
}

/** Everything posted after the newest message we hold, oldest first. */
async function catchUp(r) {
  const last = $('messages').lastElementChild;
  if (!last) return loadNewest(r);
  let after = last.dataset.id;
  for (;;) {
    let page;
    try {
      page = await api('GET', `${r.base}/messages${query({ after, limit: CATCH_UP_PAGE })}`);
    } catch (err) {
      // 400: our newest message was deleted meanwhile, so the server cannot say what is after it.
      if (err.status === 400) return loadNewest(r);
      throw err;
    }
    if (r.closed) return;
    for (const message of page) addMessage(r, message, true);
    if (page.length < CATCH_UP_PAGE) return;
    after = page[page.length - 1].id;
  }
}

// ---- live socket --------------------------------------------------------------------------

function connect(r) {
  const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
  const ws = new WebSocket(`${scheme}//${location.host}${r.wsPath}`);
  r.socket = ws;
  // Events that arrive while we catch up over REST wait here, so none falls in between.
  let buffer = [];

  ws.addEventListener('message', (e) => {
    let event;
    try {
      event = JSON.parse(e.data);
    } catch {
      return;
    }
    if (buffer) buffer.push(event);
    else applyEvent(r, event);
  });

  ws.addEventListener('open', async () => {
    r.retries = 0;
    setLive('live');
    try {
      await r.loading;
      await catchUp(r);
    } catch (err) {
      notify(err.message);
    }
    if (r.closed || r.socket !== ws) return;
    for (const event of buffer) applyEvent(r, event);
    buffer = null;
  });

  ws.addEventListener('close', (e) => {
    if (r.closed || r.socket !== ws) return;
    if (e.code === 4001) {
      setLive('signed out');
      notify('Your session has ended. Sign in again.');
      return;
    }
    if (e.code === 4003) {
      setLive('no access');
      notify('You no longer have access to this conversation or server.');
      return;
    }
    // Backoff with jitter: 1 s, 2 s, 4 s … up to 30 s.
    const delay = Math.min(30000, 1000 * 2 ** r.retries) * (0.75 + Math.random() / 4);
    r.retries += 1;
    setLive(`offline, retrying in ${Math.round(delay / 1000)} s`);
    r.timer = setTimeout(() => {
      if (!r.closed) {
        r.loading = Promise.resolve();
        connect(r);
      }
    }, delay);
  });
}

function applyEvent(r, event) {
  if (!event || typeof event.id !== 'string') return;
  if (!event.event) addMessage(r, event, true);
  else if (event.event === 'edited' || event.event === 'reaction') replaceMessage(r, event);
  else if (event.event === 'deleted') removeMessage(r, event.id);
}

// ---- the list -----------------------------------------------------------------------------

function nearBottom() {
  const s = $('message-scroll');
  return s.scrollHeight - s.scrollTop - s.clientHeight < 80;
}

function scrollToBottom() {
  const s = $('message-scroll');
  s.scrollTop = s.scrollHeight;
}

/** Appends a message unless it is already shown (the socket and our own POST both bring it). */
function addMessage(r, message, follow) {
  if (r.messages.has(message.id)) return;
  const stick = follow && nearBottom();
  r.messages.set(message.id, message);
  $('messages').append(renderMessage(r, message));
  if (stick) scrollToBottom();
}

function findItem(id) {
  return [...$('messages').children].find((li) => li.dataset.id === id) || null;
}

function replaceMessage(r, message) {
  const { event, ...record } = message;
  if (!r.messages.has(record.id)) return;
  r.messages.set(record.id, record);
  if (r.editing === record.id) return; // redrawn when the edit ends
  findItem(record.id)?.replaceWith(renderMessage(r, record));
}

function removeMessage(r, id) {
  if (!r.messages.delete(id)) return;
  findItem(id)?.remove();
  if (r.editing === id) r.editing = null;
  if (r.replyTo && r.replyTo.id === id) setReply(r, null);
  // Replies to it now show "deleted message", as the server will say from now on.
  for (const [otherId, other] of r.messages) {
    if (other.reply_to === id && other.reply_preview) {
      const updated = { ...other, reply_preview: null };
      r.messages.set(otherId, updated);
      findItem(otherId)?.replaceWith(renderMessage(r, updated));
    }
  }
}

// ---- what a message's buttons do --------------------------------------------------------------

/** The message as DOM, with its buttons wired to this room. */
function renderMessage(r, m) {
  const mine = m.author_id === r.me.user_id;
  return buildMessage(m, {
    mine,
    canDelete: mine || r.canModerate,
    canReport: !mine,
    reply: () => setReply(r, m),
    react: (emoji, add) => react(r, m.id, emoji, add),
    edit: () => startEdit(r, m),
    remove: () => deleteMessage(r, m),
    report: () => report(r, m),
    jump: jumpTo,
    imageLoaded: () => { if (nearBottom()) scrollToBottom(); },
  });
}

function jumpTo(id) {
  const target = findItem(id);
  if (!target) return notify('That message is further back: load older messages to see it.', false);
  target.scrollIntoView({ block: 'center' });
  target.classList.add('flash');
  setTimeout(() => target.classList.remove('flash'), 1500);
}

async function react(r, id, emoji, add) {
  try {
    const updated = await api(add ? 'PUT' : 'DELETE', `${r.base}/messages/${id}/reactions`, { emoji });
    replaceMessage(r, updated);
  } catch (err) {
    notify(err.message);
  }
}

async function deleteMessage(r, m) {
  const answer = await ask({ title: 'Delete this message?', submit: 'Delete', confirm: true });
  if (answer === null) return;
  try {
    await api('DELETE', `${r.base}/messages/${m.id}`);
    removeMessage(r, m.id);
  } catch (err) {
    notify(err.message);
  }
}

async function report(r, m) {
  const reason = await ask({ title: `Report ${m.author.username}'s message`, label: 'What is wrong with it?', submit: 'Report' });
  if (reason === null) return;
  try {
    await api('POST', '/api/reports', { type: r.reportType, target: m.id, reason });
    notify('Reported. The administrators will have a look.', false);
  } catch (err) {
    notify(err.message);
  }
}

function startEdit(r, m) {
  const item = findItem(m.id);
  if (!item || r.editing) return;
  r.editing = m.id;
  const text = el('textarea', { value: m.content, rows: 3, maxLength: 4000, 'aria-label': 'Edit message' });
  const finish = () => {
    r.editing = null;
    const latest = r.messages.get(m.id);
    if (latest) findItem(m.id)?.replaceWith(renderMessage(r, latest));
  };
  const form = el('form', { class: 'edit-form' }, text,
    el('div', { class: 'button-row' },
      el('button', { type: 'button', class: 'small', onclick: finish }, 'Cancel'),
      el('button', { type: 'submit', class: 'small primary' }, 'Save')));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    try {
      const updated = await api('PUT', `${r.base}/messages/${m.id}`, { content: text.value });
      r.messages.set(updated.id, updated);
      finish();
    } catch (err) {
      notify(err.message);
    }
  });
  text.addEventListener('keydown', (e) => {
    if (e.key === 'Escape') finish();
    else if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      form.requestSubmit();
    }
  });
  const content = item.querySelector('.content');
  if (content) content.replaceWith(form);
  else item.querySelector('.msg-head').after(form);
  text.focus();
}

// ---- composer -----------------------------------------------------------------------------

function setReply(r, message) {
  r.replyTo = message;
  $('reply-bar').hidden = !message;
  if (message) {
    const preview = message.content ? message.content.slice(0, 80) : '(attachment)';
    $('reply-text').textContent = `Replying to ${message.author.username}: ${preview}`;
    $('composer-text').focus();
  }
}

async function send(e) {
  e.preventDefault();
  const r = room;
  if (!r || r.sending) return; // Enter pressed again while the first send is on its way
  const text = $('composer-text');
  const files = $('composer-files');
  if (!text.value.trim() && files.files.length === 0) return;
  if (files.files.length > MAX_FILES) return notify(`A message may carry at most ${MAX_FILES} files.`);
  // Text alone goes as JSON: multipart encoding turns every line break into CRLF (HTML spec).
  let body = { content: text.value, reply_to: r.replyTo ? r.replyTo.id : null };
  if (files.files.length) {
    body = new FormData();
    body.append('content', text.value);
    if (r.replyTo) body.append('reply_to', r.replyTo.id);
    for (const file of files.files) body.append('attachments', file, file.name);
  }
  const button = $('send-button');
  button.disabled = true;
  r.sending = true;
  try {
    const message = await api('POST', `${r.base}/messages`, body);
    text.value = '';
    files.value = '';
    setReply(r, null);
    if (room === r) {
      addMessage(r, message, false);
      scrollToBottom();
    }
  } catch (err) {
    notify(err.message);
  } finally {
    r.sending = false;
    button.disabled = false;
    text.focus();
  }
}

$('composer').addEventListener('submit', send);
$('composer-text').addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
    e.preventDefault();
    $('composer').requestSubmit();
  }
});
$('reply-cancel').addEventListener('click', () => room && setReply(room, null));
$('load-older').addEventListener('click', loadOlder);
