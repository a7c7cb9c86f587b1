// @ts-check
// The account page's "Your Discord history": claiming what an import from Discord left under a
// placeholder (with the code the server's owner hands over, or with one's Discord data package
// where the import allows it), and hiding or erasing one's imported messages in a server.
import { api, upload } from './api.js';
import { $, el, showNotice, confirmAction, formatSize } from './ui.js';

let servers = []; // the user's servers (GET /api/servers), for names and the select
const claimedHere = new Set(); // servers claimed into from this page: first in the select

const plural = (n, one, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
const serverName = (id) => servers.find((s) => s.id === id)?.name || 'a server';

/** The servers, and those where the user claimed a history: only those are offered to hide or erase (issue 47 #7). */
async function loadServers() {
  let claims = [];
  try {
    [servers, claims] = await Promise.all([api('GET', '/api/servers'), api('GET', '/api/account/claims')]);
  } catch {
    servers = [];
  }
  const select = $('imported-server', HTMLSelectElement);
  const chosen = select.value;
  const hidden = new Set(claims.filter((c) => c.hidden).map((c) => c.server_id));
  const ordered = servers.filter((s) => claims.some((c) => c.server_id === s.id)).sort((a, b) => Number(claimedHere.has(b.id)) - Number(claimedHere.has(a.id)));
  select.replaceChildren(
    ...ordered.map((s) => el('option', { value: s.id, text: hidden.has(s.id) ? `${s.name} (hidden)` : s.name, selected: s.id === chosen })),
  );
  $('imported-block').hidden = ordered.length === 0;
}

/** What a claim brought, each with a link to its server (the claimer is a member now). */
async function showClaimed(claimed) {
  for (const c of claimed) claimedHere.add(c.server_id);
  await loadServers();
  const box = $('claim-result');
  box.classList.remove('error');
  box.replaceChildren(
    el('p', { text: claimed.length === 1 ? 'Claimed: this history is yours now.' : 'Claimed: these histories are yours now.' }),
    el(
      'ul',
      { class: 'claimed-list' },
      claimed.map((c) =>
        el(
          'li',
          {},
          el('strong', { text: c.discord_name }),
          `: ${plural(c.messages, 'message')} in `,
          el('a', { href: `/?server=${encodeURIComponent(c.server_id)}`, text: serverName(c.server_id) }),
        ),
      ),
    ),
  );
  box.hidden = false;
}

function claimFailed(text) {
  const box = $('claim-result');
  box.classList.add('error');
  box.replaceChildren(el('p', { text }));
  box.hidden = false;
}

async function claimByCode(e) {
  e.preventDefault();
  const button = $('claim-code-form').querySelector('button');
  const code = $('claim-code', HTMLInputElement).value.trim();
  if (!code) return;
  button.disabled = true;
  $('claim-result').hidden = true;
  try {
    const result = await api('POST', '/api/account/claims', { code });
    $('claim-code', HTMLInputElement).value = '';
    await showClaimed(result.claimed);
  } catch (err) {
    const words = {
      404: 'There is no such claim code. Check it with the server’s owner (letters and digits, like ABCD-EFGH-JKMN).',
      409: 'This code was used already: each code works once. Ask the server’s owner if it was not you.',
      429: 'You tried many codes in a short time. Wait a few minutes, then try again.',
    };
    claimFailed(words[err.status] || err.message);
  } finally {
    button.disabled = false;
  }
}

async function claimByPackage(e) {
  e.preventDefault();
  const file = $('claim-package', HTMLInputElement).files[0];
  if (!file) return;
  const button = $('claim-package-form').querySelector('button');
  button.disabled = true;
  $('claim-result').hidden = true;
  $('claim-upload').hidden = false;
  $('claim-progress', HTMLProgressElement).value = 0;
  $('claim-upload-text').textContent = `Sending ${file.name} (${formatSize(file.size)})…`;
  const form = new FormData();
  form.append('package', file, file.name);
  try {
    const result = await upload('/api/account/claims/discord-package', form, (sent, total) => {
      $('claim-progress', HTMLProgressElement).value = sent / total;
      $('claim-upload-text').textContent = sent < total ? `${formatSize(sent)} of ${formatSize(total)} sent` : 'Uploaded. Reading your Discord id…';
    }).promise;
    $('claim-package-form', HTMLFormElement).reset();
    showChoice(result);
  } catch (err) {
    const words = {
      404: 'Nothing here is waiting for this Discord account: no import names it, or its server’s owner did not allow claims by data package. Ask the owner for your claim code.',
      413: 'The package is too large: zip its Account folder alone, and upload that.',
      429: 'You tried many claims in a short time. Wait a few minutes, then try again.',
    };
    claimFailed(words[err.status] || err.message);
  } finally {
    button.disabled = false;
    $('claim-upload').hidden = true;
  }
}

/**
 * What a data package may claim: the servers holding a history of its Discord id, none chosen.
 * A package proves nothing (anyone can forge an export naming your id), so the person picks the
 * servers they recognise; only those are joined.
 */
function showChoice(result) {
  const box = $('claim-result');
  box.classList.remove('error');
  const boxes = result.servers.map((s) => el('input', { type: 'checkbox', value: s.server_id, id: `claim-choice-${s.server_id}` }));
  const button = el('button', { type: 'submit', class: 'primary', text: 'Claim and join the chosen servers' });
  const form = el(
    'form',
    { class: 'claim-choice' },
    el('p', {
      text: `Your Discord account is named in ${plural(result.servers.length, 'server')} here. Choose the ones you were part of: you join only those.`,
    }),
    el(
      'ul',
      { class: 'claimed-list' },
      result.servers.map((s, i) =>
        el(
          'li',
          {},
          boxes[i],
          ' ',
          el('label', { for: boxes[i].id }, el('strong', { text: s.name }), ` — ${s.discord_name}, ${plural(s.messages, 'message')}`),
        ),
      ),
    ),
    button,
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const server_ids = boxes.filter((b) => b.checked).map((b) => b.value);
    if (server_ids.length === 0) return;
    button.disabled = true;
    try {
      await showClaimed((await api('POST', '/api/account/claims/discord-package/choose', { server_ids })).claimed);
    } catch (err) {
      claimFailed(err.status === 404 ? 'This choice has expired or a server is no longer waiting for you: upload your data package again.' : err.message);
    } finally {
      button.disabled = false;
    }
  });
  box.replaceChildren(form);
  box.hidden = false;
}

async function hideOrErase(action) {
  const id = $('imported-server', HTMLSelectElement).value;
  if (!id) return;
  const name = serverName(id);
  const sure =
    action === 'hide'
      ? await confirmAction(
          `Hide your imported messages in ${name}?`,
          'They stay in the history under a nameless “Former member”: nothing links them to you any more, and you cannot claim them back.',
          'Hide my imported messages',
        )
      : await confirmAction(
          `Erase your imported messages in ${name}?`,
          'They are deleted for everyone, with their files; this cannot be undone. What you wrote here yourself stays.',
          'Erase my imported messages',
        );
  if (!sure) return;
  for (const b of ['imported-hide', 'imported-erase']) $(b, HTMLButtonElement).disabled = true;
  try {
    const result = await api('POST', '/api/account/imported-messages', { server_id: id, action });
    loadServers();
    showNotice(
      'imported-result',
      action === 'hide'
        ? `${plural(result.messages, 'imported message')} in ${name} now show as written by “Former member”.`
        : `${plural(result.messages, 'imported message')} in ${name} were erased.`,
    );
  } catch (err) {
    showNotice('imported-result', err.status === 404 ? `You have claimed no imported history in ${name}.` : err.message, true);
  } finally {
    for (const b of ['imported-hide', 'imported-erase']) $(b, HTMLButtonElement).disabled = false;
  }
}

export function initDiscord() {
  $('claim-code-form').addEventListener('submit', claimByCode);
  $('claim-package-form').addEventListener('submit', claimByPackage);
  $('imported-form').addEventListener('submit', (e) => e.preventDefault());
  $('imported-hide').addEventListener('click', () => hideOrErase('hide'));
  $('imported-erase').addEventListener('click', () => hideOrErase('erase'));
  loadServers();
}

/** A suspended account cannot claim (it may not join servers); it reads why above. */
export function showDiscord(account) {
  const suspended = account.account_standing >= 4;
  for (const id of ['claim-code-form', 'claim-package-form', 'imported-form']) $(id).hidden = suspended;
}
