/**
 * The child process that holds the voice tests' WebRTC participants (@roamhq/wrtc), driven by
 * test/helpers/voice/peers.ts over the IPC channel. They live apart from the test process
 * because wrtc's native module never lets a process end on its own: with an audio track alive
 * the event loop never empties, and once the track is stopped Node's exit-time cleanup
 * crashes in it (a known defect of node-webrtc). Here the parent ends the child with an
 * explicit exit, and a crash could not touch the test's result anyway.
 *
 * Each participant has two PeerConnections, as in the VideoRoom: one publishing a sine tone
 * (RTCAudioSource, 10 ms frames of 48 kHz PCM) and one receiving every other participant's
 * audio (one multistream subscription); each received m-line has an RTCAudioSink that keeps
 * its last second of samples, the time of its first audible frame and a frame count.
 */
import wrtc from '@roamhq/wrtc';
import { dominantFrequency, rms, toneSamples } from './tone';
import type { HostEvent, HostRequest, MidLevel } from './peers';

// wrtc's types lean on the DOM's; these are the parts we use.
interface Candidate {
  candidate: string;
  sdpMid: string | null;
  sdpMLineIndex: number | null;
}
interface Description {
  type: 'offer' | 'answer';
  sdp: string;
}
interface Track {
  kind: string;
  stop(): void;
}
interface PeerConnection {
  addTrack(track: Track): unknown;
  createOffer(): Promise<Description>;
  createAnswer(): Promise<Description>;
  setLocalDescription(d: Description): Promise<void>;
  setRemoteDescription(d: Description): Promise<void>;
  readonly localDescription: Description | null;
  readonly connectionState: string;
  getStats(): Promise<Map<string, Record<string, unknown>>>;
  close(): void;
  onicecandidate: ((event: { candidate: Candidate | null }) => void) | null;
  ontrack: ((event: { track: Track; transceiver: { mid: string | null } }) => void) | null;
}
interface AudioSink {
  ondata: ((data: { samples: Int16Array; sampleRate: number; channelCount?: number }) => void) | null;
  stop(): void;
}
const RTC = wrtc as unknown as {
  RTCPeerConnection: new (config?: Record<string, unknown>) => PeerConnection;
  nonstandard: {
    RTCAudioSource: new () => { createTrack(): Track; onData(data: { samples: Int16Array; sampleRate: number }): void };
    RTCAudioSink: new (track: Track) => AudioSink;
  };
};

const SAMPLE_RATE = 48_000;
const FRAME = SAMPLE_RATE / 100;
/** A frame is audible above this level (the tone is sent at 0.3 of full scale). */
const AUDIBLE_RMS = 0.01;

interface Received {
  sink: AudioSink;
  sampleRate: number;
  /** The last second, oldest first. */
  recent: Int16Array[];
  frames: number;
  firstAudibleAt: number | null;
}

interface Peer {
  pub: PeerConnection;
  sub: PeerConnection | null;
  track: Track;
  timer: NodeJS.Timeout;
  received: Map<string, Received>;
  config: Record<string, unknown>;
}

const peers = new Map<string, Peer>();

const send = (message: HostEvent | { id: number; result?: unknown; error?: string }) => process.send!(message);

function candidateEvents(name: string, which: 'pub' | 'sub', pc: PeerConnection): void {
  pc.onicecandidate = ({ candidate }) =>
    send({
      event: 'candidate',
      name,
      pc: which,
      candidate: candidate ? { candidate: candidate.candidate, sdpMid: candidate.sdpMid, sdpMLineIndex: candidate.sdpMLineIndex } : null,
    });
}

function createPeer(name: string, frequency: number, iceServers: unknown[], relayOnly: boolean): void {
  const config = { iceServers, ...(relayOnly ? { iceTransportPolicy: 'relay' } : {}) };
  const pub = new RTC.RTCPeerConnection(config);
  const source = new RTC.nonstandard.RTCAudioSource();
  const track = source.createTrack();
  pub.addTrack(track);
  candidateEvents(name, 'pub', pub);
  // The tone follows the clock: a late timer (a busy machine) sends the frames it owes at once.
  const started = Date.now();
  let sent = 0;
  const timer = setInterval(() => {
    const due = Math.floor((Date.now() - started) / 10);
    if (due - sent > 20) sent = due - 20;
    for (; sent < due; sent++) source.onData({ samples: toneSamples(frequency, SAMPLE_RATE, sent * FRAME, FRAME), sampleRate: SAMPLE_RATE });
  }, 10);
  peers.set(name, { pub, sub: null, track, timer, received: new Map(), config });
}

function peer(name: string): Peer {
  const found = peers.get(name);
  if (!found) throw new Error(`no participant ${name}`);
  return found;
}

function subscriber(name: string): PeerConnection {
  const p = peer(name);
  if (p.sub) return p.sub;
  const sub = new RTC.RTCPeerConnection(p.config);
  candidateEvents(name, 'sub', sub);
  sub.ontrack = ({ track, transceiver }) => {
    const mid = transceiver.mid;
    if (track.kind !== 'audio' || mid === null) return;
    p.received.get(mid)?.sink.stop();
    const entry: Received = { sink: new RTC.nonstandard.RTCAudioSink(track), sampleRate: SAMPLE_RATE, recent: [], frames: 0, firstAudibleAt: null };
    entry.sink.ondata = ({ samples, sampleRate, channelCount = 1 }) => {
      const mono = channelCount === 1 ? samples : samples.filter((_, i) => i % channelCount === 0);
      entry.sampleRate = sampleRate;
      entry.frames++;
      entry.recent.push(mono.slice());
      if (entry.recent.length > 100) entry.recent.shift();
      if (entry.firstAudibleAt === null && rms(mono) > AUDIBLE_RMS) entry.firstAudibleAt = Date.now();
    };
    p.received.set(mid, entry);
  };
  p.sub = sub;
  return sub;
}

async function levels(name: string, windowMs: number): Promise<Record<string, MidLevel>> {
  const p = peer(name);
  const packets = new Map<string, number>();
  if (p.sub) {
    for (const stat of (await p.sub.getStats()).values()) {
      if (stat.type === 'inbound-rtp' && typeof stat.mid === 'string') packets.set(stat.mid, Number(stat.packetsReceived ?? 0));
    }
  }
  const out: Record<string, MidLevel> = {};
  for (const [mid, entry] of p.received) {
    const frames = entry.recent.slice(-Math.max(1, Math.round(windowMs / 10)));
    const samples = new Int16Array(frames.reduce((n, f) => n + f.length, 0));
    let at = 0;
    for (const frame of frames) {
      samples.set(frame, at);
      at += frame.length;
    }
    out[mid] = {
      frequency: dominantFrequency(samples, entry.sampleRate),
      rms: rms(samples),
      frames: entry.frames,
      packets: packets.get(mid) ?? 0,
      firstAudibleAt: entry.firstAudibleAt,
    };
  }
  return out;
}

/** The type (host, srflx, relay) of our end of the candidate pair ICE chose, null before one is. */
async function selectedCandidateType(pc: PeerConnection): Promise<string | null> {
  const stats = [...(await pc.getStats()).values()];
  const pair = stats.find((s) => s.type === 'candidate-pair' && (s.selected === true || s.nominated === true) && s.state === 'succeeded');
  const local = pair && stats.find((s) => s.type === 'local-candidate' && s.id === pair.localCandidateId);
  return local ? String(local.candidateType) : null;
}

function close(name: string): void {
  const p = peers.get(name);
  if (!p) return;
  peers.delete(name);
  clearInterval(p.timer);
  for (const entry of p.received.values()) entry.sink.stop();
  p.track.stop();
  p.pub.close();
  p.sub?.close();
}

async function handle(request: HostRequest): Promise<unknown> {
  switch (request.method) {
    case 'create':
      createPeer(request.name, request.frequency, request.iceServers ?? [], request.relayOnly ?? false);
      return null;
    case 'publishOffer': {
      const pub = peer(request.name).pub;
      await pub.setLocalDescription(await pub.createOffer());
      return pub.localDescription;
    }
    case 'publishAnswer':
      await peer(request.name).pub.setRemoteDescription(request.jsep);
      return null;
    case 'subscribeOffer': {
      const sub = subscriber(request.name);
      await sub.setRemoteDescription(request.jsep);
      await sub.setLocalDescription(await sub.createAnswer());
      return sub.localDescription;
    }
    case 'levels':
      return levels(request.name, request.windowMs);
    case 'state': {
      const p = peer(request.name);
      return { pub: p.pub.connectionState, sub: p.sub?.connectionState ?? null, pubCandidate: await selectedCandidateType(p.pub) };
    }
    case 'close':
      close(request.name);
      return null;
  }
}

process.on('message', (message: { id: number } & HostRequest) => {
  if (message.method === ('exit' as string)) {
    for (const name of [...peers.keys()]) close(name);
    // See above: an explicit exit, never the end of the event loop.
    process.exit(0);
  }
  handle(message).then(
    (result) => send({ id: message.id, result }),
    (err: unknown) => send({ id: message.id, error: err instanceof Error ? err.message : String(err) }),
  );
});
process.on('disconnect', () => process.exit(0));
send({ event: 'ready' });
