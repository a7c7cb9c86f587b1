import http from 'node:http';
import crypto from 'node:crypto';
import path from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { DAY, iso } from '../src/core/clock';
import { INVITE_LIFETIME_MS } from '../src/api/invites';
import { MAX_NAME_CHARS } from '../src/api/servers';
import { Client, type Res, signUp } from './helpers/client';
import { FakeClock, startServer } from './helpers/server';
import { ACTORS, type Actor, type Expect, community, must, setStanding } from './helpers/community';

/** Members read; outsiders learn nothing (404); no session 401; a suspended member 403. */
const MEMBERS_READ: Expect = { owner: 200, admin: 200, roleMember: 200, member: 200, outsider: 404, anon: 401, suspended: 403 };
const ADMINS_CREATE: Expect = { ...MEMBERS_READ, owner: 201, admin: 201, roleMember: 403, member: 403 };
const OWNER_CREATES: Expect = { ...MEMBERS_READ, owner: 201, admin: 403, roleMember: 403, member: 403 };
const OWNER_ONLY: Expect = { ...MEMBERS_READ, admin: 403, roleMember: 403, member: 403 };
const MEMBERS_CREATE: Expect = { ...MEMBERS_READ, owner: 201, admin: 201, roleMember: 201, member: 201 };
const ANYONE: Expect = { owner: 200, admin: 200, roleMember: 200, member: 200, outsider: 200, anon: 200, suspended: 200 };

t.test('who may do what in a server', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const { base, token, clients } = await community(server);
  // A role members take themselves (issue 53), placed last: below every role with a power.
  const pronouns: string = (await must(clients.owner.post(`${base}/roles`, { name: 'pronouns', self_assignable: true }), 201)).body.id;

  const matrix: { name: string; call: (c: Client, actor: Actor) => Promise<Res>; expect: Expect }[] = [
    { name: 'GET /api/servers/{id}', call: (c) => c.get(base), expect: MEMBERS_READ },
    { name: 'GET /api/servers/{id}/channels', call: (c) => c.get(`${base}/channels`), expect: MEMBERS_READ },
    {
      name: 'POST /api/servers/{id}/channels',
      call: (c, actor) => c.post(`${base}/channels`, { name: `room-${actor}` }),
      expect: ADMINS_CREATE,
    },
    { name: 'GET /api/servers/{id}/members', call: (c) => c.get(`${base}/members`), expect: MEMBERS_READ },
    { name: 'GET /api/servers/{id}/roles', call: (c) => c.get(`${base}/roles`), expect: MEMBERS_READ },
    {
      name: 'POST /api/servers/{id}/roles',
      call: (c, actor) => c.post(`${base}/roles`, { name: `role-${actor}`, full_server_admin: false }),
      expect: OWNER_CREATES,
    },
    {
      name: 'PUT /api/servers/{id}/members/{user_id}/role',
      // The target already holds "regulars": the matrix changes nobody's rank.
      call: (c) => c.put(`${base}/members/${clients.roleMember.userId}/role`, { role: 'regulars' }),
      expect: OWNER_ONLY,
    },
    {
      name: 'PUT /api/servers/{id}/members/@me/roles/{role_id} (a self-assignable role)',
      call: (c) => c.put(`${base}/members/@me/roles/${pronouns}`),
      expect: MEMBERS_READ,
    },
    {
      name: 'PATCH /api/servers/{id} raid protection (verification level, paused invites)',
      call: (c) => c.request('PATCH', base, { verification_level: 0, invites_paused: false, join_rate_threshold: 0 }),
      expect: { ...MEMBERS_READ, roleMember: 403, member: 403, suspended: 403 },
    },
    { name: 'POST /api/servers/{id}/invites', call: (c) => c.post(`${base}/invites`), expect: MEMBERS_CREATE },
    { name: 'GET /api/invites/{token} (no auth)', call: (c) => c.get(`/api/invites/${token}`), expect: ANYONE },
    { name: 'GET /invites/{token} (the page)', call: (c) => c.get(`/invites/${token}`), expect: ANYONE },
  ];

  for (const row of matrix) {
    t.test(row.name, async (t) => {
      for (const actor of ACTORS) {
        const res = await row.call(clients[actor], actor);
        t.equal(res.status, row.expect[actor], `${actor}: ${res.status} ${res.status >= 400 ? res.text.trim() : ''}`);
        if (res.status >= 400) t.match(res.headers.get('content-type'), /^text\/plain/, `${actor}: the reason is plain text`);
      }
    });
  }

  t.test('a server that does not exist looks exactly like one the caller is not in', async (t) => {
    const ghost = `/api/servers/${crypto.randomUUID()}`;
    const probes: [string, () => Promise<Res>][] = [
      ['GET server', () => clients.owner.get(ghost)],
      ['GET channels', () => clients.owner.get(`${ghost}/channels`)],
      ['POST channels', () => clients.owner.post(`${ghost}/channels`, { name: 'x' })],
      ['GET members', () => clients.owner.get(`${ghost}/members`)],
      ['GET roles', () => clients.owner.get(`${ghost}/roles`)],
      ['POST roles', () => clients.owner.post(`${ghost}/roles`, { name: 'x' })],
      ['PUT role', () => clients.owner.put(`${ghost}/members/${clients.member.userId}/role`, { role: 'x' })],
      ['DELETE member', () => clients.owner.delete(`${ghost}/members/${clients.member.userId}`)],
      ['POST invites', () => clients.owner.post(`${ghost}/invites`)],
      ['PUT a self-assigned role', () => clients.owner.put(`${ghost}/members/@me/roles/${pronouns}`)],
    ];
    for (const [what, probe] of probes) t.equal((await probe()).status, 404, what);
    const outsider = await clients.outsider.get(base);
    t.equal(outsider.text, (await clients.outsider.get(ghost)).text, 'an outsider reads the same reason for both');
  });

  t.test('a server id that is not a UUID is 400', async (t) => {
    for (const path of ['/api/servers/nope', '/api/servers/nope/channels', '/api/servers/123/members']) {
      t.equal((await clients.owner.get(path)).status, 400, path);
    }
  });
});

t.test('servers', async (t) => {
  const clock = new FakeClock();
  const server = await startServer({ clock });
  t.teardown(server.close);
  const [alice, bob] = await Promise.all([signUp(server.url), signUp(server.url)]);

  t.test('creating a server answers 201 with the record, owned by the caller', async (t) => {
    const res = await alice.post('/api/servers', { name: '  Book club  ' });
    t.equal(res.status, 201);
    t.match(res.body, { name: 'Book club', owner_id: alice.userId, created_at: iso(clock.now()) });
    t.match(res.body.id, /^[0-9a-f-]{36}$/);
    t.same(Object.keys(res.body).sort(), [
      'created_at',
      'description',
      'id',
      'invites_paused',
      'join_rate_action',
      'join_rate_threshold',
      'joins_paused',
      'link_previews',
      'name',
      'owner_id',
      'permissions',
      'two_factor_for_moderators',
      'verification_level',
    ]);
    t.same((await alice.get(`/api/servers/${res.body.id}`)).body, res.body, 'GET returns the same record');
  });

  t.test('a new server has a first channel, general, so it is usable at once', async (t) => {
    const { body } = await must(alice.post('/api/servers', { name: 'usable' }), 201);
    const channels = await alice.get(`/api/servers/${body.id}/channels`);
    t.equal(channels.status, 200);
    t.match(channels.body, [{ name: 'general', server_id: body.id, position: 0 }]);
    t.equal(channels.body.length, 1);
  });

  t.test('the owner is the first member', async (t) => {
    const { body } = await must(alice.post('/api/servers', { name: 'solo' }), 201);
    const members = await alice.get(`/api/servers/${body.id}/members`);
    t.match(members.body, [{ user_id: alice.userId, username: alice.username, is_owner: true, role: null, roles: [] }]);
  });

  t.test('GET /api/servers lists only the servers the caller belongs to, in the order joined', async (t) => {
    const carol = await signUp(server.url);
    const first = (await must(carol.post('/api/servers', { name: 'zzz first' }), 201)).body;
    clock.advance(1000);
    const second = (await must(bob.post('/api/servers', { name: 'aaa second' }), 201)).body;
    const invite = (await must(bob.post(`/api/servers/${second.id}/invites`), 201)).body;
    clock.advance(1000);
    await must(carol.post(`/api/invites/${invite.token}/accept`), 200);
    const list = await carol.get('/api/servers');
    t.equal(list.status, 200);
    t.same(
      list.body.map((s: { id: string }) => s.id),
      [first.id, second.id],
    );
    t.notOk(
      (await alice.get('/api/servers')).body.some((s: { id: string }) => s.id === first.id),
      'not in another user list',
    );
    t.equal((await new Client(server.url).get('/api/servers')).status, 401, 'logged out: 401');
  });

  t.test('server names are validated', async (t) => {
    const cases: [string, unknown, number][] = [
      ['empty', '', 400],
      ['whitespace only', '   ', 400],
      ['a number', 42, 400],
      ['missing', undefined, 400],
      ['null', null, 400],
      ['a line break', 'two\nlines', 400],
      [`${MAX_NAME_CHARS + 1} characters`, 'x'.repeat(MAX_NAME_CHARS + 1), 400],
      [`${MAX_NAME_CHARS} characters`, 'x'.repeat(MAX_NAME_CHARS), 201],
      [`${MAX_NAME_CHARS} emoji (counted as characters)`, '🎲'.repeat(MAX_NAME_CHARS), 201],
    ];
    for (const [what, name, status] of cases) {
      t.equal((await alice.post('/api/servers', { name })).status, status, what);
    }
    t.equal((await alice.post('/api/servers', 'name=x', { 'content-type': 'application/x-www-form-urlencoded' })).status, 415);
    t.equal((await alice.post('/api/servers', '{"name":', { 'content-type': 'application/json' })).status, 400, 'malformed JSON');
  });

  t.test('standing 4 (suspended) cannot create or list servers', async (t) => {
    const dave = await signUp(server.url);
    setStanding(server, dave.userId, 4);
    t.equal((await dave.post('/api/servers', { name: 'nope' })).status, 403);
    t.equal((await dave.get('/api/servers')).status, 403);
  });

  t.test('standing 1 to 3 can still create a server', async (t) => {
    for (const standing of [1, 2, 3]) {
      const erin = await signUp(server.url);
      setStanding(server, erin.userId, standing);
      t.equal((await erin.post('/api/servers', { name: `standing ${standing}` })).status, 201, `standing ${standing}`);
    }
  });
});

t.test('channels', async (t) => {
  const clock = new FakeClock();
  const server = await startServer({ clock });
  t.teardown(server.close);
  const { base, clients, serverId } = await community(server);
  const { owner, admin } = clients;

  t.test('creating a channel answers 201 with the record, placed after the others', async (t) => {
    const res = await owner.post(`${base}/channels`, { name: 'random' });
    t.equal(res.status, 201);
    t.match(res.body, { server_id: serverId, name: 'random', position: 1, created_at: iso(clock.now()) });
    // Every channel record carries its type and parent (issues 48, 49).
    t.same(Object.keys(res.body).sort(), [
      'category_id',
      'created_at',
      'id',
      'name',
      'parent_id',
      'permissions_synced',
      'position',
      'server_id',
      'slowmode_seconds',
      'topic',
      'type',
    ]);
    t.match(res.body, { type: 'text', parent_id: null });
    t.match((await owner.post(`${base}/channels`, { name: 'typed', type: 'text' })).body, { type: 'text' }, 'type text, said');
    const unknown = await owner.post(`${base}/channels`, { name: 'odd', type: 'hologram' });
    t.equal(unknown.status, 400, 'an unknown type is refused');
    t.match(unknown.text, 'type must be one of');
    await must(owner.delete(`${base}/channels/${(await owner.get(`${base}/channels`)).body.find((c: { name: string }) => c.name === 'typed').id}`), 204);
    const byAdmin = await admin.post(`${base}/channels`, { name: 'mods-made' });
    t.equal(byAdmin.status, 201, 'a full server administrator may create one');
    t.equal(byAdmin.body.position, 2);
    const list = await clients.member.get(`${base}/channels`);
    t.same(
      list.body.map((c: { name: string }) => c.name),
      ['general', 'random', 'mods-made'],
      'listed in position order',
    );
  });

  t.test('a channel name already used in the server is 409, whatever its case', async (t) => {
    for (const name of ['general', 'GENERAL', 'General', '  general  ']) {
      const res = await owner.post(`${base}/channels`, { name });
      t.equal(res.status, 409, JSON.stringify(name));
      t.match(res.text, /channel/, 'the reason names the channel');
    }
    const other = (await must(owner.post('/api/servers', { name: 'elsewhere' }), 201)).body;
    t.equal((await owner.post(`/api/servers/${other.id}/channels`, { name: 'random' })).status, 201, 'another server may reuse it');
  });

  t.test('channel names are validated', async (t) => {
    const cases: [string, unknown, number][] = [
      ['empty', '', 400],
      ['whitespace only', ' \t ', 400],
      ['a number', 7, 400],
      ['missing', undefined, 400],
      [`${MAX_NAME_CHARS + 1} characters`, 'c'.repeat(MAX_NAME_CHARS + 1), 400],
      [`${MAX_NAME_CHARS} characters`, 'c'.repeat(MAX_NAME_CHARS), 201],
    ];
    for (const [what, name, status] of cases) {
      t.equal((await owner.post(`${base}/channels`, { name })).status, status, what);
    }
  });

  t.test('the channel lists kept in memory follow every committed change, and only those', async (t) => {
    const names = async () => (await must(clients.member.get(`${base}/channels`), 200)).body.map((c: { name: string }) => c.name);
    const before = await names();
    // Another process (the CLI, a script) renames one: the next list says so.
    const other = new Database(path.join(server.dataDir, 'chat.db'));
    t.teardown(() => other.close());
    other.prepare("UPDATE channels SET name = 'renamed-elsewhere' WHERE server_id = ? AND name = 'random'").run(serverId);
    t.same(
      await names(),
      before.map((n: string) => (n === 'random' ? 'renamed-elsewhere' : n)),
    );
    // A change read inside its own transaction and then rolled back is not kept.
    const db = server.app.db;
    t.throws(() =>
      db.transaction(() => {
        db.prepare("UPDATE channels SET name = 'ghost' WHERE server_id = ? AND name = 'general'").run(serverId);
        t.ok(
          server.app.directory.channelsOf(serverId).some((c) => c.name === 'ghost'),
          'seen inside the transaction',
        );
        throw new Error('rolled back');
      })(),
    );
    t.notOk((await names()).includes('ghost'), 'gone after the rollback');
  });

  t.test('a voice channel carries user_limit and bitrate, checked, changed and audited; other channels have neither', async (t) => {
    const made = await owner.post(`${base}/channels`, { name: 'lounge', type: 'voice' });
    t.equal(made.status, 201);
    t.match(made.body, { type: 'voice', user_limit: 0, bitrate: 64_000 }, 'no limit and 64 kbit/s by default');
    const set = await owner.post(`${base}/channels`, { name: 'stage', type: 'voice', user_limit: 5, bitrate: 32_000 });
    t.match(set.body, { user_limit: 5, bitrate: 32_000 });
    const cases: [Record<string, unknown>, string][] = [
      [{ name: 'v1', type: 'voice', user_limit: 100 }, 'user_limit'],
      [{ name: 'v2', type: 'voice', user_limit: -1 }, 'user_limit'],
      [{ name: 'v3', type: 'voice', user_limit: 2.5 }, 'user_limit'],
      [{ name: 'v4', type: 'voice', bitrate: 7_999 }, 'bitrate'],
      [{ name: 'v5', type: 'voice', bitrate: 96_001 }, 'bitrate'],
      [{ name: 'v6', type: 'voice', bitrate: '64000' }, 'bitrate'],
      [{ name: 't1', user_limit: 3 }, 'user_limit is for voice channels only'],
      [{ name: 't2', type: 'text', bitrate: 64_000 }, 'bitrate is for voice channels only'],
    ];
    for (const [body, says] of cases) {
      const res = await owner.post(`${base}/channels`, body);
      t.equal(res.status, 400, JSON.stringify(body));
      t.match(res.text, says);
    }
    const changed = await owner.request('PATCH', `${base}/channels/${made.body.id}`, { user_limit: 2, bitrate: 96_000, topic: 'chat while you play' });
    t.match(changed.body, { user_limit: 2, bitrate: 96_000, topic: 'chat while you play' });
    t.equal((await owner.request('PATCH', `${base}/channels/${made.body.id}`, { user_limit: 100 })).status, 400);
    const general = (await owner.get(`${base}/channels`)).body.find((c: { name: string }) => c.name === 'general');
    t.equal((await owner.request('PATCH', `${base}/channels/${general.id}`, { bitrate: 64_000 })).status, 400, 'a text channel has no bitrate');
    t.notOk('user_limit' in general || 'bitrate' in general, 'nor does its record say one');
    const listed = (await clients.member.get(`${base}/channels`)).body.find((c: { id: string }) => c.id === made.body.id);
    t.match(listed, {
      type: 'voice',
      user_limit: 2,
      bitrate: 96_000,
      permissions: [
        'view_channel',
        'send_messages',
        'attach_files',
        'add_reactions',
        'read_history',
        'create_public_threads',
        'create_private_threads',
        'send_messages_in_threads',
        'connect',
        'speak',
        'video',
        'send_polls',
      ],
    });
    const log = (await owner.get(`${base}/audit-log`)).body;
    t.match(log.find((e: { action: string; target_id: string }) => e.action === 'channel_create' && e.target_id === set.body.id).changes, {
      name: 'stage',
      type: 'voice',
      user_limit: 5,
      bitrate: 32_000,
    });
    t.match(log.find((e: { action: string; target_id: string }) => e.action === 'channel_update' && e.target_id === made.body.id).changes, {
      user_limit: { from: 0, to: 2 },
      bitrate: { from: 64_000, to: 96_000 },
    });
    // Threads (issue 49) and voice meet: a voice channel has none, and a thread takes no voice setting.
    const noThread = await owner.post(`${base}/channels/${made.body.id}/threads`, { name: 'side talk' });
    t.equal(noThread.status, 400, 'no thread in a voice channel');
    t.match(noThread.text, 'a voice channel has no threads');
    const thread = await must(owner.post(`${base}/channels/${general.id}/threads`, { name: 'plans' }), 201);
    for (const field of ['user_limit', 'bitrate']) {
      const res = await owner.request('PATCH', `${base}/channels/${thread.body.id}`, { [field]: field === 'bitrate' ? 64_000 : 2 });
      t.equal(res.status, 400, `a thread takes no ${field}`);
      t.match(res.text, 'a thread takes name');
    }
    t.notOk('user_limit' in thread.body || 'bitrate' in thread.body, "nor does a thread's record say one");
    await must(owner.delete(`${base}/channels/${thread.body.id}`), 204);
    for (const id of [made.body.id, set.body.id]) await must(owner.delete(`${base}/channels/${id}`), 204);
  });

  t.test('a member cannot create a channel even with a valid name, and nothing is created', async (t) => {
    const res = await clients.member.post(`${base}/channels`, { name: 'sneaky' });
    t.equal(res.status, 403);
    const names = (await owner.get(`${base}/channels`)).body.map((c: { name: string }) => c.name);
    t.notOk(names.includes('sneaky'));
  });
});

t.test('roles and role assignment', async (t) => {
  const clock = new FakeClock();
  const server = await startServer({ clock });
  t.teardown(server.close);
  const { base, clients, serverId, newMember } = await community(server);
  const { owner } = clients;

  t.test('creating a role answers 201 with the record; full_server_admin defaults to false', async (t) => {
    const res = await owner.post(`${base}/roles`, { name: 'helpers' });
    t.equal(res.status, 201);
    t.match(res.body, { server_id: serverId, name: 'helpers', full_server_admin: false, created_at: iso(clock.now()) });
    t.same(Object.keys(res.body).sort(), [
      'color',
      'created_at',
      'full_server_admin',
      'hoist',
      'id',
      'mentionable',
      'name',
      'permissions',
      'position',
      'self_assignable',
      'server_id',
    ]);
    const admins = await owner.post(`${base}/roles`, { name: 'admins', full_server_admin: true });
    t.equal(admins.body.full_server_admin, true);
    const list = await clients.member.get(`${base}/roles`);
    t.same(
      list.body.map((r: { name: string; full_server_admin: boolean }) => [r.name, r.full_server_admin]),
      [
        ['mods', true],
        ['regulars', false],
        ['helpers', false],
        ['admins', true],
      ],
    );
  });

  t.test('a role name already used in the server is 409, whatever its case', async (t) => {
    for (const name of ['mods', 'MODS', ' Mods ']) {
      const res = await owner.post(`${base}/roles`, { name, full_server_admin: false });
      t.equal(res.status, 409, JSON.stringify(name));
      t.match(res.text, /role/);
    }
  });

  t.test('role requests are validated', async (t) => {
    const cases: [string, Record<string, unknown>][] = [
      ['empty name', { name: '' }],
      ['missing name', { full_server_admin: true }],
      ['numeric name', { name: 5 }],
      ['too long name', { name: 'r'.repeat(MAX_NAME_CHARS + 1) }],
      ['full_server_admin as a string', { name: 'r1', full_server_admin: 'true' }],
      ['full_server_admin as a number', { name: 'r2', full_server_admin: 1 }],
      ['full_server_admin null', { name: 'r3', full_server_admin: null }],
      ['full_server_admin as an object', { name: 'r4', full_server_admin: {} }],
    ];
    for (const [what, body] of cases) {
      const res = await owner.post(`${base}/roles`, body);
      t.equal(res.status, 400, `${what}: ${res.text.trim()}`);
    }
  });

  t.test('the owner assigns a role by name; the answer and the member list show it', async (t) => {
    const dan = await newMember();
    const res = await owner.put(`${base}/members/${dan.userId}/role`, { role: 'MODS' });
    t.equal(res.status, 200);
    t.match(res.body, { user_id: dan.userId, username: dan.username, is_owner: false, role: 'mods', roles: ['mods'] });
    const listed = (await owner.get(`${base}/members`)).body.find((m: { user_id: string }) => m.user_id === dan.userId);
    t.same(listed, res.body);
  });

  t.test('role: null clears the role, and with it the permissions it gave', async (t) => {
    const eve = await newMember('mods');
    t.equal((await eve.post(`${base}/channels`, { name: 'eve-1' })).status, 201, 'the admin role allows channel creation');
    const cleared = await owner.put(`${base}/members/${eve.userId}/role`, { role: null });
    t.equal(cleared.status, 200);
    t.match(cleared.body, { user_id: eve.userId, role: null, roles: [] });
    t.equal((await eve.post(`${base}/channels`, { name: 'eve-2' })).status, 403, 'not any more');
  });

  t.test('a member may hold several roles: assigning adds one (roles in position order)', async (t) => {
    const fay = await newMember('regulars');
    const res = await owner.put(`${base}/members/${fay.userId}/role`, { role: 'mods' });
    t.same(res.body.roles, ['mods', 'regulars']);
  });

  t.test('unknown roles, non-members and bad bodies are refused', async (t) => {
    const target = clients.member.userId;
    const cases: [string, string, unknown, number][] = [
      ['an unknown role', target, { role: 'nobody-has-this' }, 404],
      ['a role of another server', target, { role: 'elsewhere-role' }, 404],
      ['a signed-in non-member', clients.outsider.userId, { role: 'mods' }, 404],
      ['a user id that does not exist', crypto.randomUUID(), { role: 'mods' }, 404],
      ['a missing role field', target, {}, 400],
      ['a numeric role', target, { role: 3 }, 400],
      ['an empty role name', target, { role: '' }, 400],
    ];
    const other = (await must(owner.post('/api/servers', { name: 'other' }), 201)).body;
    await must(owner.post(`/api/servers/${other.id}/roles`, { name: 'elsewhere-role' }), 201);
    for (const [what, userId, body, status] of cases) {
      const res = await owner.put(`${base}/members/${userId}/role`, body);
      t.equal(res.status, status, `${what}: ${res.text.trim()}`);
    }
    t.equal((await owner.put(`${base}/members/not-a-uuid/role`, { role: 'mods' })).status, 400, 'a malformed user id');
    const member = (await owner.get(`${base}/members`)).body.find((m: { user_id: string }) => m.user_id === target);
    t.equal(member.role, null, 'the member was left unchanged');
  });

  t.test('the member list marks the owner, lists the owner first, and shows each role', async (t) => {
    const res = await clients.member.get(`${base}/members`);
    t.equal(res.status, 200);
    t.match(res.body[0], { user_id: owner.userId, is_owner: true, role: null });
    t.equal(res.body.filter((m: { is_owner: boolean }) => m.is_owner).length, 1, 'exactly one owner');
    const byId = new Map(res.body.map((m: { user_id: string }) => [m.user_id, m]));
    t.match(byId.get(clients.admin.userId), { is_owner: false, role: 'mods', roles: ['mods'] });
    t.match(byId.get(clients.roleMember.userId), { is_owner: false, role: 'regulars', roles: ['regulars'] });
    t.match(byId.get(clients.member.userId), { is_owner: false, role: null, roles: [] });
    t.notOk(byId.has(clients.outsider.userId));
    t.same(Object.keys(res.body[0]).sort(), [
      'avatar_url',
      'display_name',
      'is_owner',
      'joined_at',
      'pending',
      'presence',
      'role',
      'role_ids',
      'roles',
      'timeout_until',
      'user_id',
      'username',
    ]);
  });
});

t.test('leaving and removing members (DELETE /api/servers/{id}/members/{user_id})', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const { base, clients, newMember } = await community(server);

  type Who = 'owner' | 'admin' | 'roleMember' | 'member' | 'outsider' | 'anon' | 'suspended' | 'self' | 'nobody';
  // Each row uses fresh members so no row depends on another.
  const rows: [string, Who, Who | 'otherAdmin' | 'otherMember' | 'otherRoleMember', number][] = [
    ['a plain member leaves', 'member', 'self', 204],
    ['a member with a plain role leaves', 'roleMember', 'self', 204],
    ['a full server administrator leaves', 'admin', 'self', 204],
    ['the owner cannot leave their own server', 'owner', 'self', 409],
    ['the owner removes a plain member', 'owner', 'otherMember', 204],
    ['the owner removes a member with a plain role', 'owner', 'otherRoleMember', 204],
    ['the owner removes a full server administrator', 'owner', 'otherAdmin', 204],
    ['an administrator removes a plain member', 'admin', 'otherMember', 204],
    ['an administrator removes a member with a plain role', 'admin', 'otherRoleMember', 204],
    ['an administrator cannot remove another administrator', 'admin', 'otherAdmin', 403],
    ['an administrator cannot remove the owner', 'admin', 'owner', 403],
    ['a plain member cannot remove another member', 'member', 'otherMember', 403],
    ['a plain member cannot remove the owner', 'member', 'owner', 403],
    ['a member with a plain role cannot remove a member', 'roleMember', 'otherMember', 403],
    ['a non-member gets 404', 'outsider', 'otherMember', 404],
    ['logged out gets 401', 'anon', 'otherMember', 401],
    ['a suspended member gets 403', 'suspended', 'otherMember', 403],
    ['removing a signed-in non-member is 404', 'owner', 'outsider', 404],
    ['removing a user that does not exist is 404', 'owner', 'nobody', 404],
  ];

  for (const [name, who, target, status] of rows) {
    t.test(name, async (t) => {
      const fresh: Record<string, () => Promise<Client>> = {
        admin: () => newMember('mods'),
        roleMember: () => newMember('regulars'),
        member: () => newMember(),
      };
      const caller = fresh[who] ? await fresh[who]() : clients[who as Actor];
      let targetId: string;
      if (target === 'self') targetId = caller.userId;
      else if (target === 'otherAdmin') targetId = (await newMember('mods')).userId;
      else if (target === 'otherRoleMember') targetId = (await newMember('regulars')).userId;
      else if (target === 'otherMember') targetId = (await newMember()).userId;
      else if (target === 'nobody') targetId = crypto.randomUUID();
      else targetId = clients[target as Actor].userId;

      const before = (await clients.owner.get(`${base}/members`)).body.length;
      const res = await caller.delete(`${base}/members/${targetId}`);
      t.equal(res.status, status, res.text.trim());
      const after = (await clients.owner.get(`${base}/members`)).body;
      if (status === 204) {
        t.equal(after.length, before - 1, 'one member fewer');
        t.notOk(
          after.some((m: { user_id: string }) => m.user_id === targetId),
          'the member is gone',
        );
      } else {
        t.equal(after.length, before, 'nobody was removed');
      }
    });
  }

  t.test('a removed member loses access (404) and may rejoin by a new invite, without their old role', async (t) => {
    const gone = await newMember('mods');
    await must(clients.owner.delete(`${base}/members/${gone.userId}`), 204);
    t.equal((await gone.get(base)).status, 404);
    t.equal((await gone.get(`${base}/channels`)).status, 404);
    t.notOk(
      (await gone.get('/api/servers')).body.some((s: { id: string }) => base.endsWith(s.id)),
      'not listed',
    );
    // An invite made before the removal no longer lets them in (test/hardening.test.ts 4).
    const anew = (await must(clients.owner.post(`${base}/invites`), 201)).body.token;
    await must(gone.post(`/api/invites/${anew}/accept`), 200);
    t.equal((await gone.get(base)).status, 200);
    const me = (await gone.get(`${base}/members`)).body.find((m: { user_id: string }) => m.user_id === gone.userId);
    t.equal(me.role, null);
  });
});

t.test('invites', async (t) => {
  const clock = new FakeClock();
  const server = await startServer({ clock });
  t.teardown(server.close);
  const { base, clients, serverId } = await community(server);
  const { owner } = clients;

  t.test('the invite record: URL-safe token, server_id, expires_at seven days on, url under BASE_URL', async (t) => {
    const res = await clients.member.post(`${base}/invites`);
    t.equal(res.status, 201);
    t.same(Object.keys(res.body).sort(), ['created_at', 'created_by', 'expires_at', 'max_uses', 'server_id', 'token', 'url', 'uses']);
    t.match(res.body.token, /^[A-Za-z0-9_-]{16,}$/);
    t.equal(res.body.server_id, serverId);
    t.equal(INVITE_LIFETIME_MS, 7 * DAY);
    t.equal(res.body.expires_at, iso(clock.now() + 7 * DAY));
    t.equal(res.body.url, `${server.url}/invites/${res.body.token}`);
    const again = await clients.member.post(`${base}/invites`);
    t.not(again.body.token, res.body.token, 'every invite has its own token');
  });

  t.test('without BASE_URL, the url is the address the browser used; emails still use the configured base', async (t) => {
    // fetch cannot set Host: a plain request, as a browser on another address sends it.
    const inviteVia = (host: string) =>
      new Promise<{ token: string; url: string }>((resolve, reject) => {
        const req = http.request(`${server.url}${base}/invites`, { method: 'POST', headers: { host, cookie: clients.member.cookie! } }, (res) => {
          let text = '';
          res.on('data', (chunk) => (text += chunk));
          res.on('end', () => resolve(JSON.parse(text)));
        });
        req.on('error', reject);
        req.end();
      });
    const lan = await inviteVia('chat.lan:8080');
    t.equal(lan.url, `http://chat.lan:8080/invites/${lan.token}`);
    const ipv6 = await inviteVia('[fd00::5]:8080');
    t.equal(ipv6.url, `http://[fd00::5]:8080/invites/${ipv6.token}`);
    const odd = await inviteVia('evil.example/x?');
    t.equal(odd.url, `${server.app.config.baseUrl}/invites/${odd.token}`, 'a Host that is not host[:port] is not used');
  });

  t.test('the url is built from BASE_URL', async (t) => {
    const other = await startServer({ env: { BASE_URL: 'https://chat.example.com/' } });
    t.teardown(other.close);
    const carol = await signUp(other.url);
    const created = await must(carol.post('/api/servers', { name: 'elsewhere' }), 201);
    const invite = await carol.post(`/api/servers/${created.body.id}/invites`);
    t.equal(invite.body.url, `https://chat.example.com/invites/${invite.body.token}`);
  });

  t.test('accepting joins the caller and answers {server_id}', async (t) => {
    const { body: invite } = await must(owner.post(`${base}/invites`), 201);
    const newcomer = await signUp(server.url);
    const before = (await owner.get(`${base}/members`)).body.length;
    const res = await newcomer.post(`/api/invites/${invite.token}/accept`);
    t.equal(res.status, 200);
    t.same(res.body, { server_id: serverId });
    t.equal((await owner.get(`${base}/members`)).body.length, before + 1);
    t.ok(
      (await newcomer.get('/api/servers')).body.some((s: { id: string }) => s.id === serverId),
      'listed among its servers',
    );
    t.equal((await newcomer.get(`${base}/channels`)).status, 200, 'and may now read inside it');

    t.test('accepting again is harmless: same answer, no second membership', async (t) => {
      const again = await newcomer.post(`/api/invites/${invite.token}/accept`);
      t.equal(again.status, 200);
      t.same(again.body, { server_id: serverId });
      const members = (await owner.get(`${base}/members`)).body;
      t.equal(members.length, before + 1);
      t.equal(members.filter((m: { user_id: string }) => m.user_id === newcomer.userId).length, 1);
      const viaOwnerInvite = await owner.post(`/api/invites/${invite.token}/accept`);
      t.equal(viaOwnerInvite.status, 200, 'even for the owner');
      t.equal((await owner.get(`${base}/members`)).body.length, before + 1);
    });

    t.test('an invite can be used by many people until it expires', async (t) => {
      const second = await signUp(server.url);
      t.equal((await second.post(`/api/invites/${invite.token}/accept`)).status, 200);
    });
  });

  t.test('an invite works until seven days after creation, then is 404', async (t) => {
    // A server of its own: moving its clock seven days on ends every idle session in it.
    const clock = new FakeClock();
    const server = await startServer({ clock });
    t.teardown(server.close);
    const owner = await signUp(server.url);
    const base = `/api/servers/${(await must(owner.post('/api/servers', { name: 'expiring' }), 201)).body.id}`;
    const { body: invite } = await must(owner.post(`${base}/invites`), 201);
    const start = clock.now();
    // Accepters sign up after each advance: seven idle days would also end a session.
    clock.ms = start + 7 * DAY - 1;
    const justInTime = await signUp(server.url);
    t.equal((await justInTime.post(`/api/invites/${invite.token}/accept`)).status, 200, '1 ms before expiry');
    t.equal((await justInTime.get(`/api/invites/${invite.token}`)).status, 200, 'preview too');

    clock.ms = start + 7 * DAY;
    const atExpiry = await signUp(server.url);
    t.equal((await atExpiry.post(`/api/invites/${invite.token}/accept`)).status, 404, 'at expires_at');

    clock.ms = start + 7 * DAY + 1;
    const late = await signUp(server.url);
    const res = await late.post(`/api/invites/${invite.token}/accept`);
    t.equal(res.status, 404, '7 days + 1 ms');
    t.match(res.text, /expired/);
    t.equal((await late.get(base)).status, 404, 'and did not join');
    t.equal((await late.get(`/api/invites/${invite.token}`)).status, 404, 'the preview is 404 too');
    t.equal((await late.get(`/invites/${invite.token}`)).status, 200, 'the page still loads and says so itself');
  });

  t.test('unknown and malformed tokens are 404', async (t) => {
    const newcomer = await signUp(server.url);
    const tokens = [crypto.randomBytes(18).toString('base64url'), 'short', 'has spaces in it!!', '%00'.repeat(20), 'x'.repeat(300)];
    for (const token of tokens) {
      t.equal((await newcomer.post(`/api/invites/${encodeURIComponent(token)}/accept`)).status, 404, `accept ${token}`);
      t.equal((await newcomer.get(`/api/invites/${encodeURIComponent(token)}`)).status, 404, `preview ${token}`);
    }
  });

  t.test('standing 1 or higher cannot accept an invite (403)', async (t) => {
    const { body: invite } = await must(owner.post(`${base}/invites`), 201);
    for (const standing of [1, 2, 3]) {
      const limited = await signUp(server.url);
      setStanding(server, limited.userId, standing);
      const res = await limited.post(`/api/invites/${invite.token}/accept`);
      t.equal(res.status, 403, `standing ${standing}`);
      t.match(res.text, /standing/);
      setStanding(server, limited.userId, 0);
      t.equal((await limited.get(base)).status, 404, `standing ${standing} did not join`);
    }
    const member = clients.member;
    setStanding(server, member.userId, 1);
    const again = await member.post(`/api/invites/${invite.token}/accept`);
    setStanding(server, member.userId, 0);
    t.equal(again.status, 403, 'standing 1 cannot accept invites at all, even to a server it is in (spec section 3)');
    t.equal((await member.get(base)).status, 200, 'and is still a member');
    const suspended = await signUp(server.url);
    setStanding(server, suspended.userId, 4);
    t.equal((await suspended.post(`/api/invites/${invite.token}/accept`)).status, 403, 'standing 4');
    t.equal((await new Client(server.url).post(`/api/invites/${invite.token}/accept`)).status, 401, 'logged out');
  });

  t.test('GET /api/invites/{token} previews the server without a session', async (t) => {
    const { body: invite } = await must(owner.post(`${base}/invites`), 201);
    const members = (await owner.get(`${base}/members`)).body.length;
    const server_ = (await owner.get(base)).body;
    const res = await new Client(server.url).get(`/api/invites/${invite.token}`);
    t.equal(res.status, 200);
    t.same(res.body, { server_id: serverId, server_name: server_.name, expires_at: invite.expires_at, member_count: members, member: false });
    t.equal((await owner.get(`/api/invites/${invite.token}`)).body.member, true, 'a member is told so (the page shows "Open")');
  });

  t.test('GET /invites/{token} is the HTML invite page', async (t) => {
    const { body: invite } = await must(owner.post(`${base}/invites`), 201);
    const res = await new Client(server.url).get(`/invites/${invite.token}`);
    t.equal(res.status, 200);
    t.match(res.headers.get('content-type'), /^text\/html/);
    t.match(res.text, /<button id="join"/);
    t.match(res.text, /src="\/a\/[0-9a-f]{12}\/js\/invite\.js"/);
    t.match(res.headers.get('content-security-policy'), /script-src 'self'/);
  });
});
