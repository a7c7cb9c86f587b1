import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { IceCandidate, Jsep } from '../../../src/parts/voice/janus-api';
import { type JanusUnderTest, startJanus } from './janus';

/**
 * The test's side of test/helpers/voice/peer-host.ts: a child process holding wrtc
 * participants, asked by name (create, offer, answer, levels, close). Each participant's ICE
 * candidates come back as events, for the test to trickle to Janus.
 */
export interface IceServer {
  urls: string;
  username?: string;
  credential?: string;
}

export type HostRequest =
  | { method: 'create'; name: string; frequency: number; iceServers?: IceServer[]; relayOnly?: boolean }
  | { method: 'publishOffer'; name: string }
  | { method: 'publishAnswer'; name: string; jsep: Jsep }
  | { method: 'subscribeOffer'; name: string; jsep: Jsep }
  | { method: 'levels'; name: string; windowMs: number }
  | { method: 'state'; name: string }
  | { method: 'close'; name: string };

export type HostEvent = { event: 'ready' } | { event: 'candidate'; name: string; pc: 'pub' | 'sub'; candidate: IceCandidate | null };

/** What one received m-line sounds like over the last `windowMs`. */
export interface MidLevel {
  /** The dominant frequency, Hz (null: silence). */
  frequency: number | null;
  /** 0 silence .. 1 full scale. */
  rms: number;
  /** 10 ms frames the sink was given so far. */
  frames: number;
  /** RTP packets received so far (getStats inbound-rtp). */
  packets: number;
  /** When the first audible frame came (Date.now()), null if none yet. */
  firstAudibleAt: number | null;
}

export interface PeerHost {
  /** A participant sending a tone at `frequency` Hz; `relayOnly` takes TURN relays only (iceTransportPolicy 'relay'). */
  create(name: string, frequency: number, ice?: { iceServers?: IceServer[]; relayOnly?: boolean }): Promise<void>;
  publishOffer(name: string): Promise<Jsep>;
  publishAnswer(name: string, jsep: Jsep): Promise<void>;
  subscribeOffer(name: string, jsep: Jsep): Promise<Jsep>;
  levels(name: string, windowMs?: number): Promise<Record<string, MidLevel>>;
  /** Connection states, and the type of our candidate in the pair the publisher's ICE chose (host, srflx, relay). */
  state(name: string): Promise<{ pub: string; sub: string | null; pubCandidate: string | null }>;
  close(name: string): Promise<void>;
  /** Candidates of one participant's publisher or subscriber connection (null: gathering done). */
  onCandidate(name: string, pc: 'pub' | 'sub', listener: (candidate: IceCandidate | null) => void): void;
  /** Ends the child process (every participant with it). */
  stop(): Promise<void>;
}

const HOST = path.join(__dirname, 'peer-host.ts');
const REQUEST_TIMEOUT_MS = 20_000;

/**
 * Starts the host (Node with this process's TypeScript loader, an IPC channel) in network
 * namespace `netns`, Janus's (test/helpers/voice/janus.ts), and waits for it to be ready.
 *
 * Why in Janus's namespace: libwebrtc watches the machine's interfaces and, when one comes or
 * goes, gathers again and may move a live connection to another local port while Janus keeps
 * sending to the old one. In our namespace every other voice test's veth pair coming and going
 * is such a change (seen: a subscriber that stopped receiving everything after another test
 * run ended); in Janus's namespace nothing changes. Media between them stays on its veth
 * address (Janus gathers on it only) and never leaves the namespace.
 */
export async function startPeerHost(netns: string): Promise<PeerHost> {
  const guard = fs.existsSync('/usr/bin/setpriv') ? ['setpriv', '--pdeathsig', 'KILL', '--'] : [];
  const child: ChildProcess = spawn('ip', ['netns', 'exec', netns, ...guard, process.execPath, ...process.execArgv, HOST], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const pending = new Map<number, { resolve(value: unknown): void; reject(err: Error): void }>();
  const candidateListeners = new Map<string, (candidate: IceCandidate | null) => void>();
  let next = 0;
  let ready!: () => void;
  const isReady = new Promise<void>((resolve) => (ready = resolve));
  child.on('message', (message: HostEvent | { id: number; result?: unknown; error?: string }) => {
    if ('id' in message) {
      const entry = pending.get(message.id);
      pending.delete(message.id);
      if (message.error !== undefined) entry?.reject(new Error(`peer host: ${message.error}`));
      else entry?.resolve(message.result);
    } else if (message.event === 'ready') ready();
    else candidateListeners.get(`${message.name}/${message.pc}`)?.(message.candidate);
  });
  void exited.then(() => {
    for (const entry of pending.values()) entry.reject(new Error('the peer host exited'));
    pending.clear();
  });
  await Promise.race([isReady, exited.then(() => Promise.reject(new Error('the peer host exited before it was ready')))]);

  const request = <T>(body: HostRequest): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const id = ++next;
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new Error(`peer host: no answer to ${body.method} within ${REQUEST_TIMEOUT_MS} ms`));
      }, REQUEST_TIMEOUT_MS);
      pending.set(id, {
        resolve: (value) => (clearTimeout(timer), resolve(value as T)),
        reject: (err) => (clearTimeout(timer), reject(err)),
      });
      child.send({ id, ...body });
    });

  return {
    create: (name, frequency, ice = {}) => request({ method: 'create', name, frequency, ...ice }),
    publishOffer: (name) => request({ method: 'publishOffer', name }),
    publishAnswer: (name, jsep) => request({ method: 'publishAnswer', name, jsep }),
    subscribeOffer: (name, jsep) => request({ method: 'subscribeOffer', name, jsep }),
    levels: (name, windowMs = 300) => request({ method: 'levels', name, windowMs }),
    state: (name) => request({ method: 'state', name }),
    close: (name) => request({ method: 'close', name }),
    onCandidate: (name, pc, listener) => candidateListeners.set(`${name}/${pc}`, listener),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      if (child.connected) child.send({ id: 0, method: 'exit' });
      const timer = setTimeout(() => child.kill('SIGKILL'), 3_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/**
 * Janus and a peer host in its namespace, both stopped when the test ends (the participants
 * first, then Janus and its namespace); Janus is stopped at once if the host fails to start.
 */
export async function startJanusWithPeers(teardown: (fn: () => Promise<void>) => void): Promise<{ janus: JanusUnderTest; host: PeerHost }> {
  const janus = await startJanus();
  const host = await startPeerHost(janus.netns).catch(async (err: unknown) => {
    await janus.stop();
    throw err;
  });
  teardown(async () => {
    await host.stop();
    await janus.stop();
  });
  return { janus, host };
}
