// @ts-check
// Group chats: rename (any member), add a friend (any member), remove someone (the group's
// creator) and leave. The stream's conversation_updated and conversation_left events keep the
// sidebar, the header and the member list current; the answers update them at once as well.
import { api } from './api.js';
import { el, toast, confirmAction } from './ui.js';
import { askForm } from './dialogs.js';
import { openPopup, menuKeys, menuItem } from './popup.js';
import { state, findConversation, conversationTitle, displayName, isBlocked, applyConversation, removeConversation } from './store.js';

const applyRecord = (record) => applyConversation(record.id, record);

let menu = null;
/** The group's menu in the room header. */
export function openGroupMenu(conversation, anchor) {
  if (!menu) {
    menu = el('div', { id: 'group-menu', class: 'popup menu', role: 'menu', 'aria-label': 'Group menu' });
    menuKeys(menu);
  }
  menu.replaceChildren(
    menuItem('Rename group', 'edit', () => renameGroup(conversation)),
    menuItem('Add a friend', 'user', () => addToGroup(conversation)),
    el('div', { class: 'menu-sep', role: 'separator' }),
    menuItem('Leave group', 'door', () => leaveGroup(conversation), { danger: true }),
  );
  openPopup(menu, anchor);
  menu.querySelector('[role="menuitem"]')?.focus();
}

export async function renameGroup(conversation) {
  const answer = await askForm({
    title: 'Rename the group',
    submit: 'Rename',
    fields: [{ name: 'name', label: 'Group name', value: conversation.name || '', required: true, maxLength: 100 }],
  });
  if (!answer) return;
  try {
    applyRecord(await api('PATCH', `/api/conversations/${conversation.id}`, { name: answer.name }));
  } catch (err) {
    toast(err.message);
  }
}

export async function addToGroup(conversation) {
  const candidates = state.friends.filter((f) => !conversation.members.some((m) => m.user_id === f.user_id) && !isBlocked(f.user_id));
  if (!candidates.length) return toast('All your friends are in this group already (only friends can be added).', false);
  const answer = await askForm({
    title: `Add a friend to ${conversationTitle(conversation)}`,
    text: 'They will see the whole history of the group.',
    submit: 'Add',
    fields: [{ name: 'user', label: 'Friend', type: 'select', options: candidates.map((f) => [f.user_id, displayName(f)]) }],
  });
  if (!answer) return;
  try {
    applyRecord(await api('PUT', `/api/conversations/${conversation.id}/members/${answer.user}`));
  } catch (err) {
    toast(err.message);
  }
}

/** The group's creator removes someone. */
export async function removeFromGroup(conversation, user) {
  const name = displayName(user);
  if (!(await confirmAction(`Remove ${name} from the group?`, `${name} can no longer read or write in ${conversationTitle(conversation)}.`, 'Remove'))) return;
  try {
    await api('DELETE', `/api/conversations/${conversation.id}/members/${user.user_id}`);
    const c = findConversation(conversation.id);
    if (c) applyRecord({ ...c, members: c.members.filter((m) => m.user_id !== user.user_id) });
  } catch (err) {
    toast(err.message);
  }
}

export async function leaveGroup(conversation) {
  if (
    !(await confirmAction(
      `Leave ${conversationTitle(conversation)}?`,
      'You will no longer see its messages. Someone in it would have to add you again.',
      'Leave group',
    ))
  )
    return;
  try {
    await api('DELETE', `/api/conversations/${conversation.id}/members/${state.me.user_id}`);
    removeConversation(conversation.id);
  } catch (err) {
    toast(err.message);
  }
}
