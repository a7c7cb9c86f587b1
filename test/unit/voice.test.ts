import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { JanusError, pluginAnswer, readFrame, videoRoomEventOf } from '../../src/parts/voice/janus-api';
import { OUR_PLUGIN, OUR_TRANSPORT, janusConfig, jcfg } from '../../src/parts/voice/janus-config';
import { turnCredentials } from '../../src/parts/voice/turn';
import { dominantFrequency, rms, toneSamples } from '../helpers/voice/tone';

// The pure parts of voice: the tone judge of the tests, the frames and events read from Janus,
// TURN credentials, the generated Janus configuration and the one in deploy/voice/.

t.test('the dominant frequency of a tone is found to within a hertz, noise, a weaker tone and all', async (t) => {
  for (const frequency of [220, 440, 660, 997.5, 1_800]) {
    const samples = toneSamples(frequency, 48_000, 123, 14_400);
    t.ok(Math.abs(dominantFrequency(samples, 48_000)! - frequency) <= 1, `${frequency} Hz`);
  }
  const mixed = toneSamples(440, 48_000, 0, 14_400, 0.3).map(
    (s, i) => s + toneSamples(660, 48_000, 0, 14_400, 0.1)[i] + Math.round((Math.sin(i * 12.9898) * 43758.5453) % 1) * 800,
  );
  t.ok(Math.abs(dominantFrequency(mixed, 48_000)! - 440) <= 1, 'the stronger of two tones, in noise');
  t.ok(Math.abs(dominantFrequency(toneSamples(440, 16_000, 0, 4_000), 16_000)! - 440) <= 1, 'at another sample rate');
  t.equal(dominantFrequency(new Int16Array(4_800), 48_000), null, 'silence has none');
  t.equal(rms(new Int16Array(480)), 0);
  t.ok(Math.abs(rms(toneSamples(440, 48_000, 0, 48_000, 0.5)) - 0.5 / Math.SQRT2) < 0.01, 'a sine’s level is its amplitude over √2');
  const frames = [toneSamples(440, 48_000, 0, 480), toneSamples(440, 48_000, 480, 480)];
  t.same([...frames[0], ...frames[1]], [...toneSamples(440, 48_000, 0, 960)], 'frames join without a click');
});

t.test('frames from Janus are typed, and what we do not know is null', async (t) => {
  t.same(readFrame('{"janus":"ack","transaction":"a","session_id":1}'), { janus: 'ack', transaction: 'a' });
  t.same(readFrame('{"janus":"success","transaction":"b","data":{"id":42}}'), { janus: 'success', transaction: 'b', data: { id: 42 } });
  t.same(readFrame('{"janus":"error","transaction":"c","error":{"code":403,"reason":"Unauthorized request"}}'), {
    janus: 'error',
    transaction: 'c',
    error: { code: 403, reason: 'Unauthorized request' },
  });
  t.same(
    readFrame(
      '{"janus":"event","sender":7,"transaction":"d","plugindata":{"plugin":"janus.plugin.videoroom","data":{"videoroom":"joined"}},"jsep":{"type":"answer","sdp":"v=0"}}',
    ),
    {
      janus: 'event',
      sender: 7,
      transaction: 'd',
      plugindata: { plugin: 'janus.plugin.videoroom', data: { videoroom: 'joined' } },
      jsep: { type: 'answer', sdp: 'v=0' },
    },
  );
  t.same(readFrame('{"janus":"media","sender":7,"type":"audio","mid":"0","receiving":false}'), {
    janus: 'media',
    sender: 7,
    type: 'audio',
    mid: '0',
    receiving: false,
  });
  t.same(readFrame('{"janus":"hangup","sender":7,"reason":"DTLS alert"}'), { janus: 'hangup', sender: 7, reason: 'DTLS alert' });
  t.same(readFrame('{"janus":"trickle","sender":7,"candidate":{"completed":true}}'), { janus: 'trickle', sender: 7, candidate: { completed: true } });
  t.same(readFrame('{"janus":"timeout","session_id":9}'), { janus: 'timeout', session_id: 9 });
  for (const text of [
    'nope',
    '[]',
    '{}',
    '{"janus":"ack"}',
    '{"janus":"event","sender":7}',
    '{"janus":"webrtcup"}',
    '{"janus":"media","sender":7,"type":"screen"}',
    '{"janus":"success","transaction":"x","plugindata":3}',
    '{"janus":"mystery","sender":1}',
    '{"janus":"webrtcup","sender":1.5}',
  ]) {
    t.equal(readFrame(text), null, text);
  }
});

t.test('VideoRoom events are read by what they carry; a plugin error becomes a JanusError', async (t) => {
  const room = 'r';
  t.same(
    videoRoomEventOf({
      videoroom: 'event',
      room,
      publishers: [{ id: 'bob', display: 'Bob', streams: [{ type: 'audio', mid: '0', mindex: 0, codec: 'opus' }, { type: 'odd' }] }],
    }),
    {
      event: 'publishers',
      room,
      publishers: [{ id: 'bob', display: 'Bob', streams: [{ type: 'audio', mid: '0', mindex: 0, codec: 'opus' }] }],
    },
  );
  t.same(videoRoomEventOf({ videoroom: 'event', room, unpublished: 'bob' }), { event: 'unpublished', room, id: 'bob' });
  t.same(videoRoomEventOf({ videoroom: 'event', room, leaving: 'bob' }), { event: 'leaving', room, id: 'bob' });
  t.same(videoRoomEventOf({ videoroom: 'event', room, leaving: 'ok', reason: 'kicked' }), { event: 'kicked-self', room });
  t.same(videoRoomEventOf({ videoroom: 'event', room, kicked: 'bob' }), { event: 'kicked', room, id: 'bob' });
  t.same(videoRoomEventOf({ videoroom: 'talking', room, id: 'bob', mid: '0', 'audio-level-dBov-avg': 32.5 }), {
    event: 'talking',
    room,
    id: 'bob',
    mid: '0',
    level: 32.5,
  });
  t.same(videoRoomEventOf({ videoroom: 'event', room, id: 'bob', mid: '0', moderation: 'muted' }), {
    event: 'moderation',
    room,
    id: 'bob',
    mid: '0',
    muted: true,
  });
  t.same(videoRoomEventOf({ videoroom: 'destroyed', room }), { event: 'destroyed', room });
  t.same(
    videoRoomEventOf(
      { videoroom: 'updated', room, streams: [{ mid: '1', mindex: 1, type: 'audio', feed_id: 'bob', active: true }] },
      { type: 'offer', sdp: 'v=0' },
    ),
    {
      event: 'updated',
      room,
      streams: [{ mid: '1', mindex: 1, type: 'audio', feed_id: 'bob', active: true }],
      jsep: { type: 'offer', sdp: 'v=0' },
    },
  );
  t.same(videoRoomEventOf({ videoroom: 'event', error_code: 428, error: 'No such feed' }), { event: 'error', code: 428, error: 'No such feed' });
  t.same(videoRoomEventOf({ videoroom: 'slow' }), { event: 'other', data: { videoroom: 'slow' } });
  t.same(pluginAnswer({ videoroom: 'created', room }), { videoroom: 'created', room });
  t.throws(() => pluginAnswer({ videoroom: 'event', error_code: 427, error: 'Room r already exists' }), new JanusError('plugin', 427, 'Room r already exists'));
});

t.test('TURN credentials are coturn’s use-auth-secret ones: <expiry>:<user>, base64(HMAC-SHA1(secret, username))', async (t) => {
  // The password computed independently (Python's hmac module) for this username and secret.
  t.same(turnCredentials('north', 'alice', 1_700_000_000_000, 3_600), {
    username: '1700003600:alice',
    credential: 'wjwSXO2ch1B6VaLTLMy2Avn5O9o=',
    expiresAt: 1_700_003_600_000,
  });
});

const options = {
  configDir: '/tmp/janus-x',
  libDir: '/usr/lib/x86_64-linux-gnu/janus',
  installed: {
    plugins: ['libjanus_echotest.so', OUR_PLUGIN, 'libjanus_sip.so'],
    transports: ['libjanus_http.so', OUR_TRANSPORT],
    loggers: ['libjanus_jsonlog.so'],
  },
  adminSecret: 'adm"in',
  roomKey: 'key',
  mediaAddress: '198.18.0.2',
  rtpPorts: { min: 20_000, max: 20_099 },
  api: { ip: '127.0.0.1', port: 8188, acl: '127.' },
  adminApi: { ip: '127.0.0.1', port: 7188, acl: '127.' },
};

t.test('the generated Janus configuration loads only ours, with token auth, the secrets and one media address', async (t) => {
  const files = janusConfig(options);
  t.same(Object.keys(files).sort(), ['janus.jcfg', 'janus.plugin.videoroom.jcfg', 'janus.transport.websockets.jcfg']);
  const core = files['janus.jcfg'];
  t.match(core, /\tadmin_secret = "adm\\"in"\n/, 'strings escaped');
  t.match(core, /\ttoken_auth = true\n/);
  t.match(core, /\tinterface = "198\.18\.0\.2"\n/);
  t.match(core, /\tice_enforce_list = "198\.18\.0\.2"\n\tignore_mdns = true\n/);
  t.match(core, /\trtp_port_range = "20000-20099"\n/);
  t.match(core, /\tdisable = "libjanus_echotest\.so,libjanus_sip\.so"\n/, 'every plugin but the VideoRoom disabled');
  t.match(core, /\tdisable = "libjanus_http\.so"\n/, 'every transport but WebSockets disabled');
  t.notMatch(core, /nat_1_1_mapping/, 'no NAT mapping unless asked');
  t.match(janusConfig({ ...options, publicAddress: '203.0.113.9' })['janus.jcfg'], /\tnat_1_1_mapping = "203\.0\.113\.9"\n/);
  t.match(files['janus.transport.websockets.jcfg'], /\tws_ip = "127\.0\.0\.1"\n\tws_port = 8188\n\tws_acl = "127\."\n/);
  t.match(files['janus.transport.websockets.jcfg'], /\tadmin_ws_ip = "127\.0\.0\.1"\n\tadmin_ws_port = 7188\n\tadmin_ws_acl = "127\."\n/);
  t.match(files['janus.plugin.videoroom.jcfg'], /\tadmin_key = "key"\n\tlock_rtp_forward = true\n\tstring_ids = true\n/);
  t.equal(jcfg({ empty: {}, one: { a: 1, b: undefined } }), 'empty: {\n}\n\none: {\n\ta = 1\n}\n');
});

t.test('deploy/voice holds the same rules: only our modules, APIs on loopback with ACLs, token auth, a port range', async (t) => {
  const dir = path.join(__dirname, '..', '..', 'deploy', 'voice');
  const read = (name: string) => fs.readFileSync(path.join(dir, name), 'utf8');
  const setting = (text: string, key: string) => new RegExp(`^\\s*${key} = (.*)$`, 'm').exec(text)?.[1];
  const core = read('janus.jcfg');
  t.equal(setting(core, 'token_auth'), 'true');
  t.equal(setting(core, 'ignore_mdns'), 'true');
  t.match(setting(core, 'rtp_port_range'), /^"\d+-\d+"$/);
  t.equal(setting(core, 'interface'), setting(core, 'ice_enforce_list'), 'media on the one address candidates are gathered on');
  const disabled = (text: string) => [...text.matchAll(/^\s*disable = "([^"]*)"$/gm)].map((m) => m[1].split(','));
  const [plugins, transports] = disabled(core);
  t.notOk(plugins.includes(OUR_PLUGIN));
  t.notOk(transports.includes(OUR_TRANSPORT));
  // Debian's package as installed here: every other module it ships is disabled by name.
  for (const [kind, list, ours] of [
    ['plugins', plugins, OUR_PLUGIN],
    ['transports', transports, OUR_TRANSPORT],
  ] as const) {
    const folder = `/usr/lib/x86_64-linux-gnu/janus/${kind}`;
    if (!fs.existsSync(folder)) continue;
    const shipped = fs.readdirSync(folder).filter((name) => name.endsWith('.so') && name !== ours);
    t.same(
      shipped.filter((name) => !list.includes(name)),
      [],
      `every other ${kind} Debian ships is disabled`,
    );
  }
  const ws = read('janus.transport.websockets.jcfg');
  t.equal(setting(ws, 'ws_ip'), '"127.0.0.1"');
  t.equal(setting(ws, 'admin_ws_ip'), '"127.0.0.1"');
  t.equal(setting(ws, 'ws_acl'), '"127."');
  t.equal(setting(ws, 'admin_ws_acl'), '"127."');
  t.equal(setting(read('janus.plugin.videoroom.jcfg'), 'string_ids'), 'true');
  t.match(read('janus-chat.service'), /ExecStart=\/usr\/bin\/janus -F \/etc\/janus-chat -C \/etc\/janus-chat\/janus\.jcfg/);
  t.match(read('coturn.conf'), /^use-auth-secret$/m);
  t.match(read('coturn.conf'), /^denied-peer-ip=10\.0\.0\.0-10\.255\.255\.255$/m);
  t.match(read('README.md'), /systemctl disable --now janus/);
});
