// @ts-check
// Dialogs with several fields (edit a channel, create an invite, ban with a reason, type a
// server's name to delete it) and a plain read-only dialog (edit history). One form dialog on
// the page, built on first use and refilled for each question, like ui.js's ask().
import { $, el, showText } from './ui.js';
import { icon } from './icons.js';

/**
 * askForm({title, text, submit, danger, fields: [{name, label, type, value, options, hint, note,
 * required, maxLength, mustEqual, rows}]}) resolves to {name: value, …} (checkboxes give
 * booleans) or null when cancelled. type: 'text' (default), 'textarea', 'select' (options:
 * [[value, label], …]), 'checkbox' or 'color' (swatches, "No colour" and a picker; the value is
 * '#rrggbb' or '' for none). mustEqual: the submit button stays off until the field holds
 * exactly that text (delete a server by typing its name). note: a line above the field (the
 * heading of the checkboxes that follow it). Field ids are `form-<name>`.
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
  $('form-fields').replaceChildren(
    ...inputs.flatMap(([f, input]) => [f.note ? el('p', { class: 'field-note', text: f.note }) : null, fieldRow(f, input)].filter(Boolean)),
  );
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
        resolve(Object.fromEntries(inputs.map(([f, input]) => [f.name, valueOf(f, input)])));
      },
      { once: true },
    );
  });
}

const valueOf = (f, input) => (f.type === 'checkbox' ? input.checked : f.type === 'color' ? (input.dataset.none === 'true' ? '' : input.value) : input.value);

/** Discord's role colours: what the swatches offer before the picker. */
const SWATCHES = ['#1abc9c', '#2ecc71', '#3498db', '#9b59b6', '#e91e63', '#f1c40f', '#e67e22', '#e74c3c', '#95a5a6', '#607d8b'];

/** The swatches of a 'color' field around its picker (`input`): one pressed, "No colour" first. */
function colorChoices(input) {
  const buttons = [];
  const press = () => {
    for (const b of buttons) b.setAttribute('aria-pressed', String(input.dataset.none === 'true' ? b.dataset.color === '' : b.dataset.color === input.value));
  };
  const pick = (color) => {
    input.dataset.none = String(color === '');
    if (color) input.value = color;
    press();
  };
  buttons.push(
    el('button', { type: 'button', class: 'swatch none', 'data-color': '', 'aria-label': 'No colour', title: 'No colour', onclick: () => pick('') }),
    ...SWATCHES.map((c) => {
      const swatch = el('button', { type: 'button', class: 'swatch', 'data-color': c, 'aria-label': `Colour ${c}`, title: c, onclick: () => pick(c) });
      swatch.style.backgroundColor = c; // the CSSOM, which the CSP allows (a style attribute it would refuse)
      return swatch;
    }),
  );
  input.addEventListener('input', () => pick(input.value));
  press();
  return el('div', { class: 'swatches', role: 'group', 'aria-label': 'Colours' }, buttons);
}

function fieldInput(f) {
  const id = `form-${f.name}`;
  if (f.type === 'color') {
    const input = el('input', { id, type: 'color', value: f.value || SWATCHES[2], 'aria-describedby': f.hint ? `${id}-hint` : null });
    input.dataset.none = String(!f.value);
    return input;
  }
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
  if (f.type === 'color')
    return el(
      'div',
      { class: 'form-field color-field' },
      el('span', { class: 'field-label', text: f.label }),
      el('div', { class: 'color-row' }, colorChoices(input), el('label', { for: input.id, class: 'custom-color' }, input, 'Other…')),
      hint,
    );
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
