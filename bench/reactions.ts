/**
 * Reaction fan-out: one channel watched by 1 000 viewers, each its own user with its
 * own socket, each holding their own reaction on one message (spread over 20 distinct emoji,
 * the most a message may carry). Then one more user toggles a reaction with one of those emoji
 * (add, remove, add...), one change at a time, each time waiting until every socket has the
 * event.
 *
 * The server spreads socket writes over event-loop turns (its outbox), so the request log no
 * longer shows the fan-out. The event-loop block is read from the server itself: with METRICS on,
 * prom-client's event-loop delay histogram (nodejs_eventloop_lag_*_seconds, reset at every
 * scrape) is scraped after the warm-up and after the measured rounds: its maximum is the longest
 * the loop was held during them (the histogram holds the intervals of a 1 ms timer, so each
 * figure is a block plus at most a millisecond). Target: <= 20 ms.
 * For scale, the same toggles are first made with no socket open, and with the sockets open a
 * plain new message (no reactions) is posted in turn with each toggle. Also reported: the time
 * from sending the request to the last socket receiving the event, and whether every frame
 * carried its recipient's own view (`reacted: true` on the viewer's own emoji only).
 *
 * The 1 000 sign-ups take about a minute (argon2, ten at a time); the measurement a minute more.
 *
 * Run alone: node dist-bench/bench/reactions.js   (VIEWERS and TOGGLES change the load)
 * Everything listens on 127.0.0.1, in a temporary directory, and stops by itself.
 */
import WebSocket from 'ws';
import {
  type Latency,
  type Row,
  call,
  loggedTimes,
  login,
  ms,
  ownerWithChannel,
  percentile,
  printTable,
  register,
  runAlone,
  sleep,
  startChat,
  tempDir,
  verdict,
} from './lib';

export const VIEWERS = Number(process.env.VIEWERS ?? 1000);
/** Measured toggles (an even number, so the toggling reaction ends removed). */
export const TOGGLES = 2 * Math.ceil(Number(process.env.TOGGLES ?? 100) / 2);
const WARMUP_TOGGLES = 10;
const CONNECT_BATCH = 100;
const EVENT_TIMEOUT_MS = 10_000;
/** Lets the request log reach its file (written once per event-loop turn) and sockets settle. */
const SETTLE_MS = 1_000;
export const TARGET_BLOCK_MS = 20;

/** 20 distinct emoji (MAX_REACTION_EMOJI); viewer i reacts with EMOJI[i % 20]. */
const EMOJI = ['👍', '🎉', '😂', '❤️', '🚀', '👀', '🔥', '🙏', '💯', '✅', '👏', '🤔', '😍', '🥳', '👌', '💡', '⭐', '🍕', '😮', '😢'];
/** The toggling user's emoji: already on the message, so the 20-emoji cap never refuses it. */
const TOGGLED = EMOJI[0];

interface Reaction {
  emoji: string;
  count: number;
  reacted: boolean;
}

/** Whether a message record shows `mine` (or nothing, when null) as the only reacted emoji, with the expected counts. */
function viewIsRight(record: { reactions?: Reaction[] }, mine: string | null, counts: Map<string, number>): boolean {
  const reactions = record.reactions ?? [];
  return reactions.length === counts.size && reactions.every((r) => r.reacted === (r.emoji === mine) && r.count === counts.get(r.emoji));
}

export interface ReactionFigures {
  viewers: number;
  toggles: number;
  /** Logged time of the toggles with no socket open. */
  idle: Latency;
  /** Logged time of the toggles with every viewer's socket open (the response goes before the fan-out ends). */
  block: Latency;
  /** The server's event-loop delay over the measured rounds (toggles and the messages between them): p99 and longest, ms. */
  loop: { p99: number; max: number };
  /** Sending the request to the last socket having the event. */
  delivered: Latency;
  /** For scale, a new message (no reactions) posted to the same sockets in turn with the toggles: logged time and delivery. */
  messageBlock: Latency;
  messageDelivered: Latency;
  frames: number;
  wrongFrames: number;
  answers: number;
  wrongAnswers: number;
}

/** The server's event-loop delay since the last scrape (prom-client resets it at each), in ms. */
async function eventLoopLag(base: string): Promise<{ p99: number; max: number }> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const read = (name: string) => {
    const found = new RegExp(`^${name} ([0-9.e+-]+)$`, 'm').exec(text);
    if (!found) throw new Error(`/metrics has no ${name}`);
    return Number(found[1]) * 1000;
  };
  return { p99: read('nodejs_eventloop_lag_p99_seconds'), max: read('nodejs_eventloop_lag_max_seconds') };
}

const summarize = (values: number[]): Latency => {
  const sorted = [...values].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted[sorted.length - 1] };
};

export async function measureReactions(viewers = VIEWERS, toggles = TOGGLES): Promise<ReactionFigures> {
  const server = await startChat(tempDir('chat-bench-reactions-'), { env: { METRICS: 'on' } });
  const { base } = server;
  const sockets: WebSocket[] = [];
  try {
    const tag = process.pid % 10000;
    const owner = await ownerWithChannel(base, `owner_${tag}`);
    const message = (await call(base, 'POST', owner.messagesUrl, { content: 'React to this, everyone.' }, owner.cookie)).body;
    const reactionsUrl = `${owner.messagesUrl}/${message.id}/reactions`;
    const invite = (await call(base, 'POST', `/api/servers/${owner.serverId}/invites`, undefined, owner.cookie)).body;
    /** Signs a new user in and makes them a member; returns the session cookie. */
    const member = async (username: string) => {
      await register(base, username);
      const cookie = await login(base, username);
      await call(base, 'POST', `/api/invites/${invite.token}/accept`, undefined, cookie);
      return cookie;
    };

    // Viewers: ten sign-ups at a time (password hashing dominates), each then reacting. No
    // socket is open yet, so set-up does not fan out a million frames.
    const viewerList: { cookie: string; emoji: string }[] = [];
    for (let i = 0; i < viewers; i += 10) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(10, viewers - i) }, async (_, j) => {
          const emoji = EMOJI[(i + j) % EMOJI.length];
          const cookie = await member(`viewer_${tag}_${i + j}`);
          const answer = (await call(base, 'PUT', reactionsUrl, { emoji }, cookie)).body;
          if (!answer.reactions.some((r: Reaction) => r.emoji === emoji && r.reacted))
            throw new Error(`viewer ${i + j}: own ${emoji} not reacted in the answer`);
          return { cookie, emoji };
        }),
      );
      viewerList.push(...batch);
    }
    const baseCounts = new Map<string, number>();
    for (const { emoji } of viewerList) baseCounts.set(emoji, (baseCounts.get(emoji) ?? 0) + 1);
    const withToggled = new Map([...baseCounts].map(([e, n]) => [e, e === TOGGLED ? n + 1 : n]));
    const countsAfter = (added: boolean) => (added ? withToggled : baseCounts);
    const reactor = await member(`reactor_${tag}`);

    // One toggle: toggle n adds (n even) or removes (n odd) the reactor's emoji.
    let answers = 0;
    let wrongAnswers = 0;
    const toggle = async (n: number) => {
      const added = n % 2 === 0;
      const answer = (await call(base, added ? 'PUT' : 'DELETE', reactionsUrl, { emoji: TOGGLED }, reactor)).body;
      answers++;
      if (!viewIsRight(answer, added ? TOGGLED : null, countsAfter(added))) wrongAnswers++;
    };
    /** The logged times of the last `n` toggles (they alternate PUT, DELETE, starting with PUT). */
    const lastLogged = async (n: number) => {
      await sleep(SETTLE_MS);
      return [...loggedTimes(server.logFile, 'PUT', reactionsUrl).slice(-n / 2), ...loggedTimes(server.logFile, 'DELETE', reactionsUrl).slice(-n / 2)];
    };

    // For scale: the same toggles with nobody watching.
    for (let n = 0; n < WARMUP_TOGGLES + toggles; n++) await toggle(n);
    const idle = summarize(await lastLogged(toggles));

    // Every viewer opens their socket; frames are checked as they arrive, against what the
    // round in flight should deliver: a reaction event (toggle n adds when n is even), or the
    // plain message `m<n>` posted for scale.
    let round = { n: -1, kind: 'reaction' as 'reaction' | 'message' };
    let received = 0;
    let frames = 0;
    let wrongFrames = 0;
    let wrongMessages = 0;
    let allReceived = () => {};
    const socketUrl = `${base.replace('http', 'ws')}/api/channels/${owner.channelId}/ws`;
    for (let i = 0; i < viewers; i += CONNECT_BATCH) {
      await Promise.all(
        viewerList.slice(i, i + CONNECT_BATCH).map(({ cookie, emoji }, j) => {
          const ws = new WebSocket(socketUrl, { headers: { cookie } });
          sockets.push(ws);
          ws.on('message', (data) => {
            const event = JSON.parse(data.toString());
            const right =
              round.kind === 'reaction'
                ? event.event === 'reaction' && event.id === message.id && viewIsRight(event, emoji, countsAfter(round.n % 2 === 0))
                : event.event === undefined && event.content === `m${round.n}`;
            if (round.kind === 'reaction') {
              frames++;
              if (!right) wrongFrames++;
            } else if (!right) wrongMessages++;
            if (++received === viewers) allReceived();
          });
          return new Promise<void>((resolve, reject) => {
            ws.once('open', () => resolve());
            ws.once('error', (err) => reject(new Error(`viewer socket ${i + j} failed: ${err.message}`)));
            ws.once('unexpected-response', (_req, res) => reject(new Error(`viewer socket ${i + j}: upgrade answered ${res.statusCode}`)));
          });
        }),
      );
    }
    await sleep(SETTLE_MS);

    /** Runs one change and resolves with the time until every socket had its event. */
    const broadcast = async (kind: 'reaction' | 'message', n: number, change: () => Promise<void>) => {
      round = { n, kind };
      received = 0;
      const everyone = new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`${kind} ${n}: the event reached ${received} of ${viewers} sockets in ${EVENT_TIMEOUT_MS} ms`)),
          EVENT_TIMEOUT_MS,
        );
        allReceived = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      const started = performance.now();
      await Promise.all([change(), everyone]);
      return performance.now() - started;
    };
    // Toggles and messages take turns, so a noisy moment on a shared machine hits both alike.
    const delivered: number[] = [];
    const messageDelivered: number[] = [];
    for (let n = 0; n < WARMUP_TOGGLES + toggles; n++) {
      if (n === WARMUP_TOGGLES) await eventLoopLag(base);
      const reaction = await broadcast('reaction', n, () => toggle(n));
      const post = await broadcast('message', n, async () => {
        await call(base, 'POST', owner.messagesUrl, { content: `m${n}` }, owner.cookie);
      });
      if (n >= WARMUP_TOGGLES) {
        delivered.push(reaction);
        messageDelivered.push(post);
      }
    }
    const loop = await eventLoopLag(base);
    if (wrongMessages > 0) throw new Error(`${wrongMessages} frames of the plain-message rounds were not that message`);
    const block = summarize(await lastLogged(toggles));
    const messageBlock = summarize(loggedTimes(server.logFile, 'POST', owner.messagesUrl).slice(-toggles));
    return {
      viewers,
      toggles,
      idle,
      block,
      loop,
      messageBlock,
      delivered: summarize(delivered),
      messageDelivered: summarize(messageDelivered),
      frames,
      wrongFrames,
      answers,
      wrongAnswers,
    };
  } finally {
    for (const ws of sockets) ws.terminate();
    await server.stop();
  }
}

export const reactionsSetup = (f: { viewers: number; toggles: number }) =>
  `${f.viewers} viewers (one user and one socket each) holding their own reaction over ${EMOJI.length} emoji; one more user toggles ${TOGGLED} ${f.toggles} times (after ${WARMUP_TOGGLES} warm-up)`;

export function reactionsRows(f: ReactionFigures): Row[] {
  const triple = (l: Latency) => `${ms(l.p50)} / ${ms(l.p99)} / ${ms(l.max)}`;
  return [
    ['no socket open: logged PUT/DELETE p50 / p99 / max', triple(f.idle), '', ''],
    [`${f.viewers} sockets: logged PUT/DELETE p50 / p99 / max`, triple(f.block), '', ''],
    [`${f.viewers} sockets: server event-loop delay p99 (all measured rounds)`, ms(f.loop.p99), '', ''],
    [
      `${f.viewers} sockets: longest event-loop block (all measured rounds)`,
      ms(f.loop.max),
      `<= ${TARGET_BLOCK_MS} ms`,
      verdict(f.loop.max <= TARGET_BLOCK_MS),
    ],
    [`all ${f.viewers} sockets have the event, p50 / p99`, `${ms(f.delivered.p50)} / ${ms(f.delivered.p99)}`, '', ''],
    [`for scale, a new message to the same sockets: logged p50 / p99 / max`, triple(f.messageBlock), '', ''],
    [`for scale, all ${f.viewers} sockets have the message, p50 / p99`, `${ms(f.messageDelivered.p50)} / ${ms(f.messageDelivered.p99)}`, '', ''],
    ['logged p99: reaction / new message', `${(f.block.p99 / f.messageBlock.p99).toFixed(2)}x`, '', ''],
    [
      "frames with the recipient's own reacted flags",
      `${f.frames - f.wrongFrames} of ${f.frames}`,
      'all',
      verdict(f.wrongFrames === 0 && f.frames === f.viewers * (WARMUP_TOGGLES + f.toggles)),
    ],
    ["answers with the reactor's own reacted flags", `${f.answers - f.wrongAnswers} of ${f.answers}`, 'all', verdict(f.wrongAnswers === 0)],
  ];
}

runAlone(module, 'reactions', async () => {
  const figures = await measureReactions();
  printTable(`7. Reactions: ${reactionsSetup(figures)}`, reactionsRows(figures));
});
