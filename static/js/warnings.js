// The account standing page: GET /api/account works for suspended accounts too, so this page
// is where a suspended user learns why. User text only ever goes in through textContent.
'use strict';

(function () {
  const $ = (id) => document.getElementById(id);
  const STANDING_NAMES = ['All good', 'Limited', 'Very limited', 'At risk', 'Suspended'];

  function problem(text) {
    $('problem').textContent = text;
    $('problem').hidden = false;
  }

  function warningItem(warning) {
    const li = document.createElement('li');
    const reason = document.createElement('span');
    reason.textContent = warning.reason;
    const meta = document.createElement('span');
    meta.className = 'meta';
    meta.textContent = 'from ' + warning.issued_by + ' on ' + new Date(warning.created_at).toLocaleString();
    li.append(reason, meta);
    return li;
  }

  fetch('/api/account', { credentials: 'same-origin' })
    .then((res) => {
      if (res.status === 401) throw new Error('You are not signed in. Log in on the home page first.');
      if (!res.ok) return res.text().then((text) => Promise.reject(new Error(text)));
      return res.json();
    })
    .then((account) => {
      $('who').textContent = 'signed in as ' + account.username;
      $('who').hidden = false;
      const standing = account.account_standing;
      $('standing').textContent = standing + ' · ' + (STANDING_NAMES[standing] || 'unknown');
      $('suspended').hidden = standing < 4;
      const list = $('warnings');
      list.replaceChildren(...account.warnings.map(warningItem));
      $('no-warnings').hidden = account.warnings.length > 0;
      $('account').hidden = false;
    })
    .catch((err) => problem(err.message || 'Could not load your account.'));
})();
