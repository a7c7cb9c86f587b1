import t from 'tap';
import { mLines, sends, withOpusBitrate } from '../../src/parts/voice/sdp';

/** What the chat server reads of a browser's offer (src/parts/voice/sdp.ts): never the client's word. */
const OFFER = [
  'v=0',
  'o=- 1 1 IN IP4 0.0.0.0',
  's=-',
  't=0 0',
  'a=group:BUNDLE 0 1 2',
  'm=audio 9 UDP/TLS/RTP/SAVPF 111 0',
  'a=mid:0',
  'a=sendrecv',
  'a=rtpmap:111 opus/48000/2',
  'a=fmtp:111 minptime=10;useinbandfec=1;maxaveragebitrate=510000',
  'a=rtpmap:0 PCMU/8000',
  'm=video 9 UDP/TLS/RTP/SAVPF 96',
  'a=mid:1',
  'a=inactive',
  'a=rtpmap:96 VP8/90000',
  'm=video 0 UDP/TLS/RTP/SAVPF 96',
  'a=mid:2',
  'a=sendonly',
  '',
].join('\r\n');

t.test('m-lines: kind, mid, port and direction; what sends', async (t) => {
  const lines = mLines(OFFER);
  t.same(
    lines.map((l) => [l.kind, l.mid, l.port, l.direction]),
    [
      ['audio', '0', 9, 'sendrecv'],
      ['video', '1', 9, 'inactive'],
      ['video', '2', 0, 'sendonly'],
    ],
  );
  t.same(lines.map(sends), [true, false, false], 'an inactive m-line and a rejected one (port 0) send nothing');
  // No direction on the m-line: the session's, else sendrecv (RFC 8866 6.7).
  t.equal(mLines('v=0\r\na=recvonly\r\nm=audio 9 RTP/AVP 0\r\n')[0].direction, 'recvonly');
  t.equal(mLines('v=0\r\nm=video 9 RTP/AVP 96\r\n')[0].direction, 'sendrecv');
  t.equal(mLines('v=0\r\nm=video 9 RTP/AVP 96\r\n')[0].mid, null, 'no mid');
});

t.test("Opus's bitrate in the answer: replaced where it was, added where it was not", async (t) => {
  const out = withOpusBitrate(OFFER, 64_000);
  t.match(out, /a=fmtp:111 minptime=10;useinbandfec=1;maxaveragebitrate=64000\r\n/);
  t.notMatch(out, /510000/);
  t.notMatch(out, /a=fmtp:0 /, 'not on a payload that is not Opus');
  const bare = withOpusBitrate('v=0\nm=audio 9 RTP/AVP 109\na=rtpmap:109 OPUS/48000/2\nm=video 9 RTP/AVP 109\na=rtpmap:109 VP8/90000\n', 32_000);
  t.match(bare, /a=rtpmap:109 OPUS\/48000\/2\na=fmtp:109 maxaveragebitrate=32000\n/, 'an fmtp line of its own, in the line ending of the SDP');
  t.equal(bare.match(/maxaveragebitrate/g)?.length, 1, 'only on the audio m-line');
});
