// The administration page: reports, users (standing, warnings) and all warnings. Every value
// shown comes from users (names, reasons, message snapshots) and goes in as text only.
import { api, query } from './api.js';
import { $, el, showText, formatTime, STANDING_NAMES } from './ui.js';

const LIMIT = 20;

function problem(text) {
  showText('problem', text);
}

/** A list (ids: `list`, no-<name>, <name>-prev/-next/-page) paged over limit/offset. */
function pagedList({ name, list, fetchPage, render }) {
  let offset = 0;
  const load = async () => {
    try {
      const items = await fetchPage(LIMIT, offset);
      $(list).replaceChildren(...items.map(render));
      $(`no-${name}`).hidden = items.length > 0;
      $(`${name}-prev`).disabled = offset === 0;
      $(`${name}-next`).disabled = items.length < LIMIT;
      $(`${name}-page`).textContent = items.length ? `${offset + 1} to ${offset + items.length}` : '';
    } catch (err) {
      problem(err.message);
    }
  };
  $(`${name}-prev`).addEventListener('click', () => {
    offset = Math.max(0, offset - LIMIT);
    load();
  });
  $(`${name}-next`).addEventListener('click', () => {
    offset += LIMIT;
    load();
  });
  return {
    load,
    reset: () => {
      offset = 0;
      return load();
    },
  };
}

function field(label, value) {
  return [el('dt', { text: label }), el('dd', { text: value })];
}

/** A snapshot's fields as text: people by name, attachments by file name. */
function snapshotText(value) {
  if (value === null || value === undefined) return '—';
  if (Array.isArray(value)) return value.length ? value.map(snapshotText).join(', ') : '(none)';
  if (typeof value === 'object') {
    if ('username' in value) return `${value.username} (${value.user_id})`;
    if ('name' in value) return `${value.name}${value.content_type ? ` (${value.content_type})` : ''}`;
    return JSON.stringify(value);
  }
  return String(value);
}

async function act(work, done) {
  try {
    showText('problem', '');
    await work();
    await done();
  } catch (err) {
    problem(err.message);
  }
}

// ---- reports ----------------------------------------------------------------------------------

const reports = pagedList({
  name: 'reports',
  list: 'report-list',
  fetchPage: (limit, offset) => api('GET', `/api/admin/reports${query({ status: $('report-status').value, limit, offset })}`),
  render: (report) => {
    const next = report.status === 'pending' ? 'resolved' : 'pending';
    return el('li', {},
      el('div', { class: 'title' }, `${report.type} report`, el('span', { class: `badge ${report.status}`, text: report.status })),
      el('dl', {},
        field('Reporter', report.reporter.username),
        field('Reason', report.reason),
        field('Target', report.target),
        field('Filed', formatTime(report.created_at)),
        report.updated_by ? field('Last change', `${formatTime(report.updated_at)} by ${report.updated_by.username}`) : []),
      el('details', { open: true },
        el('summary', { text: 'Snapshot taken when reported' }),
        el('dl', {}, Object.entries(report.snapshot || {}).map(([key, value]) => field(key, snapshotText(value))))),
      el('button', {
        type: 'button',
        class: 'small',
        onclick: () => act(() => api('PUT', `/api/admin/reports/${report.id}`, { status: next }), reports.load),
      }, next === 'resolved' ? 'Resolve' : 'Reopen'));
  },
});

// ---- users ------------------------------------------------------------------------------------

function refreshPeople() {
  return Promise.all([users.load(), warnings.load()]);
}

const users = pagedList({
  name: 'users',
  list: 'user-list',
  fetchPage: (limit, offset) => api('GET', `/api/admin/users${query({ prefix: $('user-prefix').value.trim(), limit, offset })}`),
  render: (user) => {
    const select = el('select', { name: 'standing', 'aria-label': `Standing of ${user.username}` },
      STANDING_NAMES.map((label, value) => el('option', { value: String(value), text: `${value} · ${label}`, selected: value === user.account_standing })));
    const standingForm = el('form', {},
      el('label', {}, 'Standing', select),
      el('button', { type: 'submit', class: 'small' }, 'Apply'));
    standingForm.addEventListener('submit', (e) => {
      e.preventDefault();
      act(() => api('PUT', `/api/admin/users/${user.user_id}/standing`, { standing: Number(select.value) }), refreshPeople);
    });
    const reason = el('input', { name: 'reason', required: true, maxLength: 1000, autocomplete: 'off' });
    const warnForm = el('form', {},
      el('label', {}, 'Reason for a warning', reason),
      el('button', { type: 'submit', class: 'small' }, 'Warn'));
    warnForm.addEventListener('submit', (e) => {
      e.preventDefault();
      act(() => api('POST', `/api/admin/users/${user.user_id}/warnings`, { reason: reason.value }), refreshPeople);
    });
    return el('li', {},
      el('div', { class: 'title' }, user.username,
        user.is_admin && el('span', { class: 'badge admin', text: 'administrator' }),
        el('span', { class: 'badge', text: `standing ${user.account_standing} · ${STANDING_NAMES[user.account_standing]}` })),
      el('div', { class: 'muted', text: `registered ${formatTime(user.created_at)} · ${user.user_id}` }),
      user.warnings.length
        ? el('ul', { class: 'warning-list' }, user.warnings.map(renderWarningLine))
        : el('p', { class: 'muted', text: 'No warnings.' }),
      el('div', { class: 'row-forms' }, standingForm, warnForm));
  },
});

function removeButton(warning) {
  return el('button', {
    type: 'button',
    class: 'small danger',
    onclick: () => act(() => api('DELETE', `/api/admin/warnings/${warning.id}`), refreshPeople),
  }, 'Remove');
}

function renderWarningLine(warning) {
  return el('li', {}, el('span', { text: `${warning.reason} · by ${warning.issued_by}, ${formatTime(warning.created_at)}` }), removeButton(warning));
}

// ---- all warnings -------------------------------------------------------------------------------

const warnings = pagedList({
  name: 'warnings',
  list: 'warning-list',
  fetchPage: (limit, offset) => api('GET', `/api/admin/warnings${query({ limit, offset })}`),
  render: (warning) => el('li', {},
    el('div', { class: 'title', text: warning.username }),
    el('dl', {}, field('Reason', warning.reason), field('Issued', `${formatTime(warning.created_at)} by ${warning.issued_by}`)),
    removeButton(warning)),
});

// ---- start --------------------------------------------------------------------------------------

let searchTimer = 0;

async function start() {
  try {
    const me = await api('GET', '/api/admin/me');
    showText('who', `signed in as ${me.username}`);
  } catch (err) {
    if (err.status === 401) problem('Sign in first: this page is for administrators only.');
    else if (err.status === 403) problem(`This page is for administrators only. (${err.message})`);
    else problem(err.message);
    return;
  }
  $('admin').hidden = false;
  $('report-status').addEventListener('change', () => reports.reset());
  $('user-prefix').addEventListener('input', () => {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(() => users.reset(), 250);
  });
  await Promise.all([reports.load(), users.load(), warnings.load()]);
}

start();
