// @ts-check
// "Share to" from another app (the manifest's share_target; docs/ui.md "The installed app"). The
// service worker kept what was shared (sw.js) and sent the app to /share; here the quick
// switcher's dialog, titled "Share to…", asks which channel or conversation it goes to, and that
// room opens with the composer filled in: the text and the link, the files as chips, nothing sent
// until the user sends it. Loaded only then.
import { openSwitcher } from './switcher.js';
import { toast } from './ui.js';

/** @typedef {import('../../types/client').Place} Place */

/**
 * What was shared: what the service worker kept from a POST share (the cache it reads once),
 * else the address's ?title=&text=&url= (a share made with GET, or a link someone built).
 * @param {URLSearchParams} query
 * @returns {Promise<{ title: string, text: string, url: string, files: File[] }>}
 */
async function takeShared(query) {
  const fromAddress = { title: query.get('title') || '', text: query.get('text') || '', url: query.get('url') || '', files: [] };
  if (!('caches' in window) || !(await caches.has('share'))) return fromAddress;
  const cache = await caches.open('share');
  try {
    const fields = await cache.match('/share/fields');
    if (!fields) return fromAddress;
    const kept = await fields.json();
    const files = await Promise.all(
      kept.files.map(async (file, i) => {
        const body = await cache.match(`/share/files/${i}`);
        return body ? new File([await body.blob()], file.name, { type: file.type }) : null;
      }),
    );
    return { title: String(kept.title || ''), text: String(kept.text || ''), url: String(kept.url || ''), files: files.filter(Boolean) };
  } finally {
    // Taken once: a reload of the page does not share it again.
    await caches.delete('share');
  }
}

/**
 * The composer's text: the title, the text and the link, each on its line and each once (an app
 * often puts the link in its text as well).
 */
function composeText({ title, text, url }) {
  const lines = [];
  for (const part of [title, text, url].map((p) => p.trim())) {
    if (part && !lines.some((line) => line.includes(part))) lines.push(part);
  }
  return lines.join('\n');
}

/**
 * Asks where the share goes, then hands it over.
 * @param {URLSearchParams} query the address /share was opened with
 * @param {(place: Place, text: string, files: File[]) => void} deliver opens the place and fills its composer
 */
export async function receiveShare(query, deliver) {
  const shared = await takeShared(query);
  const text = composeText(shared);
  if (!text && !shared.files.length) {
    toast('Nothing arrived to share. Share it again from the other app.');
    return;
  }
  openSwitcher({ title: 'Share to…', onPick: (place) => deliver(place, text, shared.files) });
}
