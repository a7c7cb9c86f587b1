import crypto from 'node:crypto';
import fs from 'node:fs';
import { type TestServer, startServer } from '../server';
import path from 'node:path';
import { standardExport, writeZip } from '../discord-export';
import { systemClock } from '../../../src/core/clock';
import { recordImport } from '../../../src/parts/import/discord-import';
import { type ImportPlan, scanExport } from '../../../src/parts/import/discord-plan';
import { openExport } from '../../../src/parts/import/export-files';
import type { ResolveContext } from './deferred';
import { FIXTURE_COUNTS, type FixtureKind } from './hints';
import { SAMPLE_FILES } from './multipart';
import { type ListeningProvider, listenProvider } from '../oidc-provider';
import { SoftAuthenticator } from '../webauthn';

/**
 * The server under test and everything the fuzzer's path parameters point at.
 *
 * Users live as long as the server (sessions are in memory; re-signed in when a case ended
 * one). The scene (a server with channels, messages with attachments, a DM, a group, a role,
 * invites, a report, a pending friend request, a warning, a ban, a timeout) is made again
 * before an operation whenever the operations before it changed something, so each operation
 * starts from the same kind of state and a seed replays the same way.
 */
export const USER_ROLES = ['owner', 'member', 'outsider', 'peer', 'target', 'admin', 'spare'] as const;
export type UserRole = (typeof USER_ROLES)[number];

export interface FixtureUser {
  role: string;
  username: string;
  password: string;
  userId: string;
  cookie: string;
  sessionId: string;
  otherSessionId?: string;
  /** Made for one operation (or one case); its password may be generated. */
  throwaway: boolean;
}

export interface Scene {
  ids: Record<string, string[]>;
  builtMs: number;
}

interface ApiAnswer {
  status: number;
  body: any;
  text: string;
}

const tag = `fz${process.pid % 10000}`;

export class World {
  /** The fixture export and its dry run, made once for every scene. */
  private static exportScan: Promise<{ zip: string; plan: ImportPlan }> | undefined;
  server!: TestServer;
  url = '';
  users = {} as Record<UserRole, FixtureUser>;
  scene: Scene | null = null;
  /** Something was changed since the scene was made. */
  dirty = true;
  /** Bumped on every (re)start: cases in flight across a restart know their fixtures are gone. */
  generation = 0;
  scenesBuilt = 0;
  sceneMs = 0;
  restarts = 0;
  private counter = 0;
  private closing: Promise<void>[] = [];
  /** The OpenID Provider the server trusts (docs/sso.md), on loopback for as long as the world lives. */
  private provider: ListeningProvider | undefined;

  static async create(): Promise<World> {
    const world = new World();
    await world.start();
    return world;
  }

  private async start(): Promise<void> {
    // Served from the first server on (a restarted server's callback differs, but the fuzzer
    // never completes a sign-in: what it reaches is the discovery, which does not change).
    const first = !this.provider;
    this.provider ??= await listenProvider();
    const oidc = JSON.stringify([this.provider.entry({ allow_signup: true })]);
    this.server = await startServer({ env: { ADMIN_USERS: `${tag}admin`, OIDC_PROVIDERS: oidc } });
    if (first) await this.provider.configure(`${this.server.url}/api/auth/oidc/test/callback`);
    this.url = this.server.url;
    this.generation++;
    const made = await Promise.all(USER_ROLES.map((role) => this.signUp(`${tag}${role}`, role)));
    USER_ROLES.forEach((role, i) => (this.users[role] = made[i]));
    // A second session for the callers, for the session fixtures.
    await Promise.all((['owner', 'member', 'outsider'] as const).map((role) => this.ensureOtherSession(this.users[role])));
    this.scene = null;
    this.dirty = true;
  }

  /** Set when the in-process server threw outside any request (runner.ts CrashGuard). */
  crashed = false;
  private recovering: Promise<void> | undefined;

  /** After a crash: a new server (once, however many cases ask). */
  async recover(): Promise<void> {
    if (!this.crashed) return;
    this.recovering ??= this.restart().finally(() => {
      this.crashed = false;
      this.recovering = undefined;
    });
    await this.recovering;
  }

  /** After the in-process server crashed: a new server, new users, a new scene. */
  async restart(): Promise<void> {
    this.restarts++;
    const old = this.server;
    this.closing.push(old.close().catch(() => {}));
    await this.start();
    await this.ensureScene();
  }

  async close(): Promise<void> {
    await Promise.all([this.server.close().catch(() => {}), ...this.closing, this.provider?.close()]);
  }

  // -------------------------------------------------------------------------------------------
  // Plain HTTP for set-up (no contract check: set-up must not fail on what the fuzzer reports)

  async api(user: FixtureUser | undefined, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<ApiAnswer> {
    const init: RequestInit = { method, headers: { ...headers }, redirect: 'manual' };
    const h = init.headers as Record<string, string>;
    if (user) h.cookie = user.cookie;
    if (body instanceof FormData) init.body = body;
    else if (body !== undefined) {
      init.body = JSON.stringify(body);
      h['content-type'] = 'application/json';
    }
    const res = await fetch(this.url + path, init);
    const text = await res.text();
    let parsed: unknown;
    if (res.headers.get('content-type')?.startsWith('application/json')) parsed = JSON.parse(text);
    const cookie = res.headers.get('set-cookie')?.match(/app_session=([^;]*)/);
    if (user && cookie?.[1]) user.cookie = `app_session=${cookie[1]}`;
    return { status: res.status, body: parsed, text };
  }

  async must(user: FixtureUser | undefined, method: string, path: string, body: unknown, ...statuses: number[]): Promise<ApiAnswer> {
    const res = await this.api(user, method, path, body);
    if (!statuses.includes(res.status))
      throw new Error(`fuzz set-up: ${method} ${path} answered ${res.status}, expected ${statuses.join(' or ')}: ${res.text.slice(0, 300)}`);
    return res;
  }

  private async login(username: string, password: string): Promise<{ cookie: string; userId: string }> {
    const res = await fetch(`${this.url}/api/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username, password }),
    });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`fuzz set-up: login ${username} answered ${res.status}: ${text}`);
    const cookie = res.headers.get('set-cookie')!.match(/app_session=([^;]*)/)![1];
    return { cookie: `app_session=${cookie}`, userId: JSON.parse(text).user_id };
  }

  private async sessionIds(user: FixtureUser): Promise<void> {
    const res = await this.must(user, 'GET', '/api/account/sessions', undefined, 200);
    const list = res.body as { id: string; current: boolean }[];
    user.sessionId = list.find((s) => s.current)!.id;
    user.otherSessionId = list.find((s) => !s.current)?.id;
  }

  async signUp(username: string, role: string, throwaway = false): Promise<FixtureUser> {
    const password = `pw-${crypto.randomBytes(9).toString('base64url')}`;
    const reg = await fetch(`${this.url}/api/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username, password }),
    });
    if (reg.status !== 201) throw new Error(`fuzz set-up: register ${username} answered ${reg.status}: ${await reg.text()}`);
    await reg.text();
    const { cookie, userId } = await this.login(username, password);
    const user: FixtureUser = { role, username, password, userId, cookie, sessionId: '', throwaway };
    await this.sessionIds(user);
    return user;
  }

  /** A fresh account of its own, for operations that end sessions or accounts. */
  throwaway(): Promise<FixtureUser> {
    return this.signUp(`${tag}t${++this.counter}`, 'throwaway', true);
  }

  /** Another session of the same account (logout cases each end one). */
  async freshSession(user: FixtureUser): Promise<FixtureUser> {
    const { cookie } = await this.login(user.username, user.password);
    const copy = { ...user, cookie };
    await this.sessionIds(copy);
    return copy;
  }

  /** Signs a fixture user in again if its session ended (a case ended it by id). */
  async reviveSession(user: FixtureUser): Promise<void> {
    const me = await this.api(user, 'GET', '/api/users/me');
    if (me.status !== 401) return;
    user.cookie = (await this.login(user.username, user.password)).cookie;
    await this.sessionIds(user);
  }

  private async ensureOtherSession(user: FixtureUser): Promise<void> {
    if (user.otherSessionId) return;
    await this.login(user.username, user.password);
    await this.sessionIds(user);
  }

  // -------------------------------------------------------------------------------------------
  // Fixtures

  /** Resolves fixture references for a case sent by `caller` (undefined: anonymous). */
  contextFor(caller: FixtureUser | undefined): ResolveContext {
    return {
      fixture: (kind, index) => {
        const count = FIXTURE_COUNTS[kind as FixtureKind] ?? 1;
        const i = index % count;
        const u = (n: number) => this.users[USER_ROLES[n % USER_ROLES.length]];
        switch (kind) {
          case 'user':
            return u(i).userId;
          case 'username':
            return u(i).username;
          case 'roleName':
            return 'regulars';
          case 'provider':
            return 'test';
          case 'password':
            return caller?.throwaway ? caller.password : this.users.spare.password;
          case 'session': {
            const self = caller ?? this.users.owner;
            if (i === 0) return self.sessionId;
            if (i === 1) return self.otherSessionId ?? this.stable(`session1-${self.userId}`);
            return (self.userId === this.users.owner.userId ? this.users.member : this.users.owner).sessionId;
          }
          default:
            return this.scene?.ids[kind]?.[i] ?? this.stable(`${kind}${i}`);
        }
      },
    };
  }

  /** An id of no record, the same for this name in every run (a fixture the scene could not make). */
  private stable(name: string): string {
    const h = crypto.createHash('sha256').update(name).digest('hex');
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
  }

  async ensureScene(): Promise<Scene> {
    if (this.scene && !this.dirty) return this.scene;
    const started = performance.now();
    await this.repairUsers();
    await this.clearServers();
    const ids = await this.buildScene();
    this.scene = { ids, builtMs: performance.now() - started };
    this.scenesBuilt++;
    this.sceneMs += this.scene.builtMs;
    this.dirty = false;
    return this.scene;
  }

  /** Sessions ended, standing lowered, warnings, blocks: undone, so callers act as themselves again. */
  private async repairUsers(): Promise<void> {
    const { admin } = this.users;
    const roles = ['owner', 'member', 'outsider', 'peer', 'spare'] as const;
    await Promise.all(
      roles.map(async (role) => {
        const user = this.users[role];
        let account = await this.api(user, 'GET', '/api/account');
        if (account.status === 401) {
          try {
            user.cookie = (await this.login(user.username, user.password)).cookie;
          } catch {
            // The password was changed or the account deleted: a new account in its place.
            this.users[role] = await this.signUp(`${tag}${role}${++this.counter}`, role);
          }
          account = await this.api(this.users[role], 'GET', '/api/account');
        }
        const current = this.users[role];
        if (account.status !== 200) throw new Error(`fuzz set-up: GET /api/account as ${role} answered ${account.status}: ${account.text}`);
        for (const w of account.body.warnings ?? []) await this.api(admin, 'DELETE', `/api/admin/warnings/${w.id}`);
        if (account.body.account_standing !== 0) await this.must(admin, 'PUT', `/api/admin/users/${current.userId}/standing`, { standing: 0 }, 200);
        const blocks = await this.must(current, 'GET', '/api/blocks', undefined, 200);
        for (const b of blocks.body as { user_id: string }[]) await this.api(current, 'DELETE', `/api/users/${b.user_id}/block`);
        if (role !== 'spare' && role !== 'peer') {
          await this.sessionIds(current);
          await this.ensureOtherSession(current);
        }
      }),
    );
  }

  /** Servers of earlier scenes (and those the fuzzer created) deleted or left: a user may be in at most 100. */
  private async clearServers(): Promise<void> {
    const roles = ['owner', 'outsider', 'member', 'peer', 'spare'] as const;
    for (const role of roles) {
      const user = this.users[role];
      const list = await this.api(user, 'GET', '/api/servers');
      if (list.status !== 200) continue;
      await Promise.all(
        (list.body as { id: string; owner_id: string }[]).map((s) =>
          s.owner_id === user.userId
            ? this.api(user, 'DELETE', `/api/servers/${s.id}`)
            : this.api(user, 'DELETE', `/api/servers/${s.id}/members/${user.userId}`),
        ),
      );
    }
  }

  private async befriend(a: FixtureUser, b: FixtureUser): Promise<void> {
    const sent = await this.api(a, 'POST', '/api/friends/requests', { username: b.username });
    if (sent.status === 201) {
      await this.must(b, 'POST', `/api/friends/requests/${sent.body.id}/accept`, undefined, 200);
      return;
    }
    if (sent.status !== 409) throw new Error(`fuzz set-up: friend request ${a.role} -> ${b.role} answered ${sent.status}: ${sent.text}`);
    // Pending either way: accept it.
    for (const [from, to] of [
      [a, b],
      [b, a],
    ]) {
      const incoming = await this.must(to, 'GET', '/api/friends/requests', undefined, 200);
      const pending = (incoming.body as { id: string; from: { user_id: string } }[]).find((r) => r.from.user_id === from.userId);
      if (pending) await this.must(to, 'POST', `/api/friends/requests/${pending.id}/accept`, undefined, 200);
    }
  }

  /** A pending request from `from` to `to` (their friendship removed first). */
  private async pendingRequest(from: FixtureUser, to: FixtureUser): Promise<string> {
    await this.api(to, 'DELETE', `/api/friends/${from.userId}`);
    for (let attempt = 0; attempt < 2; attempt++) {
      const sent = await this.api(from, 'POST', '/api/friends/requests', { username: to.username });
      if (sent.status === 201) return sent.body.id;
      const outgoing = await this.must(from, 'GET', '/api/friends/requests?direction=outgoing', undefined, 200);
      const mine = (outgoing.body as { id: string; to: { user_id: string } }[]).find((r) => r.to.user_id === to.userId);
      if (mine) return mine.id;
      const incoming = await this.must(from, 'GET', '/api/friends/requests', undefined, 200);
      const theirs = (incoming.body as { id: string; from: { user_id: string } }[]).find((r) => r.from.user_id === to.userId);
      if (theirs) await this.api(from, 'POST', `/api/friends/requests/${theirs.id}/reject`);
    }
    return this.stable('friendRequest-none');
  }

  private upload(content: string, name: string, bytes: Uint8Array): FormData {
    const form = new FormData();
    form.append('content', content);
    form.append('attachments', new Blob([bytes]), name);
    return form;
  }

  private async buildScene(): Promise<Record<string, string[]>> {
    const { owner, member, outsider, peer, target, admin } = this.users;
    const [server, other] = await Promise.all([
      this.must(owner, 'POST', '/api/servers', { name: 'fuzz' }, 201),
      this.must(outsider, 'POST', '/api/servers', { name: 'elsewhere' }, 201),
    ]);
    const S = server.body.id as string;
    const S2 = other.body.id as string;
    const [channels, random, doomed, invite, , otherChannels, otherInvite, doomedServer] = await Promise.all([
      this.must(owner, 'GET', `/api/servers/${S}/channels`, undefined, 200),
      this.must(owner, 'POST', `/api/servers/${S}/channels`, { name: 'random' }, 201),
      this.must(owner, 'POST', `/api/servers/${S}/channels`, { name: 'doomed' }, 201),
      this.must(owner, 'POST', `/api/servers/${S}/invites`, undefined, 201),
      this.must(owner, 'POST', `/api/servers/${S}/roles`, { name: 'regulars', full_server_admin: false, self_assignable: true }, 201),
      this.must(outsider, 'GET', `/api/servers/${S2}/channels`, undefined, 200),
      this.must(outsider, 'POST', `/api/servers/${S2}/invites`, undefined, 201),
      this.must(peer, 'POST', '/api/servers', { name: 'doomed' }, 201),
    ]);
    const C1 = channels.body[0].id as string;
    const C2 = random.body.id as string;
    const C3 = otherChannels.body[0].id as string;
    const Cdel = doomed.body.id as string;
    const I = invite.body.token as string;
    const Sdel = doomedServer.body.id as string;
    await Promise.all([
      this.must(owner, 'DELETE', `/api/servers/${S}/channels/${Cdel}`, undefined, 204),
      this.must(peer, 'DELETE', `/api/servers/${Sdel}`, undefined, 204),
      this.must(member, 'POST', `/api/invites/${I}/accept`, undefined, 200),
      this.must(peer, 'POST', `/api/invites/${I}/accept`, undefined, 200),
    ]);
    const roles = await this.must(owner, 'GET', `/api/servers/${S}/roles`, undefined, 200);
    const R = (roles.body as { id: string; name: string }[]).find((r) => r.name === 'regulars')!.id;
    // A category holding #random, with a private overwrite the role is let through.
    const category = await this.must(owner, 'POST', `/api/servers/${S}/categories`, { name: 'Projects' }, 201);
    const K = category.body.id as string;
    await this.must(owner, 'PATCH', `/api/servers/${S}/channels/${C2}`, { category_id: K }, 200);
    await this.must(owner, 'PUT', `/api/servers/${S}/categories/${K}/overwrites/${R}`, { allow: ['view_channel'], deny: ['attach_files'] }, 200);
    await Promise.all([this.befriend(owner, member), this.befriend(owner, peer)]);
    const png = Buffer.from(
      '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005000201e5270ade0000000049454e44ae426082',
      'hex',
    );
    const [memberInvite, m1, m2, m3, mdel, dm, group] = await Promise.all([
      this.must(member, 'POST', `/api/servers/${S}/invites`, undefined, 201),
      this.must(owner, 'POST', `/api/servers/${S}/channels/${C1}/messages`, this.upload('hello with a file', 'a.png', png), 201),
      this.must(member, 'POST', `/api/servers/${S}/channels/${C1}/messages`, { content: `hello @${owner.username}` }, 201),
      this.must(outsider, 'POST', `/api/servers/${S2}/channels/${C3}/messages`, { content: 'elsewhere' }, 201),
      this.must(owner, 'POST', `/api/servers/${S}/channels/${C1}/messages`, { content: 'soon gone' }, 201),
      this.must(owner, 'POST', '/api/conversations/dm', { usernames: [member.username] }, 200, 201),
      this.must(owner, 'POST', '/api/conversations/group', { name: 'fuzz group', usernames: [member.username, peer.username] }, 201),
      this.must(owner, 'PUT', `/api/servers/${S}/members/${peer.userId}/role`, { role: 'regulars' }, 200),
      this.must(owner, 'PUT', `/api/servers/${S}/members/${peer.userId}/timeout`, { seconds: 3600 }, 200),
      this.must(owner, 'PUT', `/api/servers/${S}/bans/${target.userId}`, { reason: 'fuzz' }, 204),
    ]);
    const M1 = m1.body.id as string;
    const A1 = m1.body.attachments[0].id as string;
    const D = dm.body.id as string;
    const G = group.body.id as string;
    const [md, mg, report, warning, , , audit, fr] = await Promise.all([
      this.must(member, 'POST', `/api/conversations/${D}/messages`, this.upload('dm file', 'notes.txt', Buffer.from('hello')), 201),
      this.must(owner, 'POST', `/api/conversations/${G}/messages`, { content: `hi @${peer.username}` }, 201),
      this.must(member, 'POST', '/api/reports', { type: 'server_message', target: M1, reason: 'fuzz' }, 200, 201),
      this.must(admin, 'POST', `/api/admin/users/${target.userId}/warnings`, { reason: 'fuzz' }, 201),
      this.must(owner, 'PUT', `/api/servers/${S}/channels/${C1}/pins/${M1}`, undefined, 200),
      this.must(member, 'PUT', `/api/servers/${S}/channels/${C1}/messages/${M1}/reactions`, { emoji: '👍' }, 200),
      this.must(owner, 'GET', `/api/servers/${S}/audit-log`, undefined, 200),
      this.pendingRequest(outsider, owner),
      this.must(owner, 'DELETE', `/api/servers/${S}/channels/${C1}/messages/${mdel.body.id}`, undefined, 204),
    ]);
    // A Discord export uploaded and checked (the fuzzer starts it, or not: each import is its own
    // server). Recorded as the upload would (its dry run made once, here, not on a worker thread
    // at every scene: starting one under the test runner's TypeScript loader takes seconds).
    const importId = crypto.randomUUID();
    World.exportScan ??= (async () => {
      const zip = await writeZip(standardExport());
      const files = await openExport(zip);
      try {
        return { zip, plan: (await scanExport(files)).plan };
      } finally {
        files.close();
      }
    })();
    const { zip, plan } = await World.exportScan;
    fs.mkdirSync(path.join(this.server.dataDir, 'imports'), { recursive: true });
    fs.copyFileSync(zip, path.join(this.server.dataDir, 'imports', `${importId}.zip`));
    // The owner lives across scenes and the fuzzer makes bots as them: clear them below the cap.
    const ownBots = await this.must(owner, 'GET', '/api/bots', undefined, 200);
    await Promise.all((ownBots.body as { id: string }[]).map((b) => this.must(owner, 'DELETE', `/api/bots/${b.id}`, undefined, 204, 409)));
    const emojiForm = new FormData();
    emojiForm.append('name', 'fuzz_blob');
    emojiForm.append('image', new Blob([SAMPLE_FILES.gif]), 'blob.gif');
    const stickerForm = new FormData();
    stickerForm.append('name', 'fuzz sticker');
    stickerForm.append('tags', '🙂');
    stickerForm.append('image', new Blob([SAMPLE_FILES.gif]), 'sticker.gif');
    const [webhook, bot, emoji, pollMessage, sticker, automodRule] = await Promise.all([
      this.must(owner, 'POST', `/api/servers/${S}/channels/${C1}/webhooks`, { name: 'fuzz hook' }, 201),
      this.must(owner, 'POST', '/api/bots', { name: `fuzzbot${crypto.randomUUID().slice(0, 8)}` }, 201),
      this.must(owner, 'POST', `/api/servers/${S}/emojis`, emojiForm, 201),
      this.must(
        member,
        'POST',
        `/api/servers/${S}/channels/${C1}/messages`,
        { content: '', poll: { question: 'fuzz?', answers: [{ text: 'yes' }, { text: 'no' }], duration_hours: 1 } },
        201,
      ),
      this.must(owner, 'POST', `/api/servers/${S}/stickers`, stickerForm, 201),
      this.must(
        owner,
        'POST',
        `/api/servers/${S}/automod/rules`,
        { name: 'fuzz rule', trigger: { type: 'keyword', keyword_filter: ['fuzzforbidden'] }, actions: [{ type: 'block_message' }] },
        201,
      ),
    ]);
    await this.must(owner, 'POST', `/api/servers/${S}/bots`, { username: bot.body.username }, 200);
    // The owner's identity at the provider, as a link through the account page leaves it (the
    // fuzzer cannot sign in at the provider's pages; test/sso.test.ts does).
    for (const old of this.server.app.identities.list(owner.userId)) this.server.app.identities.unlink(owner.userId, old.id);
    const identity = this.server.app.identities.link(owner.userId, 'test', this.provider!.issuer, `owner-${crypto.randomUUID()}`, null);
    // The owner's passkey, made by a software authenticator (test/passkeys.test.ts holds the ceremony).
    const ownKeys = await this.must(owner, 'GET', '/api/account/passkeys', undefined, 200);
    await Promise.all((ownKeys.body as { id: string }[]).map((p) => this.must(owner, 'DELETE', `/api/account/passkeys/${p.id}`, undefined, 204, 409)));
    const options = await this.must(owner, 'POST', '/api/account/passkeys/options', { current_password: owner.password }, 200);
    const passkey = await this.must(owner, 'POST', '/api/account/passkeys', { response: new SoftAuthenticator(this.url).create(options.body as never) }, 201);
    // Threads (issue 49): one of general from the member's message, a forum with a plain and a
    // moderated tag, and a post of it.
    const [thread, forum] = await Promise.all([
      this.must(member, 'POST', `/api/servers/${S}/channels/${C1}/threads`, { name: 'fuzz thread', message_id: m2.body.id }, 201),
      this.must(
        owner,
        'POST',
        `/api/servers/${S}/channels`,
        { name: 'fuzz forum', type: 'forum', available_tags: [{ name: 'bug' }, { name: 'done', moderated: true }] },
        201,
      ),
    ]);
    const tags = (forum.body.available_tags as { id: string }[]).map((x) => x.id);
    const post = await this.must(
      member,
      'POST',
      `/api/servers/${S}/channels/${forum.body.id}/threads`,
      { name: 'a question', content: 'how?', applied_tags: [tags[0]] },
      201,
    );
    recordImport(this.server.app.db, systemClock, {
      id: importId,
      ownerId: owner.userId,
      plan,
      serverName: plan.guild.name,
      upload: `${importId}.zip`,
      status: 'checked',
      packageClaims: false,
    });
    return {
      server: [S, S2, Sdel],
      channel: [C1, C2, C3, Cdel, thread.body.id, forum.body.id],
      thread: [post.body.id],
      tag: tags,
      message: [M1, m2.body.id, m3.body.id, md.body.id, mg.body.id, mdel.body.id],
      attachment: [A1, md.body.attachments[0].id],
      conversation: [D, G],
      role: [R],
      category: [K],
      invite: [I, memberInvite.body.token, otherInvite.body.token],
      report: [report.body.id],
      friendRequest: [fr],
      warning: [warning.body.id],
      audit: [(audit.body[0]?.id as string) ?? this.stable('audit-none')],
      import: [importId],
      webhook: [webhook.body.id],
      emoji: [emoji.body.id],
      poll: [pollMessage.body.id],
      sticker: [sticker.body.id],
      automodRule: [automodRule.body.id],
      pollAnswer: [pollMessage.body.poll.answers[0].answer_id],
      webhookToken: [webhook.body.token],
      bot: [bot.body.id],
      identity: [identity.id],
      passkey: [(passkey.body as { id: string }).id],
    };
  }
}
