import type { IceCandidate, Jsep, SubscriptionStream, VideoRoomEvent } from '../../../src/parts/voice/janus-api';
import type { PeerEvent, PublisherPeer, SubscriberPeer, VideoRoom } from '../../../src/parts/voice/videoroom';
import type { IceServer, PeerHost } from './peers';

/**
 * A wrtc participant in a VideoRoom, joined the way the chat server will join a browser: its
 * publisher offer goes in with `joinandconfigure` (the answer comes back), its candidates are
 * trickled as they come; every other publisher's audio arrives on ONE subscriber connection
 * (multistream), made at the first feed and grown by `update` when the room announces more;
 * Janus's own renegotiations (a feed gone: `updated` with an offer) are answered with `start`.
 */
export interface Member {
  name: string;
  publisher: PublisherPeer;
  /** When the join began (Date.now()). */
  joinedAt: number;
  /** The room events the publisher handle heard, in order. */
  events: VideoRoomEvent[];
  /** Those the subscriber handle heard. */
  subEvents: VideoRoomEvent[];
  /** Everything the handles heard that was not a room event (webrtcup, media, hangup, ...), with the handle's name. */
  peerEvents: { on: 'pub' | 'sub'; event: PeerEvent }[];
  /** Errors of the background work (subscription updates): a test asserts there are none. */
  errors: Error[];
  /** Our subscription's m-line carrying this feed's audio. */
  midOf(feed: string): string | undefined;
  /** Waits for the subscription work queued so far. */
  settled(): Promise<void>;
  leave(): Promise<void>;
}

/** Candidates trickled once the handle exists, those gathered before it in order first. */
function trickler(): {
  push(candidate: IceCandidate | null): void;
  attach(send: (candidate: IceCandidate | null) => Promise<void>, onError: (err: Error) => void): void;
} {
  const early: (IceCandidate | null)[] = [];
  let send: ((candidate: IceCandidate | null) => void) | null = null;
  return {
    push(candidate) {
      if (send) send(candidate);
      else early.push(candidate);
    },
    attach(trickle, onError) {
      send = (candidate) => void trickle(candidate).catch(onError);
      for (const candidate of early.splice(0)) send(candidate);
    },
  };
}

export async function joinRoom(
  videoroom: VideoRoom,
  host: PeerHost,
  room: string,
  name: string,
  frequency: number,
  ice: { iceServers?: IceServer[]; relayOnly?: boolean } = {},
): Promise<Member> {
  const joinedAt = Date.now();
  const events: VideoRoomEvent[] = [];
  const subEvents: VideoRoomEvent[] = [];
  const peerEvents: Member['peerEvents'] = [];
  const errors: Error[] = [];
  const fail = (err: unknown) => errors.push(err instanceof Error ? err : new Error(String(err)));
  let streams: SubscriptionStream[] = [];
  let subscriber: SubscriberPeer | null = null;
  const subscribed = new Set<string>();
  // One renegotiation at a time: each step waits for the one before.
  let queue: Promise<void> = Promise.resolve();
  const enqueue = (step: () => Promise<void>) => {
    queue = queue.then(step).catch((err: unknown) => void fail(err));
  };

  const answer = async (offer: Jsep) => {
    const local = await host.subscribeOffer(name, offer);
    await subscriber!.start(local);
  };

  const subTrickle = trickler();
  host.onCandidate(name, 'sub', (candidate) => subTrickle.push(candidate));
  const pubTrickle = trickler();
  host.onCandidate(name, 'pub', (candidate) => pubTrickle.push(candidate));

  // Room events may come before publish() returns: subscription work waits for the publisher.
  let publisherReady!: (publisher: PublisherPeer) => void;
  const ownPublisher = new Promise<PublisherPeer>((resolve) => (publisherReady = resolve));

  const want = (feeds: string[]) =>
    enqueue(async () => {
      const { privateId } = await ownPublisher;
      const fresh = feeds.filter((feed) => feed !== name && !subscribed.has(feed));
      if (fresh.length === 0) return;
      for (const feed of fresh) subscribed.add(feed);
      if (subscriber === null) {
        subscriber = await videoroom.subscribe({ room, streams: fresh.map((feed) => ({ feed })), privateId: privateId ?? undefined }, (event) => {
          if (event.kind !== 'room') {
            peerEvents.push({ on: 'sub', event });
            return;
          }
          subEvents.push(event.event);
          // Janus renegotiates by itself when a feed goes (autoupdate) or a postponed update runs.
          if (event.event.event === 'updated' && event.event.jsep) {
            const offer = event.event.jsep;
            streams = event.event.streams;
            enqueue(() => answer(offer));
          }
        });
        subTrickle.attach((candidate) => subscriber!.trickle(candidate), fail);
        streams = subscriber.streams;
        await answer(subscriber.offer);
        return;
      }
      const result = await subscriber.update({ subscribe: fresh.map((feed) => ({ feed })) });
      if (result === 'postponed') return;
      streams = result.streams;
      if (result.offer) await answer(result.offer);
    });

  await host.create(name, frequency, ice);
  const offer = await host.publishOffer(name);
  const publisher: PublisherPeer = await videoroom.publish({ room, id: name, display: name, offer }, (event) => {
    if (event.kind !== 'room') {
      peerEvents.push({ on: 'pub', event });
      return;
    }
    events.push(event.event);
    if (event.event.event === 'publishers') want(event.event.publishers.map((p) => p.id));
    if (event.event.event === 'unpublished' || event.event.event === 'leaving' || event.event.event === 'kicked') subscribed.delete(event.event.id);
    // Janus 1.1 renegotiates by itself when a feed unpublishes or leaves, but not after a kick
    // (the kicked publisher has left the room before its PeerConnection closes, and the
    // subscriptions' m-lines only go inactive): the kicked feed is dropped here.
    if (event.event.event === 'kicked') {
      const gone = event.event.id;
      enqueue(async () => {
        const mids = streams.filter((stream) => stream.feed_id === gone).map((stream) => ({ sub_mid: stream.mid }));
        if (subscriber === null || mids.length === 0) return;
        const result = await subscriber.update({ unsubscribe: mids });
        if (result === 'postponed') return;
        streams = result.streams;
        if (result.offer) await answer(result.offer);
      });
    }
  });
  publisherReady(publisher);
  pubTrickle.attach((candidate) => publisher.trickle(candidate), fail);
  await host.publishAnswer(name, publisher.answer);
  want(publisher.publishers.map((p) => p.id));

  return {
    name,
    publisher,
    joinedAt,
    events,
    subEvents,
    peerEvents,
    errors,
    midOf: (feed) => streams.find((stream) => stream.feed_id === feed && stream.type === 'audio' && stream.active !== false)?.mid,
    settled: () => queue,
    async leave() {
      await queue;
      await (subscriber as SubscriberPeer | null)?.leave();
      await publisher.leave();
      await host.close(name);
    },
  };
}
