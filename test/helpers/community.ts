import type { MessageRecord } from '../../src/core/message-record';
import { Client, type Res, signUp, uniqueName } from './client';
import type { TestServer } from './server';

/** Every kind of caller a permission matrix checks. */
export const ACTORS = ['owner', 'admin', 'roleMember', 'member', 'outsider', 'anon', 'suspended'] as const;
export type Actor = (typeof ACTORS)[number];
export type Expect = Record<Actor, number>;

/** Awaits a response and fails the set-up loudly unless it has the expected status. */
export async function must<T = any>(res: Promise<Res<T>>, status: number): Promise<Res<T>> {
  const done = await res;
  if (done.status !== status) throw new Error(`expected ${status}, got ${done.status}: ${done.text}`);
  return done;
}

/** A user as records show them (messages, members, friends) before any profile is set. */
export const ref = (client: Client) => ({ user_id: client.userId, username: client.username, display_name: null, avatar_url: null });

export const setStanding = (server: TestServer, userId: string, standing: number) =>
  server.app.db.prepare('UPDATE users SET standing = ? WHERE id = ?').run(standing, userId);

/** `n` fresh users, each signed in. */
export const users = (server: TestServer, n: number): Promise<Client[]> => Promise.all(Array.from({ length: n }, () => signUp(server.url)));

/** Sends a friend request from `from` to `to` and has `to` accept it. */
export async function befriend(from: Client, to: Client): Promise<void> {
  const sent = await must(from.post('/api/friends/requests', { username: to.username }), 201);
  await must(to.post(`/api/friends/requests/${sent.body.id}/accept`), 200);
}

/** A server with two channels ("general", the first, then "random"), its owner and `count` members who joined by invite. */
export async function crowd(server: TestServer, count: number) {
  const owner = await signUp(server.url);
  const serverId: string = (await must(owner.post('/api/servers', { name: uniqueName('srv') }), 201)).body.id;
  const general: string = (await must(owner.get(`/api/servers/${serverId}/channels`), 200)).body[0].id;
  const random: string = (await must(owner.post(`/api/servers/${serverId}/channels`, { name: 'random' }), 201)).body.id;
  const token: string = (await must(owner.post(`/api/servers/${serverId}/invites`), 201)).body.token;
  const members: Client[] = [];
  for (let i = 0; i < count; i++) {
    const member = await signUp(server.url);
    await must(member.post(`/api/invites/${token}/accept`), 200);
    members.push(member);
  }
  return { owner, members, serverId, general, random };
}
export type Crowd = Awaited<ReturnType<typeof crowd>>;

/**
 * A server with one caller of each kind: its owner, a member holding a full_server_admin role
 * ("mods"), a member holding a plain role ("regulars"), a plain member, a signed-in outsider,
 * an anonymous client and a member whose account is suspended.
 */
export async function community(server: TestServer) {
  const [owner, admin, roleMember, member, outsider, suspended] = await Promise.all(Array.from({ length: 6 }, () => signUp(server.url)));
  const serverId: string = (await must(owner.post('/api/servers', { name: uniqueName('srv') }), 201)).body.id;
  const base = `/api/servers/${serverId}`;
  const token: string = (await must(owner.post(`${base}/invites`), 201)).body.token;
  const join = (client: Client) => must(client.post(`/api/invites/${token}/accept`), 200);
  await Promise.all([admin, roleMember, member, suspended].map(join));
  await must(owner.post(`${base}/roles`, { name: 'mods', full_server_admin: true }), 201);
  await must(owner.post(`${base}/roles`, { name: 'regulars', full_server_admin: false }), 201);
  await must(owner.put(`${base}/members/${admin.userId}/role`, { role: 'mods' }), 200);
  await must(owner.put(`${base}/members/${roleMember.userId}/role`, { role: 'regulars' }), 200);
  setStanding(server, suspended.userId, 4);
  const clients: Record<Actor, Client> = { owner, admin, roleMember, member, outsider, anon: new Client(server.url), suspended };
  /** A fresh member, optionally holding a role. */
  const newMember = async (role?: string) => {
    const client = await signUp(server.url);
    await join(client);
    if (role) await must(owner.put(`${base}/members/${client.userId}/role`, { role }), 200);
    return client;
  };
  return { serverId, base, token, clients, join, newMember };
}

/** A message record of a server channel. */
export type ChannelMessage = MessageRecord & { server_id: string; channel_id: string };

/**
 * community(), with two channels: general (the first, which the legacy routes use) and random,
 * and the paths and helpers of their messages (test/messages.test.ts, test/posting.test.ts).
 */
export async function messageCommunity(server: TestServer) {
  const { serverId, base, clients, join } = await community(server);
  const { owner } = clients;
  const general: string = (await must(owner.get(`${base}/channels`), 200)).body[0].id;
  const random: string = (await must(owner.post(`${base}/channels`, { name: 'random' }), 201)).body.id;
  const messagesOf = (channelId: string) => `${base}/channels/${channelId}/messages`;
  /** Creates a channel of its own for a test, so its history is only what the test put there. */
  const newChannel = async () => messagesOf((await must(owner.post(`${base}/channels`, { name: uniqueName('ch') }), 201)).body.id as string);
  const post = async (client: Client, path: string, content: string, extra: Record<string, unknown> = {}) =>
    (await must(client.post<ChannelMessage>(path, { content, ...extra }), 201)).body;
  const newMember = async () => {
    const client = await signUp(server.url);
    await join(client);
    return client;
  };
  const memberWithStanding = async (standing: number) => {
    const client = await newMember();
    setStanding(server, client.userId, standing);
    return client;
  };
  return {
    serverId,
    base,
    clients,
    general,
    random,
    inGeneral: messagesOf(general),
    inRandom: messagesOf(random),
    legacy: `${base}/messages`,
    newChannel,
    post,
    newMember,
    memberWithStanding,
  };
}
