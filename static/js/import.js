// @ts-check
// The import page (/import): a DiscordChatExporter export uploaded as a zip (with upload progress),
// the server's dry run shown as a table per channel, then the import started with its two choices
// and followed to its end ("N of M messages", asked every second). Below, the user's earlier
// imports; one still running when the page opens is followed again. "Who sees what" (also at
// /import?server=ID, where the command line's report points): an import opens nothing to everyone,
// and this one screen lets the owner tick the categories and channels everyone may see.
import './theme.js';
import { api, upload, query } from './api.js';
import { $, el, showText, confirmAction, formatTime, formatSize } from './ui.js';

const POLL_MS = 1000;
const STATUS_WORDS = {
  checked: 'checked, not started',
  running: 'importing',
  interrupted: 'interrupted (run the same command again)',
  done: 'done',
  failed: 'failed',
};
const BECOMES = {
  // A thread whose parent is not in the export is a channel named after its parent, as before threads.
  channel: (c) => (c.type.endsWith('Thread') ? `a channel named “${c.parent ? `${c.parent} › ` : ''}${c.name}”` : 'a channel'),
  forum: () => 'a forum',
  thread: (c) => `a thread of #${c.parent}`,
  post: (c) => `a post of the forum #${c.parent}`,
  voice: () => 'a channel for the voice channel’s text',
  nothing: () => 'nothing (not carried)',
};

let shown = null; // the import on screen
let sending = null; // {abort} of the upload under way
let pollTimer = 0;

const day = (iso) => new Date(iso).toLocaleDateString([], { year: 'numeric', month: 'short', day: 'numeric' });
const plural = (n, one, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

// ---- upload -----------------------------------------------------------------------------

function uploadWords(err) {
  if (err.status === 413) return `That file is too large for this server (${err.reason}).`;
  if (err.status === 429 && /being uploaded or checked/.test(err.reason)) return 'Another export of yours is being checked: upload this one when it is done.';
  if (err.status === 429)
    return `You uploaded several exports recently.${err.retryAfter ? ` Try again in ${Math.ceil(err.retryAfter / 60)} min.` : ' Try again later.'}`;
  if (err.status === 503) return 'The server is busy checking other exports. Try again in a few minutes.';
  return err.message;
}

async function sendExport(e) {
  e.preventDefault();
  const file = $('import-file', HTMLInputElement).files[0];
  if (!file) return void showText('upload-result', 'Choose the zip of the export first.');
  showText('upload-result', '');
  const form = new FormData();
  form.append('export', file, file.name);
  const name = $('import-name', HTMLInputElement).value.trim();
  $('upload-button', HTMLButtonElement).disabled = true;
  $('upload-cancel').hidden = false;
  $('upload-state').hidden = false;
  $('upload-progress', HTMLProgressElement).value = 0;
  $('upload-text').textContent = `Sending ${file.name} (${formatSize(file.size)})…`;
  sending = upload(`/api/imports${query({ server_name: name })}`, form, (sent, total) => {
    $('upload-progress', HTMLProgressElement).value = sent / total;
    $('upload-text').textContent = sent < total ? `${formatSize(sent)} of ${formatSize(total)} sent` : 'Uploaded. The server is reading the export…';
  });
  try {
    const record = await sending.promise;
    $('upload-form', HTMLFormElement).reset();
    show(record);
    loadList();
  } catch (err) {
    showText('upload-result', uploadWords(err));
  } finally {
    sending = null;
    $('upload-button', HTMLButtonElement).disabled = false;
    $('upload-cancel').hidden = true;
    $('upload-state').hidden = true;
  }
}

// ---- the dry run ------------------------------------------------------------------------

function channelRow(c) {
  const range = c.first ? (day(c.first) === day(c.last) ? day(c.first) : `${day(c.first)} – ${day(c.last)}`) : 'empty';
  return el(
    'tr',
    { class: c.becomes === 'nothing' ? 'not-carried' : null },
    el(
      'td',
      {},
      el('span', { class: 'channel-name', text: `#${c.name}` }),
      el('span', { class: 'muted sub', text: `${c.type}${c.parent ? `, under ${c.parent}` : ''}` }),
    ),
    el('td', { text: (BECOMES[c.becomes] || BECOMES.channel)(c) }),
    el('td', { class: 'number', text: String(c.messages) }),
    el('td', { class: 'number', text: String(c.authors) }),
    el('td', {}, `${c.attachments.found} / `, el('span', { class: c.attachments.missing ? 'missing' : null, text: String(c.attachments.missing) })),
    el('td', { text: range }),
  );
}

function showReport(record) {
  const plan = record.plan;
  const messages = plan.channels.reduce((n, c) => n + c.messages, 0);
  $('report-summary').replaceChildren(
    el('strong', { text: plan.guild.name }),
    ` from Discord: ${plural(plan.channels.length, 'channel')}, ${plural(plan.categories.length, 'category', 'categories')}, ${plural(messages, 'message')}, ${plural(plan.people, 'person', 'people')}, ${plural(plan.roles, 'role')}. It becomes a new server named `,
    el('strong', { text: record.server_name }),
    '.',
  );
  $('report-rows').replaceChildren(...plan.channels.map(channelRow));
  $('not-carried').replaceChildren(...plan.notCarried.map((line) => el('li', { text: line })));
  $('not-carried-block').hidden = plan.notCarried.length === 0;
  showText('start-result', '');
}

async function startImport(e) {
  e.preventDefault();
  if (!shown) return;
  $('start-button', HTMLButtonElement).disabled = true;
  showText('start-result', '');
  try {
    const record = await api('POST', `/api/imports/${shown.id}/start`, {
      system: $('opt-system', HTMLInputElement).checked ? 'lines' : 'skip',
      package_claims: $('opt-package', HTMLInputElement).checked,
    });
    show(record);
    loadList();
  } catch (err) {
    showText('start-result', err.message);
  } finally {
    $('start-button', HTMLButtonElement).disabled = false;
  }
}

// ---- the import running, and its end -----------------------------------------------------

function showRun(record) {
  const { done, total } = record.progress;
  $('run-title').replaceChildren(
    'Importing ',
    el('strong', { text: record.guild.name }),
    ' into the new server ',
    el('strong', { text: record.server_name }),
    '.',
  );
  $('run-progress', HTMLProgressElement).max = Math.max(total, 1);
  $('run-progress', HTMLProgressElement).value = record.status === 'done' ? Math.max(total, 1) : done;
  $('run-text').textContent =
    record.status === 'running'
      ? `${done} of ${plural(total, 'message')}. You can leave this page: the import goes on, and this page follows it again when you come back.`
      : `${done} of ${plural(total, 'message')}.`;
  $('run-done').hidden = record.status !== 'done';
  // What came across of custom emoji, stickers and polls, and what stayed text.
  $('run-report').replaceChildren(...record.report.map((line) => el('li', { text: line })));
  if (record.status === 'done' && record.server_id) $('open-server', HTMLAnchorElement).href = `/?server=${encodeURIComponent(record.server_id)}`;
  showText('run-failed', record.status === 'failed' ? `The import failed: ${record.error || 'no reason was given'}.` : '');
}

/** Shows an import where it is: its dry run to start, or its progress (followed while it runs). */
function show(record) {
  shown = record;
  clearTimeout(pollTimer);
  $('report').hidden = record.status !== 'checked';
  $('run').hidden = record.status === 'checked';
  if (record.status === 'checked') {
    showReport(record);
    $('report').scrollIntoView({ block: 'start' });
  } else {
    showRun(record);
    if (record.server_id && (record.server_id !== visibleOf || record.status === 'done')) showVisibility(record.server_id);
  }
  if (record.status === 'running') pollTimer = setTimeout(() => follow(record.id), POLL_MS);
}

async function follow(id) {
  if (shown?.id !== id) return;
  try {
    const record = await api('GET', `/api/imports/${id}`);
    if (shown?.id !== id) return;
    show(record);
    if (record.status !== 'running') loadList();
  } catch (err) {
    if (err.status === 404) return void showText('run-failed', 'This import is gone.');
    // The server may be restarting (an import resumes at the next start): ask again in a moment.
    pollTimer = setTimeout(() => follow(id), POLL_MS * 3);
  }
}

// ---- who sees what ----------------------------------------------------------------------

let visibleOf = null; // the server whose channels "Who sees what" shows

/** The everyone overwrite of `list` with view_channel denied (hidden) or not, the rest kept. */
function everyoneWith(list, serverId, visible) {
  const now = list.find((o) => o.target_id === serverId) || { allow: [], deny: [] };
  const allow = now.allow.filter((f) => f !== 'view_channel');
  const deny = now.deny.filter((f) => f !== 'view_channel');
  if (!visible) deny.push('view_channel');
  return { existed: list.some((o) => o.target_id === serverId), allow, deny };
}

/** Shows or hides a category or channel (`path`: its overwrites) for everyone of the server. */
async function setVisible(serverId, path, visible) {
  showText('visibility-result', '');
  try {
    const next = everyoneWith(await api('GET', path), serverId, visible);
    if (next.allow.length || next.deny.length) await api('PUT', `${path}/${encodeURIComponent(serverId)}`, { allow: next.allow, deny: next.deny });
    else if (next.existed) await api('DELETE', `${path}/${encodeURIComponent(serverId)}`);
  } catch (err) {
    showText('visibility-result', err.message);
  }
  await showVisibility(serverId);
}

function visibilityLine(id, label, note, visible, path, serverId) {
  return el(
    'div',
    { class: 'check-line' },
    el('input', { id, type: 'checkbox', checked: visible, onchange: (e) => setVisible(serverId, path, e.target.checked) }),
    el('label', { for: id, text: label }),
    note ? el('span', { class: 'muted', text: note }) : null,
  );
}

/** The screen: each category and its channels, and the channels under none, with whether everyone sees them. */
async function showVisibility(serverId) {
  visibleOf = serverId;
  const base = `/api/servers/${encodeURIComponent(serverId)}`;
  let server, categories, channels;
  try {
    [server, categories, channels] = await Promise.all([api('GET', base), api('GET', `${base}/categories`), api('GET', `${base}/channels`)]);
  } catch (err) {
    $('visibility').hidden = false;
    return void showText('visibility-result', err.status === 404 ? 'That server is not there, or you are not its owner.' : err.message);
  }
  const categoryOverwrites = await Promise.all(categories.map((c) => api('GET', `${base}/categories/${c.id}/overwrites`).catch(() => [])));
  if (visibleOf !== serverId) return;
  const channelLine = (c) =>
    el(
      'li',
      {},
      visibilityLine(
        `see-${c.id}`,
        `#${c.name}`,
        c.category_id && c.permissions_synced ? 'follows its category' : null,
        !c.private,
        `${base}/channels/${c.id}/overwrites`,
        serverId,
      ),
    );
  const items = categories.map((category, i) =>
    el(
      'li',
      { class: 'category-line' },
      visibilityLine(
        `see-${category.id}`,
        category.name,
        'category',
        !categoryOverwrites[i].find((o) => o.target_id === serverId)?.deny.includes('view_channel'),
        `${base}/categories/${category.id}/overwrites`,
        serverId,
      ),
      el('ul', {}, channels.filter((c) => c.category_id === category.id).map(channelLine)),
    ),
  );
  const loose = channels.filter((c) => !c.category_id || !categories.some((k) => k.id === c.category_id));
  $('visibility-server').textContent = server.name;
  $('visibility-list').replaceChildren(...items, ...loose.map(channelLine));
  $('visibility').hidden = false;
}

// ---- earlier imports ----------------------------------------------------------------------

async function discard(record) {
  const sure = await confirmAction(
    'Discard this import?',
    record.status === 'done'
      ? `It leaves this list. The server “${record.server_name}” it made stays.`
      : 'The uploaded export is deleted from the server. You can upload it again later.',
    'Discard',
  );
  if (!sure) return;
  try {
    await api('DELETE', `/api/imports/${record.id}`);
    if (shown?.id === record.id) {
      shown = null;
      $('report').hidden = true;
      $('run').hidden = true;
    }
  } catch (err) {
    showText('problem', err.message);
  }
  loadList();
}

function importItem(record) {
  const actions = [];
  if (record.status === 'checked') actions.push(el('button', { type: 'button', class: 'small primary', onclick: () => show(record) }, 'Review and start'));
  if (record.status === 'running') actions.push(el('button', { type: 'button', class: 'small', onclick: () => show(record) }, 'Follow'));
  if (record.status === 'done' && record.server_id)
    actions.push(el('a', { class: 'button small', href: `/?server=${encodeURIComponent(record.server_id)}` }, 'Open the server'));
  if (record.status !== 'running') actions.push(el('button', { type: 'button', class: 'small', onclick: () => discard(record) }, 'Discard'));
  return el(
    'li',
    { 'data-id': record.id },
    el(
      'div',
      { class: 'import-text' },
      el(
        'span',
        { class: 'import-title' },
        el('strong', { text: record.server_name }),
        ' ',
        el('span', { class: `badge status-${record.status}`, text: STATUS_WORDS[record.status] || record.status }),
      ),
      el('span', {
        class: 'muted',
        text: `from “${record.guild.name}”, uploaded ${formatTime(record.created_at)}${record.finished_at ? `, ended ${formatTime(record.finished_at)}` : ''}`,
      }),
      record.status === 'failed' && record.error ? el('span', { class: 'import-error', text: record.error }) : null,
    ),
    el('div', { class: 'button-row' }, actions),
  );
}

async function loadList() {
  try {
    const list = await api('GET', '/api/imports');
    $('import-list').replaceChildren(...list.map(importItem));
    $('no-imports').hidden = list.length > 0;
    return list;
  } catch (err) {
    showText('problem', err.message);
    return [];
  }
}

// ---- start ------------------------------------------------------------------------------

async function start() {
  let account;
  try {
    account = await api('GET', '/api/account');
  } catch (err) {
    showText('problem', err.status === 401 ? 'You are not signed in. Log in on the home page first, then come back here.' : err.message);
    return;
  }
  $('who').textContent = account.display_name || account.username;
  $('who').hidden = false;
  $('upload-form').addEventListener('submit', sendExport);
  $('upload-cancel').addEventListener('click', () => sending?.abort());
  $('start-form').addEventListener('submit', startImport);
  $('report-discard').addEventListener('click', () => shown && discard(shown));
  $('import').hidden = false;
  // An import still running (this page was closed, or the server restarted): follow it again.
  const running = (await loadList()).find((r) => r.status === 'running');
  if (running) show(running);
  const asked = new URLSearchParams(location.search).get('server');
  if (asked) showVisibility(asked).then(() => $('visibility').scrollIntoView({ block: 'start' }));
}

start();
