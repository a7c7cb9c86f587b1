// @ts-check
// Images open in a lightbox over the page (Escape or a click outside closes it), with the
// file name, a download link and "open in a new tab".
import { $, el, iconButton, formatSize } from './ui.js';
import { icon } from './icons.js';

let dialog = null;

function build() {
  dialog = el(
    'dialog',
    { id: 'lightbox', class: 'lightbox', 'aria-label': 'Image' },
    el(
      'figure',
      { class: 'lightbox-figure' },
      el('img', { id: 'lightbox-img', alt: '' }),
      el(
        'figcaption',
        { class: 'lightbox-bar' },
        el('span', { id: 'lightbox-name', class: 'file-name' }),
        el(
          'span',
          { class: 'lightbox-actions' },
          el(
            'a',
            { id: 'lightbox-open', class: 'icon-link', target: '_blank', rel: 'noopener', title: 'Open in a new tab', 'aria-label': 'Open in a new tab' },
            icon('link'),
          ),
          el('a', { id: 'lightbox-download', class: 'icon-link', title: 'Download', 'aria-label': 'Download' }, icon('download')),
          iconButton('x', 'Close', () => dialog.close(), { id: 'lightbox-close' }),
        ),
      ),
    ),
  );
  // A click on the backdrop (the dialog itself, outside the figure) closes it.
  dialog.addEventListener('click', (e) => {
    if (e.target === dialog) dialog.close();
  });
  document.body.append(dialog);
}

export function openLightbox(attachment) {
  if (!dialog) build();
  const url = `/uploads/${encodeURIComponent(attachment.id)}`;
  $('lightbox-img', HTMLImageElement).src = url;
  $('lightbox-img', HTMLImageElement).alt = attachment.name;
  $('lightbox-name').textContent = `${attachment.name} · ${formatSize(attachment.size)}`;
  $('lightbox-open', HTMLAnchorElement).href = url;
  $('lightbox-download', HTMLAnchorElement).href = url;
  $('lightbox-download', HTMLAnchorElement).download = attachment.name;
  dialog.showModal();
  $('lightbox-close').focus();
}
