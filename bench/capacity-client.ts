/**
 * One load client of bench/capacity.ts, run as a child process (child_process.fork) and driven
 * over IPC: it signs in its share of the simulated users, holds one user stream (GET /api/ws)
 * for each, and makes them behave at the rates of RATES below until told to stop. It keeps what
 * it saw with timestamps on the machine-wide clock (performance.timeOrigin + performance.now(),
 * the same in every process of one machine) and hands the parent raw records: the parent decides
 * the window, and every client judges each post of every client against its own users.
 *
 * Cheap on purpose (it shares the cores with the server): plain `ws` clients without
 * per-message deflate, no JSON.parse of frames; a frame is searched for the marker that every
 * posted message carries in its content (`#cq<post id>s<server>c<channel>u<user>.`).
 */
import http from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import WebSocket from 'ws';

/**
 * The simulated behaviour, per user. All actions are Poisson processes (exponential waits with
 * these means), so the load is steady and uncorrelated; the first wait is drawn the same way.
 */
export const RATES = {
  /** Share of users at the keyboard ("active"); the others only hold their stream and read. */
  activeShare: 0.2,
  /** An active user posts a message this often (s), into the channel they look at. */
  postEveryS: 60,
  /** Typing is announced this long (s, uniform) before each post. */
  typingLeadS: [1, 3] as const,
  /** Before a post, the chance that the user first moves to another of their channels. */
  switchChannel: 0.3,
  /** An active user reacts to a message they saw recently this often (s). */
  reactEveryS: 120,
  /**
   * An active user marks the channel they look at read once after a message arrives in it, this
   * long after (s, uniform: people glance at different moments), covering what came meanwhile.
   */
  readAfterS: [5, 15] as const,
  /** An active user opens a channel (a history page, half the time a second, older one; then marks it read) this often (s). */
  historyEveryS: 300,
  /** An active user searches one of their servers this often (s). */
  searchEveryS: 600,
  /** A passive user comes back and marks read the last message they received this often (s). */
  passiveReadEveryS: 300,
  /** Every user's stream drops and reconnects this often (s): a network change, a laptop waking. */
  reconnectEveryS: 600,
};

export const MARK = '#cq';
const MARK_BYTES = Buffer.from(MARK);
const ID_BYTES = Buffer.from('"id":"');
/** Post ids: client index * POST_ID_SPAN + n, unique over the run. */
export const POST_ID_SPAN = 10_000_000;
const EMOJI = ['👍', '❤️', '😂', '🎉', '👀', '🙏'];
export const WORDS = (
  'release build deploy review lunch meeting coffee weekend garden recipe guitar concert football ' +
  'holiday picture camera bicycle mountain river pizza database server network browser keyboard ' +
  'rocket planet library notebook question answer morning evening tomorrow yesterday welcome thanks'
).split(' ');

export interface ServerPlan {
  id: string;
  channels: string[];
}

export interface UserPlan {
  idx: number;
  username: string;
  /** Indexes into the servers list. */
  servers: number[];
  active: boolean;
}

export interface PostRecord {
  id: number;
  s: number;
  c: number;
  user: number;
  /** Epoch ms (machine clock): the POST handed to the socket, its answer read. */
  sentAt: number;
  ackAt: number;
  status: number;
}

export type RequestKind = 'login' | 'post' | 'typing' | 'reaction' | 'read' | 'history' | 'search';

export interface ClientReport {
  posts: PostRecord[];
  /** [kind, sent at, ms, status] of every other request in the window. */
  requests: [RequestKind, number, number, number][];
  /** Upgrade sent to ready received (ms), streams opened in the window (reconnects). */
  readies: number[];
  /** [at, what] of every error of the step so far. */
  errors: [number, string][];
  /** This client's event-loop delay since `measure`, p99 and max (ms). */
  lag: { p99: number; max: number };
  /** Frames received from `measure` to `quiet` (all kinds). */
  frames: number;
}

export interface PostAudit {
  id: number;
  /** This client's users that should have had it (members, stream up from before the POST to after its answer). */
  expected: number;
  got: number;
  /** Latest arrival among them (epoch ms), 0 when none. */
  last: number;
}

export type ToClient =
  | { type: 'setup'; restBase: string; wsBases: string[]; servers: ServerPlan[]; users: UserPlan[]; password: string; loginConcurrency: number }
  | { type: 'connect'; concurrency: number }
  | { type: 'run' }
  | { type: 'measure' }
  | { type: 'quiet' }
  | { type: 'report'; from: number; to: number }
  | { type: 'audit'; posts: PostRecord[]; graceMs: number }
  | { type: 'close' };

export type FromClient =
  | { type: 'signedIn'; ms: number }
  | { type: 'connected'; ms: number; readies: number[] }
  | { type: 'report'; report: ClientReport }
  | { type: 'audit'; audits: PostAudit[]; duplicates: number }
  | { type: 'closed' }
  | { type: 'failed'; error: string };

export const now = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

interface Seen {
  s: number;
  c: number;
  mid: string;
}

interface SimUser {
  /** Its index in this client's list. */
  local: number;
  plan: UserPlan;
  cookie: string;
  wsBase: string;
  ws: WebSocket | null;
  /** [ready received, closed by this client] per stream of the step; Infinity while open or when the server closed it. */
  intervals: [number, number][];
  focus: { s: number; c: number };
  /** Newest message seen in the focused channel, not yet marked read. */
  unreadInFocus: string | null;
  readTimer: NodeJS.Timeout | null;
  lastSeen: Seen | null;
  recent: Seen[];
}

// ---------------------------------------------------------------------------------------------
// HTTP

/** As bench/lib.ts: the timeout lets the agent honour the server's Keep-Alive hint. */
const agent = new http.Agent({ keepAlive: true, maxSockets: 48, timeout: 60_000 });

function send(base: string, method: string, url: string, cookie: string, body?: string): Promise<{ status: number; text: string; cookie?: string }> {
  const headers: Record<string, string> = { cookie };
  if (body !== undefined) {
    headers['content-type'] = 'application/json';
    headers['content-length'] = String(Buffer.byteLength(body));
  }
  return new Promise((resolve) => {
    const req = http.request(base + url, { method, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const set = /app_session=([^;]+)/.exec(String(res.headers['set-cookie'] ?? ''));
        resolve({ status: res.statusCode!, text: Buffer.concat(chunks).toString(), cookie: set ? `app_session=${set[1]}` : undefined });
      });
      res.on('error', () => resolve({ status: 0, text: 'response error' }));
    });
    req.on('error', (err) => resolve({ status: 0, text: err.message }));
    req.end(body);
  });
}

// ---------------------------------------------------------------------------------------------
// The client

class LoadClient {
  private restBase = '';
  private servers: ServerPlan[] = [];
  private users: SimUser[] = [];
  /** Per server index: this client's users in it (indexes into users). */
  private membersOf = new Map<number, number[]>();
  private running = false;
  private timers = new Set<NodeJS.Timeout>();
  private nextPost = 0;
  private readonly lag = monitorEventLoopDelay({ resolution: 5 });

  private posts: PostRecord[] = [];
  private requests: [RequestKind, number, number, number][] = [];
  private readies: [number, number, boolean][] = [];
  private errors: [number, string][] = [];
  /** Post id -> [local user, arrival] pairs. */
  private received = new Map<number, number[]>();
  /** Frames received between `measure` and `quiet`. */
  private frames = 0;
  private counting = false;
  private random = Math.random;

  constructor(private readonly index: number) {}

  setup(m: Extract<ToClient, { type: 'setup' }>): Promise<number> {
    this.restBase = m.restBase;
    this.servers = m.servers;
    this.users = m.users.map((plan, local) => {
      const s = plan.servers[0];
      return {
        local,
        plan,
        cookie: '',
        wsBase: m.wsBases[plan.idx % m.wsBases.length],
        ws: null,
        intervals: [],
        focus: { s, c: 0 },
        unreadInFocus: null,
        readTimer: null,
        lastSeen: null,
        recent: [],
      };
    });
    this.membersOf.clear();
    for (const [u, user] of this.users.entries()) {
      for (const s of user.plan.servers) {
        let list = this.membersOf.get(s);
        if (!list) this.membersOf.set(s, (list = []));
        list.push(u);
      }
    }
    return this.signIn(m.password, m.loginConcurrency);
  }

  private async signIn(password: string, concurrency: number): Promise<number> {
    const started = performance.now();
    let next = 0;
    const worker = async () => {
      while (next < this.users.length) {
        const user = this.users[next++];
        const at = now();
        const res = await send(this.restBase, 'POST', '/api/login', '', JSON.stringify({ username: user.plan.username, password }));
        this.requests.push(['login', at, now() - at, res.status]);
        if (res.status !== 200 || !res.cookie) {
          this.error(`login ${user.plan.username} answered ${res.status}: ${res.text.slice(0, 200)}`);
          continue;
        }
        user.cookie = res.cookie;
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    return performance.now() - started;
  }

  /**
   * Opens every stream, `concurrency` upgrades in flight at a time (this client's share: as fast
   * as the server takes them, without a queue of thousands); resolves when all are ready or failed.
   */
  async connect(concurrency: number): Promise<{ ms: number; readies: number[] }> {
    const started = performance.now();
    let next = 0;
    const worker = async () => {
      while (next < this.users.length) {
        const user = this.users[next++];
        if (user.cookie) await this.open(user, true);
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    return { ms: performance.now() - started, readies: this.readies.filter((r) => r[2]).map((r) => r[1]) };
  }

  private error(what: string): void {
    this.errors.push([now(), what]);
  }

  /** One user stream; resolves at ready (or failure). Closes not asked for by this client are errors. */
  private open(user: SimUser, ramp: boolean): Promise<void> {
    return new Promise((resolve) => {
      const started = now();
      const ws = new WebSocket(`${user.wsBase}/api/ws`, { headers: { cookie: user.cookie }, perMessageDeflate: false });
      let interval: [number, number] | null = null;
      let ours = false;
      user.ws = ws;
      (ws as WebSocket & { closeOurs?: () => void }).closeOurs = () => {
        ours = true;
        if (interval) interval[1] = now();
        ws.close();
      };
      ws.on('message', (data: Buffer) => {
        if (interval) return this.onFrame(user, data);
        const at = now();
        // The first frame must be ready: `{"event":"ready",...`.
        if (data.indexOf('"ready"') < 0 || data.indexOf('"ready"') > 20) {
          this.error(`${user.plan.username}: first frame was not ready: ${data.subarray(0, 80).toString()}`);
          ws.terminate();
          return resolve();
        }
        interval = [at, Infinity];
        user.intervals.push(interval);
        this.readies.push([started, at - started, ramp]);
        resolve();
      });
      ws.on('unexpected-response', (_req, res) => {
        this.error(`${user.plan.username}: upgrade answered ${res.statusCode}`);
        ours = true;
        resolve();
      });
      ws.on('error', (err) => {
        this.error(`${user.plan.username}: socket error ${err.message} (${interval ? 'after' : 'before'} ready)`);
        resolve();
      });
      ws.on('close', (code, reason) => {
        if (ours) return;
        const age = interval ? `${((now() - interval[0]) / 1000).toFixed(1)} s after ready` : 'before ready';
        this.error(`${user.plan.username}: stream closed by the server (${code}${reason.length ? ` ${reason.toString()}` : ''}, ${age})`);
        resolve();
        // As a client would: come back after a moment (the missed messages stay counted as missed).
        if (this.running) this.later(1000, () => this.open(user, false));
      });
    });
  }

  // The hot path: every frame of every stream. One indexOf; the marker's digits read in place.
  private onFrame(user: SimUser, data: Buffer): void {
    if (this.counting) this.frames++;
    const i = data.indexOf(MARK_BYTES);
    if (i < 0) return;
    const at = now();
    let k = i + MARK_BYTES.length;
    const num = () => {
      let n = 0;
      for (; k < data.length; k++) {
        const c = data[k];
        if (c < 48 || c > 57) break;
        n = n * 10 + c - 48;
      }
      k++;
      return n;
    };
    const id = num();
    const s = num();
    const c = num();
    const author = num();
    let list = this.received.get(id);
    if (!list) this.received.set(id, (list = []));
    list.push(user.local, at);
    if (author === user.plan.idx) return;
    const start = data.indexOf(ID_BYTES);
    if (start < 0) return;
    const mid = data.toString('latin1', start + ID_BYTES.length, start + ID_BYTES.length + 36);
    const seen = { s, c, mid };
    user.lastSeen = seen;
    if (!user.plan.active) return;
    user.recent.push(seen);
    if (user.recent.length > 5) user.recent.shift();
    if (s === user.focus.s && c === user.focus.c) {
      user.unreadInFocus = mid;
      const [lo, hi] = RATES.readAfterS;
      user.readTimer ??= this.later((lo + this.random() * (hi - lo)) * 1000, () => {
        user.readTimer = null;
        return this.markRead(user, user.focus.s, user.focus.c, user.unreadInFocus);
      });
    }
  }

  private later(ms: number, fn: () => Promise<unknown> | void): NodeJS.Timeout {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      if (!this.running) return;
      void fn();
    }, ms);
    this.timers.add(timer);
    return timer;
  }

  /** Runs `fn` for ever at exponential intervals of mean `meanS`, while running. */
  private every(meanS: number, fn: () => Promise<unknown>): void {
    const wait = -Math.log(1 - this.random()) * meanS * 1000;
    this.later(wait, async () => {
      await fn();
      this.every(meanS, fn);
    });
  }

  private async call(kind: RequestKind, user: SimUser, method: string, url: string, body?: unknown): Promise<{ status: number; text: string }> {
    const at = now();
    const res = await send(this.restBase, method, url, user.cookie, body === undefined ? undefined : JSON.stringify(body));
    this.requests.push([kind, at, now() - at, res.status]);
    if (res.status < 200 || res.status >= 300) this.error(`${kind} ${method} ${url} answered ${res.status}: ${res.text.slice(0, 200)}`);
    return res;
  }

  private channelUrl(s: number, c: number): string {
    const server = this.servers[s];
    return `/api/servers/${server.id}/channels/${server.channels[c]}`;
  }

  private pick<T>(list: readonly T[]): T {
    return list[Math.floor(this.random() * list.length)];
  }

  /** A channel of a server, the first ones busier (1/(c+1)). */
  private pickChannel(s: number): number {
    const n = this.servers[s].channels.length;
    let total = 0;
    for (let c = 0; c < n; c++) total += 1 / (c + 1);
    let r = this.random() * total;
    for (let c = 0; c < n; c++) {
      r -= 1 / (c + 1);
      if (r <= 0) return c;
    }
    return 0;
  }

  private moveTo(user: SimUser, s: number, c: number): void {
    user.focus = { s, c };
    user.unreadInFocus = null;
  }

  private sentence(): string {
    const words = Array.from({ length: 4 + Math.floor(this.random() * 8) }, () => this.pick(WORDS));
    return words.join(' ');
  }

  private async post(user: SimUser): Promise<void> {
    if (this.random() < RATES.switchChannel) {
      const s = this.pick(user.plan.servers);
      this.moveTo(user, s, this.pickChannel(s));
    }
    const { s, c } = user.focus;
    await this.call('typing', user, 'POST', `${this.channelUrl(s, c)}/typing`);
    const [lo, hi] = RATES.typingLeadS;
    await sleep((lo + this.random() * (hi - lo)) * 1000);
    if (!this.running) return;
    const id = this.index * POST_ID_SPAN + this.nextPost++;
    const content = `${this.sentence()} ${MARK}${id}s${s}c${c}u${user.plan.idx}.`;
    const sentAt = now();
    const res = await send(this.restBase, 'POST', `${this.channelUrl(s, c)}/messages`, user.cookie, JSON.stringify({ content }));
    const ackAt = now();
    this.posts.push({ id, s, c, user: user.plan.idx, sentAt, ackAt, status: res.status });
    if (res.status !== 201) this.error(`post answered ${res.status}: ${res.text.slice(0, 200)}`);
  }

  private async react(user: SimUser): Promise<void> {
    if (user.recent.length === 0) return;
    const { s, c, mid } = this.pick(user.recent);
    await this.call('reaction', user, 'PUT', `${this.channelUrl(s, c)}/messages/${mid}/reactions`, { emoji: this.pick(EMOJI) });
  }

  private async markRead(user: SimUser, s: number, c: number, mid: string | null): Promise<void> {
    if (!mid) return;
    if (user.focus.s === s && user.focus.c === c && user.unreadInFocus === mid) user.unreadInFocus = null;
    await this.call('read', user, 'PUT', `${this.channelUrl(s, c)}/read`, { message_id: mid });
  }

  /** Opening a channel: its newest page, half the time the page before it, then it is read. */
  private async history(user: SimUser): Promise<void> {
    const s = this.pick(user.plan.servers);
    const c = this.pickChannel(s);
    this.moveTo(user, s, c);
    const res = await this.call('history', user, 'GET', `${this.channelUrl(s, c)}/messages?limit=50`);
    if (res.status !== 200) return;
    const page = JSON.parse(res.text) as { id: string }[];
    if (page.length === 0) return;
    if (page.length === 50 && this.random() < 0.5) await this.call('history', user, 'GET', `${this.channelUrl(s, c)}/messages?limit=50&before=${page[49].id}`);
    await this.markRead(user, s, c, page[0].id);
  }

  private async search(user: SimUser): Promise<void> {
    const s = this.pick(user.plan.servers);
    await this.call('search', user, 'GET', `/api/search?q=${encodeURIComponent(this.pick(WORDS))}&server_id=${this.servers[s].id}`);
  }

  private async passiveRead(user: SimUser): Promise<void> {
    const seen = user.lastSeen;
    user.lastSeen = null;
    if (seen) await this.markRead(user, seen.s, seen.c, seen.mid);
  }

  private async reconnect(user: SimUser): Promise<void> {
    const old = user.ws as (WebSocket & { closeOurs?: () => void }) | null;
    old?.closeOurs?.();
    await this.open(user, false);
  }

  run(): void {
    this.running = true;
    for (const user of this.users) {
      if (!user.cookie) continue;
      this.every(RATES.reconnectEveryS, () => this.reconnect(user));
      if (user.plan.active) {
        this.every(RATES.postEveryS, () => this.post(user));
        this.every(RATES.reactEveryS, () => this.react(user));
        this.every(RATES.historyEveryS, () => this.history(user));
        this.every(RATES.searchEveryS, () => this.search(user));
      } else {
        this.every(RATES.passiveReadEveryS, () => this.passiveRead(user));
      }
    }
  }

  measure(): void {
    this.counting = true;
    this.lag.reset();
    this.lag.enable();
  }

  /** No new actions; the streams stay open and keep receiving. */
  quiet(): void {
    this.running = false;
    this.counting = false;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    for (const user of this.users) user.readTimer = null;
    this.lag.disable();
  }

  report(from: number, to: number): ClientReport {
    const inWindow = (at: number) => at >= from && at < to;
    return {
      posts: this.posts.filter((p) => inWindow(p.sentAt)),
      requests: this.requests.filter((r) => inWindow(r[1])),
      readies: this.readies.filter((r) => !r[2] && inWindow(r[0])).map((r) => r[1]),
      errors: this.errors,
      lag: { p99: this.lag.percentile(99) / 1e6, max: this.lag.max / 1e6 },
      frames: this.frames,
    };
  }

  /**
   * Each post against this client's users: who should have had it (a member whose stream was
   * ready before the POST was sent and was not closed by this client until `graceMs` after its
   * answer), who had it, and when the last of them did.
   */
  audit(posts: PostRecord[], graceMs: number): { audits: PostAudit[]; duplicates: number } {
    let duplicates = 0;
    const audits = posts.map((post) => {
      const arrivals = new Map<number, number>();
      const list = this.received.get(post.id) ?? [];
      for (let k = 0; k < list.length; k += 2) {
        if (arrivals.has(list[k])) duplicates++;
        else arrivals.set(list[k], list[k + 1]);
      }
      let expected = 0;
      let got = 0;
      let last = 0;
      for (const u of this.membersOf.get(post.s) ?? []) {
        const up = this.users[u].intervals.some(([open, closed]) => open <= post.sentAt && closed >= post.ackAt + graceMs);
        if (!up) continue;
        expected++;
        const at = arrivals.get(u);
        if (at === undefined) continue;
        got++;
        last = Math.max(last, at);
      }
      return { id: post.id, expected, got, last };
    });
    return { audits, duplicates };
  }

  /** Closes every stream and forgets the step. */
  async close(): Promise<void> {
    this.quiet();
    await Promise.all(
      this.users.map(
        (user) =>
          new Promise<void>((resolve) => {
            const ws = user.ws as (WebSocket & { closeOurs?: () => void }) | null;
            if (!ws || ws.readyState === WebSocket.CLOSED) return resolve();
            ws.once('close', () => resolve());
            ws.closeOurs?.();
            setTimeout(() => {
              ws.terminate();
              resolve();
            }, 2000).unref();
          }),
      ),
    );
    this.users = [];
    this.posts = [];
    this.requests = [];
    this.readies = [];
    this.errors = [];
    this.frames = 0;
    this.received.clear();
  }
}

// ---------------------------------------------------------------------------------------------

if (require.main === module) {
  const client = new LoadClient(Number(process.argv[2] ?? 0));
  const reply = (m: FromClient) => process.send!(m);
  process.on('message', (m: ToClient) => {
    const handle = async (): Promise<FromClient | undefined> => {
      switch (m.type) {
        case 'setup':
          return { type: 'signedIn', ms: await client.setup(m) };
        case 'connect':
          return { type: 'connected', ...(await client.connect(m.concurrency)) };
        case 'run':
          client.run();
          return undefined;
        case 'measure':
          client.measure();
          return undefined;
        case 'quiet':
          client.quiet();
          return undefined;
        case 'report':
          return { type: 'report', report: client.report(m.from, m.to) };
        case 'audit':
          return { type: 'audit', ...client.audit(m.posts, m.graceMs) };
        case 'close':
          await client.close();
          return { type: 'closed' };
      }
    };
    handle().then(
      (answer) => answer && reply(answer),
      (err: Error) => reply({ type: 'failed', error: err.stack ?? err.message }),
    );
  });
  // The parent gone: nothing left to do.
  process.on('disconnect', () => process.exit(0));
}
