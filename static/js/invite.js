// Invite page: names the server behind /invites/<token> and joins it on click.
import { api } from './api.js';
import { $ } from './ui.js';

const token = decodeURIComponent(location.pathname.split('/').pop() || '');
const path = `/api/invites/${encodeURIComponent(token)}`;

async function load() {
  let invite;
  try {
    invite = await api('GET', path);
  } catch (err) {
    $('invite-status').textContent = err.status === 404 ? 'This invitation is unknown or has expired.' : err.message;
    return;
  }
  const members = invite.member_count === 1 ? '1 member' : `${invite.member_count} members`;
  $('invite-status').textContent = `Join "${invite.server_name}" (${members}).`;
  // Signed in or not: GET /api/account also answers suspended accounts (they get the join 403).
  const signedIn = await api('GET', '/api/account').then(() => true, () => false);
  $('join').hidden = !signedIn;
  $('signin').hidden = signedIn;
}

$('join').addEventListener('click', async () => {
  $('join').disabled = true;
  try {
    const joined = await api('POST', `${path}/accept`);
    location.href = `/?server=${encodeURIComponent(joined.server_id)}`;
  } catch (err) {
    $('invite-status').textContent = err.message;
    $('join').disabled = false;
  }
});

load();
