import t from 'tap';
import { startServer } from './helpers/server';
import { type Client, signUp, uniqueName } from './helpers/client';
import { must } from './helpers/community';
import { MODERATOR_FLAGS } from '../src/rules/channel-permissions';

/**
 * Moderator roles (issue 53): each server-level flag lets its holders do what it names (and
 * nothing else), only on members and roles below their highest role; the owner and full server
 * administrators keep every power; every use is audited. One server for the whole file.
 */
type ModFlag = (typeof MODERATOR_FLAGS)[number];

let owner: Client;
let admin: Client;
let serverId: string;
let base: string;
let general: string;
let join: (client: Client) => Promise<void>;
let fresh: (role?: string) => Promise<Client>;
/** One member per flag, holding a role with that flag alone (roles `only-<flag>`, placed below senior and junior). */
const holders = {} as Record<ModFlag, Client>;
let senior: Client;
let junior: Client;
let junior2: Client;
let plain: Client;
/** A member with no role who writes the messages moderators act on. */
let author: Client;

t.before(async () => {
  const server = await startServer();
  t.teardown(server.close);
  owner = await signUp(server.url);
  serverId = (await must(owner.post('/api/servers', { name: uniqueName('mods') }), 201)).body.id;
  base = `/api/servers/${serverId}`;
  general = (await must(owner.get(`${base}/channels`), 200)).body[0].id;
  const token: string = (await must(owner.post(`${base}/invites`), 201)).body.token;
  join = async (client) => void (await must(client.post(`/api/invites/${token}/accept`), 200));
  fresh = async (role) => {
    const client = await signUp(server.url);
    await join(client);
    if (role) await must(owner.put(`${base}/members/${client.userId}/role`, { role }), 200);
    return client;
  };
  // Created in this order, so placed in it: 0 the top.
  await must(owner.post(`${base}/roles`, { name: 'admins', full_server_admin: true }), 201);
  await must(owner.post(`${base}/roles`, { name: 'senior', permissions: MODERATOR_FLAGS }), 201);
  await must(owner.post(`${base}/roles`, { name: 'junior', permissions: MODERATOR_FLAGS }), 201);
  for (const flag of MODERATOR_FLAGS) await must(owner.post(`${base}/roles`, { name: `only-${flag}`, permissions: [flag] }), 201);
  await must(owner.post(`${base}/roles`, { name: 'plain' }), 201);
  admin = await fresh('admins');
  senior = await fresh('senior');
  junior = await fresh('junior');
  junior2 = await fresh('junior');
  plain = await fresh('plain');
  author = await fresh();
  for (const flag of MODERATOR_FLAGS) holders[flag] = await fresh(`only-${flag}`);
});

const patch = (client: Client, path: string, body: unknown) => client.request('PATCH', path, body);
const roleId = async (name: string): Promise<string> => (await must(owner.get(`${base}/roles`), 200)).body.find((r: { name: string }) => r.name === name).id;
const post = async (author: Client, content = 'hello') => (await must(author.post(`${base}/channels/${general}/messages`, { content }), 201)).body.id as string;

/** What each flag lets one do, tried by `actor` on a fresh target: the status it gets. */
const USES: Record<ModFlag, [string, (actor: Client) => Promise<number>]> = {
  manage_messages: [
    "deletes another member's message",
    async (actor) => (await actor.delete(`${base}/channels/${general}/messages/${await post(author)}`)).status,
  ],
  moderate_members: ['times a member out', async (actor) => (await actor.put(`${base}/members/${(await fresh()).userId}/timeout`, { seconds: 60 })).status],
  kick_members: ['kicks a member', async (actor) => (await actor.delete(`${base}/members/${(await fresh()).userId}`)).status],
  ban_members: ['bans a member', async (actor) => (await actor.put(`${base}/bans/${(await fresh()).userId}`, {})).status],
  manage_channels: ['creates a channel', async (actor) => (await actor.post(`${base}/channels`, { name: uniqueName('room') })).status],
  manage_roles: ['renames a role below theirs', async (actor) => (await patch(actor, `${base}/roles/${await roleId('plain')}`, { name: 'plain' })).status],
  manage_server: ['renames the server', async (actor) => (await patch(actor, base, { name: uniqueName('srv') })).status],
  manage_webhooks: ['creates a webhook', async (actor) => (await actor.post(`${base}/channels/${general}/webhooks`, { name: 'hook' })).status],
  view_audit_log: ['reads the audit log', async (actor) => (await actor.get(`${base}/audit-log`)).status],
};
const OK: Record<ModFlag, number> = {
  manage_messages: 204,
  moderate_members: 200,
  kick_members: 204,
  ban_members: 204,
  manage_channels: 201,
  manage_roles: 200,
  manage_server: 200,
  manage_webhooks: 201,
  view_audit_log: 200,
};

t.test('a new server gives everyone none of the moderators flags', async (t) => {
  const permissions: string[] = (await must(owner.get(base), 200)).body.permissions;
  for (const flag of MODERATOR_FLAGS) t.notOk(permissions.includes(flag), flag);
});

t.test('each flag allows what it names, and nothing without it (403)', async (t) => {
  for (const [i, flag] of MODERATOR_FLAGS.entries()) {
    const [what, use] = USES[flag];
    const other = MODERATOR_FLAGS[(i + 1) % MODERATOR_FLAGS.length];
    t.equal(await use(holders[flag]), OK[flag], `a holder of ${flag} ${what}`);
    t.equal(await use(holders[other]), 403, `a holder of ${other} alone does not`);
    t.equal(await use(plain), 403, 'nor a member whose role has no flags');
    t.equal(await use(owner), OK[flag], 'the owner does');
    t.equal(await use(admin), OK[flag], 'a full server administrator does');
  }
});

t.test('the hierarchy: nobody acts on a member at or above their highest role, nor on the owner', async (t) => {
  const acts: [string, ModFlag, (actor: Client, target: Client) => Promise<number>][] = [
    ['time out', 'moderate_members', async (actor, target) => (await actor.put(`${base}/members/${target.userId}/timeout`, { seconds: 60 })).status],
    ['kick', 'kick_members', async (actor, target) => (await actor.delete(`${base}/members/${target.userId}`)).status],
    ['ban', 'ban_members', async (actor, target) => (await actor.put(`${base}/bans/${target.userId}`, {})).status],
  ];
  for (const [action, flag, act] of acts) {
    t.equal(await act(junior, senior), 403, `junior cannot ${action} senior (above)`);
    t.equal(await act(junior, junior2), 403, `junior cannot ${action} another junior (level)`);
    t.equal(await act(junior, admin), 403, `junior cannot ${action} a full server administrator`);
    t.equal(await act(junior, owner), 403, `junior cannot ${action} the owner`);
    t.equal(await act(holders[flag], junior), 403, `a lower role with ${flag} cannot ${action} junior`);
    t.equal(await act(junior, await fresh('plain')), action === 'time out' ? 200 : 204, `junior may ${action} a member below`);
    t.equal(await act(senior, await fresh('junior')), action === 'time out' ? 200 : 204, `senior may ${action} a junior`);
    t.equal(await act(admin, await fresh('senior')), action === 'time out' ? 200 : 204, `an administrator may ${action} any non-administrator`);
  }
  // A member without a role stands above no one, whatever everyone may do.
  const everyone: string[] = (await must(owner.get(base), 200)).body.permissions;
  await must(patch(owner, base, { permissions: [...everyone, 'kick_members'] }), 200);
  const [a, b] = [await fresh(), await fresh()];
  t.equal((await a.delete(`${base}/members/${b.userId}`)).status, 403, 'a role-less member cannot kick another');
  await must(patch(owner, base, { permissions: everyone }), 200);
});

t.test('the owner and full server administrators keep the spec rules exactly', async (t) => {
  const admin2 = await fresh('admins');
  t.equal((await admin.put(`${base}/bans/${admin2.userId}`, {})).status, 403, 'an administrator does not ban another');
  t.equal((await admin.delete(`${base}/members/${admin2.userId}`)).status, 403, 'nor kicks one');
  t.equal((await admin.post(`${base}/roles`, { name: uniqueName('r') })).status, 403, 'role creation stays the owner’s');
  t.equal((await admin.put(`${base}/members/${plain.userId}/role`, { role: 'plain' })).status, 403, 'so does role assignment');
  t.equal((await senior.post(`${base}/roles`, { name: uniqueName('r') })).status, 403, 'manage_roles does not create roles');
  t.equal((await owner.put(`${base}/bans/${admin2.userId}`, {})).status, 204, 'the owner bans an administrator');
});

t.test('manage_roles: only roles below one’s highest, never a flag one lacks', async (t) => {
  const plainRole = await roleId('plain');
  t.equal((await patch(junior, `${base}/roles/${await roleId('senior')}`, { name: 'senior' })).status, 403, 'not a role above');
  t.equal((await patch(junior, `${base}/roles/${await roleId('junior')}`, { name: 'junior' })).status, 403, 'not one’s own highest');
  t.equal((await patch(junior, `${base}/roles/${await roleId('admins')}`, { name: 'admins' })).status, 403, 'not an administrators’ role');
  t.equal((await patch(junior, `${base}/roles/${plainRole}`, { full_server_admin: true })).status, 403, 'never the full-administrator switch');
  t.equal((await patch(junior, `${base}/roles/${plainRole}`, { position: 1 })).status, 403, 'never placed at or above one’s own');
  const roleHolder = holders.manage_roles;
  t.equal((await patch(roleHolder, `${base}/roles/${plainRole}`, { permissions: ['ban_members'] })).status, 403, 'never granting a flag one lacks');
  t.equal((await patch(roleHolder, `${base}/roles/${plainRole}`, { permissions: ['manage_roles'] })).status, 200, 'a flag one holds');
  t.equal((await patch(roleHolder, `${base}/roles/${plainRole}`, { permissions: [] })).status, 200, 'and taking it back');
  t.equal(
    (await roleHolder.put(`${base}/channels/${general}/overwrites/${plainRole}`, { deny: ['send_messages'] })).status,
    200,
    'an overwrite of a flag one holds',
  );
  t.equal((await roleHolder.put(`${base}/channels/${general}/overwrites/${plainRole}`, { allow: ['ban_members'] })).status, 403, 'not of one one lacks');
  t.equal((await roleHolder.delete(`${base}/channels/${general}/overwrites/${plainRole}`)).status, 204);
  t.equal((await patch(holders.manage_server, base, { permissions: [] })).status, 403, "everyone's flags need manage_roles too");
  const doomed = (await must(owner.post(`${base}/roles`, { name: uniqueName('doomed') }), 201)).body.id;
  t.equal((await junior.delete(`${base}/roles/${doomed}`)).status, 204, 'deletes a role below');
  t.equal((await junior.delete(`${base}/roles/${await roleId('senior')}`)).status, 403, 'not one above');
});

t.test('channel overwrites apply to the channel-scoped flags', async (t) => {
  const random: string = (await must(owner.post(`${base}/channels`, { name: uniqueName('random') }), 201)).body.id;
  const holder = holders.manage_messages;
  const holderRole = await roleId('only-manage_messages');
  await must(owner.put(`${base}/channels/${random}/overwrites/${holderRole}`, { deny: ['manage_messages'] }), 200);
  const there = (await must(author.post(`${base}/channels/${random}/messages`, { content: 'x' }), 201)).body.id;
  t.equal((await holder.delete(`${base}/channels/${random}/messages/${there}`)).status, 403, 'denied in that channel');
  t.equal((await holder.put(`${base}/channels/${random}/pins/${there}`)).status, 403, 'nor pins there');
  t.equal((await holder.put(`${base}/channels/${general}/pins/${await post(author)}`)).status, 200, 'pins elsewhere');
  const channelsRole = await roleId('only-manage_channels');
  await must(owner.put(`${base}/channels/${random}/overwrites/${channelsRole}`, { deny: ['manage_channels'] }), 200);
  t.equal((await patch(holders.manage_channels, `${base}/channels/${random}`, { topic: 'x' })).status, 403, 'manage_channels denied there');
  t.equal((await patch(holders.manage_channels, `${base}/channels/${general}`, { topic: 'x' })).status, 200, 'kept elsewhere');
  const category = (await must(owner.post(`${base}/categories`, { name: uniqueName('cat') }), 201)).body.id;
  t.equal(
    (await patch(holders.manage_channels, `${base}/channels/${general}`, { category_id: category })).status,
    403,
    'moving a channel under a category (whose overwrites it would follow) also needs manage_roles',
  );
  t.equal((await patch(junior, `${base}/channels/${general}`, { category_id: category })).status, 200, 'which junior holds');
  // An overwrite of a server-wide flag changes nothing.
  await must(owner.put(`${base}/channels/${general}/overwrites/${await roleId('only-kick_members')}`, { deny: ['kick_members'] }), 200);
  t.equal((await holders.kick_members.delete(`${base}/members/${(await fresh()).userId}`)).status, 204, 'kick_members is the server’s');
});

t.test('a timed-out moderator uses none of their flags', async (t) => {
  const mod = await fresh('junior');
  await must(senior.put(`${base}/members/${mod.userId}/timeout`, { seconds: 600 }), 200);
  t.equal((await mod.delete(`${base}/channels/${general}/messages/${await post(author)}`)).status, 403, 'no deleting');
  t.equal((await mod.put(`${base}/bans/${(await fresh()).userId}`, {})).status, 403, 'no banning');
  t.equal((await mod.get(`${base}/audit-log`)).status, 403, 'no audit log');
});

t.test('every use is audited under its actor', async (t) => {
  const entries: { action: string; actor: { user_id: string } }[] = (await must(owner.get(`${base}/audit-log?limit=100`), 200)).body;
  const by = (flag: ModFlag, action: string) => entries.some((e) => e.action === action && e.actor.user_id === holders[flag].userId);
  t.ok(by('manage_messages', 'message_delete'), 'message_delete');
  t.ok(by('moderate_members', 'member_timeout'), 'member_timeout');
  t.ok(by('kick_members', 'member_kick'), 'member_kick');
  t.ok(by('ban_members', 'member_ban'), 'member_ban');
  t.ok(by('manage_channels', 'channel_create'), 'channel_create');
  t.ok(by('manage_roles', 'role_update'), 'role_update');
  t.ok(by('manage_roles', 'overwrite_update'), 'overwrite_update');
  t.ok(by('manage_server', 'server_update'), 'server_update');
  t.ok(by('manage_webhooks', 'webhook_create'), 'webhook_create');
});
