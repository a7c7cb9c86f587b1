// Channel permissions end to end: a table of members (by role, by their own overwrite, by
// category) against channels (private, read-only, no files, no reactions, no history), walked
// through every route and event that reveals or writes channel content. The expected answers
// come from the table below, written by hand, not from the server's rule.
import crypto from 'node:crypto';
import path from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { type Client, signUp, uniqueName } from './helpers/client';
import { must } from './helpers/community';
import { startServer } from './helpers/server';
import { exportOf } from './helpers/export';
import { type LiveSocket, openSocket } from './helpers/ws';

type Subject = 'owner' | 'admin' | 'plain' | 'staff' | 'vip' | 'herald';
const SUBJECTS: Subject[] = ['owner', 'admin', 'plain', 'staff', 'vip', 'herald'];
type Channel = 'open' | 'secret' | 'readonly' | 'nofiles' | 'noreact' | 'nohistory' | 'vault';
const CHANNELS: Channel[] = ['open', 'secret', 'readonly', 'nofiles', 'noreact', 'nohistory', 'vault'];

/** And two threads (issue 49): a thread of #secret, and a post of a forum in the Vault category. */
type Room = Channel | 'thread' | 'post';
const ROOMS: Room[] = [...CHANNELS, 'thread', 'post'];
const PARENT = { thread: 'secret', post: 'vault' } as const;
const isThread = (c: Room): c is 'thread' | 'post' => c === 'thread' || c === 'post';

const moderator = (s: Subject) => s === 'owner' || s === 'admin';
/** What each subject may do in each channel: the scene's overwrites, read by hand. A thread: what its parent allows. */
const may = (s: Subject, room: Room) => {
  const c: Channel = isThread(room) ? PARENT[room] : room;
  const view = moderator(s) || (c === 'secret' ? s === 'staff' : c === 'vault' ? s === 'vip' : true);
  return {
    view,
    send: view && (moderator(s) || c !== 'readonly'),
    attach: view && (moderator(s) || c !== 'nofiles'),
    react: view && (moderator(s) || c !== 'noreact'),
    history: view && (moderator(s) || c !== 'nohistory'),
    everyone: view && (moderator(s) || s === 'herald'),
  };
};

const file = (content: string) => {
  const form = new FormData();
  form.append('content', content);
  form.append('attachments', new Blob([Buffer.from(`bytes of ${content}\n`)], { type: 'text/plain' }), 'note.txt');
  return form;
};

/** The scene: a server with the channels above, its members, and the owner's messages before and after they joined. */
async function scene(url: string) {
  const clients = Object.fromEntries(await Promise.all(SUBJECTS.map(async (s) => [s, await signUp(url)] as const))) as Record<Subject, Client>;
  const outsider = await signUp(url);
  const { owner } = clients;
  const server = (await must(owner.post('/api/servers', { name: 'Guarded' }), 201)).body;
  const base = `/api/servers/${server.id}`;
  const ids = {} as Record<Channel, string>;
  for (const c of CHANNELS) ids[c] = (await must(owner.post(`${base}/channels`, { name: c }), 201)).body.id;
  const vault = (await must(owner.post(`${base}/categories`, { name: 'Vault' }), 201)).body;
  await must(owner.request('PATCH', `${base}/channels/${ids.vault}`, { category_id: vault.id }), 200);

  // Before anyone joins: a message (with a file, pinned) in every channel.
  const before = {} as Record<Channel, { id: string; file: string }>;
  for (const c of CHANNELS) {
    const m = (await must(owner.post(`${base}/channels/${ids[c]}/messages`, file(`beforeword ${c}`)), 201)).body;
    await must(owner.put(`${base}/channels/${ids[c]}/pins/${m.id}`), 200);
    before[c] = { id: m.id, file: m.attachments[0].url };
  }
  const token = (await must(owner.post(`${base}/invites`), 201)).body.token;
  for (const s of SUBJECTS.filter((s) => s !== 'owner')) await must(clients[s].post(`/api/invites/${token}/accept`), 200);
  const role = async (name: string, body: object, holder: Subject) => {
    const made = (await must(owner.post(`${base}/roles`, { name, ...body }), 201)).body;
    await must(owner.put(`${base}/members/${clients[holder].userId}/role`, { role: name }), 200);
    return made.id as string;
  };
  await role('Mods', { full_server_admin: true }, 'admin');
  const staffRole = await role('Staff', {}, 'staff');
  await role('Herald', { permissions: ['mention_everyone'] }, 'herald');

  const overwrite = (c: Channel, target: string, body: object) => must(owner.put(`${base}/channels/${ids[c]}/overwrites/${target}`, body), 200);
  await overwrite('secret', server.id, { deny: ['view_channel'] });
  await overwrite('secret', staffRole, { allow: ['view_channel'] });
  await overwrite('readonly', server.id, { deny: ['send_messages'] });
  await overwrite('nofiles', server.id, { deny: ['attach_files'] });
  await overwrite('noreact', server.id, { deny: ['add_reactions'] });
  await overwrite('nohistory', server.id, { deny: ['read_history'] });
  await must(owner.put(`${base}/categories/${vault.id}/overwrites/${server.id}`, { deny: ['view_channel'] }), 200);
  await must(owner.put(`${base}/categories/${vault.id}/overwrites/${clients.vip.userId}`, { allow: ['view_channel'] }), 200);

  // After they joined: another, with a file.
  const after = {} as Record<Channel, { id: string; file: string }>;
  for (const c of CHANNELS) {
    const m = (await must(owner.post(`${base}/channels/${ids[c]}/messages`, file(`afterword ${c}`)), 201)).body;
    after[c] = { id: m.id, file: m.attachments[0].url };
  }
  return { clients, outsider, server, base, ids, vault, staffRole, before, after, token };
}

/** The two threads, each with a message (a file, pinned) and another after it, as the owner wrote them. */
async function threads(owner: Client, base: string, vault: { id: string }, ids: Record<Channel, string>) {
  const forum = (await must(owner.post(`${base}/channels`, { name: 'forum', type: 'forum' }), 201)).body;
  await must(owner.request('PATCH', `${base}/channels/${forum.id}`, { category_id: vault.id }), 200);
  const thread = (await must(owner.post(`${base}/channels/${ids.secret}/threads`, { name: 'thread' }), 201)).body;
  const first = (await must(owner.post(`${base}/channels/${thread.id}/messages`, file('beforeword thread')), 201)).body;
  const form = file('beforeword post');
  form.append('name', 'post');
  const post = (await must(owner.post(`${base}/channels/${forum.id}/threads`, form), 201)).body;
  const rooms = { thread: { id: thread.id, parent: ids.secret, first }, post: { id: post.id, parent: forum.id, first: post.message } };
  const before = {} as Record<'thread' | 'post', { id: string; file: string }>;
  const after = {} as Record<'thread' | 'post', { id: string; file: string }>;
  for (const c of ['thread', 'post'] as const) {
    const { id, first } = rooms[c];
    await must(owner.put(`${base}/channels/${id}/pins/${first.id}`), 200);
    before[c] = { id: first.id, file: first.attachments[0].url };
    const m = (await must(owner.post(`${base}/channels/${id}/messages`, file(`afterword ${c}`)), 201)).body;
    after[c] = { id: m.id, file: m.attachments[0].url };
  }
  return { ids: { thread: thread.id as string, post: post.id as string }, parents: { thread: ids.secret, post: forum.id as string }, before, after };
}

t.test('every route that reveals or writes channel content, for each member and channel (and thread)', async (t) => {
  const app = await startServer();
  t.teardown(app.close);
  const made = await scene(app.url);
  const { clients, base, server } = made;
  const more = await threads(clients.owner, base, made.vault, made.ids);
  const ids: Record<Room, string> = { ...made.ids, ...more.ids };
  const before: Record<Room, { id: string; file: string }> = { ...made.before, ...more.before };
  const after: Record<Room, { id: string; file: string }> = { ...made.after, ...more.after };
  const sockets = {} as Record<Subject, LiveSocket>;
  for (const s of SUBJECTS) sockets[s] = await openSocket(app.url, '/api/ws', { client: clients[s] });
  t.teardown(() => Object.values(sockets).forEach((socket) => socket.ws.close()));
  const readies = {} as Record<Subject, any>;
  for (const s of SUBJECTS) readies[s] = await sockets[s].event('ready');

  for (const s of SUBJECTS) {
    const client = clients[s];
    const listed = (await must(client.get(`${base}/channels`), 200)).body.map((c: any) => c.id);
    const ready = readies[s].servers.find((x: any) => x.id === server.id).channels;
    const readyThreads = readies[s].servers.find((x: any) => x.id === server.id).threads;
    for (const c of ROOMS) {
      const m = may(s, c);
      const where = `${s} in ${c}`;
      const C = `${base}/channels/${ids[c]}`;
      const seen = m.view ? 200 : 404;
      if (isThread(c)) {
        // A thread is in no channel list: its parent's list of threads, and ready's threads.
        const list = await client.get(`${base}/channels/${more.parents[c]}/threads`);
        t.equal(list.status === 200 && list.body.some((x: any) => x.id === ids[c]), m.view, `${where}: the list of threads`);
        t.equal(list.status, seen, `${where}: the list of threads of its parent`);
        t.equal(
          readyThreads.some((x: any) => x.id === ids[c]),
          m.view,
          `${where}: ready`,
        );
        t.equal((await client.get(`${C}/members`)).status, seen, `${where}: its members`);
        t.equal((await client.put(`${C}/members/@me`)).status, m.view ? 204 : 404, `${where}: following it`);
      }
      t.equal(listed.includes(ids[c]), m.view && !isThread(c), `${where}: the channel list`);
      const entry = ready.find((x: any) => x.id === ids[c]);
      t.equal(entry !== undefined, m.view && !isThread(c), `${where}: ready's channels`);
      if (entry) {
        t.equal(entry.permissions.includes('send_messages'), m.send, `${where}: ready says send_messages`);
        t.equal(entry.private, c === 'secret' || c === 'vault', `${where}: ready says private`);
      }

      const history = await client.get(`${C}/messages`);
      t.equal(history.status, seen, `${where}: history`);
      if (m.view) {
        const ids = history.body.map((x: any) => x.id);
        t.equal(ids.includes(before[c].id), m.history, `${where}: what came before joining (read_history)`);
        t.ok(ids.includes(after[c].id), `${where}: what came after`);
      }
      const pins = await client.get(`${C}/pins`);
      t.equal(pins.status, seen, `${where}: pins`);
      if (m.view)
        t.equal(
          pins.body.some((x: any) => x.id === before[c].id),
          m.history,
          `${where}: a pin from before joining`,
        );
      t.equal((await client.get(`${C}/messages?around=${before[c].id}`)).status, m.history ? 200 : 404, `${where}: around an old message`);
      t.equal((await client.get(`${C}/messages/${after[c].id}/history`)).status, !m.view ? 404 : moderator(s) ? 200 : 403, `${where}: edit history`);
      t.equal((await client.get(before[c].file)).status, m.history ? 200 : 404, `${where}: an old file`);
      t.equal((await client.get(after[c].file)).status, seen, `${where}: a new file`);
      const old = await client.get(`/api/search?q=beforeword&channel_id=${ids[c]}`);
      t.equal(old.status, seen, `${where}: search in the channel`);
      const found = (await must(client.get(`/api/search?q=${c}&server_id=${server.id}`), 200)).body.results.map((x: any) => x.id);
      t.equal(found.includes(after[c].id), m.view, `${where}: search in the server`);
      t.equal(found.includes(before[c].id), m.history, `${where}: search finds an old message only with read_history`);
      const everywhere = (await must(client.get(`/api/search?q=afterword`), 200)).body.results.map((x: any) => x.id);
      t.equal(everywhere.includes(after[c].id), m.view, `${where}: search everywhere`);
      t.equal(
        (await client.post('/api/reports', { type: 'server_message', target: after[c].id, reason: 'check' })).status,
        m.view ? 201 : 404,
        `${where}: a report`,
      );
      t.equal((await client.put(`${C}/read`, { message_id: after[c].id })).status, seen, `${where}: the read marker`);

      // Writes: 404 unseen, 403 without the flag.
      const refused = (ok: boolean, pass: number) => (!m.view ? 404 : ok ? pass : 403);
      // (The owner types later, for the stream: a second call within 3 s sends nothing.)
      if (s !== 'owner') t.equal((await client.post(`${C}/typing`)).status, refused(m.send, 204), `${where}: typing`);
      const sent = await client.post(`${C}/messages`, { content: `hello @everyone from ${s}` });
      t.equal(sent.status, refused(m.send, 201), `${where}: sending`);
      if (sent.status === 201) t.equal(sent.body.mention_everyone, m.everyone, `${where}: @everyone (mention_everyone)`);
      t.equal((await client.post(`${C}/messages`, file(`from ${s}`))).status, refused(m.send && m.attach, 201), `${where}: a file`);
      t.equal((await client.put(`${C}/messages/${after[c].id}/reactions`, { emoji: '👍' })).status, refused(m.react, 200), `${where}: reacting`);
      t.equal((await client.request('DELETE', `${C}/messages/${after[c].id}/reactions`, { emoji: '👍' })).status, seen, `${where}: taking a reaction back`);
    }
  }

  // A pending member (membership screening, issue 53): reads exactly what a plain member reads, writes nothing.
  await must(clients.owner.put(`${base}/onboarding`, { enabled: true, rules: ['Be kind.'] }), 200);
  const pending = await signUp(app.url);
  await must(pending.post(`/api/invites/${made.token}/accept`), 200);
  const pendingSocket = await openSocket(app.url, '/api/ws', { client: pending });
  t.teardown(() => pendingSocket.ws.close());
  const pendingReady = (await pendingSocket.event('ready')).servers.find((x: any) => x.id === server.id);
  const pendingListed = (await must(pending.get(`${base}/channels`), 200)).body.map((c: any) => c.id);
  for (const c of ROOMS) {
    // Everything the owner wrote came before the pending member joined: read_history decides.
    const { view, history: old } = may('plain', c);
    const where = `pending in ${c}`;
    const C = `${base}/channels/${ids[c]}`;
    const seen = view ? 200 : 404;
    t.equal(pendingListed.includes(ids[c]) || (isThread(c) && view), view, `${where}: the channel list`);
    t.equal(pendingReady.channels.some((x: any) => x.id === ids[c]) || pendingReady.threads.some((x: any) => x.id === ids[c]), view, `${where}: ready`);
    const history = await pending.get(`${C}/messages`);
    t.equal(history.status, seen, `${where}: history`);
    if (view)
      t.equal(
        history.body.some((x: any) => x.id === before[c].id),
        old,
        `${where}: what came before joining (read_history)`,
      );
    t.equal((await pending.get(after[c].file)).status, old ? 200 : 404, `${where}: a file`);
    const found = (await must(pending.get(`/api/search?q=afterword`), 200)).body.results.map((x: any) => x.id);
    t.equal(found.includes(after[c].id), old, `${where}: search`);
    const refused = view ? 403 : 404;
    t.equal((await pending.post(`${C}/typing`)).status, refused, `${where}: typing`);
    t.equal((await pending.post(`${C}/messages`, { content: 'hello' })).status, refused, `${where}: sending`);
    t.equal((await pending.post(`${C}/messages`, file('from pending'))).status, refused, `${where}: a file`);
    t.equal((await pending.put(`${C}/messages/${after[c].id}/reactions`, { emoji: '👍' })).status, refused, `${where}: reacting`);
  }

  // The stream: what the owner does in every channel reaches who sees it, and nobody else.
  for (const s of SUBJECTS) await sockets[s].drain(50);
  await pendingSocket.drain(50);
  for (const c of ROOMS) {
    const C = `${base}/channels/${ids[c]}`;
    const live = (await must(clients.owner.post(`${C}/messages`, { content: `live ${c}` }), 201)).body;
    await must(clients.owner.put(`${C}/messages/${live.id}/reactions`, { emoji: '🎉' }), 200);
    await must(clients.owner.post(`${C}/typing`), 204);
    await must(clients.owner.request('PATCH', `${C}`, isThread(c) ? { name: `${c} renamed` } : { topic: `about ${c}` }), 200);
  }
  const made2 = (await must(clients.owner.post(`${base}/channels/${ids.secret}/threads`, { name: 'another' }), 201)).body;
  await must(clients.owner.delete(`${base}/channels/${made2.id}`), 204);
  await must(clients.owner.post(`${base}/channels/${ids.open}/messages`, { content: 'the end' }), 201);
  for (const s of SUBJECTS) {
    const frames: any[] = [];
    for (;;) {
      const frame = await sockets[s].next();
      frames.push(frame);
      if (frame.event === 'message' && frame.message.content === 'the end') break;
    }
    for (const c of ROOMS) {
      const view = may(s, c).view;
      const where = `${s} in ${c}`;
      const here = (name: string, id = ids[c]) => frames.some((f) => f.event === name && (f.channel_id ?? f.thread_id ?? f.message?.channel_id) === id);
      t.equal(here('message'), view, `${where}: message events`);
      t.equal(here('reaction'), view, `${where}: reaction events`);
      t.equal(here(isThread(c) ? 'thread_updated' : 'channel_updated'), view, `${where}: ${isThread(c) ? 'thread_updated' : 'channel_updated'}`);
      if (c === 'thread') {
        t.equal(here('thread_created', made2.id), view, `${where}: thread_created`);
        t.equal(here('thread_deleted', made2.id), view, `${where}: thread_deleted`);
      }
      if (s !== 'owner') t.equal(here('typing'), view, `${where}: typing events`);
      // The spec's room socket opens only for who sees the channel.
      const room = await openSocket(app.url, `/api/channels/${ids[c]}/ws`, { client: clients[s] }).then(
        (socket) => (socket.ws.close(), true),
        () => false,
      );
      t.equal(room, view, `${where}: the room socket`);
    }
  }
  const pendingFrames: any[] = [];
  for (;;) {
    const frame = await pendingSocket.next();
    pendingFrames.push(frame);
    if (frame.event === 'message' && frame.message.content === 'the end') break;
  }
  for (const c of ROOMS) {
    const heard = pendingFrames.some((f) => f.event === 'message' && f.message.channel_id === ids[c]);
    t.equal(heard, may('plain', c).view, `pending in ${c}: message events as a plain member's`);
  }

  // AutoMod (issue 53): its rules are manage_server's (the owner and the full administrator
  // here); a blocked author reads only the rule's reason; the alert, written in #secret, shows
  // what was said to who sees #secret and to nobody else (history, search, the stream).
  const rules = `${base}/automod/rules`;
  for (const s of SUBJECTS) t.equal((await clients[s].get(rules)).status, moderator(s) ? 200 : 403, `${s}: the AutoMod rules`);
  t.equal((await made.outsider.get(rules)).status, 404, 'an outsider: the AutoMod rules are not found');
  const rule = {
    name: 'words',
    trigger: { type: 'keyword', keyword_filter: ['forbiddenword'] },
    actions: [{ type: 'block_message' }, { type: 'send_alert_message', channel_id: ids.secret }],
  };
  t.equal((await clients.plain.post(rules, rule)).status, 403, 'a plain member may not make a rule');
  await must(clients.owner.post(rules, rule), 201);
  for (const s of SUBJECTS) await sockets[s].drain(0);
  const blocked = await clients.plain.post(`${base}/channels/${ids.open}/messages`, { content: 'a forbiddenword in open' });
  t.equal(blocked.status, 403, 'the message is blocked');
  t.equal(blocked.text.trim(), 'Your message was blocked by this server’s AutoMod rule “words”.', 'its author reads the reason, not the alert');
  await must(clients.owner.post(`${base}/channels/${ids.open}/messages`, { content: 'after the alert' }), 201);
  for (const s of SUBJECTS) {
    const view = may(s, 'secret').view;
    const history = await clients[s].get(`${base}/channels/${ids.secret}/messages`);
    t.equal(
      history.status === 200 && history.body.some((m: any) => m.embeds?.[0]?.description === 'a forbiddenword in open'),
      view,
      `${s}: the alert in #secret`,
    );
    const found = (await must(clients[s].get('/api/search?q=forbiddenword'), 200)).body.results;
    t.equal(found.length > 0, view, `${s}: search finds the alert only in #secret`);
    const frames: any[] = [];
    for (;;) {
      const frame = await sockets[s].next();
      frames.push(frame);
      if (frame.event === 'message' && frame.message.content === 'after the alert') break;
    }
    t.equal(
      frames.some((f) => JSON.stringify(f).includes('forbiddenword')),
      view,
      `${s}: the stream tells of the alert only to who sees #secret`,
    );
  }
  t.end();
});

t.test('a change of access is told to who it changes it for, and audited with before and after', async (t) => {
  const app = await startServer();
  t.teardown(app.close);
  const { clients, outsider, base, ids, vault, staffRole, server } = await scene(app.url);
  const { owner, plain, admin } = clients;
  const stream = await openSocket(app.url, '/api/ws', { client: plain });
  t.teardown(() => stream.ws.close());
  await stream.event('ready');
  const room = await openSocket(app.url, `/api/channels/${ids.open}/ws`, { client: plain });
  // Another plain member (the same roles: none) and the vip (an overwrite of their own elsewhere).
  const other = await signUp(app.url);
  await must(other.post(`/api/invites/${(await must(owner.post(`${base}/invites`), 201)).body.token}/accept`), 200);
  const otherStream = await openSocket(app.url, '/api/ws', { client: other });
  const vipStream = await openSocket(app.url, '/api/ws', { client: clients.vip });
  t.teardown(() => [otherStream, vipStream].forEach((s) => s.ws.close()));
  await Promise.all([otherStream.event('ready'), vipStream.event('ready')]);

  // A member's own overwrite hides a channel: gone from their sidebar, their room socket closed.
  await must(owner.put(`${base}/channels/${ids.open}/overwrites/${plain.userId}`, { deny: ['view_channel'] }), 200);
  t.same(await stream.event('channel_deleted'), { event: 'channel_deleted', server_id: server.id, channel_id: ids.open });
  t.same(
    (await otherStream.drain(200)).filter((f) => f.event === 'channel_deleted'),
    [],
    'a member with the same roles is not told: it is not theirs',
  );
  t.same(
    (await vipStream.drain(0)).filter((f) => f.event === 'channel_deleted'),
    [],
    'nor the vip',
  );
  // Everyone denied sending in #nofiles: both plain members hear it (judged once for their kind).
  await must(owner.put(`${base}/channels/${ids.nofiles}/overwrites/${server.id}`, { deny: ['attach_files', 'send_messages'] }), 200);
  for (const s of [stream, otherStream]) t.notOk((await s.event('channel_access')).permissions.includes('send_messages'), 'each member of the kind is told');
  await must(owner.put(`${base}/channels/${ids.nofiles}/overwrites/${server.id}`, { deny: ['attach_files'] }), 200);
  for (const s of [stream, otherStream]) await s.event('channel_access');
  t.equal((await room.closed()).code, 4003, 'the room socket closes with 4003');
  t.equal((await plain.get(`${base}/channels/${ids.open}/messages`)).status, 404);
  // Taken away again: the channel comes back with the member's read state and permissions.
  await must(owner.request('DELETE', `${base}/channels/${ids.open}/overwrites/${plain.userId}`), 204);
  const back = await stream.event('channel_created');
  t.equal(back.channel.id, ids.open);
  t.ok(back.channel.permissions.includes('send_messages'));
  t.equal(back.channel.last_message_id !== null, true, 'with its read state');
  // What they may do changes: channel_access.
  await must(owner.put(`${base}/channels/${ids.open}/overwrites/${server.id}`, { deny: ['send_messages'] }), 200);
  const access = await stream.event('channel_access');
  // Without send_messages, no attach_files either: Discord's implicit rule (issue 46). Threads
  // stay open, as in Discord: send_messages_in_threads is a flag of its own (issue 49).
  t.same(access, {
    event: 'channel_access',
    server_id: server.id,
    channel_id: ids.open,
    permissions: [
      'view_channel',
      'add_reactions',
      'read_history',
      'create_public_threads',
      'create_private_threads',
      'send_messages_in_threads',
      'connect',
      'speak',
      'video',
    ],
    private: false,
  });
  // A role given: the private channel arrives; taken: it goes.
  await must(owner.put(`${base}/members/${plain.userId}/role`, { role: 'Staff' }), 200);
  t.equal((await stream.event('channel_created')).channel_id, ids.secret, 'a role that sees it brings it');
  await must(owner.request('DELETE', `${base}/members/${plain.userId}/roles/${staffRole}`), 200);
  t.equal((await stream.event('channel_deleted')).channel_id, ids.secret);
  // A role's own flags: Staff may now mention everyone, which its holders hear of.
  await must(owner.put(`${base}/members/${plain.userId}/role`, { role: 'Staff' }), 200);
  await stream.event('channel_created');
  await must(owner.request('PATCH', `${base}/roles/${staffRole}`, { permissions: ['mention_everyone'] }), 200);
  t.ok((await stream.event('channel_access')).permissions.includes('mention_everyone'), 'role flags reach its holders');
  t.equal((await must(plain.post(`${base}/channels/${ids.secret}/messages`, { content: '@everyone hi' }), 201)).body.mention_everyone, true);

  // A channel with no category moved into the private one follows it (synced); moved out, it keeps what it followed.
  const general = (await must(owner.get(`${base}/channels`), 200)).body.find((c: any) => c.name === 'general');
  await must(owner.request('PATCH', `${base}/channels/${general.id}`, { category_id: vault.id }), 200);
  t.equal((await stream.event('channel_deleted')).channel_id, general.id, 'into the private category: hidden');
  t.same(
    (await must(owner.get(`${base}/channels/${general.id}/overwrites`), 200)).body.map((o: any) => o.kind),
    ['everyone', 'member'],
    "a synced channel lists its category's",
  );
  await must(owner.request('PATCH', `${base}/channels/${general.id}`, { category_id: null }), 200);
  t.equal((await plain.get(`${base}/channels/${general.id}/messages`)).status, 404, 'out of the category, it keeps its overwrites: still hidden');
  const moved = (await must(owner.get(`${base}/channels`), 200)).body.find((c: any) => c.id === general.id);
  t.equal(moved.permissions_synced, false, 'and no longer follows');
  t.equal((await owner.request('PATCH', `${base}/channels/${general.id}`, { permissions_synced: true })).status, 400, 'nothing to follow without a category');
  await must(owner.request('PATCH', `${base}/channels/${general.id}`, { category_id: vault.id, permissions_synced: true }), 200);
  await must(owner.request('DELETE', `${base}/categories/${vault.id}`), 204);
  t.equal((await plain.get(`${base}/channels/${ids.vault}/messages`)).status, 404, 'a deleted category leaves its channels as private as they were');
  t.equal((await clients.vip.get(`${base}/channels/${ids.vault}/messages`)).status, 200, '...and as open to whom it let in');

  // Everyone's flags on the server: without view_channel, a plain member sees only what lets them in.
  await stream.drain(50);
  await must(owner.request('PATCH', `/api/servers/${server.id}`, { permissions: ['send_messages', 'read_history'] }), 200);
  const gone = (await stream.drain(300)).filter((f) => f.event === 'channel_deleted').map((f) => f.channel_id);
  t.ok(gone.includes(ids.nofiles) && gone.includes(ids.readonly), 'everyone loses the channels that do not let them in');
  t.notOk(gone.includes(ids.secret), 'a channel their role lets them into stays');
  t.same((await must(owner.get(`/api/servers/${server.id}`), 200)).body.permissions, ['send_messages', 'read_history']);

  // Who may read and change overwrites.
  const O = `${base}/channels/${ids.readonly}/overwrites`;
  // manage_roles is asked in the channel (issue 53): one the member does not see is not found, as for an outsider.
  t.equal((await plain.get(O)).status, 404, 'a member who does not see the channel may not read them');
  t.equal((await outsider.get(O)).status, 404, 'an outsider sees nothing');
  t.equal((await plain.put(`${O}/${plain.userId}`, { allow: ['send_messages'] })).status, 404, 'nor change them');
  const seen = `${base}/channels/${ids.secret}/overwrites`;
  t.equal((await plain.get(seen)).status, 403, 'in a channel they see, a member without manage_roles may not read them');
  t.equal((await plain.put(`${seen}/${plain.userId}`, { allow: ['send_messages'] })).status, 403, 'nor change them');
  t.equal((await must(admin.get(O), 200)).body.length, 1, 'a full server administrator reads them');
  const bad: [string, object, string, number][] = [
    ['an unknown flag', { allow: ['fly'] }, server.id, 400],
    ['not a list', { allow: 'view_channel' }, server.id, 400],
    ['allowed and denied at once', { allow: ['send_messages'], deny: ['send_messages'] }, server.id, 400],
    ['a target that is no role or member here', {}, outsider.userId, 404],
    ['a target that is not an id', {}, 'everyone', 400],
  ];
  for (const [what, body, target, status] of bad) t.equal((await owner.put(`${O}/${target}`, body)).status, status, what);
  t.equal((await owner.request('DELETE', `${O}/${plain.userId}`)).status, 404, 'removing one that is not there');
  // A flag named twice counts once.
  t.same((await must(admin.put(`${O}/${staffRole}`, { allow: ['send_messages', 'send_messages'] }), 200)).body, {
    target_id: staffRole,
    kind: 'role',
    allow: ['send_messages'],
    deny: [],
  });

  const log = (await must(owner.get(`${base}/audit-log`), 200)).body;
  const entry = log.find((e: any) => e.action === 'overwrite_update' && e.changes.target_id === staffRole);
  t.same(
    entry.changes,
    { target_id: staffRole, kind: 'role', allow: { from: null, to: ['send_messages'] }, deny: { from: null, to: [] } },
    'audited with before and after',
  );
  t.equal(entry.target_id, ids.readonly);
  const server_update = log.find((e: any) => e.action === 'server_update');
  t.same(server_update.changes.permissions.to, ['send_messages', 'read_history']);
  t.ok(
    log.some((e: any) => e.action === 'role_update' && e.changes.permissions),
    'a role flag change is audited',
  );
});

t.test('a member without send_messages may not edit; an edit that adds @everyone needs mention_everyone', async (t) => {
  const app = await startServer();
  t.teardown(app.close);
  const { clients, base, ids, server } = await scene(app.url);
  const { owner, plain, herald } = clients;
  const C = `${base}/channels/${ids.open}/messages`;
  const mine = (await must(plain.post(C, { content: 'hi' }), 201)).body;
  const theirs = (await must(herald.post(C, { content: 'hi' }), 201)).body;
  t.equal((await must(plain.put(`${C}/${mine.id}`, { content: 'hi @everyone' }), 200)).body.mention_everyone, false, 'stays text');
  t.equal((await must(herald.put(`${C}/${theirs.id}`, { content: 'hi @everyone' }), 200)).body.mention_everyone, true, 'a role with mention_everyone');
  await must(owner.put(`${base}/channels/${ids.open}/overwrites/${server.id}`, { deny: ['send_messages'] }), 200);
  t.equal((await plain.put(`${C}/${mine.id}`, { content: 'changed' })).status, 403, 'read-only: no edits');
  t.equal((await plain.delete(`${C}/${mine.id}`)).status, 204, 'but one may still delete one’s own');
  // The legacy server messages follow the first channel's rules.
  const general = (await must(owner.get(`${base}/channels`), 200)).body[0];
  await must(owner.put(`${base}/channels/${general.id}/overwrites/${server.id}`, { deny: ['view_channel'] }), 200);
  t.equal((await plain.get(`${base}/messages`)).status, 403, 'the legacy history of a hidden first channel');
  t.equal((await plain.post(`${base}/messages`, { content: 'x' })).status, 403, 'and its legacy send');
  t.equal((await owner.post(`${base}/messages`, { content: 'x' })).status, 201, 'the owner still posts there');
});

t.test('what ready and the channel list say one may do is what the server lets one do: without send_messages, no files and no @everyone', async (t) => {
  const app = await startServer();
  t.teardown(app.close);
  const { clients, base, ids, server } = await scene(app.url);
  for (const s of ['plain', 'herald'] as const) {
    const socket = await openSocket(app.url, '/api/ws', { client: clients[s] });
    const ready = (await socket.event('ready')).servers.find((x: any) => x.id === server.id).channels;
    socket.ws.close();
    const listed = (await must(clients[s].get(`${base}/channels`), 200)).body;
    for (const [where, entries] of [
      ['ready', ready],
      ['the channel list', listed],
    ] as const) {
      const of = (c: Channel): string[] => entries.find((x: any) => x.id === ids[c]).permissions;
      t.ok(of('open').includes('attach_files'), `${s}, ${where}: files where one may send`);
      t.notOk(of('readonly').includes('attach_files'), `${s}, ${where}: no attach_files in the read-only channel`);
      t.equal(of('open').includes('mention_everyone'), s === 'herald', `${s}, ${where}: @everyone with the role`);
      t.notOk(of('readonly').includes('mention_everyone'), `${s}, ${where}: but not where one may not send`);
    }
  }
});

t.test('the account export leaves out what one wrote in a channel one no longer sees', async (t) => {
  const app = await startServer();
  t.teardown(app.close);
  const { clients, base, ids, staffRole } = await scene(app.url);
  const { owner, staff } = clients;
  await must(staff.post(`${base}/channels/${ids.secret}/messages`, { content: 'staff only words' }), 201);
  await must(staff.post(`${base}/channels/${ids.open}/messages`, { content: 'words for all' }), 201);
  const written = async () => JSON.parse((await exportOf(app.url, staff)).get('messages.json')!.toString()).map((m: any) => m.content);
  t.same(await written(), ['staff only words', 'words for all'], 'while they see both');
  await must(owner.request('DELETE', `${base}/members/${staff.userId}/roles/${staffRole}`), 200);
  t.same(await written(), ['words for all'], 'the private channel left out once hidden');
});

/** Every frame up to (and with) the first that `last` matches. */
async function framesUntil(socket: LiveSocket, last: (frame: any) => boolean): Promise<any[]> {
  const frames: any[] = [];
  for (;;) {
    const frame = await socket.next();
    frames.push(frame);
    if (last(frame)) return frames;
  }
}

t.test('what read_history hides stays hidden live: no edit, pin, reaction, delete or reply of a message from before joining', async (t) => {
  const app = await startServer();
  t.teardown(app.close);
  const { clients, base, ids, before } = await scene(app.url);
  const { owner, plain, admin } = clients;
  const C = `${base}/channels/${ids.nohistory}`;
  const old = before.nohistory.id;
  // Who lacks read_history there (plain) and who has it (a full server administrator), on the stream and the room socket.
  const streams = { plain: await openSocket(app.url, '/api/ws', { client: plain }), admin: await openSocket(app.url, '/api/ws', { client: admin }) };
  const rooms = {
    plain: await openSocket(app.url, `/api/channels/${ids.nohistory}/ws`, { client: plain }),
    admin: await openSocket(app.url, `/api/channels/${ids.nohistory}/ws`, { client: admin }),
  };
  t.teardown(() => [...Object.values(streams), ...Object.values(rooms)].forEach((s) => s.ws.close()));
  await Promise.all(Object.values(streams).map((s) => s.event('ready')));

  await must(owner.put(`${C}/messages/${old}`, { content: 'beforeword edited' }), 200);
  await must(owner.request('DELETE', `${C}/pins/${old}`), 200);
  await must(owner.put(`${C}/pins/${old}`), 200);
  await must(owner.put(`${C}/messages/${old}/reactions`, { emoji: '👀' }), 200);
  const reply = (await must(owner.post(`${C}/messages`, { content: 'as I said', reply_to: old }), 201)).body;
  await must(owner.put(`${C}/messages/${reply.id}`, { content: 'as I said before' }), 200);
  await must(owner.request('DELETE', `${C}/messages/${old}`), 204);
  await must(owner.post(`${C}/messages`, { content: 'the end' }), 201);
  const theEnd = (f: any) => (f.message?.content ?? f.content) === 'the end';

  const seen = { plain: await framesUntil(streams.plain, theEnd), admin: await framesUntil(streams.admin, theEnd) };
  const events = (frames: any[]) => frames.map((f) => f.event).filter((name) => name !== 'presence');
  t.same(
    events(seen.admin),
    ['message_edited', 'message_unpinned', 'message_pinned', 'reaction', 'message', 'message_edited', 'message_deleted', 'message'],
    'with read_history: every change of the old message',
  );
  t.same(events(seen.plain), ['message', 'message_edited', 'message'], 'without: only the new messages');
  t.notOk(JSON.stringify(seen.plain).includes(old), "the old message's id is never named to who cannot read it");
  t.notOk(JSON.stringify(seen.plain).includes('beforeword'), 'nor its words');
  const replies = (frames: any[]) =>
    frames.filter((f) => f.message?.id === reply.id).map((f) => [f.message.reply_to, f.message.reply_preview?.content ?? null]);
  t.same(
    replies(seen.admin),
    [
      [old, 'beforeword edited'],
      [old, 'beforeword edited'],
    ],
    'the reply shows what it answers to who may read it',
  );
  t.same(
    replies(seen.plain),
    [
      [null, null],
      [null, null],
    ],
    'and to no one else',
  );

  const inRoom = { plain: await framesUntil(rooms.plain, theEnd), admin: await framesUntil(rooms.admin, theEnd) };
  const kinds = (frames: any[]) => frames.map((f) => f.event ?? 'message');
  t.same(kinds(inRoom.admin), ['edited', 'reaction', 'message', 'edited', 'deleted', 'message'], 'the room socket, with read_history');
  t.same(kinds(inRoom.plain), ['message', 'edited', 'message'], 'the room socket, without');
  t.notOk(JSON.stringify(inRoom.plain).includes(old), 'the room socket names the old message to no one who cannot read it');

  // REST agrees: the reply names nothing it may not.
  const page = (await must(plain.get(`${C}/messages`), 200)).body;
  t.same(
    page.filter((m: any) => m.id === reply.id).map((m: any) => [m.reply_to, m.reply_preview]),
    [[null, null]],
    'the history page',
  );
  t.notOk(JSON.stringify(page).includes(old), 'names no hidden message');
  const found = (await must(plain.get(`/api/search?q=said&channel_id=${ids.nohistory}`), 200)).body.results;
  t.same(
    found.map((m: any) => [m.id, m.reply_to, m.reply_preview]),
    [[reply.id, null, null]],
    'search results too',
  );
  const gone = (await must(admin.get(`${C}/messages`), 200)).body.find((m: any) => m.id === reply.id);
  t.same([gone.reply_to, gone.reply_preview], [old, null], 'with read_history, a reply to a deleted message still says it was one');
});

t.test('without read_history, the read state names no message from before joining', async (t) => {
  const app = await startServer();
  t.teardown(app.close);
  const owner = await signUp(app.url);
  const member = await signUp(app.url);
  const server = (await must(owner.post('/api/servers', { name: 'Quiet' }), 201)).body;
  const base = `/api/servers/${server.id}`;
  const quiet = (await must(owner.post(`${base}/channels`, { name: 'quiet' }), 201)).body.id;
  const busy = (await must(owner.post(`${base}/channels`, { name: 'busy' }), 201)).body.id;
  for (const id of [quiet, busy]) await must(owner.put(`${base}/channels/${id}/overwrites/${server.id}`, { deny: ['read_history'] }), 200);
  const old = (await must(owner.post(`${base}/channels/${quiet}/messages`, { content: 'said before' }), 201)).body.id;
  const oldBusy = (await must(owner.post(`${base}/channels/${busy}/messages`, { content: 'said before' }), 201)).body.id;
  await must(member.post(`/api/invites/${(await must(owner.post(`${base}/invites`), 201)).body.token}/accept`), 200);

  const stateOf = async (id: string) => {
    const listed = (await must(member.get(`${base}/channels`), 200)).body.find((c: any) => c.id === id);
    const stream = await openSocket(app.url, '/api/ws', { client: member });
    const ready = (await stream.event('ready')).servers[0].channels.find((c: any) => c.id === id);
    stream.ws.close();
    const pick = (c: any) => [c.last_message_id, c.last_read_id, c.unread_count];
    t.same(pick(ready), pick(listed), '`ready` and the channel list agree');
    return pick(listed);
  };
  t.same(await stateOf(quiet), [null, null, 0], 'nothing sent since joining: no last message, nothing read');
  // Read markers name messages of the room the caller may read: one from before joining is no such message.
  const hidden = await member.put(`${base}/channels/${quiet}/read`, { message_id: old });
  const random = await member.put(`${base}/channels/${quiet}/read`, { message_id: crypto.randomUUID() });
  t.same([hidden.status, hidden.text], [random.status, random.text], 'a read marker on a hidden message answers as one on no message');
  t.equal(hidden.status, 400);

  const fresh = (await must(owner.post(`${base}/channels/${quiet}/messages`, { content: 'said after' }), 201)).body.id;
  t.same(await stateOf(quiet), [fresh, null, 1], 'a message since: it is the last, and unread');
  // Past what the newest messages kept in memory hold (the count in SQL).
  let newest = '';
  for (let i = 0; i < 40; i++) newest = (await must(owner.post(`${base}/channels/${busy}/messages`, { content: `after ${i}` }), 201)).body.id;
  t.same(await stateOf(busy), [newest, null, 40], 'a long channel: no read marker on a hidden message either');
  t.not(oldBusy, newest);
  const read = await must(member.put(`${base}/channels/${quiet}/read`, { message_id: fresh }), 200);
  t.same([read.body.last_message_id, read.body.last_read_id, read.body.unread_count], [fresh, fresh, 0], 'read up to the new one');
});

t.test("a report's answer carries no more of a message than its reporter may read: earlier versions only to who reads the edit history", async (t) => {
  const siteAdmin = uniqueName('boss');
  const app = await startServer({ env: { ADMIN_USERS: siteAdmin } });
  t.teardown(app.close);
  const { clients, base, ids } = await scene(app.url);
  const boss = await signUp(app.url, siteAdmin);
  const { owner, plain } = clients;
  await must(boss.post(`/api/invites/${(await must(owner.post(`${base}/invites`), 201)).body.token}/accept`), 200);
  const C = `${base}/channels/${ids.open}/messages`;
  // The owner's message, edited twice; a plain member's own, edited once.
  const theirs = (await must(owner.post(C, { content: 'first words' }), 201)).body.id;
  await must(owner.put(`${C}/${theirs}`, { content: 'second words' }), 200);
  await must(owner.put(`${C}/${theirs}`, { content: 'last words' }), 200);
  const own = (await must(plain.post(C, { content: 'my first' }), 201)).body.id;
  await must(plain.put(`${C}/${own}`, { content: 'my last' }), 200);
  const versions = (body: any) => body.snapshot.versions.map((v: any) => v.content);
  for (const s of SUBJECTS) {
    const history = (await clients[s].get(`${C}/${theirs}/history`)).status;
    const report = await must(clients[s].post('/api/reports', { type: 'server_message', target: theirs, reason: `check ${s}` }), 201);
    const readable = history === 200 ? ['first words', 'second words', 'last words'] : ['last words'];
    t.same(versions(report.body), readable, `${s} (edit history ${history}): the answer's versions`);
    t.equal(report.body.snapshot.content, 'last words', `${s}: the words they see`);
    t.notOk(report.text.includes('first words') && history !== 200, `${s}: no earlier words anywhere in the answer`);
    // A second report while the first is pending answers with the same report: as much, no more.
    t.same(
      versions((await must(clients[s].post('/api/reports', { type: 'server_message', target: theirs, reason: 'again' }), 200)).body),
      readable,
      `${s}: the merged answer too`,
    );
  }
  t.same(
    versions((await must(plain.post('/api/reports', { type: 'server_message', target: own, reason: 'mine' }), 201)).body),
    ['my first', 'my last'],
    "one's own message: every version",
  );
  t.same(
    versions((await must(boss.post('/api/reports', { type: 'server_message', target: theirs, reason: 'site' }), 201)).body).length,
    3,
    'a site administrator (a plain member there) reads every version',
  );
  // Administrators get the whole snapshot of every report.
  const queue = (await must(boss.get('/api/admin/reports'), 200)).body.filter((r: any) => r.target === theirs);
  t.ok(queue.length >= SUBJECTS.length && queue.every((r: any) => r.snapshot.versions.length === 3), 'the queue keeps every version');

  // In a DM only the author reads the history: the other side reports what they see.
  await must(owner.post('/api/friends/requests', { username: plain.username }), 201);
  const request = (await must(plain.get('/api/friends/requests'), 200)).body.find((r: any) => r.from.user_id === owner.userId);
  await must(plain.post(`/api/friends/requests/${request.id}/accept`), 200);
  const dm = (await must(owner.post('/api/conversations/dm', { usernames: [plain.username] }), 201)).body.id;
  const said = (await must(owner.post(`/api/conversations/${dm}/messages`, { content: 'rude' }), 201)).body.id;
  await must(owner.put(`/api/conversations/${dm}/messages/${said}`, { content: 'polite' }), 200);
  t.equal((await plain.get(`/api/conversations/${dm}/messages/${said}/history`)).status, 403, 'the other side may not read the DM history');
  const dmReport = await must(plain.post('/api/reports', { type: 'conversation_message', target: said, reason: 'dm' }), 201);
  t.same(versions(dmReport.body), ['polite'], 'nor does the report answer show it');
  t.notOk(dmReport.text.includes('rude'));
  const stored = (await must(boss.get(`/api/admin/reports/${dmReport.body.id}`), 200)).body;
  t.same(versions(stored), ['rude', 'polite'], 'the administrator sees what was said first');
});

t.test(
  'notification settings: an id the caller cannot see answers as a random one, and a setting on what they no longer see is gone from their list and ready',
  async (t) => {
    const app = await startServer();
    t.teardown(app.close);
    const { clients, outsider, base, ids, server } = await scene(app.url);
    const { owner, plain } = clients;
    const N = '/api/account/notifications';
    const nowhere = await plain.put(`${N}/${crypto.randomUUID()}`, { level: 'mentions' });
    t.equal(nowhere.status, 404);
    const nothing = [nowhere.status, nowhere.text];
    for (const s of SUBJECTS) {
      for (const c of CHANNELS) {
        const put = await clients[s].put(`${N}/${ids[c]}`, { level: 'mentions' });
        const del = await clients[s].delete(`${N}/${ids[c]}`);
        if (may(s, c).view) t.same([put.status, del.status], [200, 204], `${s} in ${c}: set and removed`);
        else
          t.same(
            [
              [put.status, put.text],
              [del.status, del.text],
            ],
            [nothing, nothing],
            `${s} in ${c}: as for no such thing`,
          );
      }
    }
    for (const verb of ['put', 'delete'] as const) {
      const res = await outsider[verb](`${N}/${server.id}`, verb === 'put' ? { level: 'nothing' } : undefined);
      t.same([res.status, res.text], nothing, `an outsider on the server (${verb})`);
    }

    // What a member sets, then no longer sees, leaves their list and ready (and comes back with it).
    await must(plain.put(`${N}/${ids.open}`, { level: 'nothing' }), 200);
    await must(plain.put(`${N}/${ids.nofiles}`, { level: 'mentions' }), 200);
    await must(plain.put(`${N}/${server.id}`, { level: 'mentions' }), 200);
    const listed = async () => (await must(plain.get(N), 200)).body.map((x: any) => x.target_id);
    const inReady = async () => {
      const stream = await openSocket(app.url, '/api/ws', { client: plain });
      const ready = await stream.event('ready');
      stream.ws.close();
      return ready.notification_settings.map((x: any) => x.target_id);
    };
    t.same(await listed(), [server.id, ...[ids.open, ids.nofiles].sort()], 'the server first, then the channels');
    await must(owner.put(`${base}/channels/${ids.open}/overwrites/${plain.userId}`, { deny: ['view_channel'] }), 200);
    t.same(await listed(), [server.id, ids.nofiles], 'a channel hidden from them: gone from the list');
    t.same(await inReady(), [server.id, ids.nofiles], 'and from ready');
    await must(owner.request('DELETE', `${base}/channels/${ids.open}/overwrites/${plain.userId}`), 204);
    t.same(await listed(), [server.id, ...[ids.open, ids.nofiles].sort()], 'shown again: their setting is back');
    await must(plain.request('DELETE', `${base}/members/${plain.userId}`), 204);
    t.same(await listed(), [], 'a server left: nothing of it');
    t.same(await inReady(), []);
  },
);

t.test('channel positions as a member sees them: 0..k-1 over what they see, kept so by every event, and a hidden channel moves unheard', async (t) => {
  const app = await startServer();
  t.teardown(app.close);
  const { clients, base, ids, server, staffRole } = await scene(app.url);
  const { owner, plain, staff } = clients;
  const listOf = async (client: Client) => (await must(client.get(`${base}/channels`), 200)).body.map((c: any) => [c.id, c.position]);
  const globalOrder = async () => (await listOf(owner)).map(([id]: [string]) => id);
  for (const s of SUBJECTS) {
    const listed = await listOf(clients[s]);
    t.same(
      listed.map(([, p]: [string, number]) => p),
      listed.map((_: unknown, i: number) => i),
      `${s}: positions 0..k-1`,
    );
    t.same(
      listed.map(([id]: [string]) => id),
      (await globalOrder()).filter((id: string) => listed.some(([x]: [string]) => x === id)),
      `${s}: in the server's order`,
    );
  }
  // Each member's sidebar: ready, then every channel event applied, must stay what the list says.
  const sidebars = new Map<Client, { socket: LiveSocket; channels: Map<string, number>; updates: number }>();
  for (const client of [plain, staff]) {
    const socket = await openSocket(app.url, '/api/ws', { client });
    t.teardown(() => socket.ws.close());
    const ready = (await socket.event('ready')).servers.find((x: any) => x.id === server.id).channels;
    t.same(
      ready.map((c: any) => [c.id, c.position]),
      await listOf(client),
      'ready says what the list says',
    );
    sidebars.set(client, { socket, channels: new Map(ready.map((c: any) => [c.id, c.position])), updates: 0 });
  }
  const settle = async (what: string) => {
    for (const [client, bar] of sidebars) {
      const who = client === plain ? 'plain' : 'staff';
      let unseen = 0;
      for (const f of await bar.socket.drain(300)) {
        if (f.server_id !== server.id) continue;
        if (f.event === 'channel_created') bar.channels.set(f.channel_id, f.channel.position);
        if (f.event === 'channel_deleted') bar.channels.delete(f.channel_id);
        if (f.event === 'channel_updated') {
          bar.updates++;
          if (!bar.channels.has(f.channel_id)) unseen++;
          bar.channels.set(f.channel_id, f.channel.position);
        }
      }
      t.equal(unseen, 0, `${what}: ${who} hears of no update to a channel they do not see`);
      const model = [...bar.channels].sort((a, b) => a[1] - b[1]);
      t.same(model, await listOf(client), `${what}: ${who}'s sidebar, events applied, is their list`);
    }
  };
  const updatesOf = (client: Client) => sidebars.get(client)!.updates;
  const patch = (channel: string, body: object) => must(owner.request('PATCH', `${base}/channels/${channel}`, body), 200);

  await patch(ids.secret, { position: 0 });
  await settle('a private channel moved first');
  t.equal(updatesOf(plain), 0, 'who cannot see it hears nothing of it');
  t.ok(updatesOf(staff) > 0, 'who sees it hears of every place that changed');
  await patch(ids.secret, { name: 'secret-renamed', topic: 'hush' });
  await settle('a private channel renamed');
  t.equal(updatesOf(plain), 0, 'nor of its new name');
  await patch(ids.open, { position: 6 });
  await settle('an open channel moved past the private ones');
  t.ok(updatesOf(plain) > 0);
  await must(owner.put(`${base}/members/${plain.userId}/role`, { role: 'Staff' }), 200);
  await settle('a role that shows the private channel');
  await must(owner.request('DELETE', `${base}/members/${plain.userId}/roles/${staffRole}`), 200);
  await settle('and takes it away');
  await must(owner.request('DELETE', `${base}/channels/${ids.noreact}`), 204);
  await settle('a channel deleted');
  await must(owner.post(`${base}/channels`, { name: 'newest' }), 201);
  await settle('a channel created');
  await patch(ids.vault, { category_id: null });
  await settle('a channel out of its private category');
});

t.test('a history floor moved by another connection (the import worker) holds at once', async (t) => {
  const server = await startServer();
  t.teardown(() => server.close());
  const [owner, member] = [await signUp(server.url), await signUp(server.url)];
  const guild = (await must(owner.post('/api/servers', { name: 'Floors' }), 201)).body;
  const base = `/api/servers/${guild.id}`;
  const channel = (await must(owner.post(`${base}/channels`, { name: 'nohistory' }), 201)).body.id;
  await must(owner.put(`${base}/channels/${channel}/overwrites/${guild.id}`, { deny: ['read_history'] }), 200);
  await must(member.post(`/api/invites/${(await must(owner.post(`${base}/invites`), 201)).body.token}/accept`), 200);
  const posted = (await must(owner.post(`${base}/channels/${channel}/messages`, { content: 'after joining' }), 201)).body;
  const read = async () => (await must(member.get(`${base}/channels/${channel}/messages`), 200)).body.map((m: { id: string }) => m.id);
  t.same(await read(), [posted.id], 'sent after they joined: readable (and the access rules are now cached)');

  // A second writer on the same file, as the import's worker is: it marks the history read.
  const other = new Database(path.join(server.dataDir, 'chat.db'));
  other.prepare('UPDATE members SET joined_seq = (SELECT MAX(seq) FROM messages) WHERE server_id = ? AND user_id = ?').run(guild.id, member.userId);
  other.close();
  t.same(await read(), [], 'the floor moved: the message is below it now');
});
