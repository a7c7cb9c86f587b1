// @ts-check
// The administration page: reports, users (standing, warnings) and all warnings. Every value
// shown comes from users (names, reasons, message snapshots) and goes in as text only.
import './theme.js';
import { api, query } from './api.js';
import { $, el, showText, formatTime, confirmAction, STANDING_NAMES } from './ui.js';

const LIMIT = 20;

function problem(text) {
  showText('notice', '');
  showText('problem', text);
}

/** A refusal: a session that ended offers a sign-in that comes back here; anything else is said. */
function failed(err) {
  if (err.status !== 401) return problem(err.message);
  problem('');
  $('admin').hidden = true;
  $('signin-link', HTMLAnchorElement).href = `/?next=${encodeURIComponent(location.pathname)}`;
  $('signed-out').hidden = false;
  $('signin-link').focus();
}

function notice(text) {
  showText('problem', '');
  showText('notice', text);
}

/** A list (ids: `list`, no-<name>, <name>-prev/-next/-page) paged over limit/offset. */
function pagedList({ name, list, fetchPage, render }) {
  let offset = 0;
  const load = async () => {
    try {
      const items = await fetchPage(LIMIT, offset);
      $(list).replaceChildren(...items.map(render));
      $(`no-${name}`).hidden = items.length > 0;
      $(`${name}-prev`, HTMLButtonElement).disabled = offset === 0;
      $(`${name}-next`, HTMLButtonElement).disabled = items.length < LIMIT;
      $(`${name}-page`).textContent = items.length ? `${offset + 1} to ${offset + items.length}` : '';
    } catch (err) {
      failed(err);
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

async function act(work, done) {
  try {
    showText('problem', '');
    showText('notice', '');
    await work();
    await done();
  } catch (err) {
    failed(err);
  }
}

// ---- reports ----------------------------------------------------------------------------------

const TYPE_TITLES = {
  server_message: 'Message in a server channel',
  conversation_message: 'Message in a direct or group chat',
  user: 'User',
  server: 'Server',
};

/** The user a report is about (whose standing an action would change), from its snapshot. */
function reportedUser(report) {
  const s = report.snapshot || {};
  if (report.type === 'user') return s.user_id ? { user_id: s.user_id, username: s.username } : null;
  if (report.type === 'server') return s.owner_id ? { user_id: s.owner_id, username: s.owner_username } : null;
  return s.author ? s.author : null;
}

/** What was reported, as people read it: names, the message quoted, its files. */
function reportSubject(report) {
  const s = report.snapshot || {};
  if (report.type === 'user') return el('p', {}, 'The account ', el('strong', { text: s.username || report.target }));
  if (report.type === 'server') {
    return el(
      'p',
      {},
      'The server ',
      el('strong', { text: s.name || report.target }),
      s.owner_username ? ` (owner ${s.owner_username})` : ' (the reporter is not a member; no details were recorded)',
    );
  }
  const files = (s.attachments || []).map((a) => `${a.name} (${a.content_type})`).join(', ');
  return el(
    'div',
    { class: 'quoted' },
    el(
      'div',
      { class: 'quote-head' },
      el('strong', { text: s.author ? s.author.username : 'unknown' }),
      ` wrote, ${s.created_at ? formatTime(s.created_at) : ''}${s.edited_at ? ' (edited)' : ''}:`,
    ),
    el('div', { class: 'quote-text', text: s.content || '(no text)' }),
    files ? el('div', { class: 'muted', text: `Files: ${files}` }) : null,
  );
}

/** Where a reported message is: "Book club › #general", or a group's name or its members. */
function placeWords(report) {
  const p = report.place;
  if (!p) return null;
  if (p.channel_id) return `${p.server_name ?? '(a deleted server)'} › #${p.channel_name ?? '(a deleted channel)'}`;
  return p.conversation_name ? `Conversation: ${p.conversation_name}` : 'A conversation that no longer exists';
}

/** The message's own address in the app (docs/ui.md "Message links"). */
function messageLink(report) {
  const p = report.place;
  return p.channel_id ? `/channels/${p.server_id}/${p.channel_id}/${report.target}` : `/channels/@me/${p.conversation_id}/${report.target}`;
}

/** A reported message among its neighbours (GET /api/admin/reports/{id}: up to 5 on each side), shown in the card. */
async function showSurroundings(report, box, button) {
  button.disabled = true;
  try {
    const { context } = await api('GET', `/api/admin/reports/${report.id}`);
    box.replaceChildren(
      ...context.messages.map((m) =>
        el(
          'li',
          { class: m.id === report.target ? 'reported' : '' },
          el('span', { class: 'muted', text: `${m.author?.username ?? 'unknown'}, ${formatTime(m.created_at)}: ` }),
          el('span', { text: m.content || '(no text)' }),
        ),
      ),
    );
    if (!context.messages.length) box.replaceChildren(el('li', { class: 'muted', text: 'The message is gone, and so is what surrounded it.' }));
    box.hidden = false;
    button.hidden = true;
  } catch (err) {
    failed(err);
    button.disabled = false;
  }
}

/** "Open in context", "Show surrounding messages" and "Delete message", for a message that is still there. */
function messageActions(report) {
  if (!report.place) return [];
  if (report.target_deleted) return [el('p', { class: 'deleted-note', text: 'This message has been deleted.' })];
  const around = el('ol', { class: 'surroundings', 'aria-label': 'The reported message among its neighbours', hidden: true });
  const show = el('button', { type: 'button', class: 'small', onclick: () => showSurroundings(report, around, show) }, 'Show surrounding messages');
  const remove = el(
    'button',
    {
      type: 'button',
      class: 'small danger',
      onclick: () =>
        act(async () => {
          if (
            !(await confirmAction(
              'Delete this message?',
              `It is deleted for everyone who can see it (${placeWords(report)}). The report keeps what it said.`,
              'Delete message',
            ))
          )
            return;
          await api('DELETE', `/api/admin/messages/${report.target}`);
          notice('The message was deleted.');
        }, reports.load),
    },
    'Delete message',
  );
  return [el('div', { class: 'message-actions' }, el('a', { href: messageLink(report), class: 'open-link' }, 'Open in context'), show, remove), around];
}

/** The user record (standing, warnings) of the admin list, found by name. */
async function adminUser(user) {
  const list = await api('GET', `/api/admin/users${query({ prefix: user.username, limit: 100 })}`);
  const found = list.find((u) => u.user_id === user.user_id);
  if (!found) throw new Error(`${user.username} was not found.`);
  return found;
}

function standingWords(n) {
  return `${n} (${STANDING_NAMES[n]})`;
}

/** Warn, with the change of standing said before it happens. */
async function warnWithConfirmation(user, reason, done) {
  await act(async () => {
    const record = await adminUser(user);
    // Warnings raise the standing to min(count, 4), never below one set by hand (docs/api.md).
    const next = Math.max(record.account_standing, Math.min(record.warnings.length + 1, 4));
    const change =
      next === record.account_standing
        ? `${user.username}'s standing stays at ${standingWords(next)}.`
        : `This sets ${user.username}'s standing from ${record.account_standing} to ${next} (${STANDING_NAMES[next]}).`;
    if (!(await confirmAction(`Warn ${user.username}?`, `${user.username} has ${record.warnings.length} warning(s). ${change}`, 'Warn'))) return;
    await api('POST', `/api/admin/users/${user.user_id}/warnings`, { reason });
    notice(`${user.username} was warned. Standing: ${standingWords(next)}.`);
  }, done);
}

async function setStandingWithConfirmation(user, standing, done) {
  await act(async () => {
    const record = await adminUser(user);
    if (record.account_standing === standing) return notice(`${user.username}'s standing is already ${standingWords(standing)}.`);
    if (
      !(await confirmAction(
        `Change ${user.username}'s standing?`,
        `This sets ${user.username}'s standing from ${record.account_standing} to ${standing} (${STANDING_NAMES[standing]}). It stays until an administrator changes it: warnings can raise it, never lower it.${standing === 4 ? ' A suspended account can only read its warnings and log out.' : ''}`,
        'Apply',
      ))
    )
      return;
    await api('PUT', `/api/admin/users/${user.user_id}/standing`, { standing });
    notice(`${user.username}'s standing is now ${standingWords(standing)}.`);
  }, done);
}

/** A standing select; without `selected` (the current standing is not known here) it asks to choose. */
function standingSelect(label, selected) {
  return el(
    'select',
    { name: 'standing', 'aria-label': label, required: true },
    selected === undefined ? el('option', { value: '', text: 'choose…', selected: true, disabled: true }) : null,
    STANDING_NAMES.map((name, value) => el('option', { value: String(value), text: `${value} · ${name}`, selected: value === selected })),
  );
}

let myId = null;

const reports = pagedList({
  name: 'reports',
  list: 'report-list',
  fetchPage: (limit, offset) => api('GET', `/api/admin/reports${query({ status: $('report-status', HTMLSelectElement).value, limit, offset })}`),
  render: (report) => {
    const next = report.status === 'pending' ? 'resolved' : 'pending';
    const user = reportedUser(report);
    const actions = el('div', { class: 'report-actions' });
    if (user && user.user_id && user.user_id !== myId) {
      const reason = el('input', { name: 'reason', required: true, maxLength: 1000, autocomplete: 'off', value: `Reported: ${report.reason}`.slice(0, 1000) });
      const warnForm = el('form', {}, el('label', {}, `Warn ${user.username}`, reason), el('button', { type: 'submit', class: 'small' }, 'Warn'));
      warnForm.addEventListener('submit', (e) => {
        e.preventDefault();
        warnWithConfirmation(user, reason.value, refreshAll);
      });
      const select = standingSelect(`Standing of ${user.username}`);
      const standingForm = el(
        'form',
        {},
        el('label', {}, `Set ${user.username}'s standing`, select),
        el('button', { type: 'submit', class: 'small' }, 'Apply'),
      );
      standingForm.addEventListener('submit', (e) => {
        e.preventDefault();
        setStandingWithConfirmation(user, Number(select.value), refreshAll);
      });
      actions.append(el('div', { class: 'row-forms' }, warnForm, standingForm));
    }
    actions.append(
      el(
        'button',
        {
          type: 'button',
          class: next === 'resolved' ? 'small primary' : 'small',
          onclick: () => act(() => api('PUT', `/api/admin/reports/${report.id}`, { status: next }), reports.load),
        },
        next === 'resolved' ? 'Resolve' : 'Reopen',
      ),
    );
    return el(
      'li',
      { 'data-type': report.type },
      el('div', { class: 'title' }, TYPE_TITLES[report.type] || report.type, el('span', { class: `badge ${report.status}`, text: report.status })),
      reportSubject(report),
      ...messageActions(report),
      el(
        'dl',
        {},
        placeWords(report) ? field('Where', placeWords(report)) : [],
        field('Reported by', report.reporter.username),
        field('Reason', report.reason),
        field('Filed', formatTime(report.created_at)),
        report.updated_by ? field('Last change', `${formatTime(report.updated_at)} by ${report.updated_by.username}`) : [],
      ),
      actions,
    );
  },
});

// ---- users ------------------------------------------------------------------------------------

function refreshPeople() {
  return Promise.all([users.load(), warnings.load()]);
}

function refreshAll() {
  return Promise.all([users.load(), warnings.load(), reports.load()]);
}

/** Who is not a person signing in (issue 47 #14): imported placeholders (claimed or not), bots, webhooks. */
const KIND_BADGES = {
  placeholder: (user) => (user.claimed ? 'placeholder, claimed' : 'imported placeholder'),
  bot: () => 'bot',
  webhook: () => 'webhook',
};

const users = pagedList({
  name: 'users',
  list: 'user-list',
  fetchPage: (limit, offset) =>
    api(
      'GET',
      `/api/admin/users${query({ prefix: $('user-prefix', HTMLInputElement).value.trim(), claimed: $('show-claimed', HTMLInputElement).checked ? 'show' : 'hide', limit, offset })}`,
    ),
  render: (user) => {
    const select = standingSelect(`Standing of ${user.username}`, user.account_standing);
    const standingForm = el('form', {}, el('label', {}, 'Standing', select), el('button', { type: 'submit', class: 'small' }, 'Apply'));
    standingForm.addEventListener('submit', (e) => {
      e.preventDefault();
      setStandingWithConfirmation(user, Number(select.value), refreshPeople);
    });
    const reason = el('input', { name: 'reason', required: true, maxLength: 1000, autocomplete: 'off' });
    const warnForm = el('form', {}, el('label', {}, 'Reason for a warning', reason), el('button', { type: 'submit', class: 'small' }, 'Warn'));
    warnForm.addEventListener('submit', (e) => {
      e.preventDefault();
      warnWithConfirmation(user, reason.value, refreshPeople);
    });
    return el(
      'li',
      {},
      el(
        'div',
        { class: 'title' },
        user.username,
        user.is_admin && el('span', { class: 'badge admin', text: 'administrator' }),
        KIND_BADGES[user.kind] && el('span', { class: 'badge kind', text: KIND_BADGES[user.kind](user) }),
        el('span', { class: 'badge', text: `standing ${user.account_standing} · ${STANDING_NAMES[user.account_standing]}` }),
      ),
      el('div', { class: 'muted', text: `${user.kind === 'placeholder' ? 'imported' : 'registered'} ${formatTime(user.created_at)}` }),
      user.warnings.length
        ? el(
            'ul',
            { class: 'warning-list' },
            user.warnings.map((w) => renderWarningLine(w, user.username)),
          )
        : el('p', { class: 'muted', text: 'No warnings.' }),
      user.user_id === myId
        ? el('p', { class: 'muted', text: 'Your own standing and warnings change only from the command line.' })
        : el('div', { class: 'row-forms' }, standingForm, warnForm),
    );
  },
});

function removeButton(warning, username) {
  return el(
    'button',
    {
      type: 'button',
      class: 'small danger',
      onclick: async () => {
        const who = username || warning.username;
        if (
          !(await confirmAction(
            `Remove this warning of ${who}?`,
            `"${warning.reason}". ${who}'s standing is recalculated from the warnings left.`,
            'Remove warning',
          ))
        )
          return;
        act(async () => {
          const result = await api('DELETE', `/api/admin/warnings/${warning.id}`);
          notice(`Warning removed. ${who}'s standing is now ${standingWords(result.account_standing)}.`);
        }, refreshAll);
      },
    },
    'Remove',
  );
}

function renderWarningLine(warning, username) {
  return el('li', {}, el('span', { text: `${warning.reason} · by ${warning.issued_by}, ${formatTime(warning.created_at)}` }), removeButton(warning, username));
}

// ---- all warnings -------------------------------------------------------------------------------

const warnings = pagedList({
  name: 'warnings',
  list: 'warning-list',
  fetchPage: (limit, offset) => api('GET', `/api/admin/warnings${query({ limit, offset })}`),
  render: (warning) =>
    el(
      'li',
      {},
      el('div', { class: 'title', text: warning.username }),
      el('dl', {}, field('Reason', warning.reason), field('Issued', `${formatTime(warning.created_at)} by ${warning.issued_by}`)),
      removeButton(warning),
    ),
});

// ---- start --------------------------------------------------------------------------------------

let searchTimer = 0;

async function start() {
  try {
    const me = await api('GET', '/api/admin/me');
    showText('who', `signed in as ${me.username}`);
    myId = me.user_id;
  } catch (err) {
    if (err.status === 403) problem('This page is for site administrators only, and your account is not one.');
    else failed(err);
    return;
  }
  $('admin').hidden = false;
  $('report-status').addEventListener('change', () => reports.reset());
  $('show-claimed').addEventListener('change', () => users.reset());
  $('user-prefix').addEventListener('input', () => {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(() => users.reset(), 250);
  });
  await Promise.all([reports.load(), users.load(), warnings.load()]);
}

start();
