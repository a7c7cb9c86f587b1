// @ts-check
// Server settings → Emoji (issue 50): the server's custom emoji and stickers, uploaded, renamed
// and deleted by who holds manage_emojis (the owner and full administrators always; docs/api.md
// "Custom emoji", "Stickers"). The server checks, decodes and redraws every image; what it
// refuses (a name taken, no slot left, a file too large or not an image) is said as it says it.
// Loaded when the tab is first opened.
import { api, upload } from './api.js';
import { el, toast, ask, confirmAction } from './ui.js';
import { askForm } from './dialogs.js';
import { state, displayName } from './store.js';
import { setServerEmoji } from './custom-emoji.js';

/**
 * @typedef {import('../../types/client').Emoji} Emoji
 * @typedef {import('../../types/client').Sticker} Sticker
 */

const EMOJI_SLOTS = 100; // of each kind, static and animated
const STICKER_SLOTS = 30;
const EMOJI_TYPES = 'image/png,image/jpeg,image/gif,image/webp';
const STICKER_TYPES = 'image/png,image/apng,image/gif,image/webp';

/** A name from a file's name: what an emoji name may hold (2 to 32 of A-Z a-z 0-9 _). */
const nameOf = (file) =>
  file.name
    .replace(/\.[^.]*$/, '')
    .replace(/[^A-Za-z0-9_]+/g, '_')
    .slice(0, 32);

/** Sends one multipart upload; resolves to the created record. */
const send = (path, form) => upload(path, form, () => {}).promise;

/**
 * The panel: {nodes}.
 * @param {import('../../types/client').ServerEntry} server
 */
export function emojiPanel(server) {
  const base = `/api/servers/${server.id}`;
  const creator = (userId) => displayName((state.members.get(server.id) || []).find((m) => m.user_id === userId) || { user_id: userId, username: 'someone' });

  // ---- emoji ----
  const emojiCount = el('p', { class: 'muted', 'aria-live': 'polite' });
  const emojiList = el('ul', { id: 'emoji-list', class: 'settings-list', 'aria-label': 'Custom emoji of the server' });
  const emojiName = el('input', { id: 'emoji-name', required: true, minLength: 2, maxLength: 32, pattern: '[A-Za-z0-9_]{2,32}', autocomplete: 'off' });
  const emojiFile = el('input', { id: 'emoji-file', type: 'file', accept: EMOJI_TYPES, required: true });
  emojiFile.addEventListener('change', () => {
    const file = emojiFile.files?.[0];
    if (file && !emojiName.value) emojiName.value = nameOf(file);
  });
  const emojiForm = el(
    'form',
    { class: 'settings-form', id: 'emoji-form' },
    el('label', { for: 'emoji-file', text: 'Image (PNG, JPEG, GIF or WebP, at most 1 MB; drawn at 128 × 128)' }),
    emojiFile,
    el('label', { for: 'emoji-name', text: 'Name (2 to 32 letters, digits or _)' }),
    el('div', { class: 'inline-form' }, emojiName, el('button', { type: 'submit', class: 'primary' }, 'Upload emoji')),
  );
  emojiForm.addEventListener('submit', async (e) => {
    e.preventDefault();
    const file = emojiFile.files?.[0];
    if (!file) return;
    const form = new FormData();
    form.append('name', emojiName.value);
    form.append('image', file, file.name);
    try {
      const made = await send(`${base}/emojis`, form);
      toast(`:${made.name}: is ready.`, false);
      emojiName.value = '';
      emojiFile.value = '';
      loadEmoji();
    } catch (err) {
      toast(err.message);
    }
  });

  /** @param {Emoji} emoji */
  const emojiRow = (emoji) =>
    el(
      'li',
      { class: 'emoji-row', 'data-id': emoji.id },
      el('img', { src: emoji.url, alt: '', width: 40, height: 40, loading: 'lazy' }),
      el(
        'span',
        { class: 'row-text' },
        el('span', { class: 'row-title', text: `:${emoji.name}:` }),
        el('span', { class: 'muted row-sub', text: `${emoji.animated ? 'animated · ' : ''}added by ${creator(emoji.creator_id)}` }),
      ),
      el(
        'span',
        { class: 'row-actions' },
        el('button', { type: 'button', class: 'small', 'aria-label': `Rename :${emoji.name}:`, onclick: () => renameEmoji(emoji) }, 'Rename'),
        el('button', { type: 'button', class: 'small danger', 'aria-label': `Delete :${emoji.name}:`, onclick: () => deleteEmoji(emoji) }, 'Delete'),
      ),
    );

  async function loadEmoji() {
    try {
      /** @type {Emoji[]} */
      const list = await api('GET', `${base}/emojis`);
      setServerEmoji(server.id, list);
      const animated = list.filter((e) => e.animated).length;
      emojiCount.textContent = `${list.length - animated} of ${EMOJI_SLOTS} static and ${animated} of ${EMOJI_SLOTS} animated emoji.`;
      emojiList.replaceChildren(...list.map(emojiRow));
    } catch (err) {
      emojiCount.textContent = err.message;
    }
  }

  /** @param {Emoji} emoji */
  async function renameEmoji(emoji) {
    const name = await ask({
      title: `Rename :${emoji.name}:`,
      label: 'Name (2 to 32 letters, digits or _)',
      value: emoji.name,
      submit: 'Rename',
      maxLength: 32,
    });
    if (name === null || name === emoji.name) return;
    try {
      await api('PATCH', `${base}/emojis/${emoji.id}`, { name });
      loadEmoji();
    } catch (err) {
      toast(err.message);
    }
  }

  /** @param {Emoji} emoji */
  async function deleteEmoji(emoji) {
    if (!(await confirmAction(`Delete :${emoji.name}:?`, 'Messages and reactions that used it show :name: as text instead.', 'Delete emoji'))) return;
    try {
      await api('DELETE', `${base}/emojis/${emoji.id}`);
      loadEmoji();
    } catch (err) {
      toast(err.message);
    }
  }

  // ---- stickers ----
  const stickerCount = el('p', { class: 'muted', 'aria-live': 'polite' });
  const stickerList = el('ul', { id: 'sticker-list', class: 'settings-list', 'aria-label': 'Stickers of the server' });
  const stickerFile = el('input', { id: 'sticker-file', type: 'file', accept: STICKER_TYPES, required: true });
  const stickerName = el('input', { id: 'sticker-name', required: true, minLength: 2, maxLength: 30, autocomplete: 'off' });
  const stickerTags = el('input', { id: 'sticker-tags', required: true, maxLength: 32, autocomplete: 'off', placeholder: '🙂 or :smile:' });
  const stickerDescription = el('input', { id: 'sticker-description', maxLength: 100, autocomplete: 'off' });
  stickerFile.addEventListener('change', () => {
    const file = stickerFile.files?.[0];
    if (file && !stickerName.value) stickerName.value = file.name.replace(/\.[^.]*$/, '').slice(0, 30);
  });
  const stickerForm = el(
    'form',
    { class: 'settings-form', id: 'sticker-form' },
    el('label', { for: 'sticker-file', text: 'Image (PNG, APNG, GIF or WebP, at most 512 KB; drawn at 320 × 320)' }),
    stickerFile,
    el('label', { for: 'sticker-name', text: 'Name (2 to 30 characters)' }),
    stickerName,
    el('label', { for: 'sticker-tags', text: 'The emoji it stands for' }),
    stickerTags,
    el('label', { for: 'sticker-description', text: 'Description (optional)' }),
    stickerDescription,
    el('div', {}, el('button', { type: 'submit', class: 'primary' }, 'Upload sticker')),
  );
  stickerForm.addEventListener('submit', async (e) => {
    e.preventDefault();
    const file = stickerFile.files?.[0];
    if (!file) return;
    const form = new FormData();
    form.append('name', stickerName.value);
    form.append('tags', stickerTags.value);
    if (stickerDescription.value) form.append('description', stickerDescription.value);
    form.append('image', file, file.name);
    try {
      const made = await send(`${base}/stickers`, form);
      toast(`The sticker ${made.name} is ready.`, false);
      stickerForm.reset();
      loadStickers();
    } catch (err) {
      toast(err.message);
    }
  });

  /** @param {Sticker} sticker */
  const stickerRow = (sticker) =>
    el(
      'li',
      { class: 'sticker-row', 'data-id': sticker.id },
      el('img', { src: sticker.url, alt: '', width: 56, height: 56, loading: 'lazy' }),
      el(
        'span',
        { class: 'row-text' },
        el('span', { class: 'row-title', text: `${sticker.tags} ${sticker.name}` }),
        el('span', { class: 'muted row-sub', text: sticker.description || `added by ${creator(sticker.creator_id)}` }),
      ),
      el(
        'span',
        { class: 'row-actions' },
        el('button', { type: 'button', class: 'small', 'aria-label': `Edit the sticker ${sticker.name}`, onclick: () => editSticker(sticker) }, 'Edit'),
        el(
          'button',
          { type: 'button', class: 'small danger', 'aria-label': `Delete the sticker ${sticker.name}`, onclick: () => deleteSticker(sticker) },
          'Delete',
        ),
      ),
    );

  async function loadStickers() {
    try {
      /** @type {Sticker[]} */
      const list = await api('GET', `${base}/stickers`);
      stickerCount.textContent = `${list.length} of ${STICKER_SLOTS} stickers.`;
      stickerList.replaceChildren(...list.map(stickerRow));
    } catch (err) {
      stickerCount.textContent = err.message;
    }
  }

  /** @param {Sticker} sticker */
  async function editSticker(sticker) {
    const answer = await askForm({
      title: `Edit the sticker ${sticker.name}`,
      fields: [
        { name: 'name', label: 'Name', value: sticker.name, required: true, maxLength: 30 },
        { name: 'tags', label: 'The emoji it stands for', value: sticker.tags, required: true, maxLength: 32 },
        { name: 'description', label: 'Description', value: sticker.description || '', maxLength: 100 },
      ],
    });
    if (!answer) return;
    try {
      await api('PATCH', `${base}/stickers/${sticker.id}`, answer);
      loadStickers();
    } catch (err) {
      toast(err.message);
    }
  }

  /** @param {Sticker} sticker */
  async function deleteSticker(sticker) {
    if (!(await confirmAction(`Delete the sticker ${sticker.name}?`, 'Messages that carried it show its name instead.', 'Delete sticker'))) return;
    try {
      await api('DELETE', `${base}/stickers/${sticker.id}`);
      loadStickers();
    } catch (err) {
      toast(err.message);
    }
  }

  loadEmoji();
  loadStickers();
  return {
    nodes: [
      el('h3', { text: 'Emoji' }),
      el('p', {
        class: 'muted',
        text: "Members of the server may use its emoji and stickers anywhere: in other servers' channels and in direct messages too.",
      }),
      emojiForm,
      emojiCount,
      emojiList,
      el('h3', { text: 'Stickers' }),
      stickerForm,
      stickerCount,
      stickerList,
    ],
  };
}
