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
/**
 * The microphone through a gain node (the input volume), made only when the volume is not 100 %:
 * at 100 % the microphone's own track is sent, with no audio graph to start.
 * @type {{ context: AudioContext, gain: GainNode, track: MediaStreamTrack } | null}
 */
let boosted = null;
/** Push-to-talk: the key is held now. */
let talking = false;
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
    mic ??= await openMicrophone();
    pub = new RTCPeerConnection({ iceServers });
    const pc = pub;
    pc.addTransceiver(sentTrack(), { direction: 'sendonly' });
    applySelfMute();
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

/**
 * The track sent is off while muted, without speak, or with push-to-talk while its key is not
 * held: nothing leaves the browser.
 */
function applySelfMute() {
  const on = !call.selfMute && !call.selfDeaf && call.canSpeak && (!settings.pushToTalk || talking);
  for (const track of [...(mic?.getAudioTracks() ?? []), ...(boosted ? [boosted.track] : [])]) track.enabled = on;
}

// ---- the user's voice settings (kept in this browser) -----------------------------------

/**
 * @typedef {{ pushToTalk: boolean, pushToTalkKey: string, inputId: string, outputId: string, inputVolume: number }} VoiceSettings
 * pushToTalkKey: a KeyboardEvent.code; inputId, outputId: device ids ('' the browser's default);
 * inputVolume: 0 to 2 (1 is the microphone as it is).
 */
const SETTINGS_KEY = 'chat:voice-settings';
/** @type {VoiceSettings} */
const DEFAULTS = { pushToTalk: false, pushToTalkKey: 'KeyV', inputId: '', outputId: '', inputVolume: 1 };
/** @type {VoiceSettings} */
export const settings = readSettings();

/** @returns {VoiceSettings} */
function readSettings() {
  try {
    const kept = JSON.parse(localStorage.getItem(SETTINGS_KEY) ?? '{}');
    const got = { ...DEFAULTS, ...(kept && typeof kept === 'object' ? kept : {}) };
    const volume = Number(got.inputVolume);
    return {
      pushToTalk: got.pushToTalk === true,
      pushToTalkKey: typeof got.pushToTalkKey === 'string' && got.pushToTalkKey ? got.pushToTalkKey : DEFAULTS.pushToTalkKey,
      inputId: typeof got.inputId === 'string' ? got.inputId : '',
      outputId: typeof got.outputId === 'string' ? got.outputId : '',
      inputVolume: Number.isFinite(volume) ? Math.min(2, Math.max(0, volume)) : 1,
    };
  } catch {
    return { ...DEFAULTS };
  }
}

/**
 * Changes some settings, keeps them, and applies them to the call at once: another microphone
 * is opened and sent in place of the old one, the output goes to another device, the gain moves.
 * @param {Partial<VoiceSettings>} change
 */
export async function changeSettings(change) {
  const before = { ...settings };
  Object.assign(settings, change);
  localStorage.setItem(SETTINGS_KEY, JSON.stringify(settings));
  if (change.pushToTalk !== undefined) talking = false;
  try {
    if (settings.inputId !== before.inputId && mic) {
      const fresh = await openMicrophone();
      for (const track of mic.getTracks()) track.stop();
      mic = fresh;
      dropBoost();
      await resend();
    } else if (settings.inputVolume !== before.inputVolume && mic) {
      if (boosted && settings.inputVolume !== 1) boosted.gain.gain.value = settings.inputVolume;
      else {
        dropBoost();
        await resend();
      }
    }
    if (settings.outputId !== before.outputId) for (const entry of remote.values()) if (entry.audio) await playOn(entry.audio);
  } catch (err) {
    toast(`Could not apply the voice settings: ${err.message || err}`);
  }
  applySelfMute();
  changed();
}

/** The chosen microphone (the default one when it is gone), with the browser's cleaning. */
async function openMicrophone() {
  const audio = { echoCancellation: true, noiseSuppression: true, autoGainControl: true };
  if (settings.inputId) {
    try {
      return await navigator.mediaDevices.getUserMedia({ audio: { ...audio, deviceId: { exact: settings.inputId } }, video: false });
    } catch (err) {
      if (!(err instanceof DOMException) || (err.name !== 'OverconstrainedError' && err.name !== 'NotFoundError')) throw err;
    }
  }
  return navigator.mediaDevices.getUserMedia({ audio, video: false });
}

/** What is sent: the microphone's track, or at another input volume its track through a gain node. */
function sentTrack() {
  const track = mic.getAudioTracks()[0];
  if (settings.inputVolume === 1) return track;
  if (!boosted) {
    const context = new AudioContext();
    const gain = context.createGain();
    const out = context.createMediaStreamDestination();
    context
      .createMediaStreamSource(new MediaStream([track]))
      .connect(gain)
      .connect(out);
    void context.resume().catch(() => {});
    boosted = { context, gain, track: out.stream.getAudioTracks()[0] };
  }
  boosted.gain.gain.value = settings.inputVolume;
  return boosted.track;
}

function dropBoost() {
  boosted?.track.stop();
  void boosted?.context.close().catch(() => {});
  boosted = null;
}

/** The sending connection's audio sender (its first m-line), when there is one. */
const audioSender = () => pub?.getTransceivers().find((t) => t !== videoSenders.camera && t !== videoSenders.screen)?.sender;

/** The sending connection's audio now carries sentTrack() (no renegotiation). */
async function resend() {
  const sender = audioSender();
  if (sender) await sender.replaceTrack(sentTrack());
}

/**
 * What the sending connection sends now (for a test, or a settings view): whether its audio
 * track is on, and at what input volume.
 */
export function voiceSending() {
  const sender = audioSender();
  return { track: sender?.track ? { enabled: sender.track.enabled, boosted: sender.track === boosted?.track } : null, inputVolume: settings.inputVolume };
}

/** Whether this browser can choose where audio plays (HTMLMediaElement.setSinkId). */
export const canChooseOutput = () => 'setSinkId' in HTMLMediaElement.prototype;

/** @param {HTMLAudioElement} audio */
async function playOn(audio) {
  if (!canChooseOutput()) return;
  await /** @type {any} */ (audio).setSinkId(settings.outputId).catch(() => /** @type {any} */ (audio).setSinkId(''));
}

/**
 * Push-to-talk: the chosen key sends while held, anywhere on the page (as Discord's: in a text
 * field too, where the key also types; elsewhere it is taken, so it never types into the
 * composer). Not while a dialog is open (choosing the key is one).
 */
function listenForPushToTalk() {
  const typing = (target) => target instanceof HTMLElement && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName));
  const set = (held) => {
    if (talking === held) return;
    talking = held;
    applySelfMute();
    renderPanel();
  };
  // Capturing, on window: before the page's own keys (keyboard.js types a letter into the composer).
  window.addEventListener(
    'keydown',
    (e) => {
      if (!settings.pushToTalk || call.status === 'idle' || e.code !== settings.pushToTalkKey || document.querySelector('dialog[open]')) return;
      if (!typing(e.target)) e.preventDefault();
      set(true);
    },
    true,
  );
  window.addEventListener(
    'keyup',
    (e) => {
      if (e.code === settings.pushToTalkKey) set(false);
    },
    true,
  );
  // A key released while the page was not looking is never seen: let go on leaving it.
  window.addEventListener('blur', () => set(false));
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
    if (settings.outputId) void playOn(entry.audio);
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

/** @param {string} userId @param {number} value 0..1 */
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
  dropBoost();
  talking = false;
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
  listenForPushToTalk();
  renderPanel();
}

/** A KeyboardEvent.code as people name the key: KeyV → V, Digit1 → 1, Backquote stays. @param {string} code */
export const keyName = (code) => code.replace(/^Key(?=[A-Z]$)/, '').replace(/^Digit(?=\d$)/, '');

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
      ...(settings.pushToTalk && !muted
        ? [
            el('div', {
              class: `voice-ptt${talking ? ' talking' : ''}`,
              'data-voice': 'ptt',
              text: talking ? 'Talking' : `Push to talk: hold ${keyName(settings.pushToTalkKey)}`,
            }),
          ]
        : []),
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
        iconButton('gear', 'Voice settings', async () => (await import('./voice-settings.js')).openVoiceSettings(), { 'data-voice': 'settings' }),
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
