// The home page: shows the outcome of the last form post (?registered, ?logged_in, ?error)
// and who is signed in. The forms themselves are plain HTML posts answered with redirects.
// User text only ever goes in through textContent.
'use strict';

(function () {
  const $ = (id) => document.getElementById(id);

  function show(id, text) {
    const el = $(id);
    el.textContent = text;
    el.hidden = false;
  }

  const query = new URLSearchParams(location.search);
  if (query.has('registered')) show('notice', 'Registered. You can log in now.');
  if (query.has('logged_in')) show('notice', 'Logged in.');
  if (query.get('error')) show('problem', query.get('error'));
  // The message has been read: a reload should not show it again.
  if (query.has('registered') || query.has('logged_in') || query.has('error')) {
    history.replaceState(null, '', location.pathname);
  }

  fetch('/api/users/me', { credentials: 'same-origin' })
    .then((res) => (res.ok ? res.json() : null))
    .then((me) => {
      if (!me) return;
      show('who', 'signed in as ' + me.username);
      $('signed-in').hidden = false;
      $('signed-out').hidden = true;
    })
    .catch(() => {});
})();
