/**
 * What the chat server reads and changes in a browser's SDP (RFC 8866, with JSEP's BUNDLE and
 * mid, RFC 8829): the m-lines of an offer, to decide which media a publisher sends before any of
 * it reaches the media server, and Opus's bitrate in the answer Janus makes. Pure.
 *
 * A browser is not trusted: the media it may send is decided from the SDP it offers, not from
 * what it says beside it. An m-line sends media when its port is not 0 and its direction is
 * sendrecv or sendonly (the default when none is given, RFC 8866 6.7).
 */
export interface MLine {
  kind: string;
  /** a=mid, or null when it has none. */
  mid: string | null;
  port: number;
  direction: 'sendrecv' | 'sendonly' | 'recvonly' | 'inactive';
}

const DIRECTIONS = new Set(['sendrecv', 'sendonly', 'recvonly', 'inactive']);

/** The m-lines of an SDP, in order; the session-level direction is each one's default. */
export function mLines(sdp: string): MLine[] {
  const lines = sdp.split(/\r?\n/);
  let sessionDirection: MLine['direction'] = 'sendrecv';
  const out: MLine[] = [];
  for (const line of lines) {
    if (line.startsWith('m=')) {
      const [kind, port] = line.slice(2).split(' ');
      out.push({ kind, mid: null, port: Number.parseInt(port, 10) || 0, direction: sessionDirection });
      continue;
    }
    if (!line.startsWith('a=')) continue;
    const attribute = line.slice(2).trim();
    const current = out.at(-1);
    if (DIRECTIONS.has(attribute)) {
      if (current) current.direction = attribute as MLine['direction'];
      else sessionDirection = attribute as MLine['direction'];
    } else if (attribute.startsWith('mid:') && current) current.mid = attribute.slice(4);
  }
  return out;
}

/** Whether an m-line carries media out of its sender. */
export const sends = (m: MLine): boolean => m.port !== 0 && (m.direction === 'sendrecv' || m.direction === 'sendonly');

/**
 * The SDP with Opus asked to stay under `bitrate` bits per second (`maxaveragebitrate`, RFC 7587
 * 6.1) on every Opus payload of every audio m-line: given in the answer to a publisher's offer,
 * the browser's encoder keeps to it. A value already there is replaced.
 */
export function withOpusBitrate(sdp: string, bitrate: number): string {
  const eol = sdp.includes('\r\n') ? '\r\n' : '\n';
  const lines = sdp.split(/\r?\n/);
  const out: string[] = [];
  let opus: string[] = [];
  let inAudio = false;
  const withParameter = (parameters: string) => {
    const kept = parameters
      .split(';')
      .map((p) => p.trim())
      .filter((p) => p !== '' && !p.toLowerCase().startsWith('maxaveragebitrate='));
    return [...kept, `maxaveragebitrate=${bitrate}`].join(';');
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (line.startsWith('m=')) {
      inAudio = line.startsWith('m=audio ');
      opus = [];
      if (inAudio) {
        // The Opus payload types of this m-line, read ahead from its rtpmap lines.
        for (let j = i + 1; j < lines.length && !lines[j].startsWith('m='); j++) {
          const found = /^a=rtpmap:(\d+) opus\//i.exec(lines[j]);
          if (found) opus.push(found[1]);
        }
      }
      out.push(line);
      continue;
    }
    const fmtp = inAudio ? /^a=fmtp:(\d+) (.*)$/.exec(line) : null;
    if (fmtp && opus.includes(fmtp[1])) {
      out.push(`a=fmtp:${fmtp[1]} ${withParameter(fmtp[2])}`);
      opus = opus.filter((pt) => pt !== fmtp[1]);
      continue;
    }
    out.push(line);
    const rtpmap = inAudio ? /^a=rtpmap:(\d+) opus\//i.exec(line) : null;
    // An Opus payload with no fmtp line of its own gets one, right after its rtpmap.
    if (rtpmap && !lines.some((l) => l.startsWith(`a=fmtp:${rtpmap[1]} `))) {
      out.push(`a=fmtp:${rtpmap[1]} maxaveragebitrate=${bitrate}`);
      opus = opus.filter((pt) => pt !== rtpmap[1]);
    }
  }
  return out.join(eol);
}
