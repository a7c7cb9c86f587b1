// @ts-check
// Server settings → Overview → Export server (the owner; issue 47 #8): the zip of
// GET /api/servers/{id}/export (DiscordChatExporter's shape, which the importer reads back), read
// as the server makes it, with what has come so far shown and Cancel; then saved by the browser
// under the name the server gives. The server streams it without a length, so the progress is
// what has arrived, not a share of a total. Loaded on first use.
import { el, formatSize } from './ui.js';

/** The file name of a Content-Disposition (RFC 6266: filename* first), or null. */
function fileNameOf(header) {
  const star = /filename\*=UTF-8''([^;]+)/i.exec(header || '');
  if (star) return decodeURIComponent(star[1]);
  return /filename="([^"]+)"/i.exec(header || '')?.[1] || null;
}

/** The server's refusal in words. */
async function refusal(res) {
  if (res.status === 429) {
    const wait = Number(res.headers.get('Retry-After'));
    return `You exported this server several times recently.${wait ? ` Try again in ${Math.ceil(wait / 60)} min.` : ' Try again later.'}`;
  }
  return (await res.text()) || `The export failed (${res.status}).`;
}

/**
 * Runs one export, shown in `box` (a progress bar, what has arrived, Cancel); `button` is off meanwhile.
 * @param {{ id: string, name: string }} server
 * @param {HTMLElement} box
 * @param {HTMLButtonElement} button
 */
export async function exportServer(server, box, button) {
  const controller = new AbortController();
  const progress = el('progress', { class: 'server-export-progress', 'aria-label': `Export of ${server.name}` });
  const text = el('p', { class: 'muted', role: 'status', text: 'Making the export…' });
  const cancel = el('button', { type: 'button', class: 'small', onclick: () => controller.abort() }, 'Cancel');
  box.replaceChildren(progress, text, cancel);
  box.hidden = false;
  button.disabled = true;
  try {
    const res = await fetch(`/api/servers/${encodeURIComponent(server.id)}/export`, { signal: controller.signal, credentials: 'same-origin' });
    if (!res.ok || !res.body) throw new Error(await refusal(res));
    const reader = res.body.getReader();
    const chunks = [];
    let received = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      received += value.length;
      text.textContent = `${formatSize(received)} received…`;
    }
    const name = fileNameOf(res.headers.get('Content-Disposition')) || 'server-export.zip';
    const url = URL.createObjectURL(new Blob(chunks, { type: 'application/zip' }));
    const link = el('a', { href: url, download: name, hidden: true });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 60_000);
    progress.max = 1;
    progress.value = 1;
    text.textContent = `Done: ${name} (${formatSize(received)}), saved by your browser.`;
  } catch (err) {
    progress.remove();
    text.textContent = err.name === 'AbortError' ? 'Export cancelled.' : `The export stopped: ${err.message}`;
  } finally {
    cancel.remove();
    button.disabled = false;
  }
}
