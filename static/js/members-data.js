// @ts-check
// A server's members and roles, loaded into the store when the server is opened (and again
// after a change the stream does not announce in full, such as a new role).
import { api } from './api.js';
import { state, setMembers } from './store.js';

const loading = new Map(); // server id -> promise

/** Loads (once per ready) a server's members and roles into the store; force reloads them. */
export function loadMembers(serverId, force = false) {
  if (!force && state.members.has(serverId) && state.roles.has(serverId)) return Promise.resolve();
  if (!force && loading.has(serverId)) return loading.get(serverId);
  const job = Promise.all([api('GET', `/api/servers/${serverId}/members`), api('GET', `/api/servers/${serverId}/roles`)])
    .then(([members, roles]) => setMembers(serverId, members, roles))
    .finally(() => loading.delete(serverId));
  loading.set(serverId, job);
  return job;
}

export const isLoadingMembers = (serverId) => loading.has(serverId);
