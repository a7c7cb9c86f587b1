// Issue 45, items 4 and 5: what an import writes never takes a person's real account, and a data
// package joins nobody to a server they did not choose. Synthetic exports (test/helpers/discord-export.ts),
// imported with the CLI against a running server, read back through the API.
import fs from 'node:fs';
import t from 'tap';
import { startServer } from './helpers/server';
import { cli } from './helpers/cli';
import { signUp, uniqueName } from './helpers/client';
import { must } from './helpers/community';
import { ALICE, BOB, type channelFile, message, standardExport, writeExport, writeZip } from './helpers/discord-export';

const zipForm = async (field: string, files: Record<string, unknown>) => {
  const form = new FormData();
  form.append(field, new Blob([fs.readFileSync(await writeZip(files))], { type: 'application/zip' }), 'export.zip');
  return form;
};

t.test('a later import appends what a person who claimed wrote to a new placeholder, never to their account', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const owner = await signUp(server.url);
  const files = standardExport();
  const folder = writeExport(files);
  t.teardown(() => fs.rmSync(folder, { recursive: true, force: true }));
  t.equal((await cli(['import', 'discord', folder, '--owner', owner.username], server.dataDir)).code, 0);
  const serverId = (await owner.get('/api/servers')).body[0].id;
  const people = () => owner.get(`/api/servers/${serverId}/imported-people`).then((r) => r.body as any[]);
  const alice = await signUp(server.url);
  const code = (await people()).find((p) => p.discord_name === 'alice').claim_code;
  t.same((await must(alice.get('/api/account/claims'), 200)).body, [], 'nothing claimed yet: the account page offers no hide or erase (issue 47 #7)');
  // Paused joins (raid protection, issue 53) keep a claimer out as they keep anyone; nothing is claimed meanwhile.
  await must(owner.request('PATCH', `/api/servers/${serverId}`, { joins_paused: true }), 200);
  const paused = await alice.post('/api/account/claims', { code });
  t.equal(paused.status, 403);
  t.match(paused.text, /paused joins/);
  t.same((await must(alice.get('/api/account/claims'), 200)).body, [], 'nothing claimed while joins are paused');
  await must(owner.request('PATCH', `/api/servers/${serverId}`, { joins_paused: false }), 200);
  await must(alice.post('/api/account/claims', { code }), 200);
  const mine = (await must(alice.get('/api/account/claims'), 200)).body;
  t.same(
    mine.map((c: { server_id: string; discord_name: string; hidden: boolean }) => [c.server_id, c.discord_name, c.hidden]),
    [[serverId, 'alice', false]],
    'the history she claimed, and where',
  );
  t.same((await must(owner.get('/api/account/claims'), 200)).body, [], "the owner claimed none: another's claim is not theirs");

  // The owner imports a newer export: a message "by alice", dated as they like.
  const newer = JSON.parse(JSON.stringify(files['Hobby Club - general [810000000000000001] [part 2].json'])) as ReturnType<typeof channelFile>;
  newer.messages.push(
    message({ id: '990000000000000001', content: 'I never wrote this', author: ALICE, mentions: [ALICE], timestamp: '2024-05-01T10:00:00.000+00:00' }),
  );
  const delta = writeExport({ ...files, 'Hobby Club - general [810000000000000001] [part 2].json': newer });
  t.teardown(() => fs.rmSync(delta, { recursive: true, force: true }));
  const appended = await cli(['import', 'discord', delta, '--owner', owner.username], server.dataDir);
  t.equal(appended.code, 0, appended.stderr);
  t.match(appended.stdout, /1 messages, 0 files, 1 new placeholder accounts/);

  const general = (await owner.get(`/api/servers/${serverId}/channels`)).body.find((c: { name: string }) => c.name === 'general');
  const [last] = (await owner.get(`/api/servers/${serverId}/channels/${general.id}/messages?limit=1`)).body;
  t.equal(last.content.startsWith('I never wrote this'), true);
  t.not(last.author_id, alice.userId, "not under the claimer's account");
  t.notOk(last.mentions.includes(alice.userId), 'nor mentioning it');
  const alices = (await people()).filter((p) => p.discord_name === 'alice');
  t.equal(alices.length, 2, 'a new placeholder of the same Discord person');
  const fresh = alices.find((p) => p.claimed_by === null)!;
  t.equal(last.author_id, fresh.user_id, 'the message is on the new placeholder');
  t.match(fresh.claim_code, /^[A-Z2-9]{4}-[A-Z2-9]{4}-[A-Z2-9]{4}$/, 'with a code of its own');
  t.equal(alices.find((p) => p.claimed_by !== null).claimed_by.user_id, alice.userId, 'the earlier claim stands');

  // She may claim it again, and then it is hers.
  const again = await must(alice.post('/api/account/claims', { code: fresh.claim_code }), 200);
  t.same(again.body.claimed, [{ server_id: serverId, discord_name: 'alice', messages: 1 }]);
  const [now] = (await owner.get(`/api/servers/${serverId}/channels/${general.id}/messages?limit=1`)).body;
  t.equal(now.author_id, alice.userId);
  // A third run brings nothing new: still nothing written as her.
  t.equal((await cli(['import', 'discord', delta, '--owner', owner.username], server.dataDir)).code, 0);
  t.equal((await people()).filter((p) => p.discord_name === 'alice').length, 2, 'no placeholder made for nothing');
});

t.test('a data package lists the servers it could join; only those chosen are joined', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const owner = await signUp(server.url);
  const forger = await signUp(server.url);
  const folder = writeExport(standardExport());
  t.teardown(() => fs.rmSync(folder, { recursive: true, force: true }));
  // A real community, and a stranger's forged export naming the same Discord person; both allow package claims.
  t.equal((await cli(['import', 'discord', folder, '--owner', owner.username, '--server', 'Real Club', '--package-claims'], server.dataDir)).code, 0);
  t.equal((await cli(['import', 'discord', folder, '--owner', forger.username, '--server', 'Trap', '--package-claims'], server.dataDir)).code, 0);
  const [real] = (await owner.get('/api/servers')).body;
  const [trap] = (await forger.get('/api/servers')).body;

  const bob = await signUp(server.url);
  t.equal((await bob.post('/api/account/claims/discord-package/choose', { server_ids: [real.id] })).status, 404, 'no package read: nothing to choose from');
  const read = await must(bob.post('/api/account/claims/discord-package', await zipForm('package', { 'Account/user.json': { id: BOB.id } })), 200);
  t.same(read.body.claimed, [], 'nothing claimed yet');
  t.equal(read.body.discord_id, BOB.id);
  t.same(
    read.body.servers.map((s: any) => [s.name, s.discord_name, s.messages]).sort(),
    [
      ['Real Club', 'bob', 7],
      ['Trap', 'bob', 7],
    ],
    'the servers it could join, named',
  );
  t.same((await bob.get('/api/servers')).body, [], 'and none joined');

  t.equal((await bob.post('/api/account/claims/discord-package/choose', { server_ids: [crypto.randomUUID()] })).status, 404, 'a server not in the list');
  t.equal((await bob.post('/api/account/claims/discord-package/choose', { server_ids: [] })).status, 400);
  t.equal((await bob.post('/api/account/claims/discord-package/choose', { server_ids: 'all' })).status, 400);
  const chosen = await must(bob.post('/api/account/claims/discord-package/choose', { server_ids: [real.id] }), 200);
  t.same(chosen.body.claimed, [{ server_id: real.id, discord_name: 'bob', messages: 7 }]);
  t.same(
    (await bob.get('/api/servers')).body.map((s: { id: string }) => s.id),
    [real.id],
    'only the chosen server',
  );
  const trapBob = (await forger.get(`/api/servers/${trap.id}/imported-people`)).body.find((p: any) => p.discord_name === 'bob');
  t.equal(trapBob.claimed_by, null, "the stranger's placeholder is not claimed");

  // Another account has no package read: it cannot ride on bob's.
  const other = await signUp(server.url);
  t.equal((await other.post('/api/account/claims/discord-package/choose', { server_ids: [trap.id] })).status, 404);
});

t.test('the admin page tells placeholders, bots and people apart, and can leave out claimed placeholders (issue 47 #14)', async (t) => {
  const boss = uniqueName('boss');
  const server = await startServer({ env: { ADMIN_USERS: boss } });
  t.teardown(server.close);
  const admin = await signUp(server.url, boss);
  const folder = writeExport(standardExport());
  t.teardown(() => fs.rmSync(folder, { recursive: true, force: true }));
  t.equal((await cli(['import', 'discord', folder, '--owner', admin.username], server.dataDir)).code, 0);
  const serverId = (await admin.get('/api/servers')).body[0].id;
  const code = (await admin.get(`/api/servers/${serverId}/imported-people`)).body.find((p: { discord_name: string }) => p.discord_name === 'alice').claim_code;
  const claimer = await signUp(server.url);
  await must(claimer.post('/api/account/claims', { code }), 200);
  await must(admin.post('/api/bots', { name: uniqueName('helper') }), 201);

  type Row = { username: string; kind: string; claimed: boolean };
  const kinds = (rows: Row[]) => Object.fromEntries(rows.map((u) => [u.username, `${u.kind}${u.claimed ? ', claimed' : ''}`]));
  const all = kinds((await must(admin.get('/api/admin/users'), 200)).body);
  t.equal(all['alice-discord'], 'placeholder, claimed', 'a claimed placeholder, marked');
  t.equal(all['bob-discord'], 'placeholder', 'an unclaimed one');
  t.equal(all[admin.username], 'person');
  t.equal(all[claimer.username], 'person');
  t.ok(Object.values(all).includes('bot'), 'the bot, as a bot');
  const hidden = await must(admin.get('/api/admin/users?claimed=hide&limit=100'), 200);
  t.notOk(kinds(hidden.body)['alice-discord'], '?claimed=hide leaves the claimed placeholder out');
  t.equal(Number(hidden.headers.get('x-total-count')), Object.keys(all).length - 1, 'and from the count');
  t.equal((await admin.get('/api/admin/users?claimed=maybe')).status, 400);
});
