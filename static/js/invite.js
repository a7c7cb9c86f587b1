// Invite page: names the server behind /invites/<token> and joins it on click.
(function () {
  const token = decodeURIComponent(location.pathname.split('/').pop() || '');
  const status = document.getElementById('invite-status');
  const join = document.getElementById('join');
  const signin = document.getElementById('signin');

  async function load() {
    const res = await fetch('/api/invites/' + encodeURIComponent(token));
    if (!res.ok) {
      status.textContent = 'This invitation is unknown or has expired.';
      return;
    }
    const invite = await res.json();
    status.textContent = 'Join "' + invite.server_name + '" (' + invite.member_count + ' members).';
    const me = await fetch('/api/users/me');
    if (me.ok) join.hidden = false;
    else signin.hidden = false;
  }

  join.addEventListener('click', async function () {
    join.disabled = true;
    const res = await fetch('/api/invites/' + encodeURIComponent(token) + '/accept', { method: 'POST' });
    if (res.ok) {
      const body = await res.json();
      location.href = '/?server=' + encodeURIComponent(body.server_id);
    } else {
      status.textContent = await res.text();
      join.disabled = false;
    }
  });

  load();
})();
