// @ts-check
// Invite page: names the server behind /invites/<token>. Signed in, "Join server" (or "Open"
// for a member already in it); signed out, a sign-in link that comes back here afterwards.
import './theme.js';
import { api } from './api.js';
import { $ } from './ui.js';

const token = decodeURIComponent(location.pathname.split('/').pop() || '');
const path = `/api/invites/${encodeURIComponent(token)}`;

async function load() {
  let invite;
  try {
    invite = await api('GET', path);
  } catch (err) {
    $('invite-heading').textContent = 'This invitation does not work';
    $('invite-status').textContent = err.status === 404 ? 'It is unknown or has expired (invitations last seven days). Ask for a new one.' : err.message;
    return;
  }
  const members = invite.member_count === 1 ? '1 member' : `${invite.member_count} members`;
  $('invite-heading').textContent = `Join ${invite.server_name}`;
  $('invite-status').textContent = `${invite.server_name} has ${members}.`;
  // Signed in or not: GET /api/account also answers suspended accounts (they get the join 403).
  const account = await api('GET', '/api/account').catch(() => null);
  if (!account) {
    $('signin-link', HTMLAnchorElement).href = `/?next=${encodeURIComponent(location.pathname)}`;
    $('signin').hidden = false;
    return;
  }
  // Already a member: open it rather than joining again.
  const servers = await api('GET', '/api/servers').catch(() => []);
  if (servers.some((s) => s.id === invite.server_id)) {
    $('invite-status').textContent = `You are already a member of ${invite.server_name} (${members}).`;
    $('open', HTMLAnchorElement).href = `/?server=${encodeURIComponent(invite.server_id)}`;
    $('open').hidden = false;
    return;
  }
  $('join').hidden = false;
}

$('join').addEventListener('click', async () => {
  $('join', HTMLButtonElement).disabled = true;
  try {
    const joined = await api('POST', `${path}/accept`);
    location.href = `/?server=${encodeURIComponent(joined.server_id)}`;
  } catch (err) {
    $('invite-status').textContent = err.message;
    $('join', HTMLButtonElement).disabled = false;
  }
});

load();
