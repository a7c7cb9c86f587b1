// @ts-check
// Voice channels in the browser (docs/voice.md, docs/api.md "Voice"): one call at a time. The
// voice socket (/api/voice/ws) carries the signaling; media goes between this page and the
// media server on two RTCPeerConnections: one sends (the microphone, a camera, a screen), one
// receives everyone else (the server's multistream subscription: its offers come on the socket
// and are answered here). Who is in which channel, and how (mute, deafen, camera, screen,
// speaking), comes from the user stream's voice_state events (store.js state.voice); this
// module keeps what only this tab knows: its own call, the streams it receives, its controls.
import { state, emit, on, voiceIn, displayName } from './store.js';
import { $, el, toast, iconButton } from './ui.js';

/**
 * @typedef {import('../../types/client').VoiceEvents} VoiceEvents
 * @typedef {import('../../types/client').VoiceOps} VoiceOps
 * @typedef {VoiceEvents[keyof VoiceEvents]} VoiceFrame
 * @typedef {'idle' | 'connecting' | 'live'} CallStatus
 */

/** The call of this tab. */
export const call = {
  /** @type {CallStatus} */
  status: 'idle',
  /** @type {string | null} */
  serverId: null,
  /** @type {string | null} */
  channelId: null,
  selfMute: false,
  selfDeaf: false,
  camera: false,
  screen: false,
  canSpeak: true,
  canVideo: true,
  /** Why the last call ended, when it did not end by the user's asking. */
  notice: '',
};

/** @type {WebSocket | null} */
let socket = null;
/** @type {Promise<RTCIceServer[]> | null} */
let socketReady = null;
/** @type {RTCIceServer[]} */
let iceServers = [];
/** @type {RTCPeerConnection | null} */
let pub = null;
/** @type {RTCPeerConnection | null} */
let sub = null;
/** @type {MediaStream | null} */
let mic = null;
/** @type {Record<'camera' | 'screen', RTCRtpTransceiver | null>} */
const videoSenders = { camera: null, screen: null };
/** Candidates of the receiving connection that came before it existed. */
let early = [];
/** Whose each received m-line is: mid -> {user_id, kind}. */
let streams = new Map();
/** What this tab receives, by user: their audio element and video streams. */
const remote = new Map();
/** The tiles shown (camera and screen), for the grid; the one focused. */
let focused = '';
/** A join's frames are sent once it was: the candidates gathered before wait. */
let joinSent = false;
let pendingCandidates = [];

/** @param {VoiceOps[keyof VoiceOps]} frame */
function send(frame) {
  if (socket?.readyState === WebSocket.OPEN) socket.send(JSON.stringify(frame));
}

/** The voice socket, opened when first needed: resolves with the ICE servers it sends first. */
function openSocket() {
  if (socket && socket.readyState <= WebSocket.OPEN && socketReady) return socketReady;
  const ws = new WebSocket(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/api/voice/ws`);
  socket = ws;
  socketReady = new Promise((resolve, reject) => {
    ws.addEventListener('message', (event) => {
      const frame = /** @type {VoiceFrame} */ (JSON.parse(String(event.data)));
      if (frame.event === 'ice_servers') {
        iceServers = frame.ice_servers;
        resolve(iceServers);
      } else handle(frame);
    });
    ws.addEventListener('close', () => {
      reject(new Error('voice is not available here'));
      if (socket === ws) {
        socket = null;
        socketReady = null;
        if (call.status !== 'idle') endCall('The voice connection was lost.');
      }
    });
  });
  socketReady.catch(() => {});
  return socketReady;
}

/**
 * Joins a voice channel (leaving any other call, in this tab or another).
 * @param {string} serverId
 * @param {string} channelId
 */
export async function joinVoice(serverId, channelId) {
  if (call.channelId === channelId && call.status !== 'idle') return;
  closeMedia();
  Object.assign(call, { status: 'connecting', serverId, channelId, camera: false, screen: false, notice: '' });
  changed();
  try {
    await openSocket();
    mic ??= await navigator.mediaDevices.getUserMedia({ audio: { echoCancellation: true, noiseSuppression: true, autoGainControl: true }, video: false });
    applySelfMute();
    pub = new RTCPeerConnection({ iceServers });
    const pc = pub;
    pc.addTransceiver(mic.getAudioTracks()[0], { direction: 'sendonly' });
    pc.onicecandidate = ({ candidate }) => {
      const frame = candidateFrame('publisher', candidate);
      if (joinSent) send(frame);
      else pendingCandidates.push(frame);
    };
    const offer = await pc.createOffer();
    await pc.setLocalDescription(offer);
    if (pub !== pc) return;
    send({
      op: 'join',
      channel_id: channelId,
      offer: { type: 'offer', sdp: pc.localDescription.sdp },
      media: mediaOf(pc),
      self_mute: call.selfMute,
      self_deaf: call.selfDeaf,
    });
    joinSent = true;
    for (const frame of pendingCandidates.splice(0)) send(frame);
  } catch (err) {
    endCall(err instanceof DOMException ? `The microphone is not available: ${err.message}` : String(err.message || err));
  }
}

/**
 * One of our ICE candidates (null: gathering done), for the server.
 * @param {'publisher' | 'subscriber'} target
 * @param {RTCIceCandidate | null} candidate
 * @returns {VoiceOps['candidate']}
 */
function candidateFrame(target, candidate) {
  if (!candidate) return { op: 'candidate', target, candidate: null };
  const { sdpMid, sdpMLineIndex, usernameFragment } = candidate;
  return { op: 'candidate', target, candidate: { candidate: candidate.candidate, sdpMid, sdpMLineIndex, usernameFragment } };
}

/** What each m-line of the sending connection carries, by mid. */
function mediaOf(pc) {
  return pc
    .getTransceivers()
    .filter((t) => t.mid !== null)
    .map((t) => ({ mid: t.mid, kind: t === videoSenders.camera ? 'camera' : t === videoSenders.screen ? 'screen' : 'audio' }));
}

/** Leaves the call (the user asked). */
export function leaveVoice() {
  send({ op: 'leave' });
  endCall('');
}

/** @param {boolean} mute */
export function setSelfMute(mute) {
  call.selfMute = mute;
  if (!mute) call.selfDeaf = false;
  sendState();
}

/** Deafened is muted too; undeafened keeps the mute one had set. */
export function toggleDeaf() {
  call.selfDeaf = !call.selfDeaf;
  if (call.selfDeaf) call.selfMute = true;
  sendState();
}

function sendState() {
  applySelfMute();
  for (const entry of remote.values()) if (entry.audio) entry.audio.muted = call.selfDeaf;
  if (call.status !== 'idle') send({ op: 'state', self_mute: call.selfMute, self_deaf: call.selfDeaf });
  changed();
}

/** The microphone's track is off while muted (or without speak): nothing leaves the browser. */
function applySelfMute() {
  for (const track of mic?.getAudioTracks() ?? []) track.enabled = !call.selfMute && !call.selfDeaf && call.canSpeak;
}

/**
 * Turns a camera or a screen share on or off: a new offer of the sending connection.
 * @param {'camera' | 'screen'} kind
 */
export async function toggleVideo(kind) {
  if (!pub || call.status !== 'live') return;
  const turningOn = !call[kind];
  try {
    let transceiver = videoSenders[kind];
    if (turningOn) {
      const media =
        kind === 'camera' ? await navigator.mediaDevices.getUserMedia({ video: true }) : await navigator.mediaDevices.getDisplayMedia({ video: true });
      const track = media.getVideoTracks()[0];
      // The browser's own "stop sharing" button ends it as ours does.
      track.addEventListener('ended', () => {
        if (call[kind] && videoSenders[kind]?.sender.track === track) void toggleVideo(kind);
      });
      if (transceiver) {
        await transceiver.sender.replaceTrack(track);
        transceiver.direction = 'sendonly';
      } else {
        transceiver = pub.addTransceiver(track, { direction: 'sendonly', streams: [media] });
        videoSenders[kind] = transceiver;
      }
    } else if (transceiver) {
      transceiver.sender.track?.stop();
      await transceiver.sender.replaceTrack(null);
      transceiver.direction = 'inactive';
    }
    call[kind] = turningOn;
    await pub.setLocalDescription(await pub.createOffer());
    send({ op: 'publish', offer: { type: 'offer', sdp: pub.localDescription.sdp }, media: mediaOf(pub) });
    changed();
  } catch (err) {
    toast(`Could not ${turningOn ? 'start' : 'stop'} the ${kind === 'camera' ? 'camera' : 'screen share'}: ${err.message || err}`);
  }
}

/** @param {VoiceFrame} frame */
async function handle(frame) {
  switch (frame.event) {
    case 'joined':
      if (!pub || frame.channel_id !== call.channelId) return;
      iceServers = frame.ice_servers;
      call.canSpeak = frame.can_speak;
      call.canVideo = frame.can_video;
      applySelfMute();
      await pub.setRemoteDescription(frame.answer);
      call.status = 'live';
      changed();
      return;
    case 'published':
      await pub?.setRemoteDescription(frame.answer);
      return;
    case 'subscription':
      return subscribe(frame);
    case 'candidate': {
      const pc = frame.target === 'publisher' ? pub : sub;
      if (!pc && frame.target === 'subscriber') early.push(frame.candidate);
      else await pc?.addIceCandidate(frame.candidate ?? undefined).catch(() => {});
      return;
    }
    case 'rights':
      call.canSpeak = frame.can_speak;
      call.canVideo = frame.can_video;
      applySelfMute();
      if (!frame.can_video) for (const kind of /** @type {const} */ (['camera', 'screen'])) if (call[kind]) await toggleVideo(kind);
      changed();
      return;
    case 'moved':
      toast('A moderator moved you to another voice channel.', false);
      closeMedia();
      call.status = 'idle';
      return joinVoice(frame.server_id, frame.channel_id);
    case 'disconnected': {
      const restart = frame.reason === 'media_restart';
      const where = restart ? { serverId: call.serverId, channelId: call.channelId } : null;
      endCall(frame.message);
      // The media server restarted: join again by ourselves, and say so.
      if (where?.channelId) setTimeout(() => void joinVoice(where.serverId, where.channelId), 1000);
      return;
    }
    case 'error':
      if (frame.op === 'join' || call.status === 'connecting') endCall(frame.message);
      else toast(frame.message);
      return;
    default:
  }
}

/**
 * An offer of the receiving connection: everyone else's audio and video on one connection.
 * @param {VoiceEvents['subscription']} frame
 */
async function subscribe(frame) {
  if (!sub) {
    sub = new RTCPeerConnection({ iceServers });
    const pc = sub;
    pc.onicecandidate = ({ candidate }) => send(candidateFrame('subscriber', candidate));
    pc.ontrack = ({ track, transceiver }) => received(transceiver.mid, track);
  }
  streams = new Map(frame.streams.map((s) => [s.mid, s]));
  await sub.setRemoteDescription(frame.offer);
  for (const candidate of early.splice(0)) await sub.addIceCandidate(candidate ?? undefined).catch(() => {});
  const answer = await sub.createAnswer();
  await sub.setLocalDescription(answer);
  send({ op: 'answer', answer: { type: 'answer', sdp: sub.localDescription.sdp } });
  // A renegotiation may have moved a stream to another mid: attach again what is live.
  for (const t of sub.getTransceivers()) if (t.mid && t.receiver.track && t.currentDirection !== 'inactive') received(t.mid, t.receiver.track);
  pruneRemote();
  changed();
}

/**
 * A received track: someone's audio (an element of its own, muted while deafened) or video.
 * @param {string | null} mid
 * @param {MediaStreamTrack} track
 */
function received(mid, track) {
  const about = mid === null ? undefined : streams.get(mid);
  if (!about) return;
  const entry = remote.get(about.user_id) ?? { audio: null, camera: null, screen: null };
  remote.set(about.user_id, entry);
  const stream = new MediaStream([track]);
  if (about.kind === 'audio') {
    entry.audio ??= el('audio', { autoplay: true });
    entry.audio.srcObject = stream;
    entry.audio.muted = call.selfDeaf;
    entry.audio.volume = volumeOf(about.user_id);
    if (!entry.audio.isConnected) $('voice-audio').append(entry.audio);
  } else entry[about.kind] = stream;
  changed();
}

/** Drops what belongs to nobody in the subscription any more. */
function pruneRemote() {
  const live = new Set([...streams.values()].map((s) => `${s.user_id} ${s.kind}`));
  for (const [userId, entry] of remote) {
    for (const kind of ['camera', 'screen']) if (entry[kind] && !live.has(`${userId} ${kind}`)) entry[kind] = null;
    if (entry.audio && !live.has(`${userId} audio`)) {
      entry.audio.remove();
      entry.audio = null;
    }
    if (!entry.audio && !entry.camera && !entry.screen) remote.delete(userId);
  }
}

/**
 * What this tab receives now, from the receiving connection's statistics (for a test, or a
 * "connection info" view): per inbound stream its kind, packets, losses and decoded frames.
 */
export async function voiceStats() {
  /** @type {Record<string, any>[]} */
  const out = [{ kind: 'connections', publisher: pub?.connectionState ?? null, subscriber: sub?.connectionState ?? null, streams: streams.size }];
  if (!sub) return out;
  for (const stat of (await sub.getStats()).values()) {
    if (stat.type !== 'inbound-rtp') continue;
    out.push({
      kind: stat.kind,
      mid: stat.mid,
      user_id: streams.get(stat.mid)?.user_id ?? null,
      packetsReceived: stat.packetsReceived ?? 0,
      packetsLost: stat.packetsLost ?? 0,
      framesDecoded: stat.framesDecoded ?? 0,
    });
  }
  return out;
}

/** Per-person output volume (0..1), kept in this browser. */
export function volumeOf(userId) {
  const v = Number(localStorage.getItem(`chat:voice-volume:${userId}`) ?? '1');
  return Number.isFinite(v) ? Math.min(1, Math.max(0, v)) : 1;
}

/** @param {string} userId @param {number} value */
export function setVolume(userId, value) {
  localStorage.setItem(`chat:voice-volume:${userId}`, String(value));
  const audio = remote.get(userId)?.audio;
  if (audio) audio.volume = value;
}

function closeMedia() {
  for (const pc of [pub, sub]) pc?.close();
  pub = null;
  sub = null;
  for (const kind of /** @type {const} */ (['camera', 'screen'])) {
    videoSenders[kind]?.sender.track?.stop();
    videoSenders[kind] = null;
  }
  for (const entry of remote.values()) entry.audio?.remove();
  remote.clear();
  streams = new Map();
  early = [];
  joinSent = false;
  pendingCandidates = [];
}

/** @param {string} notice why it ended ('' when the user asked) */
function endCall(notice) {
  closeMedia();
  for (const track of mic?.getTracks() ?? []) track.stop();
  mic = null;
  Object.assign(call, { status: 'idle', serverId: null, channelId: null, camera: false, screen: false, notice });
  if (notice) toast(notice);
  changed();
}

/** @param {string} userId */
export const userName = (userId) => {
  const known = state.users.get(userId);
  return known ? displayName(known) : 'someone';
};

const changed = () => {
  emit('voice');
  renderPanel();
};

// ---- the panel and the video grid ------------------------------------------------------

/** The voice panel above the user panel (while in a call) and the grid of cameras and screens. */
export function initVoice() {
  on('voice', renderPanel);
  on('nav', renderPanel);
  // Closing the tab leaves at once (the socket closes; the server ends the call).
  window.addEventListener('pagehide', () => socket?.close());
  renderPanel();
}

function channelName() {
  const server = state.servers.find((s) => s.id === call.serverId);
  return server?.channels.find((c) => c.id === call.channelId)?.name ?? 'voice';
}

function renderPanel() {
  const panel = $('voice-panel');
  panel.hidden = call.status === 'idle';
  if (call.status !== 'idle') {
    const muted = call.selfMute || call.selfDeaf || !call.canSpeak;
    panel.replaceChildren(
      el(
        'div',
        { class: 'voice-where', role: 'status' },
        el('strong', { text: call.status === 'live' ? 'Voice connected' : 'Connecting…' }),
        el('span', { class: 'muted', text: ` · ${channelName()}` }),
      ),
      el(
        'div',
        { class: 'voice-controls' },
        iconButton(muted ? 'mic-off' : 'mic', muted ? 'Unmute' : 'Mute', () => setSelfMute(!call.selfMute), {
          'aria-pressed': String(muted),
          disabled: !call.canSpeak,
          'data-voice': 'mute',
        }),
        iconButton(call.selfDeaf ? 'deaf' : 'headphones', call.selfDeaf ? 'Undeafen' : 'Deafen', toggleDeaf, {
          'aria-pressed': String(call.selfDeaf),
          'data-voice': 'deafen',
        }),
        iconButton('camera', call.camera ? 'Turn the camera off' : 'Turn the camera on', () => void toggleVideo('camera'), {
          'aria-pressed': String(call.camera),
          disabled: !call.canVideo || call.status !== 'live',
          'data-voice': 'camera',
        }),
        iconButton('screen', call.screen ? 'Stop sharing the screen' : 'Share the screen', () => void toggleVideo('screen'), {
          'aria-pressed': String(call.screen),
          disabled: !call.canVideo || call.status !== 'live',
          'data-voice': 'screen',
        }),
        iconButton('hangup', 'Leave voice', leaveVoice, { class: 'danger', 'data-voice': 'leave' }),
      ),
    );
  }
  renderGrid();
}

/** Cameras and screens of the others in the call, with their names; a click focuses one. */
function renderGrid() {
  const grid = $('voice-grid');
  const tiles = [];
  for (const [userId, entry] of remote) {
    for (const kind of /** @type {const} */ (['screen', 'camera'])) {
      const stream = entry[kind];
      if (!stream) continue;
      const key = `${userId} ${kind}`;
      const video = el('video', { autoplay: true, muted: true, playsInline: true });
      video.srcObject = stream;
      const label = `${userName(userId)}${kind === 'screen' ? ' · screen' : ''}`;
      tiles.push(
        el(
          'button',
          {
            type: 'button',
            class: `voice-tile${focused === key ? ' focused' : ''}`,
            'data-kind': kind,
            'data-user': userId,
            'aria-label': `${label}${focused === key ? ', focused' : ''}`,
            onclick: () => {
              focused = focused === key ? '' : key;
              renderGrid();
            },
          },
          video,
          el('span', { class: 'voice-tile-label', text: label }),
        ),
      );
    }
  }
  grid.hidden = tiles.length === 0;
  grid.classList.toggle(
    'has-focus',
    tiles.some((t) => t.classList.contains('focused')),
  );
  grid.replaceChildren(...tiles);
}

/** Who is in a voice channel, for the sidebar (store.js voiceIn). */
export { voiceIn };
