// @ts-check
// Dialogs with several fields (edit a channel, create an invite, ban with a reason, type a
// server's name to delete it) and a plain read-only dialog (edit history). One form dialog on
// the page, built on first use and refilled for each question, like ui.js's ask().
import { $, el, showText } from './ui.js';
import { icon } from './icons.js';

/**
 * askForm({title, text, submit, danger, fields: [{name, label, type, value, options, hint,
 * required, maxLength, mustEqual, rows}]}) resolves to {name: value, …} (checkboxes give
 * booleans) or null when cancelled. type: 'text' (default), 'textarea', 'select' (options:
 * [[value, label], …]) or 'checkbox'. mustEqual: the submit button stays off until the field
 * holds exactly that text (delete a server by typing its name). Field ids are `form-<name>`.
 */
export function askForm({ title, text = '', submit = 'Save', danger = false, fields = [] }) {
  let dialog = $('form-dialog', HTMLDialogElement);
  if (!dialog) {
    dialog = el(
      'dialog',
      { id: 'form-dialog', 'aria-labelledby': 'form-title' },
      el(
        'form',
        { id: 'form-form', method: 'dialog', class: 'dialog-form' },
        el('h2', { id: 'form-title' }),
        el('p', { id: 'form-text', class: 'dialog-text' }),
        el('div', { id: 'form-fields' }),
        el(
          'div',
          { class: 'button-row' },
          el('button', { type: 'button', 'data-cancel': true, onclick: () => dialog.close() }, 'Cancel'),
          el('button', { id: 'form-submit', type: 'submit', value: 'ok', class: 'primary' }, 'OK'),
        ),
      ),
    );
    document.body.append(dialog);
  }
  $('form-title').textContent = title;
  showText('form-text', text);
  const submitButton = $('form-submit', HTMLButtonElement);
  submitButton.textContent = submit;
  submitButton.classList.toggle('danger-fill', danger);
  const inputs = fields.map((f) => [f, fieldInput(f)]);
  $('form-fields').replaceChildren(...inputs.map(([f, input]) => fieldRow(f, input)));
  const guarded = inputs.filter(([f]) => f.mustEqual !== undefined);
  const check = () => {
    submitButton.disabled = guarded.some(([f, input]) => input.value !== f.mustEqual);
  };
  for (const [, input] of guarded) input.addEventListener('input', check);
  check();
  dialog.returnValue = '';
  dialog.showModal();
  (inputs.find(([f]) => f.type !== 'select' && f.type !== 'checkbox')?.[1] || submitButton).focus();
  return new Promise((resolve) => {
    dialog.addEventListener(
      'close',
      () => {
        if (dialog.returnValue !== 'ok') return resolve(null);
        resolve(Object.fromEntries(inputs.map(([f, input]) => [f.name, f.type === 'checkbox' ? input.checked : input.value])));
      },
      { once: true },
    );
  });
}

function fieldInput(f) {
  const id = `form-${f.name}`;
  const described = f.hint ? `${id}-hint` : null;
  if (f.type === 'select') {
    return el(
      'select',
      { id, 'aria-describedby': described },
      f.options.map(([value, label]) => el('option', { value: String(value), text: label, selected: String(value) === String(f.value ?? '') })),
    );
  }
  if (f.type === 'checkbox') return el('input', { id, type: 'checkbox', checked: Boolean(f.value), 'aria-describedby': described });
  const props = {
    id,
    value: f.value ?? '',
    required: Boolean(f.required),
    maxLength: f.maxLength || 1000,
    autocomplete: 'off',
    'aria-describedby': described,
    placeholder: f.placeholder || '',
  };
  return f.type === 'textarea' ? el('textarea', { ...props, rows: f.rows || 3 }) : el('input', props);
}

function fieldRow(f, input) {
  const hint = f.hint ? el('small', { id: `form-${f.name}-hint`, class: 'field-hint', text: f.hint }) : null;
  if (f.type === 'checkbox') return el('div', { class: 'check-line form-field' }, input, el('label', { for: input.id, text: f.label }), hint);
  return el('div', { class: 'form-field' }, el('label', { for: input.id, text: f.label }), input, hint);
}

/** A dialog that only shows something (edit history): a title, the content, a close button. */
export function showDialog(id, title, ...content) {
  let dialog = $(id, HTMLDialogElement);
  if (!dialog) {
    dialog = el('dialog', { id, class: 'show-dialog', 'aria-labelledby': `${id}-title` });
    document.body.append(dialog);
  }
  const close = el(
    'button',
    { type: 'button', class: 'icon-button dialog-close', 'aria-label': 'Close', title: 'Close (Escape)', onclick: () => dialog.close() },
    icon('x'),
  );
  dialog.replaceChildren(el('div', { class: 'show-head' }, el('h2', { id: `${id}-title`, text: title }), close), el('div', { class: 'show-body' }, ...content));
  if (!dialog.open) dialog.showModal();
  close.focus();
  return dialog;
}
