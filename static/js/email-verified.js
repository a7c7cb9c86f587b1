// @ts-check
// Where a verification link lands: /email-verified when it worked, /email-verified?error=<code>
// when it did not (the server words nothing in the URL; this page words each code).
import './theme.js';
import { $ } from './ui.js';

const OUTCOMES = {
  used: [
    'This link was already used',
    'Verification links work once, and a newer link replaces older ones. If you opened it before, your address is verified: open chat. Otherwise set your address again on your account page to get a new link.',
    'Open chat',
    '/',
    true,
  ],
  expired: [
    'This link has expired',
    'Verification links last 24 hours. Set your address again on your account page and a new link is sent.',
    'Send a new link',
    '/account/warnings',
    false,
  ],
  conflict: [
    'This address belongs to another account',
    'It was verified on another account first, so it cannot be used for this one. Choose another address on your account page.',
    'Your account page',
    '/account/warnings',
    false,
  ],
  missing: [
    'This link is incomplete',
    'The address in your mail may have been cut in two. Copy the whole link, or ask for a new one on your account page.',
    'Your account page',
    '/account/warnings',
    false,
  ],
};
const code = new URLSearchParams(location.search).get('error');
if (code) {
  const [title, text, primary, href, withAccount] = Object.hasOwn(OUTCOMES, code) ? OUTCOMES[code] : OUTCOMES.used;
  document.title = `${title} · chat`;
  $('verify-title').textContent = title;
  $('verify-text').textContent = text;
  $('verify-primary').textContent = primary;
  $('verify-primary', HTMLAnchorElement).href = href;
  $('verify-secondary').hidden = !withAccount;
}
