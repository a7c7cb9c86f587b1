// An example bot: plain Node (20 or later), fetch and the `ws` package, no SDK.
//
//   CHAT_URL=http://localhost:3000 BOT_TOKEN=<token> node examples/bot.mjs
//
// It answers `!ping` with `pong` wherever it can read and write, and greets every member who
// joins a server it is in, in that server's first channel. Make the bot in the account page (or
// POST /api/bots), then add it to a server by name (server settings, or POST
// /api/servers/<id>/bots with {"username"}). docs/integrations.md walks through it.
import WebSocket from 'ws';

const base = (process.env.CHAT_URL ?? 'http://localhost:3000').replace(/\/$/, '');
const token = process.env.BOT_TOKEN;
if (!token) {
  console.error('set BOT_TOKEN to the token shown when the bot was made');
  process.exit(1);
}
const headers = { authorization: `Bot ${token}`, 'content-type': 'application/json' };

/** One API call; a refusal is logged with the server's plain-text reason. */
async function api(method, path, body) {
  const res = await fetch(base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  if (res.status === 429) {
    // Rate limited: wait as asked, then once more.
    await new Promise((resolve) => setTimeout(resolve, Number(res.headers.get('retry-after') ?? 1) * 1000));
    return api(method, path, body);
  }
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.status === 204 ? null : res.json();
}

/** Where a message lives, as the path to post a reply into. */
const roomOf = (message) =>
  message.conversation_id
    ? `/api/conversations/${message.conversation_id}/messages`
    : `/api/servers/${message.server_id}/channels/${message.channel_id}/messages`;

let me;

async function onEvent(frame) {
  if (frame.event === 'message') {
    const message = frame.message;
    if (message.author_id === me.user_id) return;
    if (message.content.trim() === '!ping') await api('POST', roomOf(message), { content: 'pong', reply_to: message.id });
  } else if (frame.event === 'member_joined') {
    if (frame.member.user_id === me.user_id) return;
    const [first] = await api('GET', `/api/servers/${frame.server_id}/channels`);
    if (first) await api('POST', `/api/servers/${frame.server_id}/channels/${first.id}/messages`, { content: `Welcome, @${frame.member.username}!` });
  }
}

/** The user stream, opened again (after a pause that grows to 30 s) whenever it drops. */
function connect(delayMs = 1000) {
  const socket = new WebSocket(`${base.replace(/^http/, 'ws')}/api/ws`, { headers: { authorization: `Bot ${token}` } });
  socket.on('open', () => {
    delayMs = 1000;
    console.log(`connected as ${me.username}`);
  });
  socket.on('message', (data) => {
    const frame = JSON.parse(data.toString());
    onEvent(frame).catch((err) => console.error(err.message));
  });
  socket.on('error', (err) => console.error(`stream: ${err.message}`));
  socket.on('close', (code) => {
    if (code === 4001) {
      console.error('the token was reset or the bot deleted: stopping');
      process.exit(1);
    }
    setTimeout(() => connect(Math.min(delayMs * 2, 30_000)), delayMs);
  });
}

me = await api('GET', '/api/users/me');
connect();
