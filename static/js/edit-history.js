// @ts-check
// "(edited)" opens every version of a message, oldest first (GET …/messages/{id}/history),
// for those the server lets read it: the author, the server's owner and administrators, and
// site administrators.
import { api } from './api.js';
import { el, toast } from './ui.js';
import { showDialog } from './dialogs.js';
import { displayName } from './store.js';

export async function showEditHistory(base, message) {
  try {
    const { versions } = await api('GET', `${base}/messages/${message.id}/history`);
    const last = versions.length - 1;
    showDialog(
      'history-dialog',
      `Edit history of ${displayName(message.author)}'s message`,
      el(
        'ol',
        { class: 'versions' },
        versions.map((v, i) =>
          el(
            'li',
            { class: `version${i === last ? ' current' : ''}` },
            el(
              'div',
              { class: 'version-head' },
              el('strong', { text: i === 0 ? 'Original' : `Edit ${i}` }),
              i === last ? el('span', { class: 'tag', text: 'current' }) : null,
              el('time', { class: 'muted', dateTime: v.edited_at || message.created_at, text: new Date(v.edited_at || message.created_at).toLocaleString() }),
            ),
            el('p', { class: 'version-text', text: v.content || '(no text: attachments only)' }),
          ),
        ),
      ),
    );
  } catch (err) {
    toast(err.message);
  }
}
