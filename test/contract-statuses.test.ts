// Every status code an issue or the spec names, held against a real server. A published status
// is a promise to every client: this table is written by hand from the issue texts and
// ../shared/spec/chat-api.md (not from docs/openapi.json, which moves with the code), one row per
// named status: where it is named, the request, the situation, the status. A later change that
// seems better keeps the named code (issue 45 "The contract kept").
//
// Where an issue allowed a choice ("404 (or 410, documented)"), the row holds the choice
// docs/api.md documents, and says so.
import crypto from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import t, { type Test } from 'tap';
import { Client, signUp, uniqueName } from './helpers/client';
import { must, setStanding } from './helpers/community';
import { FakeClock, type TestServer, startServer } from './helpers/server';
import { type MultipartBody, multipart, postMultipart } from './helpers/multipart';
import { refusedUpgrade } from './helpers/ws';

interface Answer {
  status: number;
  headers: Headers;
  text: string;
}

/** One named status: where it is named, the request, the situation, the status; `check` adds what else the name promises. */
interface Row {
  source: string;
  method: string;
  path: string;
  situation: string;
  status: number;
  run: () => Promise<Answer>;
  check?: (answer: Answer) => string | null;
}

const PASSWORD = 'correct horse';
const ADMIN = uniqueName('boss');

/** A plain request (no contract check: a status the document lacks is this table's finding, not a throw). */
async function call(base: string, who: Client | null, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const h: Record<string, string> = { ...headers };
  if (who?.cookie) h.cookie = who.cookie;
  let payload: RequestInit['body'];
  if (body instanceof FormData || typeof body === 'string' || Buffer.isBuffer(body)) payload = body as RequestInit['body'];
  else if (body !== undefined) {
    payload = JSON.stringify(body);
    h['content-type'] ??= 'application/json';
  }
  const res = await fetch(base + path, { method, headers: h, body: payload, redirect: 'manual' });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/** A multipart upload written with backpressure, as an answer (the server may answer before the body ends). */
async function upload(base: string, who: Client, path: string, body: MultipartBody): Promise<Answer> {
  const res = await postMultipart(base, path, body, { cookie: who.cookie });
  const headers = new Headers();
  for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') headers.set(k, v);
  return { status: res.status, headers, text: res.text };
}

/** A refused WebSocket upgrade, as an answer. */
async function upgrade(base: string, path: string, who: Client | null, origin?: string): Promise<Answer> {
  const refused = await refusedUpgrade(base, path, { client: who ?? undefined, origin });
  const headers = new Headers();
  for (const [k, v] of Object.entries(refused.headers)) if (typeof v === 'string') headers.set(k, v);
  return { status: refused.status, headers, text: refused.body };
}

const files = (n: number, content = 'files') => {
  const form = new FormData();
  form.append('content', content);
  for (let i = 0; i < n; i++) form.append('attachments', new Blob([`file ${i}\n`], { type: 'text/plain' }), `f${i}.txt`);
  return form;
};

async function befriend(a: Client, b: Client) {
  const sent = await must(a.post('/api/friends/requests', { username: b.username }), 201);
  await must(b.post(`/api/friends/requests/${sent.body.id}/accept`), 200);
}

/** The scene every row acts in; rows that change state make their own people and places. */
async function world(server: TestServer, clock: FakeClock) {
  const url = server.url;
  const [owner, member, outsider, friend] = await Promise.all([signUp(url), signUp(url), signUp(url), signUp(url)]);
  const admin = await signUp(url, ADMIN);
  const S = (await must(owner.post('/api/servers', { name: 'Contract' }), 201)).body.id as string;
  const base = `/api/servers/${S}`;
  const general = (await must(owner.get(`${base}/channels`), 200)).body[0].id as string;
  const random = (await must(owner.post(`${base}/channels`, { name: 'random' }), 201)).body.id as string;
  const token = (await must(owner.post(`${base}/invites`), 201)).body.token as string;
  const join = (c: Client, t = token) => must(c.post(`/api/invites/${t}/accept`), 200);
  await join(member);
  await join(admin);
  await befriend(owner, member);
  await befriend(owner, friend);
  const dm = (await must(owner.post('/api/conversations/dm', { usernames: [member.username] }), 201)).body.id as string;
  const group = (await must(owner.post('/api/conversations/group', { name: 'G', usernames: [member.username, friend.username] }), 201)).body.id as string;
  const inGeneral = (await must(owner.post(`${base}/channels/${general}/messages`, files(1, 'hello')), 201)).body;
  const inRandom = (await must(owner.post(`${base}/channels/${random}/messages`, { content: 'elsewhere' }), 201)).body.id as string;
  const inDm = (await must(owner.post(`/api/conversations/${dm}/messages`, { content: 'hi' }), 201)).body.id as string;
  const inGroup = (await must(owner.post(`/api/conversations/${group}/messages`, { content: 'hi all' }), 201)).body.id as string;
  /** A new member of the scene's server. */
  const newMember = async () => {
    const c = await signUp(url);
    await join(c);
    return c;
  };
  /** Two new friends. */
  const newFriends = async () => {
    const [a, b] = await Promise.all([signUp(url), signUp(url)]);
    await befriend(a, b);
    return [a, b];
  };
  /** A new server of a new owner, with its first channel. */
  const newServer = async () => {
    const o = await signUp(url);
    const id = (await must(o.post('/api/servers', { name: 'Own' }), 201)).body.id as string;
    const channel = (await must(o.get(`/api/servers/${id}/channels`), 200)).body[0].id as string;
    return { owner: o, id, base: `/api/servers/${id}`, channel };
  };
  return {
    url,
    clock,
    server,
    owner,
    member,
    outsider,
    friend,
    admin,
    S,
    base,
    general,
    random,
    token,
    dm,
    group,
    inGeneral,
    inRandom,
    inDm,
    inGroup,
    newMember,
    newFriends,
    newServer,
    join,
    req: (who: Client | null, method: string, path: string, body?: unknown, headers?: Record<string, string>) => call(url, who, method, path, body, headers),
  };
}
type World = Awaited<ReturnType<typeof world>>;

const hasRetryAfter = (a: Answer) => (/^\d+$/.test(a.headers.get('retry-after') ?? '') ? null : 'no Retry-After in seconds');

function rows(w: World): Row[] {
  const { req, owner, member, outsider, admin, base } = w;
  const CH = `${base}/channels/${w.general}`;
  const row = (source: string, method: string, path: string, situation: string, status: number, run: () => Promise<Answer>, check?: Row['check']): Row => ({
    source,
    method,
    path,
    situation,
    status,
    run,
    check,
  });
  const suspended = async () => {
    const c = await w.newMember();
    setStanding(w.server, c.userId, 4);
    return c;
  };
  const atStanding = async (standing: number) => {
    const c = await signUp(w.url);
    setStanding(w.server, c.userId, standing);
    return c;
  };
  const timedOut = async () => {
    const c = await w.newMember();
    const mine = (await must(c.post(`${CH}/messages`, { content: 'mine' }), 201)).body.id;
    await must(owner.put(`${base}/members/${c.userId}/timeout`, { seconds: 3600 }), 200);
    return { c, mine };
  };
  /** A fresh room with 50 pinned messages, and a 51st message to pin. */
  const fullPins = async (room: 'channel' | 'conversation') => {
    const { owner: o, base: b, channel } = await w.newServer();
    let path = `${b}/channels/${channel}`;
    if (room === 'conversation') {
      const [x, y] = await w.newFriends();
      path = `/api/conversations/${(await must(x.post('/api/conversations/dm', { usernames: [y.username] }), 201)).body.id}`;
      return pinFifty(x, path);
    }
    return pinFifty(o, path);
  };
  const pinFifty = async (who: Client, path: string) => {
    for (let i = 0; i < 50; i++) {
      const id = (await must(who.post(`${path}/messages`, { content: `pin ${i}` }), 201)).body.id;
      await must(who.put(`${path}/pins/${id}`), 200);
    }
    const next = (await must(who.post(`${path}/messages`, { content: 'one more' }), 201)).body.id;
    return () => req(who, 'PUT', `${path}/pins/${next}`);
  };
  const blocked = async () => {
    const [a, b] = await w.newFriends();
    await must(a.put(`/api/users/${b.userId}/block`), 204);
    return [a, b];
  };
  const totp = (secret: string) =>
    new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 }).generate({ timestamp: w.clock.ms });
  const withTwoFactor = async () => {
    const c = await signUp(w.url);
    const { secret } = (await must(c.post('/api/account/2fa/setup', { current_password: PASSWORD }), 200)).body;
    return { c, secret };
  };
  const random = () => crypto.randomUUID();

  return [
    // ---- the spec (../shared/spec/chat-api.md)
    row('spec §4', 'POST', '/api/register', 'a new username', 201, () => req(null, 'POST', '/api/register', { username: uniqueName(), password: PASSWORD })),
    row('spec §7, issue 2', 'POST', '/api/register', 'a username already taken', 409, () =>
      req(null, 'POST', '/api/register', { username: owner.username, password: PASSWORD }),
    ),
    row('issue 2', 'POST', '/api/register', 'a username taken in another letter case', 409, () =>
      req(null, 'POST', '/api/register', { username: owner.username.toUpperCase(), password: PASSWORD }),
    ),
    row('spec §4', 'POST', '/api/login', 'the right password', 200, () => req(null, 'POST', '/api/login', { username: member.username, password: PASSWORD })),
    row(
      'spec §5.4',
      'POST',
      '/api/login',
      'a suspended account still signs in (suspended: true)',
      200,
      async () => req(null, 'POST', '/api/login', { username: (await atStanding(4)).username, password: PASSWORD }),
      (a) => (JSON.parse(a.text).suspended === true ? null : 'suspended is not true'),
    ),
    row('spec §4', 'POST', '/api/logout', 'a JSON client', 204, async () => req(await signUp(w.url), 'POST', '/api/logout')),
    row('spec §5.3, issue 2', 'GET', '/api/servers', 'no session', 401, () => req(null, 'GET', '/api/servers')),
    row('spec §4, §5.4', 'GET', '/api/account', 'a suspended account', 200, async () => req(await atStanding(4), 'GET', '/api/account')),
    row('spec §5.5', 'GET', '/api/admin/users', 'a signed-in non-administrator', 403, () => req(member, 'GET', '/api/admin/users')),
    row('spec §4, issue 3', 'POST', '/api/servers', 'a name', 201, () => req(member, 'POST', '/api/servers', { name: 'Mine' })),
    row('spec §4, issue 3', 'POST', '/api/servers/{server_id}/invites', 'any member', 201, () => req(member, 'POST', `${base}/invites`)),
    row('spec §4, §7, issue 5', 'POST', '/api/friends/requests', 'a request already exists', 409, async () => {
      const [a, b] = await Promise.all([signUp(w.url), signUp(w.url)]);
      await must(a.post('/api/friends/requests', { username: b.username }), 201);
      return req(a, 'POST', '/api/friends/requests', { username: b.username });
    }),
    row('spec §5.6, issue 3', 'POST', '/api/servers/{server_id}/channels', 'a plain member', 403, () =>
      req(member, 'POST', `${base}/channels`, { name: 'nope' }),
    ),
    row('spec §5.6, issue 3', 'POST', '/api/servers/{server_id}/roles', 'a full server administrator who is not the owner', 403, async () => {
      const s = await w.newServer();
      const mod = await signUp(w.url);
      await must(mod.post(`/api/invites/${(await must(s.owner.post(`${s.base}/invites`), 201)).body.token}/accept`), 200);
      await must(s.owner.post(`${s.base}/roles`, { name: 'mods', full_server_admin: true }), 201);
      await must(s.owner.put(`${s.base}/members/${mod.userId}/role`, { role: 'mods' }), 200);
      return req(mod, 'POST', `${s.base}/roles`, { name: 'more', full_server_admin: false });
    }),
    row('spec §5.6', 'PUT', '/api/servers/{server_id}/channels/{channel_id}/messages/{message_id}', "another member's message", 403, () =>
      req(member, 'PUT', `${CH}/messages/${w.inGeneral.id}`, { content: 'mine now' }),
    ),
    row('spec §5.6', 'DELETE', '/api/servers/{server_id}/channels/{channel_id}/messages/{message_id}', "a plain member, another's message", 403, () =>
      req(member, 'DELETE', `${CH}/messages/${w.inGeneral.id}`),
    ),

    // ---- issue 2: the HTTP core
    row('issue 2', 'GET', '/healthz', 'no session', 200, () => req(null, 'GET', '/healthz')),
    row('issue 2', 'GET', '/api/no-such-thing', 'an unknown path', 404, () => req(owner, 'GET', '/api/no-such-thing')),
    row(
      'issue 2',
      'DELETE',
      '/api/servers',
      'a known path, a wrong method (with Allow)',
      405,
      () => req(owner, 'DELETE', '/api/servers'),
      (a) => (a.headers.get('allow')?.includes('GET') ? null : 'no Allow header naming GET'),
    ),
    row('issue 2', 'GET', '/api/users/{user_id}', 'a path id that is not a UUID', 400, () => req(owner, 'GET', '/api/users/not-a-uuid')),
    row('issue 2', 'POST', '/api/servers', 'malformed JSON', 400, () =>
      req(owner, 'POST', '/api/servers', '{"name": ', { 'content-type': 'application/json' }),
    ),
    row('issue 2', 'POST', '/api/servers', 'a body over 1 MiB', 413, () =>
      req(owner, 'POST', '/api/servers', JSON.stringify({ name: 'x'.repeat(1024 * 1024 + 1) }), { 'content-type': 'application/json' }),
    ),
    row('issue 2, issue 9', 'POST', '/api/servers', 'a foreign Origin', 403, () =>
      req(owner, 'POST', '/api/servers', { name: 'x' }, { origin: 'https://evil.example' }),
    ),
    row('issue 2', 'POST', '/api/login', 'a wrong password', 401, () =>
      req(null, 'POST', '/api/login', { username: member.username, password: 'wrong password' }),
    ),
    row('issue 2', 'POST', '/api/login', 'an unknown user', 401, () => req(null, 'POST', '/api/login', { username: uniqueName('ghost'), password: PASSWORD })),
    row('issue 2', 'GET', '/api/admin/me', 'an administrator', 200, () => req(admin, 'GET', '/api/admin/me')),
    row('issue 2', 'GET', '/api/admin/me', 'a non-administrator', 403, () => req(member, 'GET', '/api/admin/me')),

    // ---- issue 3: servers, channels, roles, invites, messages
    row('issue 3', 'POST', '/api/servers/{server_id}/channels', 'a name already used in the server', 409, () =>
      req(owner, 'POST', `${base}/channels`, { name: 'random' }),
    ),
    row('issue 3', 'POST', '/api/servers/{server_id}/roles', 'a role name already used', 409, async () => {
      await must(owner.post(`${base}/roles`, { name: 'twice', full_server_admin: false }), 201);
      return req(owner, 'POST', `${base}/roles`, { name: 'twice', full_server_admin: false });
    }),
    row('issue 3', 'PUT', '/api/servers/{server_id}/members/{user_id}/role', 'an unknown role', 404, () =>
      req(owner, 'PUT', `${base}/members/${member.userId}/role`, { role: 'no-such-role' }),
    ),
    row('issue 3', 'PUT', '/api/servers/{server_id}/members/{user_id}/role', 'a user who is not a member', 404, async () => {
      await must(owner.post(`${base}/roles`, { name: 'given', full_server_admin: false }), 201);
      return req(owner, 'PUT', `${base}/members/${outsider.userId}/role`, { role: 'given' });
    }),
    row('issue 3 (404, documented)', 'GET', '/api/servers/{server_id}/channels', 'a non-member', 404, () => req(outsider, 'GET', `${base}/channels`)),
    row('issue 3', 'POST', '/api/invites/{token}/accept', 'an unknown token', 404, () => req(outsider, 'POST', '/api/invites/no-such-token/accept')),
    row('issue 3 (404, not 410: documented)', 'POST', '/api/invites/{token}/accept', 'an expired token', 404, async () => {
      const short = (await must(owner.post(`${base}/invites`, { expires_in_seconds: 300 }), 201)).body.token;
      w.clock.advance(301_000);
      return req(await signUp(w.url), 'POST', `/api/invites/${short}/accept`);
    }),
    row('issue 3, spec §2', 'POST', '/api/servers/{server_id}/channels/{channel_id}/messages', 'reply_to a message of another channel', 400, () =>
      req(member, 'POST', `${CH}/messages`, { content: 're', reply_to: w.inRandom }),
    ),
    row('spec §4, issue 5', 'POST', '/api/conversations/{conversation_id}/messages', 'reply_to a message of another conversation', 400, () =>
      req(member, 'POST', `/api/conversations/${w.dm}/messages`, { content: 're', reply_to: w.inGroup }),
    ),

    // ---- issue 4: attachments
    // (Answered while the body still streams: sent with backpressure, the early answer read.)
    row('issue 4 (413, documented)', 'POST', '/api/servers/{server_id}/channels/{channel_id}/messages', 'a sixth file', 413, () =>
      upload(
        w.url,
        member,
        `${CH}/messages`,
        multipart(Array.from({ length: 6 }, (_, i) => ({ file: 'attachments', filename: `f${i}.txt`, data: `file ${i}` }))),
      ),
    ),
    row('issue 4 (413, documented)', 'POST', '/api/servers/{server_id}/channels/{channel_id}/messages', 'a file one byte over 25 MiB', 413, () =>
      upload(w.url, member, `${CH}/messages`, multipart([{ file: 'attachments', filename: 'big.txt', size: 25 * 1024 * 1024 + 1 }])),
    ),
    row('issue 4, spec §2', 'POST', '/api/servers/{server_id}/channels/{channel_id}/messages', 'neither content nor attachments', 400, () =>
      req(member, 'POST', `${CH}/messages`, { content: '' }),
    ),
    row('issue 4, spec §4', 'GET', '/uploads/{attachment_id}', 'a non-member', 404, () => req(outsider, 'GET', w.inGeneral.attachments[0].url)),
    row('issue 4', 'GET', '/uploads/{attachment_id}', 'a Range', 206, () =>
      req(member, 'GET', w.inGeneral.attachments[0].url, undefined, { range: 'bytes=0-1' }),
    ),
    row('issue 4', 'GET', '/uploads/{attachment_id}', 'an unsatisfiable Range', 416, () =>
      req(member, 'GET', w.inGeneral.attachments[0].url, undefined, { range: 'bytes=100000-' }),
    ),

    // ---- issue 5: friends and conversations
    row('issue 5', 'POST', '/api/friends/requests', 'a new request', 201, async () =>
      req(await signUp(w.url), 'POST', '/api/friends/requests', { username: outsider.username }),
    ),
    row('issue 5', 'POST', '/api/friends/requests', 'already friends', 409, () => req(owner, 'POST', '/api/friends/requests', { username: member.username })),
    row('issue 5 (409, documented)', 'POST', '/api/friends/requests', 'the other side already asked', 409, async () => {
      const [a, b] = await Promise.all([signUp(w.url), signUp(w.url)]);
      await must(a.post('/api/friends/requests', { username: b.username }), 201);
      return req(b, 'POST', '/api/friends/requests', { username: a.username });
    }),
    row('issue 5', 'POST', '/api/friends/requests', 'an unknown username', 404, () =>
      req(member, 'POST', '/api/friends/requests', { username: uniqueName('ghost') }),
    ),
    row('issue 5', 'POST', '/api/friends/requests', 'oneself', 400, () => req(member, 'POST', '/api/friends/requests', { username: member.username })),
    row('issue 5', 'POST', '/api/friends/requests/{request_id}/accept', 'a request not addressed to the caller', 404, async () => {
      const [a, b] = await Promise.all([signUp(w.url), signUp(w.url)]);
      const sent = await must(a.post('/api/friends/requests', { username: b.username }), 201);
      return req(a, 'POST', `/api/friends/requests/${sent.body.id}/accept`);
    }),
    row('issue 5 (400, documented)', 'POST', '/api/conversations/dm', 'a user who is not a friend', 400, () =>
      req(member, 'POST', '/api/conversations/dm', { usernames: [outsider.username] }),
    ),
    row('issue 5', 'POST', '/api/conversations/dm', 'oneself', 400, () => req(member, 'POST', '/api/conversations/dm', { usernames: [member.username] })),
    row('issue 5', 'POST', '/api/conversations/dm', 'not exactly one name', 400, () =>
      req(owner, 'POST', '/api/conversations/dm', { usernames: [member.username, w.friend.username] }),
    ),
    row('issue 5', 'POST', '/api/conversations/group', 'no friends named', 400, () =>
      req(owner, 'POST', '/api/conversations/group', { name: 'G', usernames: [] }),
    ),
    row('issue 5', 'POST', '/api/conversations/group', '26 names', 400, () =>
      req(owner, 'POST', '/api/conversations/group', { name: 'G', usernames: Array.from({ length: 26 }, () => uniqueName()) }),
    ),
    row('issue 5', 'GET', '/api/conversations/{conversation_id}/messages', 'a non-member', 404, () =>
      req(outsider, 'GET', `/api/conversations/${w.dm}/messages`),
    ),

    // ---- issue 6: the room sockets
    row('issue 6', 'GET', '/api/channels/{channel_id}/ws', 'no session', 401, () => upgrade(w.url, `/api/channels/${w.general}/ws`, null)),
    row('issue 6 (404, documented)', 'GET', '/api/channels/{channel_id}/ws', 'a non-member', 404, () =>
      upgrade(w.url, `/api/channels/${w.general}/ws`, outsider),
    ),
    row('issue 6', 'GET', '/api/channels/{channel_id}/ws', 'a foreign Origin', 403, () =>
      upgrade(w.url, `/api/channels/${w.general}/ws`, member, 'https://evil.example'),
    ),
    row('issue 6, issue 16', 'GET', '/api/channels/{channel_id}/ws', 'a suspended account', 403, async () =>
      upgrade(w.url, `/api/channels/${w.general}/ws`, await suspended()),
    ),
    row('issue 6 (404, documented)', 'GET', '/api/conversations/{conversation_id}/ws', 'a non-member', 404, () =>
      upgrade(w.url, `/api/conversations/${w.dm}/ws`, outsider),
    ),

    // ---- issue 7: email
    row('issue 7', 'PUT', '/api/account/email', 'an invalid address', 400, () => req(member, 'PUT', '/api/account/email', { email: 'not an address' })),
    row('issue 7 (400, documented)', 'GET', '/api/verify-email', 'an unknown token', 400, () => req(null, 'GET', '/api/verify-email?token=no-such-token')),

    // ---- issue 8: reports, administration, standing
    row('issue 8', 'POST', '/api/reports', 'an unknown type', 400, () =>
      req(member, 'POST', '/api/reports', { type: 'channel', target: owner.userId, reason: 'x' }),
    ),
    row('issue 8', 'POST', '/api/reports', 'a target that does not exist', 404, () =>
      req(member, 'POST', '/api/reports', { type: 'user', target: random(), reason: 'x' }),
    ),
    row('issue 8 (404, documented), spec §3', 'POST', '/api/reports', 'a message of a server the reporter is not in', 404, () =>
      req(outsider, 'POST', '/api/reports', { type: 'server_message', target: w.inGeneral.id, reason: 'x' }),
    ),
    row('issue 8, spec §3', 'POST', '/api/reports', 'a valid report', 201, () =>
      req(member, 'POST', '/api/reports', { type: 'user', target: outsider.userId, reason: 'x' }),
    ),
    row('issue 8', 'PUT', '/api/admin/reports/{report_id}', 'a status other than pending or resolved', 400, async () => {
      const report = (await must(member.post('/api/reports', { type: 'user', target: w.friend.userId, reason: 'x' }), 201)).body.id;
      return req(admin, 'PUT', `/api/admin/reports/${report}`, { status: 'closed' });
    }),
    row('issue 8', 'GET', '/api/admin/reports', 'no session', 401, () => req(null, 'GET', '/api/admin/reports')),
    row('issue 8, spec §5.5', 'GET', '/api/admin/reports', 'a non-administrator', 403, () => req(member, 'GET', '/api/admin/reports')),
    row('issue 8, spec §8', 'PUT', '/api/admin/users/{user_id}/standing', 'a standing of 5', 400, () =>
      req(admin, 'PUT', `/api/admin/users/${outsider.userId}/standing`, { standing: 5 }),
    ),
    row('issue 8', 'PUT', '/api/admin/users/{user_id}/standing', 'a string', 400, () =>
      req(admin, 'PUT', `/api/admin/users/${outsider.userId}/standing`, { standing: '2' }),
    ),
    row('issue 8', 'PUT', '/api/admin/users/{user_id}/standing', 'a non-integer', 400, () =>
      req(admin, 'PUT', `/api/admin/users/${outsider.userId}/standing`, { standing: 1.5 }),
    ),
    row('issue 8, spec §3', 'POST', '/api/invites/{token}/accept', 'standing 1', 403, async () =>
      req(await atStanding(1), 'POST', `/api/invites/${w.token}/accept`),
    ),
    row('issue 8, spec §3', 'POST', '/api/conversations/group', 'standing 2', 403, async () => {
      const [a, b] = await w.newFriends();
      setStanding(w.server, a.userId, 2);
      return req(a, 'POST', '/api/conversations/group', { name: 'G', usernames: [b.username] });
    }),
    row('issue 8, spec §3', 'POST', '/api/servers/{server_id}/channels/{channel_id}/messages', 'standing 3', 403, async () => {
      const c = await w.newMember();
      setStanding(w.server, c.userId, 3);
      return req(c, 'POST', `${CH}/messages`, { content: 'x' });
    }),
    row('issue 8, spec §3', 'GET', '/api/servers', 'standing 4 (suspended)', 403, async () => req(await atStanding(4), 'GET', '/api/servers')),

    // ---- issue 9: cross-site requests, content types, rate limits (the rate limit rows run on a server with limits on)
    row('issue 9', 'POST', '/api/servers', 'Sec-Fetch-Site: cross-site', 403, () =>
      req(owner, 'POST', '/api/servers', { name: 'x' }, { 'sec-fetch-site': 'cross-site' }),
    ),
    row('issue 9', 'POST', '/api/servers', 'a text/plain body', 415, () =>
      req(owner, 'POST', '/api/servers', '{"name":"x"}', { 'content-type': 'text/plain' }),
    ),
    row('issue 9', 'POST', '/api/servers', 'a form body', 415, () =>
      req(owner, 'POST', '/api/servers', 'name=x', { 'content-type': 'application/x-www-form-urlencoded' }),
    ),

    // ---- issue 14: sockets per session
    row('issue 14', 'GET', '/api/ws', 'one socket past the cap of a session', 429, async () => {
      const c = await signUp(w.url);
      const { openSocket } = await import('./helpers/ws');
      const open = [];
      for (let i = 0; i < 10; i++) open.push(await openSocket(w.url, '/api/ws', { client: c }));
      const refused = await upgrade(w.url, '/api/ws', c);
      for (const s of open) s.ws.close();
      return refused;
    }),

    // ---- issue 16: the user stream, read markers, typing
    row('issue 16', 'GET', '/api/ws', 'no session', 401, () => upgrade(w.url, '/api/ws', null)),
    row('issue 16', 'GET', '/api/ws', 'a suspended account', 403, async () => upgrade(w.url, '/api/ws', await atStanding(4))),
    row('issue 16, issue 45', 'PUT', '/api/servers/{server_id}/channels/{channel_id}/read', 'a message of another channel', 400, () =>
      req(member, 'PUT', `${CH}/read`, { message_id: w.inRandom }),
    ),
    row('issue 16', 'PUT', '/api/servers/{server_id}/channels/{channel_id}/read', 'a non-member', 404, () =>
      req(outsider, 'PUT', `${CH}/read`, { message_id: w.inGeneral.id }),
    ),
    row('issue 16', 'PUT', '/api/servers/{server_id}/channels/{channel_id}/read', 'an older message (nothing moves)', 200, async () => {
      const c = await w.newMember();
      const newer = (await must(c.post(`${CH}/messages`, { content: 'newer' }), 201)).body.id;
      await must(c.put(`${CH}/read`, { message_id: newer }), 200);
      return req(c, 'PUT', `${CH}/read`, { message_id: w.inGeneral.id });
    }),
    row('issue 16, issue 45', 'PUT', '/api/conversations/{conversation_id}/read', 'a message of another conversation', 400, () =>
      req(member, 'PUT', `/api/conversations/${w.dm}/read`, { message_id: w.inGroup }),
    ),
    row('issue 16', 'POST', '/api/servers/{server_id}/channels/{channel_id}/typing', 'a member who may send', 204, () => req(member, 'POST', `${CH}/typing`)),
    row('issue 16', 'POST', '/api/servers/{server_id}/channels/{channel_id}/typing', 'a member who may not send there (as a send)', 403, async () => {
      const s = await w.newServer();
      const c = await signUp(w.url);
      await must(c.post(`/api/invites/${(await must(s.owner.post(`${s.base}/invites`), 201)).body.token}/accept`), 200);
      await must(s.owner.put(`${s.base}/channels/${s.channel}/overwrites/${s.id}`, { deny: ['send_messages'] }), 200);
      return req(c, 'POST', `${s.base}/channels/${s.channel}/typing`);
    }),
    row('issue 16', 'POST', '/api/servers/{server_id}/channels/{channel_id}/typing', 'a non-member (as a send)', 404, () =>
      req(outsider, 'POST', `${CH}/typing`),
    ),

    // ---- issue 18: community tools
    row('issue 18', 'POST', '/api/invites/{token}/accept', 'a used-up invite', 404, async () => {
      const once = (await must(owner.post(`${base}/invites`, { max_uses: 1 }), 201)).body.token;
      await must((await signUp(w.url)).post(`/api/invites/${once}/accept`), 200);
      return req(await signUp(w.url), 'POST', `/api/invites/${once}/accept`);
    }),
    row('issue 18', 'POST', '/api/invites/{token}/accept', 'a revoked invite', 404, async () => {
      const revoked = (await must(owner.post(`${base}/invites`), 201)).body.token;
      await must(owner.delete(`/api/invites/${revoked}`), 204);
      return req(await signUp(w.url), 'POST', `/api/invites/${revoked}/accept`);
    }),
    row('issue 18', 'POST', '/api/invites/{token}/accept', 'a banned user', 403, async () => {
      const c = await w.newMember();
      await must(owner.put(`${base}/bans/${c.userId}`, {}), 204);
      return req(c, 'POST', `/api/invites/${(await must(owner.post(`${base}/invites`), 201)).body.token}/accept`);
    }),
    row('issue 18', 'POST', '/api/servers/{server_id}/channels/{channel_id}/messages', 'a timed-out member', 403, async () =>
      req((await timedOut()).c, 'POST', `${CH}/messages`, { content: 'x' }),
    ),
    row('issue 18', 'PUT', '/api/servers/{server_id}/channels/{channel_id}/messages/{message_id}', 'a timed-out member editing', 403, async () => {
      const { c, mine } = await timedOut();
      return req(c, 'PUT', `${CH}/messages/${mine}`, { content: 'changed' });
    }),
    row('issue 18', 'PUT', '/api/servers/{server_id}/channels/{channel_id}/messages/{message_id}/reactions', 'a timed-out member', 403, async () =>
      req((await timedOut()).c, 'PUT', `${CH}/messages/${w.inGeneral.id}/reactions`, { emoji: '👍' }),
    ),
    row('issue 18', 'POST', '/api/servers/{server_id}/channels/{channel_id}/typing', 'a timed-out member', 403, async () =>
      req((await timedOut()).c, 'POST', `${CH}/typing`),
    ),
    row(
      'issue 18',
      'POST',
      '/api/servers/{server_id}/channels/{channel_id}/messages',
      'slow mode: a second message too soon',
      429,
      async () => {
        await must(owner.request('PATCH', `${base}/channels/${w.random}`, { slowmode_seconds: 60 }), 200);
        const c = await w.newMember();
        await must(c.post(`${base}/channels/${w.random}/messages`, { content: 'one' }), 201);
        return req(c, 'POST', `${base}/channels/${w.random}/messages`, { content: 'two' });
      },
      hasRetryAfter,
    ),
    row('issue 18, issue 45', 'PUT', '/api/servers/{server_id}/channels/{channel_id}/pins/{message_id}', 'the 51st pin of a channel', 400, async () =>
      (await fullPins('channel'))(),
    ),
    row('issue 18, issue 45', 'PUT', '/api/conversations/{conversation_id}/pins/{message_id}', 'the 51st pin of a conversation', 400, async () =>
      (await fullPins('conversation'))(),
    ),
    row('issue 18', 'DELETE', '/api/admin/messages/{message_id}', 'an administrator, any message', 204, async () => {
      const id = (await must(owner.post(`${CH}/messages`, { content: 'to go' }), 201)).body.id;
      return req(admin, 'DELETE', `/api/admin/messages/${id}`);
    }),
    row('issue 18', 'POST', '/api/friends/requests', 'a blocked user to the one who blocked them', 404, async () => {
      const [a, b] = await blocked();
      return req(b, 'POST', '/api/friends/requests', { username: a.username });
    }),
    row('issue 18', 'POST', '/api/conversations/dm', 'with someone who blocked the caller', 403, async () => {
      const [a, b] = await w.newFriends();
      await must(b.post('/api/conversations/dm', { usernames: [a.username] }), 201);
      await must(a.put(`/api/users/${b.userId}/block`), 204);
      return req(b, 'POST', '/api/conversations/dm', { usernames: [a.username] });
    }),
    row('issue 18', 'POST', '/api/conversations/group', 'with someone the caller blocked', 403, async () => {
      const [a, b] = await w.newFriends();
      const c = await signUp(w.url);
      await befriend(a, c);
      await must(a.put(`/api/users/${b.userId}/block`), 204);
      return req(a, 'POST', '/api/conversations/group', { name: 'G', usernames: [b.username, c.username] });
    }),
    row('issue 18', 'PUT', '/api/conversations/{conversation_id}/members/{user_id}', 'adding someone the caller blocked', 403, async () => {
      const [a, b] = await w.newFriends();
      const c = await signUp(w.url);
      await befriend(a, c);
      const g = (await must(a.post('/api/conversations/group', { name: 'G', usernames: [c.username] }), 201)).body.id;
      await must(a.put(`/api/users/${b.userId}/block`), 204);
      return req(a, 'PUT', `/api/conversations/${g}/members/${b.userId}`);
    }),
    row('issue 18', 'POST', '/api/conversations/{conversation_id}/messages', 'a DM where one blocked the other', 403, async () => {
      const [a, b] = await w.newFriends();
      const d = (await must(a.post('/api/conversations/dm', { usernames: [b.username] }), 201)).body.id;
      await must(a.put(`/api/users/${b.userId}/block`), 204);
      return req(b, 'POST', `/api/conversations/${d}/messages`, { content: 'hello?' });
    }),
    row('issue 18, issue 45', 'PATCH', '/api/conversations/{conversation_id}', 'renaming a DM', 400, () =>
      req(member, 'PATCH', `/api/conversations/${w.dm}`, { name: 'ours' }),
    ),
    row('issue 18, issue 45', 'PUT', '/api/conversations/{conversation_id}/members/{user_id}', 'adding someone to a DM', 400, () =>
      req(owner, 'PUT', `/api/conversations/${w.dm}/members/${w.friend.userId}`),
    ),
    row('issue 18, issue 45', 'DELETE', '/api/conversations/{conversation_id}/members/{user_id}', 'leaving a DM', 400, () =>
      req(member, 'DELETE', `/api/conversations/${w.dm}/members/${member.userId}`),
    ),

    // ---- issue 19: search
    row('issue 19', 'GET', '/api/search', 'a channel the caller cannot see', 404, () => req(outsider, 'GET', `/api/search?q=hello&channel_id=${w.general}`)),
    row('issue 19', 'GET', '/api/search', 'an empty query', 400, () => req(member, 'GET', '/api/search?q=')),
    row('issue 19', 'GET', '/api/search', 'a query over 256 characters', 400, () => req(member, 'GET', `/api/search?q=${'a'.repeat(257)}`)),
    row('issue 19', 'GET', '/api/search', 'an unbalanced quote', 400, () => req(member, 'GET', `/api/search?q=${encodeURIComponent('"hello')}`)),
    row('issue 19', 'GET', '/api/search', 'a lone *', 400, () => req(member, 'GET', '/api/search?q=*')),
    row('issue 19', 'GET', '/api/search', 'a -word alone', 400, () => req(member, 'GET', '/api/search?q=-hello')),
    row('issue 19', 'GET', '/api/search', 'limit 0', 400, () => req(member, 'GET', '/api/search?q=hello&limit=0')),
    row('issue 19', 'GET', '/api/search', 'limit 51', 400, () => req(member, 'GET', '/api/search?q=hello&limit=51')),
    row('issue 19', 'GET', '/api/search', 'FTS5 syntax is text, never a 500', 200, () =>
      req(member, 'GET', `/api/search?q=${encodeURIComponent('NEAR( AND ^hello:')}`),
    ),

    // ---- issue 20: accounts
    row('issue 20', 'PUT', '/api/account/password', 'the right current password', 204, async () =>
      req(await signUp(w.url), 'PUT', '/api/account/password', { current_password: PASSWORD, new_password: 'another horse' }),
    ),
    row('issue 20', 'PUT', '/api/account/password', 'a wrong current password', 403, async () =>
      req(await signUp(w.url), 'PUT', '/api/account/password', { current_password: 'wrong horse', new_password: 'another horse' }),
    ),
    row('issue 20', 'POST', '/api/account/2fa/enable', 'a current code', 200, async () => {
      const { c, secret } = await withTwoFactor();
      return req(c, 'POST', '/api/account/2fa/enable', { current_password: PASSWORD, code: totp(secret) });
    }),
    row(
      'issue 20',
      'POST',
      '/api/login',
      'two-factor sign-in on, no code',
      401,
      async () => {
        const { c, secret } = await withTwoFactor();
        await must(c.post('/api/account/2fa/enable', { current_password: PASSWORD, code: totp(secret) }), 200);
        return req(null, 'POST', '/api/login', { username: c.username, password: PASSWORD });
      },
      (a) => (a.text.includes('two-factor code required') ? null : `reason: ${a.text}`),
    ),
    row('issue 20', 'PUT', '/api/account/avatar', 'bytes that are no image', 400, () => {
      const form = new FormData();
      form.append('avatar', new Blob(['not an image at all']), 'a.png');
      return req(member, 'PUT', '/api/account/avatar', form);
    }),
    row('issue 20', 'POST', '/api/account/export', 'starting one', 202, async () => req(await signUp(w.url), 'POST', '/api/account/export')),
    row('issue 20', 'DELETE', '/api/account', 'the owner of a server', 409, () => req(owner, 'DELETE', '/api/account', { password: PASSWORD })),

    // ---- issue 26: the request contract made exact
    row('issue 26', 'PATCH', '/api/conversations/dm', 'a literal segment is no id', 405, () => req(owner, 'PATCH', '/api/conversations/dm', { name: 'x' })),
    row(
      'issue 26',
      'DELETE',
      '/api/friends/requests',
      'Allow does not offer DELETE',
      405,
      () => req(owner, 'DELETE', '/api/friends/requests'),
      (a) => (a.headers.get('allow')?.includes('DELETE') ? `Allow: ${a.headers.get('allow')}` : null),
    ),
    row('issue 26 (426, documented)', 'GET', '/api/ws', 'a plain GET, no upgrade', 426, () => req(owner, 'GET', '/api/ws')),

    // ---- issue 28: hold under attack, round two
    row('issue 28', 'POST', '/api/conversations/group', "a third person's group holding A and B, A having blocked B", 403, async () => {
      const [a, b] = await blocked();
      const c = await signUp(w.url);
      await befriend(c, a);
      await befriend(c, b);
      return req(c, 'POST', '/api/conversations/group', { name: 'G', usernames: [a.username, b.username] });
    }),
    row('issue 28', 'PUT', '/api/conversations/{conversation_id}/members/{user_id}', 'adding B to a group holding A, who blocked B', 403, async () => {
      const [a, b] = await blocked();
      const c = await signUp(w.url);
      await befriend(c, a);
      await befriend(c, b);
      const g = (await must(c.post('/api/conversations/group', { name: 'G', usernames: [a.username] }), 201)).body.id;
      return req(c, 'PUT', `/api/conversations/${g}/members/${b.userId}`);
    }),
    row(
      'issue 28, issue 18',
      'GET',
      '/api/servers/{server_id}/channels/{channel_id}/messages/{message_id}/history',
      'a site administrator outside the server',
      200,
      async () => {
        const s = await w.newServer();
        const id = (await must(s.owner.post(`${s.base}/channels/${s.channel}/messages`, { content: 'x' }), 201)).body.id;
        return req(admin, 'GET', `${s.base}/channels/${s.channel}/messages/${id}/history`);
      },
    ),

    // ---- issue 34: bots and webhooks
    row('issue 34', 'POST', '/api/servers/{server_id}/channels/{channel_id}/webhooks', 'the owner', 201, () =>
      req(owner, 'POST', `${CH}/webhooks`, { name: 'hook' }),
    ),
    row('issue 34', 'POST', '/api/bots', 'a user', 201, async () => req(await signUp(w.url), 'POST', '/api/bots', { name: uniqueName('bot') })),
  ];
}

/** The named statuses that need rate limits on (RATE_LIMIT=on). */
function limitedRows(url: string): Row[] {
  return [
    {
      source: 'issue 9',
      method: 'POST',
      path: '/api/login',
      situation: 'failed logins past the limit',
      status: 429,
      run: async () => {
        const c = await signUp(url);
        let last: Answer | undefined;
        for (let i = 0; i < 10; i++) {
          last = await call(url, null, 'POST', '/api/login', { username: c.username, password: 'wrong password' });
          if (last.status === 429) break;
        }
        return last!;
      },
      check: hasRetryAfter,
    },
  ];
}

async function hold(t: Test, table: Row[]) {
  for (const r of table) {
    const name = `${r.source}: ${r.method} ${r.path}, ${r.situation} → ${r.status}`;
    let answer: Answer;
    try {
      answer = await r.run();
    } catch (err) {
      t.fail(`${name}: the set-up failed`, { error: String(err) });
      continue;
    }
    t.equal(answer.status, r.status, name, { answer: answer.text.slice(0, 200) });
    const extra = answer.status === r.status && r.check ? r.check(answer) : null;
    if (extra) t.fail(`${name}: ${extra}`);
  }
}

t.test('every status an issue or the spec names is the status the server answers', async (t) => {
  const clock = new FakeClock(Date.now());
  const server = await startServer({ clock, env: { ADMIN_USERS: ADMIN } });
  t.teardown(server.close);
  const w = await world(server, clock);
  const table = rows(w);
  const keys = table.map((r) => `${r.method} ${r.path}: ${r.situation}`);
  t.same(
    keys.filter((k, i) => keys.indexOf(k) !== i),
    [],
    'each situation once',
  );
  await hold(t, table);
});

t.test('and the named statuses of the rate limits, with limits on', async (t) => {
  const server = await startServer({ env: { RATE_LIMIT: 'on' } });
  t.teardown(server.close);
  await hold(t, limitedRows(server.url));
});
