// Small DOM helpers shared by the pages. User text only ever enters the page as text nodes
// (textContent or append of a string), never as HTML.

export const $ = (id) => document.getElementById(id);

// Props that would bypass the CSP or parse markup are refused outright.
const refused = (key) => key === 'style' || key === 'srcdoc' || /html$/i.test(key);

/**
 * el('button', {class: 'x', text: 'Send', onclick: fn, 'aria-label': '…'}, ...children).
 * Strings among the children become text nodes; null/false children are skipped.
 */
export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (refused(key)) throw new Error(`el(): ${key} is not allowed`);
    if (key === 'class') node.className = value;
    else if (key === 'text') node.textContent = value;
    else if (key.startsWith('on') && typeof value === 'function') node.addEventListener(key.slice(2), value);
    else if (key.startsWith('data-') || key.startsWith('aria-') || key === 'role' || key === 'for') node.setAttribute(key, value === true ? '' : String(value));
    else node[key] = value;
  }
  node.append(...children.flat(Infinity).filter((c) => c !== null && c !== undefined && c !== false));
  return node;
}

let toastTimer = 0;
/** A short message at the bottom of the page; errors stay until the next one. */
export function notify(text, isError = true) {
  const toast = $('toast');
  if (!toast) return;
  toast.textContent = text;
  toast.classList.toggle('error', isError);
  toast.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { toast.hidden = true; }, isError ? 8000 : 4000);
}

/** Shows `text` in a notice paragraph (hidden when text is empty). */
export function showText(id, text) {
  const node = $(id);
  node.textContent = text || '';
  node.hidden = !text;
}

export function formatTime(isoText) {
  const date = new Date(isoText);
  const now = new Date();
  const time = date.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
  if (date.toDateString() === now.toDateString()) return time;
  return `${date.toLocaleDateString()} ${time}`;
}

export function formatSize(bytes) {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

export const STANDING_NAMES = ['All good', 'Limited', 'Very limited', 'At risk', 'Suspended'];

/**
 * The page's one text dialog (#ask-dialog): resolves to the text typed, or null when
 * cancelled. With {confirm: true} it only asks yes or no and resolves to '' or null.
 */
export function ask({ title, label = '', submit = 'OK', value = '', confirm = false, maxLength = 1000 }) {
  const dialog = $('ask-dialog');
  const input = $('ask-input');
  $('ask-title').textContent = title;
  $('ask-label').textContent = label;
  $('ask-submit').textContent = submit;
  $('ask-field').hidden = confirm;
  input.required = !confirm;
  input.maxLength = maxLength;
  input.value = value;
  dialog.returnValue = '';
  dialog.showModal();
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => resolve(dialog.returnValue === 'ok' ? (confirm ? '' : input.value) : null), { once: true });
  });
}

/** Wires the cancel buttons of every <dialog> on the page (forms use method="dialog"). */
export function wireDialogs() {
  for (const button of document.querySelectorAll('dialog [data-cancel]')) {
    button.addEventListener('click', () => button.closest('dialog').close());
  }
}
