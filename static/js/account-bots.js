// @ts-check
// The account page's "Bots" (docs/api.md "Bots"): the bots one owns, a new one (its token shown
// this once, with a Copy button), a new token for one (the old stops at once) and deleting one.
import { api } from './api.js';
import { $, el, showNotice, formatTime, confirmAction } from './ui.js';

let shownToken = '';

function showToken(title, token) {
  shownToken = token;
  $('bot-token-title').textContent = title;
  $('bot-token').textContent = token;
  $('bot-token-copy').textContent = 'Copy';
  $('bot-token-box').hidden = false;
}

function botItem(bot) {
  const name = bot.display_name && bot.display_name !== bot.username ? `${bot.display_name} (@${bot.username})` : bot.username;
  return el(
    'li',
    { class: 'session bot-row', 'data-id': bot.id },
    el(
      'div',
      { class: 'session-text' },
      el('span', { class: 'session-device' }, name, el('span', { class: 'badge', text: 'BOT' })),
      el('span', { class: 'session-meta muted', text: `made ${formatTime(bot.created_at)}` }),
    ),
    el(
      'div',
      { class: 'button-row' },
      el('button', { type: 'button', class: 'small', 'aria-label': `New token for ${bot.username}`, onclick: () => resetToken(bot) }, 'Reset token'),
      el('button', { type: 'button', class: 'small danger', 'aria-label': `Delete the bot ${bot.username}`, onclick: () => remove(bot) }, 'Delete'),
    ),
  );
}

async function load() {
  try {
    const bots = await api('GET', '/api/bots');
    $('bot-list').replaceChildren(...bots.map(botItem));
    $('no-bots').hidden = bots.length > 0;
  } catch (err) {
    showNotice('bots-result', err.message, true);
  }
}

async function resetToken(bot) {
  if (
    !(await confirmAction(
      `A new token for ${bot.username}?`,
      'The old token stops working at once, and the bot is disconnected until it signs in with the new one.',
      'Reset token',
    ))
  )
    return;
  try {
    const { token } = await api('POST', `/api/bots/${bot.id}/token`);
    showToken(`The new token of ${bot.username}.`, token);
    showNotice('bots-result', '');
  } catch (err) {
    showNotice('bots-result', err.message, true);
  }
}

async function remove(bot) {
  if (
    !(await confirmAction(
      `Delete the bot ${bot.username}?`,
      'It leaves every server and its token stops working. Its messages stay, shown as written by “Deleted user”. This cannot be undone.',
      'Delete bot',
    ))
  )
    return;
  try {
    await api('DELETE', `/api/bots/${bot.id}`);
    $('bot-token-box').hidden = true;
    showNotice('bots-result', `The bot ${bot.username} was deleted.`);
  } catch (err) {
    showNotice('bots-result', err.message, true);
  }
  load();
}

export function initBots() {
  $('bot-form').addEventListener('submit', async (e) => {
    e.preventDefault();
    const button = $('bot-form').querySelector('button');
    button.disabled = true;
    try {
      const bot = await api('POST', '/api/bots', { name: $('bot-name', HTMLInputElement).value.trim() });
      $('bot-name', HTMLInputElement).value = '';
      showToken(`${bot.username} is ready.`, bot.token);
      showNotice('bots-result', '');
      load();
    } catch (err) {
      showNotice('bots-result', err.message, true);
    } finally {
      button.disabled = false;
    }
  });
  $('bot-token-copy').addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(shownToken);
      $('bot-token-copy').textContent = 'Copied';
    } catch {
      getSelection().selectAllChildren($('bot-token'));
      showNotice('bots-result', 'Copying was refused by the browser: the token is selected, copy it with Ctrl+C.', true);
    }
  });
  load();
}
