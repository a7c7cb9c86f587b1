// @ts-check
// Users the client has not met yet. A message names people with @username and lists the ids the
// server recognised (`mentions`); one who is in no member list, conversation or friend list this
// client loaded would show as plain text. Their records are asked for once (GET /api/users/{id})
// and the views redraw ('users').
import { api } from './api.js';
import { state, learnUser, emit } from './store.js';

const asked = new Set(); // ids asked for already, answered or not: never asked twice

/** Fetches the users among `ids` this client does not know yet; 'users' is emitted once they are in. */
export async function learnUsers(ids) {
  const wanted = ids.filter((id) => !state.users.has(id) && !asked.has(id));
  if (!wanted.length) return;
  for (const id of wanted) asked.add(id);
  const users = await Promise.all(wanted.map((id) => api('GET', `/api/users/${id}`).catch(() => null)));
  for (const user of users) learnUser(user);
  if (users.some(Boolean)) emit('users');
}
