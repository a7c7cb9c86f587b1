// @ts-check
// The custom emoji (and stickers) of the user's servers (issue 50), read when the picker, the
// `:name` autocomplete or the sticker picker first wants them, and kept: `emojis_updated` brings
// a server's whole new list. A member may use their servers' emoji everywhere (docs/api.md
// "Reactions", Decision), so every server's are offered in every room, the room's server first.
// Loaded with the picker, the first `:` typed, the composer's + or the Emoji tab: not with the
// page, whose first load stays within its weight (docs/performance.md).
import { api } from './api.js';
import { state, onEvent } from './store.js';

/**
 * @typedef {import('../../types/client').Emoji} Emoji
 * @typedef {import('../../types/client').Sticker} Sticker
 * @typedef {Emoji & { serverId: string, serverName: string }} ServerEmoji
 */

/** @type {Map<string, Emoji[]>} server id -> its emoji, as last read */
const emojis = new Map();
/** @type {Map<string, Promise<Emoji[]>>} server id -> the read under way */
const reading = new Map();

onEvent('emojis_updated', (ev) => emojis.set(ev.server_id, ev.emojis));
onEvent('server_left', (ev) => emojis.delete(ev.server_id));

/** @param {string} serverId */
function serverEmoji(serverId) {
  const known = emojis.get(serverId);
  if (known) return Promise.resolve(known);
  if (!reading.has(serverId)) {
    const read = /** @type {Promise<Emoji[]>} */ (api('GET', `/api/servers/${serverId}/emojis`))
      .then((list) => {
        emojis.set(serverId, list);
        return list;
      })
      .catch(() => /** @type {Emoji[]} */ ([]))
      .finally(() => reading.delete(serverId));
    reading.set(serverId, read);
  }
  return /** @type {Promise<Emoji[]>} */ (reading.get(serverId));
}

/**
 * Every server's emoji (the first server `firstId`'s first), each with its server's id and name.
 * @param {string | null | undefined} [firstId]
 * @returns {Promise<ServerEmoji[]>}
 */
export async function allCustomEmoji(firstId) {
  const servers = [...state.servers].sort((a, b) => Number(b.id === firstId) - Number(a.id === firstId));
  const lists = await Promise.all(servers.map((s) => serverEmoji(s.id)));
  return servers.flatMap((s, i) => lists[i].map((e) => ({ ...e, serverId: s.id, serverName: s.name })));
}

/**
 * The emoji as already read, without waiting (the autocomplete asks on every key).
 * @param {string | null | undefined} [firstId]
 * @returns {ServerEmoji[]}
 */
export function knownCustomEmoji(firstId) {
  const servers = [...state.servers].sort((a, b) => Number(b.id === firstId) - Number(a.id === firstId));
  return servers.flatMap((s) => (emojis.get(s.id) || []).map((e) => ({ ...e, serverId: s.id, serverName: s.name })));
}

/** A server's list changed here (settings): the picker shows the new one at once. */
export const setServerEmoji = (serverId, list) => emojis.set(serverId, list);

/**
 * Every server's stickers (no live event: read each time the picker opens, docs/api.md "Stickers").
 * @param {string | null | undefined} [firstId]
 * @returns {Promise<(Sticker & { serverName: string })[]>}
 */
export async function allStickers(firstId) {
  const servers = [...state.servers].sort((a, b) => Number(b.id === firstId) - Number(a.id === firstId));
  const lists = await Promise.all(servers.map((s) => api('GET', `/api/servers/${s.id}/stickers`).catch(() => [])));
  return servers.flatMap((s, i) => /** @type {Sticker[]} */ (lists[i]).map((x) => ({ ...x, serverName: s.name })));
}
