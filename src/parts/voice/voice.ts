import { createHmac } from 'node:crypto';
import { FormatRegistry } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { every, logFailure } from '../../core/callbacks';
import { type Clock, iso } from '../../core/clock';
import type { Config } from '../../core/config';
import type { DB } from '../../core/db';
import { HttpError, badRequest, conflict, forbidden, notFound } from '../../core/http/errors';
import { toHttpError } from '../../core/http/respond';
import { isUuid } from '../../core/http/router';
import type { ChannelRecord, VoiceStateRecord } from '../../core/records';
import type { Container, Log, User } from '../../core/types';
import { VIEW, has } from '../../rules/channel-permissions';
import type { ServerAccess } from '../../rules/channel-access';
import type { Permissions } from '../../rules/permissions';
import { MAX_VOICE_PARTICIPANTS } from '../../rules/sizes';
import type { Directory } from '../community/directory';
import { VOICE_CLIENT_FRAMES, type VoiceClientFrame, type VoiceEndReason, type VoiceServerFrame } from '../delivery/events';
import { CLOSE, type Hub } from '../delivery/hub';
import { type Connection, createConnection } from './connection';
import { type JanusClient, createJanusClient } from './janus';
import { JanusError, type Jsep, VIDEOROOM_ERRORS } from './janus-api';
import { mLines, sends, withOpusBitrate } from './sdp';
import { turnCredentials } from './turn';
import { type VideoRoom, createVideoRoom } from './videoroom';

/**
 * Voice channels (issue 48; docs/voice.md): who is in which voice channel and how, kept in
 * memory, and the signaling between browsers and the media server (Janus's VideoRoom), of which
 * this server is the only client. Browsers talk to us on a voice socket (`GET /api/voice/ws`,
 * src/parts/live/sockets.ts opens it and hands it here): every frame is checked against the
 * event catalogue (src/parts/delivery/events.ts VOICE_CLIENT_FRAMES) and refused with an `error`
 * frame when it does not match or is not allowed; media flows between the browser and Janus.
 *
 * - **One room per voice channel**, made at the first join (private, its secret derived from the
 *   room key so this server can destroy it after a restart, never shown to anyone) and destroyed
 *   when the last person leaves. Each person publishes one connection and receives everyone else
 *   on one more (src/parts/voice/connection.ts, multistream).
 * - **Who may**: every join is checked as a request would be (the channel seen, a voice channel,
 *   `connect`, not timed out, `user_limit`), and every offer's m-lines against `video`: a video
 *   m-line that sends is refused without it. Without `speak` one joins muted at the media server.
 * - **One voice connection per user**, across tabs and devices: a join ends the one before it (the
 *   newest wins; the other tab is told `elsewhere`). A voice socket that closes leaves.
 * - **Kept true**: four times a second, for each server with someone in voice whose access rules
 *   changed (a kick, a ban, a timeout, an overwrite, a role, a deleted channel: the generations of
 *   src/rules/channel-access.ts), each person there is judged again: one who may no longer be
 *   there is disconnected at once (a rejoin meets the same checks, so it is refused), one who
 *   lost `speak` or `video` is muted at the media server (VideoRoom `moderate`), and members who
 *   now see a voice channel are told who is in it. A suspension or a logout closes the socket.
 * - **Told**: `voice_state` on the user stream to those who see the channel (and `channel_id:
 *   null` to those who saw it when someone leaves); `ready` carries the states a user sees.
 *   Speaking comes from the media path: Janus measures the audio level each packet carries
 *   (RFC 6464) and says who is talking (`talking`, at most about once a second per speaker).
 * - **Restarts**: when Janus goes away every call ends (`media_restart`: browsers rejoin by
 *   themselves); when this server starts, the rooms a previous run left are destroyed.
 */
export interface Voice {
  /** JANUS_URL is set. */
  readonly configured: boolean;
  /**
   * A voice socket opened for `user` in session `token`: its frames go to `frame`, and `closed`
   * when it closes. 503 without JANUS_URL; 429 past MAX_VOICE_SOCKETS_PER_SESSION.
   */
  open(user: User, token: string, link: VoiceLink): VoiceSocket;
  /** A session ended (logout, password change): its voice sockets close, their calls end. */
  endSession(token: string): void;
  /** A user was suspended: their call ends and every voice socket of theirs closes. */
  endUser(userId: string): void;
  /** The voice states of the servers given that `userId` sees (ready). */
  statesSeenBy(userId: string, serverIds: readonly string[]): VoiceStateRecord[];
  /** Where and how a user is in voice, or null. */
  stateOf(userId: string): VoiceStateRecord | null;
  /** A member's saved server mute and deafen. */
  moderationOf(serverId: string, userId: string): { mute: boolean; deaf: boolean };
  /** Saves them (the caller's transaction: PATCH …/voice writes its audit entry beside). */
  saveModeration(serverId: string, userId: string, state: { mute: boolean; deaf: boolean }): void;
  /** Applies the saved mute and deafen to the member's connection there, if any. */
  applyModeration(serverId: string, userId: string): void;
  /** Moves a member in voice to another voice channel of the server (they join it with a new offer), or disconnects them (null). */
  moveOrDisconnect(userId: string, channelId: string | null): void;
  /** For /healthz: whether Janus answers, and what is in voice. */
  status(): Promise<VoiceStatus>;
  /** For /metrics, at once. */
  counts(): { janusUp: boolean; rooms: number; participants: number };
  /** Ends every call and the Janus session (shutdown). */
  close(): Promise<void>;
}

export interface VoiceStatus {
  configured: boolean;
  reachable: boolean;
  rooms: number;
  participants: number;
}

/** What voice needs of one open voice socket. */
export interface VoiceLink {
  send(frame: VoiceServerFrame): void;
  /** Closes the socket (its `closed` follows). */
  close(code: number, reason: string): void;
}

/** Voice sockets one session may hold open (its tabs). */
export const MAX_VOICE_SOCKETS_PER_SESSION = 10;

export interface VoiceSocket {
  /** The socket is open: the ICE servers go first. */
  opened(): void;
  /** A text frame from the client. */
  frame(text: string): void;
  /** The socket closed: its call, if any, ends. */
  closed(): void;
}

export interface VoiceParts {
  config: Pick<Config, 'voice'>;
  clock: Clock;
  log: Log;
  db: DB;
  hub: Pick<Hub, 'toUsers'>;
  perms: Pick<Permissions, 'channelRules' | 'channelRulesOf'>;
  /**
   * 403 unless the user may take part in this server's channel now, as for writing there (a
   * timeout, the server's verification level, membership screening): the posting rules' own check.
   */
  requireMayTakePart(user: User, channel: Container): void;
  directory: Pick<Directory, 'channel'>;
  /** Timings a test shortens; production's by default. */
  timings?: Partial<typeof VOICE_TIMINGS>;
}

export const VOICE_NOT_SET_UP = 'voice is not set up on this server';
export const VOICE_UNREACHABLE = 'the voice server cannot be reached right now; try again in a moment';

export const VOICE_TIMINGS = {
  /** How often the people in voice are judged again against their servers' access rules (only servers whose rules changed). */
  recheckMs: 250,
  /** How long a browser has to answer a subscription offer before its call ends. */
  answerTimeoutMs: 15_000,
  /** How long a join waits for a Janus session (Janus restarting). */
  readyMs: 3_000,
};

/** The bitrate cap Janus asks each publisher to keep to in all (REMB), bits per second: a camera and a 1080p screen share fit. */
export const VOICE_VIDEO_BITRATE = 2_500_000;
/** Rooms are named after their channel: `voice-<channel id>`. */
const ROOM_PREFIX = 'voice-';
const roomIdOf = (channelId: string) => `${ROOM_PREFIX}${channelId}`;

if (!FormatRegistry.Has('uuid')) FormatRegistry.Set('uuid', isUuid);
const checkers = Object.fromEntries(Object.entries(VOICE_CLIENT_FRAMES).map(([name, schema]) => [name, TypeCompiler.Compile(schema)]));

/** A client frame, checked; a 400 naming what is wrong otherwise. */
function readFrame(text: string): VoiceClientFrame {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw badRequest('a voice frame must be JSON');
  }
  const name = typeof value === 'object' && value !== null && 'op' in value ? (value as { op: unknown }).op : undefined;
  const check = typeof name === 'string' && Object.hasOwn(checkers, name) ? checkers[name] : undefined;
  if (!check) throw badRequest(`op must be one of ${Object.keys(checkers).join(', ')}`);
  if (!check.Check(value)) {
    const first = check.Errors(value).First();
    throw badRequest(`${name}: ${first ? `${first.path || 'the frame'} ${first.message}`.trim() : 'not a valid frame'}`);
  }
  return value as VoiceClientFrame;
}

type MediaKind = 'audio' | 'camera' | 'screen';

/** An offer's m-lines, labelled and checked: what Janus is told of them, and what they send. */
function readOffer(offer: Jsep, media: { mid: string; kind: MediaKind }[], canVideo: boolean) {
  const lines = mLines(offer.sdp);
  if (lines.length === 0) throw badRequest('the offer has no m-line');
  const labels = new Map<string, MediaKind>();
  for (const { mid, kind } of media) {
    if (labels.has(mid)) throw badRequest(`media names mid ${mid} twice`);
    if ([...labels.values()].includes(kind)) throw badRequest(`media names ${kind} twice`);
    labels.set(mid, kind);
  }
  for (const line of lines) {
    if (line.kind !== 'audio' && line.kind !== 'video') throw badRequest(`the offer may carry audio and video only, not ${line.kind}`);
    if (line.mid === null) throw badRequest('every m-line of the offer needs a mid');
    const kind = labels.get(line.mid);
    if (line.kind === 'audio' ? kind !== 'audio' : kind !== 'camera' && kind !== 'screen') {
      throw badRequest(`media must label the ${line.kind} m-line ${line.mid} as ${line.kind === 'audio' ? 'audio' : 'camera or screen'}`);
    }
  }
  if (labels.size !== lines.length) throw badRequest('media names a mid the offer does not have');
  const sending = (kind: MediaKind) => lines.some((l) => l.mid !== null && labels.get(l.mid) === kind && sends(l));
  // The browser is not trusted: what it may send is read from its offer.
  if (!canVideo && (sending('camera') || sending('screen'))) throw forbidden('you do not have permission to use video in this voice channel');
  return {
    labels,
    descriptions: [...labels].map(([mid, kind]) => ({ mid, description: kind })),
    video: sending('camera'),
    stream: sending('screen'),
  };
}

interface Room {
  readonly id: string;
  readonly serverId: string;
  readonly channelId: string;
  readonly secret: string;
  /** Everyone joining or in it. */
  readonly members: Map<string, Participant>;
  created: boolean;
  /** Creations and destructions of the VideoRoom, in order. */
  lifecycle: Promise<void>;
}

interface Participant {
  readonly user: User;
  readonly userId: string;
  readonly serverId: string;
  readonly channelId: string;
  readonly socket: Socket;
  readonly room: Room;
  readonly media: Connection;
  phase: 'joining' | 'live' | 'ended';
  selfMute: boolean;
  selfDeaf: boolean;
  serverMute: boolean;
  serverDeaf: boolean;
  canSpeak: boolean;
  canVideo: boolean;
  audioMid: string | null;
  labels: Map<string, MediaKind>;
  video: boolean;
  stream: boolean;
  talking: boolean;
  /** What the media server was last told (moderate), so each change is asked once. */
  sfu: { muted: boolean; videoBlocked: boolean; chain: Promise<void> };
}

interface Socket {
  readonly user: User;
  readonly token: string;
  readonly link: VoiceLink;
  /** A moderator moved this socket's user here: their next join of it skips user_limit. */
  movedTo: string | null;
  open: boolean;
}

export function createVoice(parts: VoiceParts): Voice {
  const { config, clock, log, db, hub, perms, directory, requireMayTakePart } = parts;
  const timings = { ...VOICE_TIMINGS, ...parts.timings };
  const settings = config.voice;
  const loadModeration = db.prepare<[string, string], { mute: number; deaf: number }>(
    'SELECT mute, deaf FROM voice_moderation WHERE server_id = ? AND user_id = ?',
  );
  const storeModeration = db.prepare(
    `INSERT INTO voice_moderation (server_id, user_id, mute, deaf) VALUES (?, ?, ?, ?)
     ON CONFLICT (server_id, user_id) DO UPDATE SET mute = excluded.mute, deaf = excluded.deaf`,
  );

  const participants = new Map<string, Participant>();
  const rooms = new Map<string, Room>();
  /** Each server's access rules when its people were last judged (recheck). */
  const judgedWith = new Map<string, ServerAccess | null>();
  /** Who saw each channel with people in it when last looked at: a newcomer is told who is there. */
  const viewersOf = new Map<string, ReadonlySet<string>>();
  let recheckTimer: NodeJS.Timeout | null = null;
  let closing = false;
  /** The open voice sockets of each session. */
  const socketsOf = new Map<string, Set<Socket>>();

  let janus: JanusClient | null = null;
  let videoroom: VideoRoom | null = null;
  if (settings) {
    janus = createJanusClient({
      url: settings.janusUrl,
      adminUrl: settings.janusAdminUrl,
      adminSecret: settings.janusAdminSecret,
      log,
      onReady: ({ reconnected }) => {
        if (!reconnected) sweepRooms().catch(logFailure(log, 'voice: removing old rooms'));
      },
      // Every handle died with the session: every call ends, and browsers join again.
      onLost: () => {
        for (const p of [...participants.values()]) end(p, 'media_restart', 'The voice server restarted: joining again…');
        for (const room of rooms.values()) room.created = false;
      },
    });
    videoroom = createVideoRoom(janus, settings.janusRoomKey);
  }
  const secretOf = (roomId: string) =>
    createHmac('sha256', settings?.janusRoomKey ?? '')
      .update(`room secret ${roomId}`)
      .digest('hex');

  /** The rooms a previous run of this server left in Janus (their calls died with it). */
  async function sweepRooms(): Promise<void> {
    for (const info of await videoroom!.listRooms()) {
      if (info.room.startsWith(ROOM_PREFIX) && !rooms.has(info.room.slice(ROOM_PREFIX.length))) await videoroom!.destroyRoom(info.room, secretOf(info.room));
    }
  }

  function roomOf(serverId: string, channelId: string): Room {
    let room = rooms.get(channelId);
    if (!room) {
      const id = roomIdOf(channelId);
      room = { id, serverId, channelId, secret: secretOf(id), members: new Map(), created: false, lifecycle: Promise.resolve() };
      rooms.set(channelId, room);
    }
    return room;
  }

  /** The VideoRoom exists (made now when not). */
  function ensureRoom(room: Room): Promise<void> {
    const step = room.lifecycle.then(async () => {
      if (room.created) return;
      const settings = { room: room.id, secret: room.secret, publishers: MAX_VOICE_PARTICIPANTS + 1, bitrate: VOICE_VIDEO_BITRATE, videocodec: 'vp8' };
      try {
        await videoroom!.createRoom(settings);
      } catch (err) {
        // One left behind (a lost destroy): ours by its name, so made again.
        if (!(err instanceof JanusError && err.code === VIDEOROOM_ERRORS.roomExists)) throw err;
        await videoroom!.destroyRoom(room.id, room.secret);
        await videoroom!.createRoom(settings);
      }
      room.created = true;
    });
    room.lifecycle = step.catch(() => {});
    return step;
  }

  /** An empty room goes (its VideoRoom destroyed); one someone joined meanwhile stays. */
  function releaseRoom(room: Room): void {
    room.lifecycle = room.lifecycle
      .then(async () => {
        if (room.members.size > 0) return;
        if (room.created && janus?.connected) await videoroom!.destroyRoom(room.id, room.secret);
        room.created = false;
        if (room.members.size === 0 && rooms.get(room.channelId) === room) {
          rooms.delete(room.channelId);
          viewersOf.delete(room.channelId);
        }
      })
      .catch(logFailure(log, 'voice: destroying a room'));
  }

  // ---- what others are told --------------------------------------------------------------

  function stateOf(p: Participant): VoiceStateRecord {
    const mute = p.serverMute || !p.canSpeak;
    const selfMute = p.selfMute || p.selfDeaf;
    return {
      server_id: p.serverId,
      channel_id: p.channelId,
      user_id: p.userId,
      self_mute: selfMute,
      self_deaf: p.selfDeaf,
      mute,
      deaf: p.serverDeaf,
      video: p.video,
      stream: p.stream,
      speaking: p.talking && !mute && !selfMute,
    };
  }

  const viewers = (serverId: string, channelId: string): readonly string[] => perms.channelRules(serverId)?.viewers(channelId) ?? [];

  function announce(p: Participant): void {
    const seeing = viewers(p.serverId, p.channelId);
    // The first one in takes the snapshot; after that only tellNewViewers moves it, so whoever
    // came to see the channel meanwhile is still a newcomer there and is told everyone in it.
    if (!viewersOf.has(p.channelId)) viewersOf.set(p.channelId, new Set(seeing));
    hub.toUsers(seeing, { event: 'voice_state', ...stateOf(p) });
  }

  /** To who sees the channel, or, once it is deleted (nobody sees it then), to who last saw it. */
  function announceLeft(p: Participant): void {
    const seeing = directory.channel(p.channelId) ? viewers(p.serverId, p.channelId) : [...(viewersOf.get(p.channelId) ?? [])];
    hub.toUsers(seeing, { event: 'voice_state', ...stateOf(p), channel_id: null, speaking: false });
  }

  /** Tells the media server what the participant may send now: audio (mute), video. */
  function syncMedia(p: Participant): void {
    const muted = p.serverMute || !p.canSpeak;
    const videoBlocked = !p.canVideo;
    p.media.setDeaf(p.serverDeaf || p.selfDeaf);
    if (p.phase !== 'live' || (muted === p.sfu.muted && videoBlocked === p.sfu.videoBlocked)) return;
    const audioChange = muted !== p.sfu.muted && p.audioMid !== null;
    const videoChange = videoBlocked !== p.sfu.videoBlocked;
    p.sfu.muted = muted;
    p.sfu.videoBlocked = videoBlocked;
    const videoMids = [...p.labels].filter(([, kind]) => kind !== 'audio').map(([mid]) => mid);
    p.sfu.chain = p.sfu.chain
      .then(async () => {
        if (p.phase === 'ended') return;
        if (audioChange) await videoroom!.moderate(p.room.id, p.room.secret, p.userId, p.audioMid!, muted);
        // A video m-line the publisher no longer sends is unknown to Janus: nothing to stop there.
        if (videoChange) for (const mid of videoMids) await videoroom!.moderate(p.room.id, p.room.secret, p.userId, mid, videoBlocked).catch(() => {});
      })
      .catch((err: unknown) => {
        if (p.phase !== 'ended') logFailure(log, 'voice: moderate')(err);
      });
  }

  // ---- joining and leaving ---------------------------------------------------------------

  /**
   * Ends a call: its media leaves the room, those who see the channel hear it (when it was
   * live), and the browser is told why unless it asked (`reason` null).
   */
  function end(p: Participant, reason: VoiceEndReason | null, message = ''): void {
    if (p.phase === 'ended') return;
    const wasLive = p.phase === 'live';
    p.phase = 'ended';
    if (participants.get(p.userId) === p) participants.delete(p.userId);
    if (p.room.members.get(p.userId) === p) p.room.members.delete(p.userId);
    if (reason !== null && p.socket.open) p.socket.link.send({ event: 'disconnected', reason, message });
    if (wasLive) announceLeft(p);
    p.media
      .close()
      .catch(logFailure(log, 'voice: leaving'))
      .finally(() => releaseRoom(p.room));
    if (participants.size === 0 && recheckTimer) {
      clearInterval(recheckTimer);
      recheckTimer = null;
    }
  }

  /** What a join must pass, as a request would: the channel, connect, a timeout, user_limit. */
  function admit(socket: Socket, channelId: string): { channel: ChannelRecord; flags: number } {
    if (!settings) throw new HttpError(503, VOICE_NOT_SET_UP);
    const channel = directory.channel(channelId);
    const flags = channel ? (perms.channelRules(channel.server_id)?.flags(socket.user.id, channel.id) ?? 0) : 0;
    if (!channel || !(flags & VIEW)) throw notFound('channel not found');
    if (channel.type !== 'voice') throw badRequest('this is not a voice channel');
    if (!has(flags, 'connect')) throw forbidden('you do not have permission to connect to this voice channel');
    requireMayTakePart(socket.user, { kind: 'channel', id: channel.id, serverId: channel.server_id });
    const others = [...(rooms.get(channel.id)?.members.keys() ?? [])].filter((id) => id !== socket.user.id).length;
    const limit = channel.user_limit ?? 0;
    const moved = socket.movedTo === channel.id;
    // Those who may move members may join a full channel, as in Discord; so may one moved there.
    if (limit > 0 && others >= limit && !has(flags, 'move_members') && !moved) throw forbidden(`this voice channel is full (${limit} people)`);
    if (others >= MAX_VOICE_PARTICIPANTS) throw forbidden(`this voice channel is full (a voice channel holds at most ${MAX_VOICE_PARTICIPANTS} people)`);
    if (!janus?.connected) throw new HttpError(503, VOICE_UNREACHABLE);
    return { channel, flags };
  }

  async function join(socket: Socket, frame: Extract<VoiceClientFrame, { op: 'join' }>): Promise<void> {
    const { channel, flags } = admit(socket, frame.channel_id);
    const canVideo = has(flags, 'video');
    const offer = readOffer(frame.offer, frame.media, canVideo);
    socket.movedTo = null;
    const userId = socket.user.id;
    const room = roomOf(channel.server_id, channel.id);
    const saved = moderationOf(channel.server_id, userId);
    let p!: Participant;
    const media = createConnection({
      videoroom: videoroom!,
      log,
      room: room.id,
      id: userId,
      answerTimeoutMs: timings.answerTimeoutMs,
      send: (f) => {
        if (p.phase !== 'ended' && socket.open) socket.link.send(f);
      },
      kindOf: (feed, mid) => {
        const kind = room.members.get(feed)?.labels.get(mid);
        return kind === 'camera' || kind === 'screen' ? kind : null;
      },
      talking: (feed, talking) => {
        const other = room.members.get(feed);
        if (!other || other.phase !== 'live' || other.talking === talking) return;
        const before = stateOf(other).speaking;
        other.talking = talking;
        if (stateOf(other).speaking !== before) announce(other);
      },
      failed: (why) => {
        log(`voice: ${socket.user.username}'s call in ${channel.id} ended: ${why}`);
        end(p, 'media_failed', 'The voice connection failed.');
      },
    });
    p = {
      user: socket.user,
      userId,
      serverId: channel.server_id,
      channelId: channel.id,
      socket,
      room,
      media,
      phase: 'joining',
      selfMute: frame.self_mute,
      selfDeaf: frame.self_deaf,
      serverMute: saved.mute,
      serverDeaf: saved.deaf,
      canSpeak: has(flags, 'speak'),
      canVideo,
      audioMid: null,
      labels: offer.labels,
      video: offer.video,
      stream: offer.stream,
      talking: false,
      // Nothing to stop at the start: the offer was refused if it sent video without the right.
      sfu: { muted: false, videoBlocked: !canVideo, chain: Promise.resolve() },
    };
    // The newest wins: whatever call the user had, in this tab or another, ends first (the
    // publisher's id in a room is the user's: the old one must be out before the new one is in).
    const before = participants.get(userId);
    participants.set(userId, p);
    room.members.set(userId, p);
    if (!recheckTimer) recheckTimer = every(timings.recheckMs, 'voice-recheck', recheck, log);
    if (before) {
      end(before, before.socket === socket ? null : 'elsewhere', 'You joined voice in another tab or on another device.');
      await before.media.close().catch(() => {});
    }
    // (A call may end while it waits: the user left, or joined again.)
    const ended = () => p.phase === 'ended';
    try {
      await ensureRoom(room);
      if (ended()) return;
      const published = await media.publish(frame.offer, offer.descriptions);
      if (ended()) return;
      p.audioMid = published.audioMid;
      p.phase = 'live';
      syncMedia(p);
      socket.link.send({
        event: 'joined',
        server_id: channel.server_id,
        channel_id: channel.id,
        answer: { type: 'answer', sdp: withOpusBitrate(published.answer.sdp, channel.bitrate ?? 64_000) },
        ice_servers: iceServers(userId),
        voice_state: stateOf(p),
        can_speak: p.canSpeak,
        can_video: p.canVideo,
      });
      announce(p);
    } catch (err) {
      if (ended()) return;
      end(p, null);
      throw err instanceof JanusError ? new HttpError(503, VOICE_UNREACHABLE) : err;
    }
  }

  /** The STUN and TURN servers for a browser, with a TURN credential of its own (coturn use-auth-secret). */
  function iceServers(userId: string) {
    if (!settings || settings.turnUrls.length === 0) return [];
    const stun = settings.turnUrls.filter((u) => u.startsWith('stun:'));
    const turn = settings.turnUrls.filter((u) => !u.startsWith('stun:'));
    const out: { urls: string[]; username?: string; credential?: string }[] = [];
    if (stun.length) out.push({ urls: stun });
    if (turn.length && settings.turnSecret) {
      const { username, credential } = turnCredentials(settings.turnSecret, userId, clock.now());
      out.push({ urls: turn, username, credential });
    }
    return out;
  }

  // ---- a voice socket ----------------------------------------------------------------------

  const inCall = (socket: Socket): Participant => {
    const p = participants.get(socket.user.id);
    if (!p || p.socket !== socket) throw conflict('not in a voice channel');
    return p;
  };

  async function handle(socket: Socket, frame: VoiceClientFrame): Promise<void> {
    switch (frame.op) {
      case 'join':
        return join(socket, frame);
      case 'publish': {
        const p = inCall(socket);
        if (p.phase !== 'live') throw conflict('the join is not done yet');
        const offer = readOffer(frame.offer, frame.media, p.canVideo);
        const answer = await p.media.republish(frame.offer, offer.descriptions).catch((err: unknown) => {
          throw err instanceof JanusError ? new HttpError(503, VOICE_UNREACHABLE) : err;
        });
        if (p.phase !== 'live') return;
        p.labels = offer.labels;
        socket.link.send({
          event: 'published',
          answer: { type: 'answer', sdp: withOpusBitrate(answer.sdp, directory.channel(p.channelId)?.bitrate ?? 64_000) },
        });
        if (p.video !== offer.video || p.stream !== offer.stream) {
          p.video = offer.video;
          p.stream = offer.stream;
          announce(p);
        }
        return;
      }
      case 'answer':
        if (!inCall(socket).media.answer(frame.answer)) throw conflict('no subscription offer is waiting for an answer');
        return;
      case 'candidate':
        inCall(socket).media.trickle(frame.target, frame.candidate);
        return;
      case 'state': {
        const p = inCall(socket);
        const before = stateOf(p);
        p.selfMute = frame.self_mute;
        p.selfDeaf = frame.self_deaf;
        syncMedia(p);
        if (p.phase === 'live' && JSON.stringify(before) !== JSON.stringify(stateOf(p))) announce(p);
        return;
      }
      case 'leave': {
        const p = participants.get(socket.user.id);
        if (p && p.socket === socket) end(p, null);
        return;
      }
    }
  }

  // ---- kept true -----------------------------------------------------------------------------

  /** Judges again the people of every server whose access rules changed since they were last judged. */
  function recheck(): void {
    const byServer = new Map<string, Participant[]>();
    for (const p of participants.values()) byServer.set(p.serverId, [...(byServer.get(p.serverId) ?? []), p]);
    for (const serverId of judgedWith.keys()) if (!byServer.has(serverId)) judgedWith.delete(serverId);
    if (byServer.size === 0) return;
    const rules = perms.channelRulesOf([...byServer.keys()]);
    for (const [serverId, people] of byServer) {
      const now = rules.get(serverId) ?? null;
      if (judgedWith.has(serverId) && judgedWith.get(serverId) === now) continue;
      judgedWith.set(serverId, now);
      for (const p of people) judge(p, now);
      if (now) tellNewViewers(serverId, now);
    }
  }

  function judge(p: Participant, rules: ServerAccess | null): void {
    if (!rules || rules.standingIn(p.userId) === null) return end(p, 'removed', 'You are no longer a member of this server.');
    if (!directory.channel(p.channelId)) return end(p, 'channel_deleted', 'The voice channel was deleted.');
    const flags = rules.flags(p.userId, p.channelId);
    if (!(flags & VIEW) || !has(flags, 'connect')) return end(p, 'no_permission', 'You may no longer connect to this voice channel.');
    const until = rules.timeoutUntil(p.userId);
    if (until !== null && until > iso(clock.now())) return end(p, 'timed_out', `You are timed out in this server until ${until}.`);
    const canSpeak = has(flags, 'speak');
    const canVideo = has(flags, 'video');
    if (canSpeak === p.canSpeak && canVideo === p.canVideo) return;
    const before = stateOf(p);
    p.canSpeak = canSpeak;
    p.canVideo = canVideo;
    if (!canVideo) {
      p.video = false;
      p.stream = false;
    }
    syncMedia(p);
    if (p.phase !== 'live') return;
    if (p.socket.open) p.socket.link.send({ event: 'rights', can_speak: canSpeak, can_video: canVideo });
    if (JSON.stringify(before) !== JSON.stringify(stateOf(p))) announce(p);
  }

  /** Members who now see a voice channel with people in it (a role, an overwrite, a join) are told who is there. */
  function tellNewViewers(serverId: string, rules: ServerAccess): void {
    const byChannel = new Map<string, Participant[]>();
    for (const p of participants.values()) {
      if (p.serverId === serverId && p.phase === 'live') byChannel.set(p.channelId, [...(byChannel.get(p.channelId) ?? []), p]);
    }
    for (const [channelId, people] of byChannel) {
      const seeing = rules.viewers(channelId);
      const before = viewersOf.get(channelId);
      viewersOf.set(channelId, new Set(seeing));
      if (!before) continue;
      const newcomers = seeing.filter((id) => !before.has(id));
      if (newcomers.length) for (const p of people) hub.toUsers(newcomers, { event: 'voice_state', ...stateOf(p) });
    }
  }

  function moderationOf(serverId: string, userId: string) {
    const row = loadModeration.get(serverId, userId);
    return { mute: row?.mute === 1, deaf: row?.deaf === 1 };
  }

  return {
    configured: settings !== null,

    open(user, token, link) {
      if (!settings) throw new HttpError(503, VOICE_NOT_SET_UP);
      if (closing) throw new HttpError(503, 'server shutting down');
      const mine = socketsOf.get(token) ?? new Set<Socket>();
      if (mine.size >= MAX_VOICE_SOCKETS_PER_SESSION) {
        throw new HttpError(429, `too many open voice sockets for this session (at most ${MAX_VOICE_SOCKETS_PER_SESSION})`, { 'Retry-After': '5' });
      }
      const socket: Socket = { user, token, link, movedTo: null, open: true };
      mine.add(socket);
      socketsOf.set(token, mine);
      return {
        opened() {
          if (socket.open) link.send({ event: 'ice_servers', ice_servers: iceServers(user.id) });
        },
        frame(text) {
          let name: string | null = null;
          const refuse = (err: unknown) => {
            if (!socket.open) return;
            const error = toHttpError(err, log);
            link.send({ event: 'error', op: name, status: error.status, message: error.message });
          };
          try {
            const frame = readFrame(text);
            name = frame.op;
            if (closing) throw new HttpError(503, 'server shutting down');
            handle(socket, frame).catch(refuse);
          } catch (err) {
            refuse(err);
          }
        },
        closed() {
          socket.open = false;
          mine.delete(socket);
          if (mine.size === 0 && socketsOf.get(token) === mine) socketsOf.delete(token);
          const p = participants.get(user.id);
          if (p && p.socket === socket) end(p, null);
        },
      };
    },

    endSession(token) {
      for (const socket of [...(socketsOf.get(token) ?? [])]) {
        const p = participants.get(socket.user.id);
        if (p && p.socket === socket) end(p, 'removed', 'You were signed out.');
        socket.link.close(CLOSE.sessionEnded.code, CLOSE.sessionEnded.reason);
      }
    },

    endUser(userId) {
      const p = participants.get(userId);
      if (p) end(p, 'removed', 'Your account is suspended.');
      for (const set of socketsOf.values()) {
        for (const socket of set) if (socket.user.id === userId) socket.link.close(CLOSE.accessRemoved.code, CLOSE.accessRemoved.reason);
      }
    },

    statesSeenBy(userId, serverIds) {
      const wanted = new Set(serverIds);
      const out: VoiceStateRecord[] = [];
      const rulesOf = new Map<string, ServerAccess | null>();
      for (const p of participants.values()) {
        if (p.phase !== 'live' || !wanted.has(p.serverId)) continue;
        if (!rulesOf.has(p.serverId)) rulesOf.set(p.serverId, perms.channelRules(p.serverId));
        if ((rulesOf.get(p.serverId)?.flags(userId, p.channelId) ?? 0) & VIEW) out.push(stateOf(p));
      }
      return out;
    },

    stateOf(userId) {
      const p = participants.get(userId);
      return p && p.phase === 'live' ? stateOf(p) : null;
    },

    moderationOf,

    saveModeration(serverId, userId, state) {
      storeModeration.run(serverId, userId, state.mute ? 1 : 0, state.deaf ? 1 : 0);
    },

    applyModeration(serverId, userId) {
      const p = participants.get(userId);
      if (!p || p.serverId !== serverId || p.phase === 'ended') return;
      const before = stateOf(p);
      const saved = moderationOf(serverId, userId);
      p.serverMute = saved.mute;
      p.serverDeaf = saved.deaf;
      syncMedia(p);
      if (p.phase === 'live' && JSON.stringify(before) !== JSON.stringify(stateOf(p))) announce(p);
    },

    moveOrDisconnect(userId, channelId) {
      const p = participants.get(userId);
      if (!p || p.phase === 'ended') return;
      if (channelId === null) return end(p, 'moderator', 'A moderator disconnected you from voice.');
      if (channelId === p.channelId) return;
      p.socket.movedTo = channelId;
      end(p, null);
      if (p.socket.open) p.socket.link.send({ event: 'moved', server_id: p.serverId, channel_id: channelId });
    },

    async status() {
      const reachable = janus ? await janus.reachable() : false;
      return { configured: settings !== null, reachable, rooms: rooms.size, participants: participants.size };
    },

    counts: () => ({ janusUp: janus?.connected ?? false, rooms: rooms.size, participants: participants.size }),

    async close() {
      closing = true;
      if (recheckTimer) clearInterval(recheckTimer);
      recheckTimer = null;
      const ending = [...participants.values()];
      for (const p of ending) end(p, null);
      for (const set of socketsOf.values()) for (const socket of set) socket.link.close(CLOSE.goingAway.code, CLOSE.goingAway.reason);
      await Promise.all(ending.map((p) => p.media.close().catch(() => {})));
      await Promise.all([...rooms.values()].map((room) => room.lifecycle));
      await janus?.close();
    },
  };
}
