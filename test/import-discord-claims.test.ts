// Claiming imported history through the API (issue 31): the imported people and their claim
// codes for the owner; claims by code and by Discord data package; hiding and erasing one's
// imported messages. Synthetic exports only (test/helpers/discord-export.ts).
import t from 'tap';
import { startServer } from './helpers/server';
import { signUp } from './helpers/client';
import { must } from './helpers/community';
import { ALICE, BOB } from './helpers/discord-export';
import { imported, zipForm } from './helpers/imports';

t.test('claiming: by code, by data package where allowed; then hiding and erasing', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const owner = await signUp(server.url);
  const record = await imported(server, owner, { package_claims: true });
  const serverId = record.server_id;
  const stranger = await signUp(server.url);
  t.equal((await stranger.get(`/api/servers/${serverId}/imported-people`)).status, 404, 'outsiders see nothing');

  const people = (await must(owner.get(`/api/servers/${serverId}/imported-people`), 200)).body as any[];
  t.same(
    people.map((p) => [p.discord_name, p.username, p.messages]),
    [
      ['alice', 'alice-discord', 3],
      ['bob', 'bob-discord', 7],
    ],
  );
  const alice = people.find((p) => p.discord_name === 'alice');
  t.match(alice.claim_code, /^[A-Z2-9]{4}-[A-Z2-9]{4}-[A-Z2-9]{4}$/);

  // Alice claims with her code: her messages, mentions, reactions and role become hers.
  const claimer = await signUp(server.url);
  const code = alice.claim_code.toLowerCase();
  t.equal((await claimer.post('/api/account/claims', { code: 'AAAA-BBBB-CCCC' })).status, 404);
  const claimed = await must(claimer.post('/api/account/claims', { code }), 200);
  t.same(claimed.body.claimed, [{ server_id: serverId, discord_name: 'alice', messages: 3 }]);
  t.equal((await stranger.post('/api/account/claims', { code })).status, 409, 'a code works once');
  const member = (await claimer.get(`/api/servers/${serverId}/members`)).body.find((m: { user_id: string }) => m.user_id === claimer.userId);
  t.same(member.roles, ['Mods'], "the placeholder's roles are the claimer's");
  const general = (await claimer.get(`/api/servers/${serverId}/channels`)).body.find((c: { name: string }) => c.name === 'general');
  const page = (await claimer.get(`/api/servers/${serverId}/channels/${general.id}/messages`)).body.reverse();
  t.equal(page[0].author_id, claimer.userId, 'her message is hers');
  const photo = page.find((m: { content: string }) => m.content.startsWith('a photo'));
  t.same(
    photo.reactions.find((r: { emoji: string }) => r.emoji === '👍'),
    { emoji: '👍', count: 2, reacted: true },
    'her reaction too',
  );
  const after = (await owner.get(`/api/servers/${serverId}/imported-people`)).body.find((p: any) => p.discord_name === 'alice');
  t.equal(after.claim_code, null, 'a used code is not listed');
  t.equal(after.claimed_by.user_id, claimer.userId);
  t.equal(after.messages, 0);

  // Bob claims with his data package (the import allows it): the id in Account/user.json.
  const bobber = await signUp(server.url);
  const noPackage = await bobber.post('/api/account/claims/discord-package', await zipForm('package', { 'README.txt': Buffer.from('x') }));
  t.equal(noPackage.status, 400);
  t.match(noPackage.text, /no Account\/user\.json/);
  const wrongId = await bobber.post('/api/account/claims/discord-package', await zipForm('package', { 'account/user.json': { id: '123' } }));
  t.equal(wrongId.status, 404);
  const byPackage = await must(
    bobber.post('/api/account/claims/discord-package', await zipForm('package', { 'package/Account/user.json': { id: BOB.id, username: 'bob' } })),
    200,
  );
  t.same(
    byPackage.body.servers.map((s: { server_id: string }) => s.server_id),
    [serverId],
    'the servers it could claim in, listed (issue 45: nothing joined yet)',
  );
  const chosen = await must(bobber.post('/api/account/claims/discord-package/choose', { server_ids: [serverId] }), 200);
  t.same(
    chosen.body.claimed.map((c: { discord_name: string }) => c.discord_name),
    ['bob'],
  );
  const mention = (await bobber.get(`/api/servers/${serverId}/channels/${general.id}/messages`)).body.reverse()[0];
  t.equal(mention.content, `welcome @${bobber.username}`, 'a mention of the placeholder names the claimer');
  t.same(mention.mentions, [bobber.userId]);
  t.equal(mention.author_id, claimer.userId);

  // Hide: Alice's imported messages go back to a nameless placeholder; erase: Bob's are gone.
  const hidden = await must(claimer.post('/api/account/imported-messages', { server_id: serverId, action: 'hide' }), 200);
  t.same(hidden.body, { action: 'hide', messages: 3 });
  const first = (await owner.get(`/api/servers/${serverId}/channels/${general.id}/messages`)).body.reverse()[0];
  t.not(first.author_id, claimer.userId);
  t.equal(first.author.display_name, 'Former member');
  const before = server.app.db.prepare('SELECT COUNT(*) FROM messages').pluck().get() as number;
  const erased = await must(bobber.post('/api/account/imported-messages', { server_id: serverId, action: 'erase' }), 200);
  t.equal(erased.body.messages, 7);
  t.equal(server.app.db.prepare('SELECT COUNT(*) FROM messages').pluck().get(), before - 7);
  t.equal((await stranger.post('/api/account/imported-messages', { server_id: serverId, action: 'erase' })).status, 404, 'nothing claimed, nothing to erase');
  t.equal((await bobber.post('/api/account/imported-messages', { server_id: serverId, action: 'burn' })).status, 400);
  t.equal((server.app.db.pragma('foreign_key_check') as unknown[]).length, 0);

  // The server deleted: its placeholders go with it; the claimers stay.
  const placeholders = () => server.app.db.prepare('SELECT COUNT(*) FROM users WHERE imported = 1').pluck().get();
  t.equal(placeholders(), 2);
  await must(owner.delete(`/api/servers/${serverId}`), 204);
  t.equal(placeholders(), 0, 'no placeholder outlives its server');
  t.equal((await bobber.get('/api/users/me')).status, 200);
  t.equal((server.app.db.pragma('foreign_key_check') as unknown[]).length, 0);
  void ALICE;
});

t.test('data-package claims are refused unless the import allowed them', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const owner = await signUp(server.url);
  await imported(server, owner);
  const bob = await signUp(server.url);
  const res = await bob.post('/api/account/claims/discord-package', await zipForm('package', { 'Account/user.json': { id: BOB.id } }));
  t.equal(res.status, 404);
  t.match(res.text, /open to data-package claims/);
});
