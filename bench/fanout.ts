/**
 * Fan-out benchmark (issue 6): 1 000 sockets watch one channel; 200 messages are posted one at
 * a time, each waiting until every socket has it. Reports the time from the POST to the last
 * socket receiving the message (p50, p99), the server's memory per socket, and the same run
 * against a bare `ws` broadcast server (bench/bare-broadcast.ts) for comparison.
 *
 * Run: npm run build && npx tsc -p bench/tsconfig.json && node dist-bench/bench/fanout.js
 * Everything listens on 127.0.0.1, in temporary directories, and stops by itself.
 */
import path from 'node:path';
import WebSocket from 'ws';
import {
  type Row,
  call,
  formatRows,
  login,
  ownerWithChannel,
  percentile,
  register,
  request,
  rssKb,
  runAlone,
  sleep,
  startChat,
  startProcess,
  type Started,
  tempDir,
  verdict,
} from './lib';

const SOCKETS = Number(process.env.SOCKETS ?? 1000);
/**
 * Sockets are spread over users (a user may have several tabs open) within the server's caps:
 * at most 10 open sockets per session and 50 per user. Each user signs in SESSIONS_PER_USER
 * times and opens 10 sockets per session: 1 000 sockets are 50 users of 20 sockets.
 */
const SOCKETS_PER_SESSION = 10;
const SESSIONS_PER_USER = 2;
const usersFor = (sockets: number) => Math.ceil(sockets / (SOCKETS_PER_SESSION * SESSIONS_PER_USER));
const MESSAGES = 200;
/** Posted first and not measured, so both servers are measured warm. */
const WARMUP_MESSAGES = 20;
const CONNECT_BATCH = 100;
const MESSAGE_TIMEOUT_MS = 10_000;
/** Lets the child settle (buffers freed, handshakes done) before RSS is read. */
const SETTLE_MS = 1_000;

const TARGET_KB_PER_SOCKET = 20;
const TARGET_P99_RATIO = 1.5;

interface Target {
  name: string;
  server: Started;
  socketUrl: string;
  /** Socket n sends cookies[n % length] (each cookie at most 10 times); the bare server needs none. */
  cookies: string[];
  /** Posts message content; resolves when the server answered. */
  post(content: string): Promise<void>;
}

interface Result {
  p50: number;
  p99: number;
  kbPerSocket: number;
}

async function chatTarget(sockets: number): Promise<Target> {
  const server = await startChat(tempDir('chat-bench-'));
  const { base } = server;
  const tag = process.pid % 10000;
  const owner = await ownerWithChannel(base, `owner_${tag}`);
  const invite = (await call(base, 'POST', `/api/servers/${owner.serverId}/invites`, undefined, owner.cookie)).body;
  const users = usersFor(sockets);
  const cookies: string[] = [];
  // Password hashing dominates set-up: ten sign-ups at a time.
  for (let i = 0; i < users; i += 10) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(10, users - i) }, async (_, j) => {
        const username = `member_${tag}_${i + j}`;
        await register(base, username);
        const sessions = [await login(base, username)];
        await call(base, 'POST', `/api/invites/${invite.token}/accept`, undefined, sessions[0]);
        while (sessions.length < SESSIONS_PER_USER) sessions.push(await login(base, username));
        return sessions;
      }),
    );
    cookies.push(...batch.flat());
  }
  if (cookies.length * SOCKETS_PER_SESSION < sockets) throw new Error(`${cookies.length} sessions cannot hold ${sockets} sockets`);
  return {
    name: 'chat',
    server,
    socketUrl: `${base.replace('http', 'ws')}/api/channels/${owner.channelId}/ws`,
    cookies,
    post: async (content) => {
      await call(base, 'POST', owner.messagesUrl, { content }, owner.cookie);
    },
  };
}

async function bareTarget(): Promise<Target> {
  const server = await startProcess('bare', path.join(__dirname, 'bare-broadcast.js'));
  return {
    name: 'bare ws',
    server,
    socketUrl: `${server.base.replace('http', 'ws')}/`,
    cookies: [''],
    post: async (content) => {
      const res = await request(server.base, 'POST', '/messages', JSON.stringify({ content }));
      if (res.status !== 201) throw new Error(`bare server answered ${res.status}`);
    },
  };
}

async function measure(target: Target, total: number): Promise<Result> {
  // received[n]: how many sockets have message n; done[n] resolves when all have it.
  const received = new Map<number, number>();
  const waiters = new Map<number, () => void>();
  const onMessage = (data: WebSocket.RawData) => {
    const n = Number(/^m(\d+)$/.exec(JSON.parse(data.toString()).content)?.[1]);
    const count = (received.get(n) ?? 0) + 1;
    received.set(n, count);
    if (count === total) waiters.get(n)?.();
  };

  await sleep(SETTLE_MS);
  const rssBefore = rssKb(target.server.pid);
  const sockets: WebSocket[] = [];
  for (let i = 0; i < total; i += CONNECT_BATCH) {
    await Promise.all(
      Array.from({ length: Math.min(CONNECT_BATCH, total - i) }, (_, j) => {
        const cookie = target.cookies[(i + j) % target.cookies.length];
        const ws = new WebSocket(target.socketUrl, { headers: cookie ? { cookie } : {} });
        sockets.push(ws);
        ws.on('message', onMessage);
        return new Promise<void>((resolve, reject) => {
          ws.once('open', () => resolve());
          ws.once('error', (err) => reject(new Error(`${target.name}: socket ${i + j} failed: ${err.message}`)));
          ws.once('unexpected-response', (_req, res) => reject(new Error(`${target.name}: upgrade answered ${res.statusCode}`)));
        });
      }),
    );
  }
  await sleep(SETTLE_MS);
  const rssAfter = rssKb(target.server.pid);

  const latencies: number[] = [];
  for (let n = 0; n < WARMUP_MESSAGES + MESSAGES; n++) {
    const allReceived = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`${target.name}: message ${n} reached ${received.get(n) ?? 0} of ${total} sockets in ${MESSAGE_TIMEOUT_MS} ms`)),
        MESSAGE_TIMEOUT_MS,
      );
      waiters.set(n, () => {
        clearTimeout(timer);
        resolve();
      });
    });
    const started = performance.now();
    await Promise.all([target.post(`m${n}`), allReceived]);
    if (n >= WARMUP_MESSAGES) latencies.push(performance.now() - started);
    waiters.delete(n);
  }
  for (const ws of sockets) ws.terminate();
  await target.server.stop();

  latencies.sort((a, b) => a - b);
  return { p50: percentile(latencies, 50), p99: percentile(latencies, 99), kbPerSocket: (rssAfter - rssBefore) / total };
}

export interface FanoutFigures {
  sockets: number;
  chat: Result;
  bare: Result;
  /** chat p99 / bare p99 */
  ratio: number;
}

export const fanoutSetup = (sockets: number) =>
  `${sockets} sockets over ${usersFor(sockets)} users (${SESSIONS_PER_USER} sessions each, ${SOCKETS_PER_SESSION} sockets a session), ${MESSAGES} messages (after ${WARMUP_MESSAGES} warm-up)`;

/** Both servers, one after the other, with the same clients; for bench/run.ts and main below. */
export async function runFanout(sockets = SOCKETS): Promise<FanoutFigures> {
  const chat = await measure(await chatTarget(sockets), sockets);
  const bare = await measure(await bareTarget(), sockets);
  return { sockets, chat, bare, ratio: chat.p99 / bare.p99 };
}

export function fanoutRows({ chat, bare, ratio }: FanoutFigures): Row[] {
  return [
    ['chat: all received, p50', `${chat.p50.toFixed(1)} ms`, '', ''],
    ['chat: all received, p99', `${chat.p99.toFixed(1)} ms`, '', ''],
    ['bare ws: all received, p50', `${bare.p50.toFixed(1)} ms`, '', ''],
    ['bare ws: all received, p99', `${bare.p99.toFixed(1)} ms`, '', ''],
    ['p99 chat / bare', `${ratio.toFixed(2)}x`, `<= ${TARGET_P99_RATIO}x`, verdict(ratio <= TARGET_P99_RATIO)],
    ['chat: server memory per socket', `${chat.kbPerSocket.toFixed(1)} KB`, `<= ${TARGET_KB_PER_SOCKET} KB`, verdict(chat.kbPerSocket <= TARGET_KB_PER_SOCKET)],
    ['bare ws: server memory per socket', `${bare.kbPerSocket.toFixed(1)} KB`, '', ''],
  ];
}

async function main(): Promise<void> {
  console.log(`fanout: ${fanoutSetup(SOCKETS)}`);
  console.log(formatRows(fanoutRows(await runFanout())));
}

runAlone(module, 'fanout', main);
