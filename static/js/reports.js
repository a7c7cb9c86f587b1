// @ts-check
// Reporting a user, a server or a message to the site's administrators (POST /api/reports, read
// on /admin): what is wrong is asked first, and the answer is said in a toast.
import { api } from './api.js';
import { toast, ask } from './ui.js';

/**
 * @param {'user' | 'server' | 'server_message' | 'conversation_message'} type
 * @param {string} target the user's, the server's or the message's id
 * @param {string} title the dialog's title ("Report bob")
 * @param {string} label its question
 */
export async function report(type, target, title, label) {
  const reason = await ask({ title, label, submit: 'Report' });
  if (reason === null) return;
  try {
    await api('POST', '/api/reports', { type, target, reason });
    toast('Reported. The administrators will have a look.', false);
  } catch (err) {
    toast(err.message);
  }
}
