import WebSocket from 'ws';
import type { Jsep } from '../../../src/parts/voice/janus-api';
import type { Client } from '../client';
import { frameViolation } from '../frames';
import type { PeerHost } from './peers';

/**
 * One person in voice through the chat server's real signaling, for the voice tests and the
 * voice benchmark (bench/voice.ts): a voice socket of their session, a wrtc participant per join
 * (test/helpers/voice/peer-host.ts: its publisher and its one subscriber connection), the
 * subscription's offers answered as they come. Every frame is held against docs/asyncapi.json;
 * a problem goes to `onProblem`.
 */

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function eventually<T>(what: string, check: () => Promise<T | null | undefined | false>, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`);
    await sleep(150);
  }
}

/** The first audio m-line's mid of an SDP. */
const audioMid = (sdp: string) => /m=audio[^]*?a=mid:(\S+)/.exec(sdp)?.[1] ?? '0';

/**
 * One person in voice, as a browser would be: a voice socket of their session, a wrtc
 * participant per join (its publisher and its one subscriber connection), the subscription's
 * offers answered as they come.
 */
export class Caller {
  frames: any[] = [];
  /** Whose each m-line of the subscription is. */
  streams = new Map<string, { user_id: string; kind: string }>();
  ws!: WebSocket;
  peer: string | null = null;
  /** Whether the current peer's offer was answered (wrtc crashes closing one that was not: it is left to the host's exit). */
  private answered = false;
  private joins = 0;
  private listeners: (() => void)[] = [];

  constructor(
    private onProblem: (problem: string) => void,
    private serverUrl: string,
    private host: PeerHost,
    readonly client: Client,
    readonly name: string,
    readonly frequency: number,
  ) {}

  async open(): Promise<this> {
    this.frames = [];
    this.ws = new WebSocket(`${this.serverUrl.replace(/^http/, 'ws')}/api/voice/ws`, { headers: { cookie: this.client.cookie! } });
    this.ws.on('error', () => {});
    this.ws.on('message', (data) => {
      const frame = JSON.parse(data.toString()) as any;
      const violation = frameViolation('/api/voice/ws', frame);
      if (violation) this.onProblem(violation);
      this.frames.push(frame);
      if (frame.event === 'subscription' && this.peer) {
        const peer = this.peer;
        for (const s of frame.streams) this.streams.set(s.mid, { user_id: s.user_id, kind: s.kind });
        this.host
          .subscribeOffer(peer, frame.offer as Jsep)
          .then((answer) => this.send({ op: 'answer', answer }))
          .catch((err: Error) => {
            // (An offer that raced a leave is for a participant gone: nothing to answer.)
            if (this.peer === peer) this.onProblem(`answering a subscription: ${err.message}`);
          });
      }
      for (const listener of this.listeners) listener();
    });
    await new Promise<void>((resolve, reject) => {
      this.ws.once('open', () => resolve());
      this.ws.once('unexpected-response', (_req, res) => reject(new Error(`voice socket refused: ${res.statusCode}`)));
    });
    return this;
  }

  send(frame: Record<string, unknown>): void {
    this.ws.send(JSON.stringify(frame));
  }

  /** The first frame from `from` on that matches (waits for it). */
  async frame(match: (frame: any) => boolean, from = 0, ms = 15_000): Promise<any> {
    return eventually(`${this.name}: a frame (${this.frames.map((f) => f.event).join(', ')})`, async () => this.frames.slice(from).find(match), ms);
  }

  /** Joins with a new wrtc participant: the `joined` frame, or the `error` that refused it. */
  async join(channelId: string, { selfMute = false, offer, relayOnly = false }: { selfMute?: boolean; offer?: Jsep; relayOnly?: boolean } = {}): Promise<any> {
    // The ICE servers the socket sent when it opened (a join's `joined` carries fresh ones).
    const given = (await this.frame((f) => f.event === 'ice_servers')).ice_servers as { urls: string[]; username?: string; credential?: string }[];
    const iceServers = given.flatMap(({ urls, ...rest }) => urls.map((url) => ({ urls: url, ...rest })));
    const from = this.frames.length;
    if (this.peer && this.answered) await this.host.close(this.peer).catch(() => {});
    const peer = `${this.name}-${++this.joins}`;
    this.peer = peer;
    this.answered = false;
    this.streams.clear();
    await this.host.create(peer, this.frequency, { iceServers, relayOnly });
    this.host.onCandidate(peer, 'pub', (candidate) => this.send({ op: 'candidate', target: 'publisher', candidate }));
    this.host.onCandidate(peer, 'sub', (candidate) => this.send({ op: 'candidate', target: 'subscriber', candidate }));
    const sdp = offer ?? (await this.host.publishOffer(peer));
    const media = [{ mid: audioMid(sdp.sdp), kind: 'audio' }, ...(offer ? [{ mid: 'v', kind: 'camera' }] : [])];
    this.send({ op: 'join', channel_id: channelId, offer: sdp, media, self_mute: selfMute, self_deaf: false });
    // (A refused join's candidates are refused too, each with its own error: op says which.)
    const reply = await this.frame((f) => f.event === 'joined' || (f.event === 'error' && f.op === 'join'), from);
    if (reply.event === 'joined') {
      await this.host.publishAnswer(peer, reply.answer as Jsep);
      this.answered = true;
    }
    return reply;
  }

  /** What this caller hears of `userId` now: the dominant frequency (null: silence) and level. */
  async hearing(userId: string): Promise<{ frequency: number | null; rms: number } | undefined> {
    if (!this.peer) return undefined;
    const mid = [...this.streams].find(([, s]) => s.user_id === userId && s.kind === 'audio')?.[0];
    if (mid === undefined) return undefined;
    return (await this.host.levels(this.peer))[mid];
  }

  /** Waits until this caller decodes `other`'s tone (within 5 Hz); the frequency heard. */
  async hears(other: Caller): Promise<number> {
    const heard = await eventually(`${this.name} hears ${other.name} at ${other.frequency} Hz`, async () => {
      const level = await this.hearing(other.client.userId);
      return level?.frequency != null && Math.abs(level.frequency - other.frequency) <= 5 ? level.frequency : null;
    });
    return heard;
  }

  /** Waits until this caller hears nothing of `other` (a subscription that stays, with silence or no packets). */
  async hearsNothingOf(other: Caller): Promise<void> {
    await eventually(`${this.name} hears nothing of ${other.name}`, async () => {
      const level = await this.hearing(other.client.userId);
      return level === undefined || level.frequency === null || level.rms < 0.005;
    });
  }

  async leave(): Promise<void> {
    if (this.ws.readyState === WebSocket.OPEN) this.send({ op: 'leave' });
    if (this.peer && this.answered) await this.host.close(this.peer).catch(() => {});
    this.peer = null;
    this.answered = false;
  }

  close(): void {
    this.ws.close();
  }
}
