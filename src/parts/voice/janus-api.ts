/**
 * The Janus API as our server speaks it: the frames of its WebSocket transport (subprotocol
 * `janus-protocol`; the Admin API's is `janus-admin-protocol`) and the VideoRoom plugin's
 * requests and answers, typed, with the pure functions that read what Janus sends. Nothing
 * here does I/O: src/parts/voice/janus.ts owns the sockets.
 *
 * Janus 1.1 (Debian's), read from its documentation and janus_videoroom.c. The VideoRoom runs
 * with `string_ids = true` (src/parts/voice/janus-config.ts): rooms and participants are named by
 * strings we choose, so a voice channel's room is found again after either side restarts.
 * Session and handle ids stay numbers (Janus keeps them below 2^53, safe in JavaScript).
 */

export const JANUS_PROTOCOL = 'janus-protocol';
export const JANUS_ADMIN_PROTOCOL = 'janus-admin-protocol';
export const VIDEOROOM_PLUGIN = 'janus.plugin.videoroom';

/** An SDP offer or answer, as RTCSessionDescription carries it. */
export interface Jsep {
  type: 'offer' | 'answer';
  sdp: string;
}

/** One ICE candidate (RTCIceCandidateInit), or the end of gathering. */
export interface IceCandidate {
  candidate: string;
  sdpMid?: string | null;
  sdpMLineIndex?: number | null;
}
export type Trickle = IceCandidate | { completed: true };

// ---------------------------------------------------------------------------------------------
// What Janus sends. Replies carry the request's `transaction`; events carry the handle they
// concern as `sender`. An asynchronous plugin request is answered twice: `ack` at once, then an
// `event` with the same transaction (and, for a join or configure, the SDP).

export interface PluginData {
  plugin: string;
  data: Record<string, unknown>;
}

export type JanusFrame =
  | { janus: 'ack'; transaction: string }
  | { janus: 'success'; transaction: string; data?: Record<string, unknown>; plugindata?: PluginData; sender?: number }
  | { janus: 'error'; transaction?: string; error: { code: number; reason: string } }
  | { janus: 'pong'; transaction: string }
  | { janus: 'server_info'; transaction: string; [key: string]: unknown }
  | { janus: 'event'; sender: number; transaction?: string; plugindata: PluginData; jsep?: Jsep }
  | { janus: 'webrtcup'; sender: number }
  | { janus: 'media'; sender: number; type: 'audio' | 'video'; mid?: string; receiving: boolean }
  | { janus: 'slowlink'; sender: number; uplink: boolean; media?: string; mid?: string; lost?: number }
  | { janus: 'hangup'; sender: number; reason: string }
  | { janus: 'detached'; sender: number }
  | { janus: 'trickle'; sender: number; candidate: IceCandidate | { completed: true } }
  | { janus: 'timeout'; session_id: number };

/** What a handle hears outside any reply: the plugin's own events, and the PeerConnection's. */
export type HandleEvent =
  | { kind: 'plugin'; data: Record<string, unknown>; jsep?: Jsep }
  | { kind: 'webrtcup' }
  | { kind: 'media'; type: 'audio' | 'video'; mid: string | null; receiving: boolean }
  | { kind: 'slowlink'; uplink: boolean; mid: string | null; lost: number }
  | { kind: 'hangup'; reason: string }
  | { kind: 'trickle'; candidate: IceCandidate | null }
  | { kind: 'detached' };

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isId = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value) && value > 0;
const str = (value: unknown): string | null => (typeof value === 'string' ? value : null);

function jsepOf(value: unknown): Jsep | undefined {
  if (!isObject(value) || (value.type !== 'offer' && value.type !== 'answer') || typeof value.sdp !== 'string') return undefined;
  return { type: value.type, sdp: value.sdp };
}

function pluginDataOf(value: unknown): PluginData | null {
  if (!isObject(value) || typeof value.plugin !== 'string' || !isObject(value.data)) return null;
  return { plugin: value.plugin, data: value.data };
}

function candidateOf(value: unknown): IceCandidate | { completed: true } | null {
  if (!isObject(value)) return null;
  if (value.completed === true) return { completed: true };
  if (typeof value.candidate !== 'string') return null;
  return {
    candidate: value.candidate,
    sdpMid: str(value.sdpMid),
    sdpMLineIndex: typeof value.sdpMLineIndex === 'number' ? value.sdpMLineIndex : null,
  };
}

/**
 * One frame of Janus's WebSocket, checked: the frame typed, or null for anything we do not know
 * (logged by the caller and dropped; Janus is trusted, but a frame we misread must not stop us).
 */
export function readFrame(text: string): JanusFrame | null {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return null;
  }
  if (!isObject(raw) || typeof raw.janus !== 'string') return null;
  const transaction = str(raw.transaction);
  const sender = raw.sender;
  switch (raw.janus) {
    case 'ack':
    case 'pong':
      return transaction === null ? null : { janus: raw.janus, transaction };
    case 'server_info':
      return transaction === null ? null : { ...raw, janus: 'server_info', transaction };
    case 'success': {
      if (transaction === null) return null;
      const plugindata = raw.plugindata === undefined ? undefined : pluginDataOf(raw.plugindata);
      if (plugindata === null) return null;
      return {
        janus: 'success',
        transaction,
        ...(isObject(raw.data) ? { data: raw.data } : {}),
        ...(plugindata ? { plugindata } : {}),
        ...(isId(sender) ? { sender } : {}),
      };
    }
    case 'error': {
      const error = raw.error;
      if (!isObject(error) || typeof error.code !== 'number') return null;
      return {
        janus: 'error',
        ...(transaction !== null ? { transaction } : {}),
        error: { code: error.code, reason: str(error.reason) ?? `error ${error.code}` },
      };
    }
    case 'timeout':
      return isId(raw.session_id) ? { janus: 'timeout', session_id: raw.session_id } : null;
  }
  if (!isId(sender)) return null;
  switch (raw.janus) {
    case 'event': {
      const plugindata = pluginDataOf(raw.plugindata);
      if (plugindata === null) return null;
      const jsep = jsepOf(raw.jsep);
      return { janus: 'event', sender, ...(transaction !== null ? { transaction } : {}), plugindata, ...(jsep ? { jsep } : {}) };
    }
    case 'webrtcup':
    case 'detached':
      return { janus: raw.janus, sender };
    case 'media':
      if (raw.type !== 'audio' && raw.type !== 'video') return null;
      return { janus: 'media', sender, type: raw.type, ...(str(raw.mid) !== null ? { mid: raw.mid as string } : {}), receiving: raw.receiving === true };
    case 'slowlink':
      return {
        janus: 'slowlink',
        sender,
        uplink: raw.uplink === true,
        ...(str(raw.media) !== null ? { media: raw.media as string } : {}),
        ...(str(raw.mid) !== null ? { mid: raw.mid as string } : {}),
        lost: typeof raw.lost === 'number' ? raw.lost : 0,
      };
    case 'hangup':
      return { janus: 'hangup', sender, reason: str(raw.reason) ?? '' };
    case 'trickle': {
      const candidate = candidateOf(raw.candidate);
      return candidate === null ? null : { janus: 'trickle', sender, candidate };
    }
  }
  return null;
}

/** The event a handle's listener is given for a frame that answers no request. */
export function handleEventOf(frame: JanusFrame): HandleEvent | null {
  switch (frame.janus) {
    case 'event':
      return { kind: 'plugin', data: frame.plugindata.data, ...(frame.jsep ? { jsep: frame.jsep } : {}) };
    case 'webrtcup':
      return { kind: 'webrtcup' };
    case 'media':
      return { kind: 'media', type: frame.type, mid: frame.mid ?? null, receiving: frame.receiving };
    case 'slowlink':
      return { kind: 'slowlink', uplink: frame.uplink, mid: frame.mid ?? null, lost: frame.lost ?? 0 };
    case 'hangup':
      return { kind: 'hangup', reason: frame.reason };
    case 'detached':
      return { kind: 'detached' };
    case 'trickle':
      return { kind: 'trickle', candidate: 'completed' in frame.candidate ? null : frame.candidate };
    default:
      return null;
  }
}

/**
 * What went wrong with a request. `janus`: Janus refused it (403 unauthorized, 458 no such
 * session, 459 no such handle, ...); `plugin`: the VideoRoom did (426 no such room, 427 room
 * exists, 432 publishers full, 433 unauthorized, 436 id taken, ...); `timeout`: no answer in
 * time; `unavailable`: no connection to Janus.
 */
export class JanusError extends Error {
  constructor(
    readonly kind: 'janus' | 'plugin' | 'timeout' | 'unavailable',
    readonly code: number,
    message: string,
  ) {
    super(message);
    this.name = 'JanusError';
  }
}

/** VideoRoom error codes (janus_videoroom.c) that callers act on. */
export const VIDEOROOM_ERRORS = {
  noSuchRoom: 426,
  roomExists: 427,
  noSuchFeed: 428,
  publishersFull: 432,
  unauthorized: 433,
  alreadyPublished: 434,
  idExists: 436,
} as const;

/** A plugin's answer, or the JanusError it carries (`error_code` in its data). */
export function pluginAnswer(data: Record<string, unknown>): Record<string, unknown> {
  if (typeof data.error_code === 'number') throw new JanusError('plugin', data.error_code, str(data.error) ?? `VideoRoom error ${data.error_code}`);
  return data;
}

// ---------------------------------------------------------------------------------------------
// The VideoRoom: what we ask and what we are told.

/** A room as voice creates it: private, never saved to Janus's files, audio levels announced. */
export interface RoomSettings {
  room: string;
  /** Needed to destroy, moderate and kick: random per room, known only to our server. */
  secret: string;
  description?: string;
  /** At most this many publishers at once (432 past it). */
  publishers: number;
  /** The bitrate cap Janus asks publishers to keep to (REMB), bits per second; 0 = none. */
  bitrate: number;
  /** Speaking events: packets with a level before `talking` is judged (50 a second), and the dBov average (0 loud, 127 silent) under which it is. */
  audioActivePackets?: number;
  audioLevelAverage?: number;
  /** Video codecs allowed, in order of preference ("vp8,h264"). */
  videocodec?: string;
}

export function createRoomBody(adminKey: string, room: RoomSettings): Record<string, unknown> {
  return {
    request: 'create',
    admin_key: adminKey,
    room: room.room,
    secret: room.secret,
    description: room.description ?? room.room,
    is_private: true,
    permanent: false,
    publishers: room.publishers,
    bitrate: room.bitrate,
    audiocodec: 'opus',
    ...(room.videocodec ? { videocodec: room.videocodec } : {}),
    audiolevel_ext: true,
    audiolevel_event: true,
    audio_active_packets: room.audioActivePackets ?? 50,
    audio_level_average: room.audioLevelAverage ?? 40,
    notify_joining: false,
  };
}

/** One stream a publisher sends, as the VideoRoom describes it. */
export interface PublishedStream {
  type: 'audio' | 'video' | 'data';
  mid: string;
  mindex: number;
  codec?: string;
  description?: string;
  disabled?: boolean;
  moderated?: boolean;
  talking?: boolean;
}

/** An active publisher (a feed others may subscribe to). */
export interface Publisher {
  id: string;
  display?: string;
  streams: PublishedStream[];
  talking?: boolean;
}

/** One m-line of a subscription: which feed's which stream it carries. */
export interface SubscriptionStream {
  mid: string;
  mindex: number;
  type: 'audio' | 'video' | 'data';
  feed_id?: string;
  feed_mid?: string;
  feed_display?: string;
  send?: boolean;
  ready?: boolean;
  active?: boolean;
}

/** What to subscribe to: a feed's every stream, or one stream of it by its mid. */
export interface StreamRef {
  feed: string;
  mid?: string;
}

/** What to drop from a subscription: a feed, one of its streams, or an m-line of ours. */
export type UnsubscribeRef = { feed: string; mid?: string } | { sub_mid: string };

export interface Participant {
  id: string;
  display?: string;
  publisher: boolean;
  talking?: boolean;
}

export interface RoomInfo {
  room: string;
  description?: string;
  num_participants: number;
  max_publishers: number;
  bitrate?: number;
}

const arrayOf = <T>(value: unknown, read: (item: unknown) => T | null): T[] =>
  Array.isArray(value) ? value.map(read).filter((item): item is T => item !== null) : [];

function publishedStreamOf(value: unknown): PublishedStream | null {
  if (!isObject(value) || (value.type !== 'audio' && value.type !== 'video' && value.type !== 'data') || typeof value.mid !== 'string') return null;
  return {
    type: value.type,
    mid: value.mid,
    mindex: typeof value.mindex === 'number' ? value.mindex : 0,
    ...(typeof value.codec === 'string' ? { codec: value.codec } : {}),
    ...(typeof value.description === 'string' ? { description: value.description } : {}),
    ...(value.disabled === true ? { disabled: true } : {}),
    ...(typeof value.moderated === 'boolean' ? { moderated: value.moderated } : {}),
    ...(typeof value.talking === 'boolean' ? { talking: value.talking } : {}),
  };
}

export function publisherOf(value: unknown): Publisher | null {
  if (!isObject(value) || typeof value.id !== 'string') return null;
  return {
    id: value.id,
    ...(typeof value.display === 'string' ? { display: value.display } : {}),
    streams: arrayOf(value.streams, publishedStreamOf),
    ...(typeof value.talking === 'boolean' ? { talking: value.talking } : {}),
  };
}

export function subscriptionStreamOf(value: unknown): SubscriptionStream | null {
  if (!isObject(value) || typeof value.mid !== 'string' || (value.type !== 'audio' && value.type !== 'video' && value.type !== 'data')) return null;
  const out: SubscriptionStream = { mid: value.mid, mindex: typeof value.mindex === 'number' ? value.mindex : 0, type: value.type };
  for (const key of ['feed_id', 'feed_mid', 'feed_display'] as const) if (typeof value[key] === 'string') out[key] = value[key] as string;
  for (const key of ['send', 'ready', 'active'] as const) if (typeof value[key] === 'boolean') out[key] = value[key] as boolean;
  return out;
}

export const publishersOf = (value: unknown): Publisher[] => arrayOf(value, publisherOf);
export const publishedStreamsOf = (value: unknown): PublishedStream[] => arrayOf(value, publishedStreamOf);
export const subscriptionStreamsOf = (value: unknown): SubscriptionStream[] => arrayOf(value, subscriptionStreamOf);
export const participantsOf = (value: unknown): Participant[] =>
  arrayOf(value, (item) =>
    isObject(item) && typeof item.id === 'string'
      ? {
          id: item.id,
          ...(typeof item.display === 'string' ? { display: item.display } : {}),
          publisher: item.publisher === true,
          ...(typeof item.talking === 'boolean' ? { talking: item.talking } : {}),
        }
      : null,
  );
export const roomsOf = (value: unknown): RoomInfo[] =>
  arrayOf(value, (item) =>
    isObject(item) && typeof item.room === 'string'
      ? {
          room: item.room,
          ...(typeof item.description === 'string' ? { description: item.description } : {}),
          num_participants: typeof item.num_participants === 'number' ? item.num_participants : 0,
          max_publishers: typeof item.max_publishers === 'number' ? item.max_publishers : 0,
          ...(typeof item.bitrate === 'number' ? { bitrate: item.bitrate } : {}),
        }
      : null,
  );

/**
 * The VideoRoom's asynchronous events, as a room's participants hear them on their publisher
 * handle (and a subscriber on its own): who began or stopped publishing, who left or was
 * kicked, who is talking, a moderation, the room destroyed, a subscription renegotiated.
 */
export type VideoRoomEvent =
  | { event: 'publishers'; room: string; publishers: Publisher[] }
  | { event: 'unpublished'; room: string; id: string }
  | { event: 'leaving'; room: string; id: string }
  | { event: 'kicked'; room: string; id: string }
  /** This handle itself was kicked out of the room. */
  | { event: 'kicked-self'; room: string }
  | { event: 'talking' | 'stopped-talking'; room: string; id: string; mid: string | null; level: number | null }
  | { event: 'moderation'; room: string; id: string; mid: string; muted: boolean }
  | { event: 'destroyed'; room: string }
  | { event: 'updated'; room: string; streams: SubscriptionStream[]; jsep?: Jsep }
  | { event: 'error'; code: number; error: string }
  | { event: 'other'; data: Record<string, unknown> };

/** A plugin event read as a VideoRoomEvent. */
export function videoRoomEventOf(data: Record<string, unknown>, jsep?: Jsep): VideoRoomEvent {
  const room = str(data.room) ?? '';
  const kind = data.videoroom;
  if (typeof data.error_code === 'number') return { event: 'error', code: data.error_code, error: str(data.error) ?? '' };
  if (kind === 'talking' || kind === 'stopped-talking') {
    return {
      event: kind,
      room,
      id: str(data.id) ?? '',
      mid: str(data.mid),
      level: typeof data['audio-level-dBov-avg'] === 'number' ? data['audio-level-dBov-avg'] : null,
    };
  }
  if (kind === 'destroyed') return { event: 'destroyed', room };
  if (kind === 'updated') return { event: 'updated', room, streams: subscriptionStreamsOf(data.streams), ...(jsep ? { jsep } : {}) };
  if (kind === 'event') {
    if (Array.isArray(data.publishers)) return { event: 'publishers', room, publishers: publishersOf(data.publishers) };
    if (typeof data.unpublished === 'string') return { event: 'unpublished', room, id: data.unpublished };
    if (data.leaving === 'ok' && data.reason === 'kicked') return { event: 'kicked-self', room };
    if (typeof data.leaving === 'string' && data.leaving !== 'ok') return { event: 'leaving', room, id: data.leaving };
    if (typeof data.kicked === 'string') return { event: 'kicked', room, id: data.kicked };
    if ((data.moderation === 'muted' || data.moderation === 'unmuted') && typeof data.id === 'string' && typeof data.mid === 'string') {
      return { event: 'moderation', room, id: data.id, mid: data.mid, muted: data.moderation === 'muted' };
    }
  }
  return { event: 'other', data };
}
