// Reset page. /reset-password?token=... (the link in the email) sets a new password;
// /reset-password alone asks for the address to send a link to.
(function () {
  const token = new URLSearchParams(location.search).get('token');
  const status = document.getElementById('status');
  const requestForm = document.getElementById('request-form');
  const resetForm = document.getElementById('reset-form');

  // The token opens the account: keep it out of the history and address bar once read.
  if (token) history.replaceState(null, '', location.pathname);

  function show(text, isError) {
    status.textContent = text;
    status.classList.toggle('error', isError);
    status.hidden = false;
  }

  async function postJson(path, body) {
    return fetch(path, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
  }

  requestForm.addEventListener('submit', async function (event) {
    event.preventDefault();
    const button = requestForm.querySelector('button');
    button.disabled = true;
    try {
      const res = await postJson('/api/password-reset/request', { email: requestForm.email.value.trim() });
      if (res.ok) {
        requestForm.hidden = true;
        show('If an account has this address verified, a reset link is on its way. Check your mailbox.', false);
      } else {
        show(await res.text(), true);
      }
    } catch {
      show('The server could not be reached; try again.', true);
    }
    button.disabled = false;
  });

  resetForm.addEventListener('submit', async function (event) {
    event.preventDefault();
    const password = resetForm.password.value;
    if (password !== resetForm.confirm.value) {
      show('The two passwords differ.', true);
      return;
    }
    const button = resetForm.querySelector('button');
    button.disabled = true;
    try {
      const res = await postJson('/api/password-reset', { token: token, password: password });
      if (res.ok) {
        resetForm.hidden = true;
        show('Your password is changed and every session of the account has ended. Sign in with the new password.', false);
      } else {
        const reason = (await res.text()).trim();
        // A used or expired link cannot be retried: offer to send a new one right here.
        if (/expired|invalid|already been used/.test(reason)) {
          resetForm.hidden = true;
          requestForm.hidden = false;
          show(/expired/.test(reason)
            ? 'This reset link has expired (links last one hour). Enter your address to get a new one.'
            : 'This reset link was already used. Enter your address to get a new one.', true);
        } else {
          show(reason, true);
        }
      }
    } catch {
      show('The server could not be reached; try again.', true);
    }
    button.disabled = false;
  });

  if (token) resetForm.hidden = false;
  else requestForm.hidden = false;
})();
