import { logFailure } from '../../core/callbacks';
import type { Log } from '../../core/types';
import type { VoiceServerFrame } from '../delivery/events';
import { type IceCandidate, JanusError, type Jsep, type Publisher, type StreamRef, type SubscriptionStream, type UnsubscribeRef } from './janus-api';
import type { PeerEvent, PublisherPeer, SubscriberPeer, VideoRoom } from './videoroom';

/**
 * One person's media in a voice channel's VideoRoom, driven for their browser: the chat server
 * is the media server's only client, so the browser's two PeerConnections are answered here.
 *
 * - **Publisher**: the browser's offer goes in with `joinandconfigure` (its answer goes back);
 *   a camera or screen turned on or off is a new offer (`configure`).
 * - **Subscriber**: every other person's streams arrive on ONE subscriber PeerConnection
 *   (multistream): made at the first feed, grown and shrunk with `update` as the room announces
 *   publishers and streams; each new offer of Janus goes to the browser (`subscription`) and its
 *   answer comes back (`start`). Janus renegotiates by itself when a feed leaves (`updated` with
 *   an offer); that offer goes the same way. One renegotiation at a time, in order.
 * - A server deafen stops every audio m-line of the subscription (`configure` send: false).
 * - ICE candidates go to Janus as they come (those that arrive before a handle exists wait for
 *   it), and Janus's come back to the browser.
 *
 * What goes wrong with the media (Janus hangs up, the browser does not answer an offer in time)
 * is told to `failed`: the caller ends the connection. Nothing here throws at a socket.
 */
export interface Connection {
  /** Joins the room as a publisher with the browser's offer: Janus's answer, and the m-lines Janus took. */
  publish(offer: Jsep, descriptions: { mid: string; description: string }[]): Promise<{ answer: Jsep; audioMid: string | null }>;
  /** A new offer of the publisher (a camera or screen on or off): Janus's answer. */
  republish(offer: Jsep, descriptions: { mid: string; description: string }[]): Promise<Jsep>;
  /** The browser's answer to the subscription offer it was sent; false when none is waiting. */
  answer(answer: Jsep): boolean;
  /** One of the browser's ICE candidates (null: gathering done). */
  trickle(target: 'publisher' | 'subscriber', candidate: IceCandidate | null): void;
  /** Stops (or resumes) every audio stream this person receives. */
  setDeaf(deaf: boolean): void;
  /** Whether the publisher is in the room. */
  readonly published: boolean;
  /** Leaves the room and detaches both handles. */
  close(): Promise<void>;
}

export interface ConnectionParts {
  videoroom: VideoRoom;
  log: Log;
  /** The VideoRoom's id. */
  room: string;
  /** This person's id in the room (their user id). */
  id: string;
  /** How long the browser has to answer a subscription offer. */
  answerTimeoutMs: number;
  /** A frame for the browser's voice socket. */
  send(frame: VoiceServerFrame): void;
  /** What one of another person's streams carries (camera or screen), by its mid; null when unknown. */
  kindOf(userId: string, mid: string): 'camera' | 'screen' | null;
  /** Someone in the room started or stopped talking (as Janus hears their audio level). */
  talking(userId: string, talking: boolean): void;
  /** The media failed: the caller ends the connection. */
  failed(why: string): void;
}

const key = (feed: string, mid: string) => `${feed} ${mid}`;

export function createConnection(parts: ConnectionParts): Connection {
  const { videoroom, room, id, log } = parts;
  let publisher: PublisherPeer | null = null;
  let subscriber: SubscriberPeer | null = null;
  /** The subscription's m-lines as Janus last described them. */
  let streams: SubscriptionStream[] = [];
  /** The other people's streams asked for ("feed mid"). */
  const subscribed = new Set<string>();
  let deaf = false;
  let closed = false;
  let waiting: { resolve(answer: Jsep): void; reject(err: Error): void; timer: NodeJS.Timeout } | null = null;
  const early: Record<'publisher' | 'subscriber', (IceCandidate | null)[]> = { publisher: [], subscriber: [] };
  // One renegotiation at a time: each step waits for the one before.
  let queue: Promise<void> = Promise.resolve();
  const enqueue = (step: () => Promise<void>) => {
    queue = queue
      .then(() => (closed ? undefined : step()))
      .catch((err: unknown) => {
        if (closed) return;
        logFailure(log, 'voice subscription')(err);
        parts.failed(err instanceof Error ? err.message : String(err));
      });
  };

  const trickleTo = (target: 'publisher' | 'subscriber', candidate: IceCandidate | null) => {
    const handle = target === 'publisher' ? publisher : subscriber;
    if (!handle) {
      early[target].push(candidate);
      return;
    }
    handle.trickle(candidate).catch((err: unknown) => {
      // A candidate for a handle Janus already dropped is nothing to act on.
      if (!(err instanceof JanusError)) logFailure(log, 'voice trickle')(err);
    });
  };
  const flushEarly = (target: 'publisher' | 'subscriber') => {
    for (const candidate of early[target].splice(0)) trickleTo(target, candidate);
  };

  /** Janus's m-lines, as the browser is told them: whose, and what. */
  const described = (list: SubscriptionStream[]) =>
    list
      .filter((s) => s.active !== false && s.feed_id !== undefined && s.type !== 'data')
      .map((s) => ({
        mid: s.mid,
        user_id: s.feed_id!,
        kind: s.type === 'audio' ? ('audio' as const) : (parts.kindOf(s.feed_id!, s.feed_mid ?? '') ?? ('camera' as const)),
      }));

  /** Sends Janus's offer to the browser, waits for its answer, and starts the subscription with it. */
  async function offerToBrowser(offer: Jsep, list: SubscriptionStream[]): Promise<void> {
    streams = list;
    const answer = new Promise<Jsep>((resolve, reject) => {
      const timer = setTimeout(() => {
        waiting = null;
        reject(new Error(`the browser did not answer a subscription offer within ${parts.answerTimeoutMs} ms`));
      }, parts.answerTimeoutMs);
      timer.unref();
      waiting = { resolve, reject, timer };
    });
    parts.send({ event: 'subscription', offer: { type: 'offer', sdp: offer.sdp }, streams: described(list) });
    const got = await answer;
    if (closed || !subscriber) return;
    await subscriber.start(got);
    if (deaf) await applyDeaf();
  }

  async function applyDeaf(): Promise<void> {
    const audio = streams.filter((s) => s.type === 'audio' && s.active !== false);
    if (subscriber && audio.length) await subscriber.configure(audio.map((s) => ({ mid: s.mid, send: !deaf })));
  }

  function onSubscriberEvent(event: PeerEvent): void {
    if (closed) return;
    if (event.kind === 'trickle') parts.send({ event: 'candidate', target: 'subscriber', candidate: event.candidate });
    else if (event.kind === 'hangup') parts.failed(`the receiving connection hung up (${event.reason})`);
    else if (event.kind === 'room' && event.event.event === 'updated') {
      const { jsep, streams: list } = event.event;
      // Janus renegotiated by itself (a feed left), or ran an update it had postponed.
      if (jsep) enqueue(() => offerToBrowser(jsep, list));
      else streams = list;
    }
  }

  /** Asks for the streams of these publishers not asked for yet, and drops those they no longer send. */
  function follow(publishers: Publisher[]): void {
    enqueue(async () => {
      const subscribe: StreamRef[] = [];
      const unsubscribe: UnsubscribeRef[] = [];
      for (const p of publishers) {
        if (p.id === id) continue;
        for (const s of p.streams) {
          if (s.type === 'data') continue;
          const k = key(p.id, s.mid);
          if (s.disabled && subscribed.has(k)) {
            subscribed.delete(k);
            unsubscribe.push({ feed: p.id, mid: s.mid });
          } else if (!s.disabled && !subscribed.has(k)) {
            subscribed.add(k);
            subscribe.push({ feed: p.id, mid: s.mid });
          }
        }
      }
      if (subscribe.length === 0 && unsubscribe.length === 0) return;
      if (subscriber === null) {
        if (subscribe.length === 0) return;
        const privateId = publisher?.privateId ?? undefined;
        subscriber = await videoroom.subscribe({ room, streams: subscribe, privateId }, onSubscriberEvent);
        if (closed) return void subscriber.leave().catch(() => {});
        flushEarly('subscriber');
        await offerToBrowser(subscriber.offer, subscriber.streams);
        return;
      }
      const result = await subscriber.update({ subscribe, unsubscribe });
      if (result === 'postponed') return; // its offer comes as an `updated` event
      if (result.offer) await offerToBrowser(result.offer, result.streams);
      else streams = result.streams;
    });
  }

  function forget(feed: string): void {
    for (const k of [...subscribed]) if (k.startsWith(`${feed} `)) subscribed.delete(k);
  }

  function onPublisherEvent(event: PeerEvent): void {
    if (closed) return;
    if (event.kind === 'trickle') return void parts.send({ event: 'candidate', target: 'publisher', candidate: event.candidate });
    if (event.kind === 'hangup') return void parts.failed(`the sending connection hung up (${event.reason})`);
    if (event.kind !== 'room') return;
    const e = event.event;
    switch (e.event) {
      case 'publishers':
        follow(e.publishers);
        break;
      // Janus renegotiates the subscription by itself: an `updated` offer follows.
      case 'unpublished':
      case 'leaving':
      case 'kicked':
        forget(e.id);
        break;
      case 'talking':
      case 'stopped-talking':
        parts.talking(e.id, e.event === 'talking');
        break;
      case 'destroyed':
        parts.failed('the room was destroyed');
        break;
      default:
    }
  }

  return {
    async publish(offer, descriptions) {
      const peer = await videoroom.publish({ room, id, display: id, offer, descriptions }, onPublisherEvent);
      if (closed) {
        await peer.leave().catch(() => {});
        throw new JanusError('unavailable', 0, 'the connection ended while it was joining');
      }
      publisher = peer;
      flushEarly('publisher');
      follow(peer.publishers);
      return { answer: peer.answer, audioMid: peer.streams.find((s) => s.type === 'audio')?.mid ?? null };
    },

    async republish(offer, descriptions) {
      if (!publisher) throw new JanusError('unavailable', 0, 'not published');
      return (await publisher.configure({ offer, descriptions }))!;
    },

    answer(answer) {
      if (!waiting) return false;
      const { resolve, timer } = waiting;
      waiting = null;
      clearTimeout(timer);
      resolve(answer);
      return true;
    },

    trickle: trickleTo,

    setDeaf(value) {
      if (deaf === value) return;
      deaf = value;
      enqueue(applyDeaf);
    },

    get published() {
      return publisher !== null;
    },

    async close() {
      if (closed) return;
      closed = true;
      if (waiting) {
        clearTimeout(waiting.timer);
        waiting.reject(new Error('closed'));
        waiting = null;
      }
      const [pub, sub] = [publisher, subscriber];
      publisher = null;
      subscriber = null;
      // Errors here are Janus's, about a handle already gone: leaving is all that is left to do.
      await Promise.all([sub?.leave().catch(() => {}), pub?.leave().catch(() => {})]);
    },
  };
}
