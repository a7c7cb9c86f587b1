import {
  type HandleEvent,
  type IceCandidate,
  JanusError,
  type Jsep,
  type Participant,
  type PublishedStream,
  type Publisher,
  type RoomInfo,
  type RoomSettings,
  type StreamRef,
  type SubscriptionStream,
  type UnsubscribeRef,
  VIDEOROOM_ERRORS,
  type VideoRoomEvent,
  createRoomBody,
  participantsOf,
  publishedStreamsOf,
  publishersOf,
  roomsOf,
  subscriptionStreamsOf,
  videoRoomEventOf,
} from './janus-api';
import type { JanusClient, JanusHandle } from './janus';

/**
 * What voice asks of the VideoRoom plugin, typed (janus_videoroom.c, multistream API). Rooms
 * are created and destroyed with the room `admin_key` and each room's own random secret;
 * moderation and kicks need that secret. Each participant holds one publisher handle (its
 * offer, the SDP answer back) and one subscriber handle carrying every stream it receives
 * (multistream: one subscriber PeerConnection per user, grown and shrunk by `update`).
 */

/** What a participant's handle hears: the room's events, and its PeerConnection's. */
export type PeerEvent = { kind: 'room'; event: VideoRoomEvent } | Exclude<HandleEvent, { kind: 'plugin' }>;

export interface PublishOptions {
  room: string;
  /** The participant's id in the room (436 if taken). */
  id: string;
  display?: string;
  offer: Jsep;
  /** A cap below the room's, bits per second. */
  bitrate?: number;
  /** Labels for the published m-lines (`{mid, description}`), e.g. "camera", "screen". */
  descriptions?: { mid: string; description: string }[];
}

export interface PublisherPeer {
  readonly handle: JanusHandle;
  readonly id: string;
  /** The id a subscriber may give to say whose subscription it is (`private_id`). */
  readonly privateId: number | null;
  /** The SDP answer to the publisher's offer. */
  readonly answer: Jsep;
  /** Those already publishing in the room when this one joined. */
  readonly publishers: Publisher[];
  /** What this publisher sends, by m-line (the mid to `moderate`). */
  readonly streams: PublishedStream[];
  /** A new offer (renegotiation: a camera or a screen added or removed), labels, a bitrate, or m-lines paused (`send: false`); the answer when an offer was given. */
  configure(change: {
    offer?: Jsep;
    bitrate?: number;
    streams?: { mid: string; send?: boolean }[];
    descriptions?: { mid: string; description: string }[];
  }): Promise<Jsep | undefined>;
  trickle(candidate: IceCandidate | null): Promise<void>;
  /** Leaves the room and detaches (Janus tells the others `unpublished` and `leaving`). */
  leave(): Promise<void>;
}

export interface SubscribeOptions {
  room: string;
  streams: StreamRef[];
  /** The subscribing participant's `private_id` (ties the subscription to them in Janus). */
  privateId?: number;
}

export interface SubscriberPeer {
  readonly handle: JanusHandle;
  /** Janus's offer for the streams asked for; answer it with `start`. */
  readonly offer: Jsep;
  readonly streams: SubscriptionStream[];
  start(answer: Jsep): Promise<void>;
  /**
   * Adds and drops streams in one renegotiation: Janus's new offer (answer it with `start`), or
   * `postponed` when a renegotiation is under way (the offer comes later as an `updated` room event).
   */
  update(change: { subscribe?: StreamRef[]; unsubscribe?: UnsubscribeRef[] }): Promise<{ offer?: Jsep; streams: SubscriptionStream[] } | 'postponed'>;
  /** Stops or resumes relaying some m-lines to this subscriber (a server deafen). */
  configure(streams: { mid: string; send: boolean }[]): Promise<void>;
  trickle(candidate: IceCandidate | null): Promise<void>;
  leave(): Promise<void>;
}

export interface VideoRoom {
  createRoom(settings: RoomSettings): Promise<void>;
  /** False when there was no such room (already gone). */
  destroyRoom(room: string, secret: string): Promise<boolean>;
  exists(room: string): Promise<boolean>;
  /** Every room, private ones included (the admin key shows them). */
  listRooms(): Promise<RoomInfo[]>;
  listParticipants(room: string): Promise<Participant[]>;
  /** Mutes (or unmutes) one m-line of a participant at the SFU: no subscriber gets its packets. */
  moderate(room: string, secret: string, id: string, mid: string, mute: boolean): Promise<void>;
  /** Removes a participant from the room (Janus does not ban: refusing a rejoin is ours to do). */
  kick(room: string, secret: string, id: string): Promise<void>;
  publish(options: PublishOptions, listener: (event: PeerEvent) => void): Promise<PublisherPeer>;
  subscribe(options: SubscribeOptions, listener: (event: PeerEvent) => void): Promise<SubscriberPeer>;
}

const peerEventOf = (event: HandleEvent): PeerEvent => (event.kind === 'plugin' ? { kind: 'room', event: videoRoomEventOf(event.data, event.jsep) } : event);

/** Sends `body`; when the answer carries no SDP, that is a Janus defect we report rather than pass on. */
function needJsep(answer: { jsep?: Jsep }, what: string): Jsep {
  if (!answer.jsep) throw new Error(`Janus answered ${what} without an SDP`);
  return answer.jsep;
}

async function leaveAndDetach(handle: JanusHandle): Promise<void> {
  try {
    if (handle.alive) await handle.message({ request: 'leave' });
  } catch (err) {
    // Already out of the room (kicked, destroyed) or Janus gone: detaching is what is left.
    if (!(err instanceof JanusError)) throw err;
  } finally {
    await handle.detach();
  }
}

export function createVideoRoom(janus: JanusClient, adminKey: string): VideoRoom {
  // Synchronous requests (create, destroy, moderate, ...) go through one handle per session.
  let control: Promise<JanusHandle> | null = null;
  async function request(body: Record<string, unknown>): Promise<Record<string, unknown>> {
    let handle = control ? await control.catch(() => null) : null;
    if (handle === null || !handle.alive) {
      control = janus.attach(() => {});
      handle = await control;
    }
    return (await handle.message(body)).data;
  }

  return {
    async createRoom(settings) {
      await request(createRoomBody(adminKey, settings));
    },

    async destroyRoom(room, secret) {
      try {
        await request({ request: 'destroy', room, secret, permanent: false });
        return true;
      } catch (err) {
        if (err instanceof JanusError && err.code === VIDEOROOM_ERRORS.noSuchRoom) return false;
        throw err;
      }
    },

    async exists(room) {
      return (await request({ request: 'exists', room })).exists === true;
    },

    async listRooms() {
      return roomsOf((await request({ request: 'list', admin_key: adminKey })).list);
    },

    async listParticipants(room) {
      return participantsOf((await request({ request: 'listparticipants', room })).participants);
    },

    async moderate(room, secret, id, mid, mute) {
      await request({ request: 'moderate', room, secret, id, mid, mute });
    },

    async kick(room, secret, id) {
      await request({ request: 'kick', room, secret, id });
    },

    async publish(options, listener) {
      const handle = await janus.attach((event) => listener(peerEventOf(event)));
      try {
        const answer = await handle.message(
          {
            request: 'joinandconfigure',
            ptype: 'publisher',
            room: options.room,
            id: options.id,
            ...(options.display !== undefined ? { display: options.display } : {}),
            ...(options.bitrate !== undefined ? { bitrate: options.bitrate } : {}),
            ...(options.descriptions ? { descriptions: options.descriptions } : {}),
          },
          options.offer,
        );
        return {
          handle,
          id: options.id,
          privateId: typeof answer.data.private_id === 'number' ? answer.data.private_id : null,
          answer: needJsep(answer, 'a publisher join'),
          publishers: publishersOf(answer.data.publishers),
          streams: publishedStreamsOf(answer.data.streams),
          async configure(change) {
            const body = {
              request: 'configure',
              ...(change.bitrate !== undefined ? { bitrate: change.bitrate } : {}),
              ...(change.streams ? { streams: change.streams } : {}),
              ...(change.descriptions ? { descriptions: change.descriptions } : {}),
            };
            const reply = await handle.message(body, change.offer);
            return change.offer ? needJsep(reply, 'a publisher configure') : undefined;
          },
          trickle: (candidate) => handle.trickle(candidate),
          leave: () => leaveAndDetach(handle),
        };
      } catch (err) {
        await handle.detach().catch(() => {});
        throw err;
      }
    },

    async subscribe(options, listener) {
      const handle = await janus.attach((event) => listener(peerEventOf(event)));
      try {
        const joined = await handle.message({
          request: 'join',
          ptype: 'subscriber',
          room: options.room,
          streams: options.streams,
          ...(options.privateId !== undefined ? { private_id: options.privateId } : {}),
        });
        return {
          handle,
          offer: needJsep(joined, 'a subscriber join'),
          streams: subscriptionStreamsOf(joined.data.streams),
          async start(answer) {
            await handle.message({ request: 'start' }, answer);
          },
          async update(change) {
            const reply = await handle.message({
              request: 'update',
              ...(change.subscribe?.length ? { subscribe: change.subscribe } : {}),
              ...(change.unsubscribe?.length ? { unsubscribe: change.unsubscribe } : {}),
            });
            if (reply.data.videoroom === 'updating') return 'postponed';
            return { streams: subscriptionStreamsOf(reply.data.streams), ...(reply.jsep ? { offer: reply.jsep } : {}) };
          },
          async configure(streams) {
            await handle.message({ request: 'configure', streams });
          },
          trickle: (candidate) => handle.trickle(candidate),
          leave: () => leaveAndDetach(handle),
        };
      } catch (err) {
        await handle.detach().catch(() => {});
        throw err;
      }
    },
  };
}
