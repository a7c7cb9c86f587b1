// @ts-check
// Blocking: the users the caller blocked (GET /api/blocks once at start, then kept in the
// store), block and unblock from the user menu or the Friends view. A block ends a friendship
// and any request; the blocked user's messages collapse in rooms and search results.
import { api } from './api.js';
import { toast, confirmAction } from './ui.js';
import { setBlocked, removeFriend, displayName } from './store.js';

/** The blocked users' records, newest first, as the server lists them. */
export let blockedUsers = [];

export async function loadBlocks() {
  try {
    blockedUsers = await api('GET', '/api/blocks');
    setBlocked(blockedUsers);
  } catch (err) {
    toast(err.message);
  }
}

export async function blockUser(user) {
  const name = displayName(user);
  if (
    !(await confirmAction(
      `Block ${name}?`,
      `You will no longer be friends, and neither of you can start a direct message or add the other to a group. ${name}'s messages in servers are collapsed for you. They are not told.`,
      'Block',
    ))
  )
    return false;
  try {
    await api('PUT', `/api/users/${user.user_id}/block`);
    removeFriend(user.user_id);
    await loadBlocks();
    toast(`${name} is blocked.`, false);
    return true;
  } catch (err) {
    toast(err.message);
    return false;
  }
}

export async function unblockUser(user) {
  try {
    await api('DELETE', `/api/users/${user.user_id}/block`);
    await loadBlocks();
    toast(`${displayName(user)} is unblocked. A friendship has to be asked for again.`, false);
  } catch (err) {
    toast(err.message);
  }
}
