// @ts-check
// A room's history, page by page: the newest messages, or the page around one message
// (a search result, a pin, an old reply), then older pages as the reader scrolls up and newer
// ones as they scroll down until the present is reached; after a reconnect, what was missed.
import { api, query } from './api.js';
import { toast } from './ui.js';
import { renderAll, addMessage, keepingPosition } from './room-list.js';
import { nearBottom, scrollToBottom, showJump, markRead, flash } from './room-scroll.js';

/**
 * @typedef {import('../../types/room').Room} Room
 * @typedef {import('../../types/room').Opened} Opened
 * @typedef {import('../../types/client').Message} Message
 */

const PAGE_SIZE = 50;
const CATCH_UP_PAGE = 100;

/**
 * @param {Opened} r
 * @param {Record<string, string>} params
 * @returns {Promise<Message[]>}
 */
const fetchPage = (r, params) => api('GET', `${r.base}/messages${query({ ...params, limit: PAGE_SIZE })}`);

/**
 * The messages after `after`, oldest first; null when that message was deleted meanwhile (a
 * 404: the server cannot say what is after it), and the present is loaded instead.
 * @param {Opened} r
 * @param {string} after
 * @param {number} limit
 * @returns {Promise<Message[] | null>}
 */
async function pageAfter(r, after, limit) {
  try {
    return await api('GET', `${r.base}/messages${query({ after, limit })}`);
  } catch (err) {
    if (err.status !== 404) throw err;
    r.loading = loadNewest(r);
    return null;
  }
}

/**
 * @param {Opened} r
 */
export async function loadNewest(r) {
  const page = await fetchPage(r, {});
  if (r.closed) return;
  r.list = page.reverse();
  r.byId = new Map(r.list.map((m) => [m.id, m]));
  r.hasOlder = page.length === PAGE_SIZE;
  r.hasNewer = false;
  const { room } = r;
  room.parts.loading.hidden = true;
  renderAll(r);
  const divider = room.parts.messages.querySelector('.new-divider');
  if (divider) divider.scrollIntoView({ block: 'center' });
  else scrollToBottom(room);
  markRead(room);
}

/**
 * The page centred on a message: up to 24 newer, it, up to 25 older.
 * @param {Opened} r
 * @param {string} id
 */
export async function loadAround(r, id) {
  let page;
  try {
    page = await fetchPage(r, { around: id });
  } catch (err) {
    if (err.status !== 404 && !(r.link && err.status < 500)) throw err; // (a link: 400 and 403 too)
    toast(r.link || 'That message is no longer there.', Boolean(r.link));
    return loadNewest(r);
  }
  if (r.closed) return;
  r.list = page.reverse();
  r.byId = new Map(r.list.map((m) => [m.id, m]));
  const at = r.list.findIndex((m) => m.id === id);
  r.hasOlder = at >= Math.ceil((PAGE_SIZE - 1) / 2);
  r.hasNewer = r.list.length - 1 - at >= Math.floor((PAGE_SIZE - 1) / 2);
  const { room } = r;
  room.parts.loading.hidden = true;
  renderAll(r);
  flash(room, id);
  showJump(room, r.hasNewer);
  if (!r.hasNewer) markRead(room);
}

/**
 * Opened around a message: the next newer page as the reader scrolls down, until the present.
 * @param {Room} room
 */
export async function loadNewer(room) {
  const r = room.current;
  if (!r || r.loadingNewer || !r.hasNewer || !r.list.length) return;
  r.loadingNewer = true;
  try {
    // Our newest message may have been deleted meanwhile: the present is the surest place to go.
    const page = await pageAfter(r, r.list.at(-1).id, PAGE_SIZE);
    if (!page || r.closed) return;
    for (const m of page) {
      if (r.byId.has(m.id)) continue;
      r.list.push(m);
      r.byId.set(m.id, m);
    }
    r.hasNewer = page.length === PAGE_SIZE;
    keepingPosition(room, () => renderAll(r)); // what was read stays where it was; the new page is below
    showJump(room, r.hasNewer || !nearBottom(room));
    if (!r.hasNewer) markRead(room);
  } catch (err) {
    toast(err.message);
  } finally {
    r.loadingNewer = false;
  }
}

/**
 * @param {Room} room
 */
export async function loadOlder(room) {
  const r = room.current;
  if (!r || r.loadingOlder || !r.hasOlder || !r.list.length) return;
  r.loadingOlder = true;
  room.parts.loadingOlder.hidden = false;
  try {
    // The oldest message may have been deleted meanwhile (404): try the next one we hold.
    let page = null;
    for (const m of r.list.slice(0, 5)) {
      try {
        page = await fetchPage(r, { before: m.id });
        break;
      } catch (err) {
        if (err.status !== 404) throw err;
      }
    }
    if (r.closed || !page) return;
    const scroller = room.parts.scroller;
    const fromBottom = scroller.scrollHeight - scroller.scrollTop;
    const older = page.reverse().filter((m) => !r.byId.has(m.id));
    for (const m of older) r.byId.set(m.id, m);
    r.list = [...older, ...r.list];
    r.hasOlder = page.length === PAGE_SIZE;
    renderAll(r);
    scroller.scrollTop = scroller.scrollHeight - fromBottom; // keep what the reader was looking at
  } catch (err) {
    toast(err.message);
  } finally {
    r.loadingOlder = false;
    room.parts.loadingOlder.hidden = true;
  }
}

/**
 * After a reconnect: everything posted after the newest message we hold, oldest first.
 * @param {Room} room
 */
export async function catchUp(room) {
  const r = room.current;
  if (!r) return;
  await r.loading;
  if (r.closed || r.hasNewer) return; // paging towards the present fetches what is missing
  const newest = r.list.at(-1);
  if (!newest) {
    r.loading = loadNewest(r).catch((err) => toast(err.message));
    return;
  }
  let after = newest.id;
  try {
    for (;;) {
      const page = await pageAfter(r, after, CATCH_UP_PAGE);
      if (!page || r.closed) return;
      for (const m of page) addMessage(r, m);
      if (page.length < CATCH_UP_PAGE) break;
      after = page.at(-1).id;
    }
    markRead(room);
  } catch (err) {
    toast(err.message);
  }
}

/**
 * Back to the newest messages, from wherever the reader is.
 * @param {Room} room
 */
export function jumpToPresent(room) {
  const r = room.current;
  if (!r) return;
  if (r.hasNewer) {
    room.parts.loading.hidden = false;
    r.loading = loadNewest(r).catch((err) => toast(err.message));
    return;
  }
  scrollToBottom(room);
  markRead(room);
}
