// @ts-check
// Server settings → Integrations: a channel's incoming webhooks (docs/api.md "Webhooks"), for the
// owner and full server administrators. Create one (its URL is shown this once, with a Copy
// button), rename it, give it a new URL (the old one stops at once), set or remove the secret
// GitHub signs its deliveries with, and delete it, with or without the messages it sent; and add a bot to the server by its name (docs/api.md "Bots").
// Loaded when the tab is first opened.
import { api } from './api.js';
import { el, toast, confirmAction, formatTime, fieldForm, copyField } from './ui.js';
import { askForm } from './dialogs.js';
import { findServer, canManageServer, displayName } from './store.js';

const NAME_MAX = 80;

/** The panel: {nodes, update}. `focus`: the channel to show first (a channel row's Webhooks button). */
export function webhooksPanel(server, focus) {
  const manage = canManageServer(server);
  const channels = () => findServer(server.id)?.channels || [];
  let channelId = channels().some((c) => c.id === focus) ? focus : channels()[0]?.id;

  const select = el('select', { id: 'webhook-channel' });
  const fillChannels = () => {
    if (!channels().some((c) => c.id === channelId)) channelId = channels()[0]?.id;
    select.replaceChildren(...channels().map((c) => el('option', { value: c.id, text: `#${c.name}`, selected: c.id === channelId })));
  };
  select.addEventListener('change', () => {
    channelId = select.value;
    reveal.replaceChildren();
    load();
  });

  const list = el('ul', { id: 'webhook-list', class: 'settings-list', 'aria-label': 'Webhooks of the channel' });
  const empty = el('p', { class: 'muted empty-note', text: 'Loading…' });
  // Where a new URL is shown, once.
  const reveal = el('div', { id: 'webhook-reveal', 'aria-live': 'polite' });

  const showUrl = (hook, fresh) => {
    const input = el('input', { id: 'webhook-url', class: 'invite-link', readOnly: true, value: hook.url, 'aria-label': `URL of the webhook ${hook.name}` });
    const copy = el('button', { type: 'button', class: 'small', onclick: () => copyField(input, copy, 'URL') }, 'Copy');
    reveal.replaceChildren(
      el(
        'div',
        { class: 'secret-reveal notice' },
        el(
          'p',
          {},
          el('strong', { text: fresh ? `The webhook ${hook.name} is ready.` : `A new URL for ${hook.name}.` }),
          ' Copy its URL now: it is shown only this once. Anyone holding it can post in the channel.',
        ),
        el('div', { class: 'inline-form' }, input, copy),
        el('small', {
          class: 'field-hint',
          text: "It takes Discord's webhook format. For Slack's, add /slack to its end; for GitHub's (a repository's Settings → Webhooks, content type application/json), add /github.",
        }),
      ),
    );
    input.select();
  };

  const row = (hook) =>
    el(
      'li',
      { class: 'channel-row webhook-row', 'data-id': hook.id },
      el(
        'span',
        { class: 'row-text' },
        el('span', { class: 'row-title', text: hook.name }),
        el('span', {
          class: 'muted row-sub',
          text: `made by ${displayName(hook.created_by)} · ${formatTime(hook.created_at)}${hook.github_secret_set ? ' · GitHub secret set' : ''}`,
        }),
      ),
      el(
        'span',
        { class: 'row-actions' },
        el('button', { type: 'button', class: 'small', 'aria-label': `Rename the webhook ${hook.name}`, onclick: () => rename(hook) }, 'Rename'),
        el('button', { type: 'button', class: 'small', 'aria-label': `New URL for the webhook ${hook.name}`, onclick: () => regenerate(hook) }, 'New URL'),
        el(
          'button',
          { type: 'button', class: 'small', 'aria-label': `GitHub secret of the webhook ${hook.name}`, onclick: () => githubSecret(hook) },
          'GitHub secret',
        ),
        el('button', { type: 'button', class: 'small danger', 'aria-label': `Delete the webhook ${hook.name}`, onclick: () => remove(hook) }, 'Delete'),
      ),
    );

  let loading = 0;
  async function load() {
    if (!channelId) {
      list.replaceChildren();
      empty.textContent = 'This server has no channel.';
      return;
    }
    const asked = ++loading;
    try {
      const hooks = await api('GET', `/api/servers/${server.id}/channels/${channelId}/webhooks`);
      if (asked !== loading) return;
      list.replaceChildren(...hooks.map(row));
      empty.textContent = 'No webhooks in this channel yet.';
      empty.hidden = hooks.length > 0;
    } catch (err) {
      empty.textContent = err.message;
      empty.hidden = false;
    }
  }

  async function rename(hook) {
    const answer = await askForm({
      title: `Rename the webhook ${hook.name}`,
      submit: 'Save',
      fields: [
        { name: 'name', label: 'Name', value: hook.name, required: true, maxLength: NAME_MAX, hint: 'Shown on its messages, unless a message names itself.' },
      ],
    });
    if (!answer) return;
    try {
      await api('PATCH', `/api/webhooks/${hook.id}`, { name: answer.name });
      toast('Webhook renamed.', false);
      load();
    } catch (err) {
      toast(err.message);
    }
  }

  async function regenerate(hook) {
    if (
      !(await confirmAction(
        `A new URL for ${hook.name}?`,
        'The old URL stops working at once: whatever posts with it must be given the new one.',
        'Make a new URL',
      ))
    )
      return;
    try {
      showUrl(await api('PATCH', `/api/webhooks/${hook.id}`, { regenerate_token: true }), false);
      load();
    } catch (err) {
      toast(err.message);
    }
  }

  async function githubSecret(hook) {
    const answer = await askForm({
      title: `GitHub secret of ${hook.name}`,
      text: hook.github_secret_set
        ? 'A secret is set: GitHub deliveries must be signed with it. Type a new one, or leave the field empty to remove it.'
        : 'With a secret, GitHub deliveries (to the URL ending in /github) must be signed with it: give GitHub the same secret.',
      submit: 'Save',
      fields: [{ name: 'secret', label: 'Secret', maxLength: 256, placeholder: hook.github_secret_set ? '(empty: no secret)' : '' }],
    });
    if (!answer) return;
    try {
      await api('PATCH', `/api/webhooks/${hook.id}`, { github_secret: answer.secret === '' ? null : answer.secret });
      toast(answer.secret === '' ? 'No GitHub secret now.' : 'GitHub secret saved.', false);
      load();
    } catch (err) {
      toast(err.message);
    }
  }

  async function remove(hook) {
    const answer = await askForm({
      title: `Delete the webhook ${hook.name}?`,
      text: 'Its URL stops working at once. This cannot be undone.',
      submit: 'Delete webhook',
      danger: true,
      fields: [{ name: 'messages', label: 'Also delete the messages it sent', type: 'checkbox', value: false }],
    });
    if (!answer) return;
    try {
      await api('DELETE', `/api/webhooks/${hook.id}${answer.messages ? '?delete_messages=true' : ''}`);
      reveal.replaceChildren();
      toast(`Webhook ${hook.name} deleted.`, false);
      load();
    } catch (err) {
      toast(err.message);
    }
  }

  const form = fieldForm({
    id: 'new-webhook-name',
    label: 'New webhook',
    button: 'Create webhook',
    className: 'webhook-form',
    field: { maxLength: NAME_MAX, placeholder: 'Build bot' },
    create: (name) => api('POST', `/api/servers/${server.id}/channels/${channelId}/webhooks`, { name }),
    done: (hook) => {
      showUrl(hook, true);
      load();
    },
  });

  // A bot joins a server only this way: its owner gives its name to the server's owner or an administrator.
  const botForm = fieldForm({
    id: 'add-bot-name',
    label: 'Add a bot to this server',
    button: 'Add bot',
    primary: false,
    className: 'add-bot-form',
    field: { maxLength: 32, spellcheck: false, placeholder: 'bot name' },
    more: [el('small', { class: 'field-hint', text: 'Its name, as its owner made it on their account page. It joins as a member, with no role.' })],
    create: (name) => api('POST', `/api/servers/${server.id}/bots`, { username: name.trim().replace(/^@/, '') }),
    done: (_, name) => toast(`${name.trim()} is a member now.`, false),
  });

  fillChannels();
  if (manage) load();
  return {
    nodes: [
      el('h3', { text: 'Integrations' }),
      el('p', {
        class: 'muted',
        text: "A webhook is a secret URL that other programs post messages to (in Discord's, Slack's or GitHub's format), in one channel, under its name with a BOT tag. Bots are made on your account page.",
      }),
      manage ? el('div', { class: 'settings-form' }, el('label', { for: 'webhook-channel', text: 'Channel' }), select) : null,
      manage ? reveal : null,
      manage ? list : null,
      manage ? empty : el('p', { class: 'muted', text: 'Only the owner and full server administrators manage webhooks.' }),
      manage ? form : null,
      manage ? el('h3', { class: 'settings-subhead', text: 'Bots' }) : null,
      manage ? botForm : null,
    ],
    // The channel list follows the store; the list of webhooks and a URL on show stay.
    update: fillChannels,
  };
}
