import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { startServer, type TestServer } from './helpers/server';
import { type Client, signUp } from './helpers/client';
import { type Part, multipart, postMultipart } from './helpers/multipart';
import { contentDisposition, parseRange } from '../src/core/http/downloads';
import { MAX_ATTACHMENT_BYTES, cleanFileName } from '../src/parts/messages/upload-store';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';

// Tiny but real files: each starts with the magic numbers of its format.
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');
const MP3 = Buffer.concat([Buffer.from('ID3\x04\x00\x00\x00\x00\x00\x00', 'latin1'), Buffer.from([0xff, 0xfb, 0x90, 0x64]), Buffer.alloc(200)]);
const OGG = Buffer.concat([Buffer.from('OggS\x00\x02', 'latin1'), Buffer.alloc(22), Buffer.from('\x01vorbis', 'latin1'), Buffer.alloc(20)]);
const WAV = Buffer.concat([
  Buffer.from('RIFF', 'latin1'),
  Buffer.from([36, 0, 0, 0]),
  Buffer.from('WAVEfmt ', 'latin1'),
  Buffer.from([16, 0, 0, 0, 1, 0, 1, 0, 0x44, 0xac, 0, 0, 0x88, 0x58, 1, 0, 2, 0, 16, 0]),
  Buffer.from('data\x00\x00\x00\x00', 'latin1'),
]);
const MP4 = Buffer.concat([Buffer.from([0, 0, 0, 0x18]), Buffer.from('ftypisom\x00\x00\x02\x00isommp41', 'latin1'), Buffer.alloc(64)]);
const HTML = '<!doctype html><html><body><script>alert(document.cookie)</script></body></html>\n';
const SVG = '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>\n';

interface Fixture {
  server: TestServer;
  owner: Client;
  serverId: string;
  channelId: string;
  /** The channel's message collection. */
  messages: string;
  uploadsDir: string;
}

async function setup(t: { teardown(fn: () => unknown): void }): Promise<Fixture> {
  const server = await startServer();
  t.teardown(server.close);
  const owner = await signUp(server.url);
  const created = await owner.post('/api/servers', { name: 'files' });
  const channels = await owner.get(`/api/servers/${created.body.id}/channels`);
  const channelId = channels.body[0].id;
  return {
    server,
    owner,
    serverId: created.body.id,
    channelId,
    messages: `/api/servers/${created.body.id}/channels/${channelId}/messages`,
    uploadsDir: path.join(server.dataDir, 'uploads'),
  };
}

/** A FormData with text fields and small files (fetch builds the multipart body). */
function form(fields: Record<string, string>, files: { name: string; data: Buffer | string; type?: string }[] = []): FormData {
  const data = new FormData();
  for (const [key, value] of Object.entries(fields)) data.append(key, value);
  for (const file of files) data.append('attachments', new Blob([file.data], { type: file.type ?? '' }), file.name);
  return data;
}

/** Posts one small file and returns its attachment object. */
async function upload(f: Fixture, name: string, data: Buffer | string, type?: string) {
  const res = await f.owner.post(f.messages, form({ content: '' }, [{ name, data, type }]));
  if (res.status !== 201) throw new Error(`upload of ${name} failed: ${res.status} ${res.text}`);
  return res.body.attachments[0];
}

/**
 * The files left in the uploads directory. Cleanup after a refused upload runs right after
 * the answer, so this waits (bounded) for the directory to become empty.
 */
async function leftOnDisk(dir: string, expectEmptyWithinMs = 2000): Promise<string[]> {
  const deadline = Date.now() + expectEmptyWithinMs;
  for (;;) {
    const names = fs.readdirSync(dir);
    if (names.length === 0 || Date.now() > deadline) return names;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const messageCount = (f: Fixture) => (f.server.app.db.prepare('SELECT COUNT(*) AS n FROM messages').get() as { n: number }).n;

t.test('uploading attachments to a channel message', async (t) => {
  const f = await setup(t);

  t.test('one file becomes an attachment stored under its id, with the spec fields', async (t) => {
    const res = await f.owner.post(f.messages, form({ content: 'see attached' }, [{ name: 'notes.txt', data: 'hello\n' }]));
    t.equal(res.status, 201);
    t.equal(res.body.content, 'see attached');
    t.equal(res.body.attachments.length, 1);
    const a = res.body.attachments[0];
    t.same(Object.keys(a).sort(), ['content_type', 'id', 'name', 'preview_kind', 'size', 'url']);
    t.match(a.id, UUID);
    t.equal(a.name, 'notes.txt');
    t.equal(a.url, `/uploads/${a.id}`);
    t.equal(a.content_type, 'text/plain; charset=utf-8');
    t.equal(a.size, 6);
    t.equal(a.preview_kind, 'code');
    t.equal(fs.readFileSync(path.join(f.uploadsDir, a.id), 'utf8'), 'hello\n', 'stored under the attachment id');
    const listed = await f.owner.get(f.messages);
    t.same(listed.body[0].attachments, [a], 'the message list carries the same attachment object');
  });

  t.test('five files are kept in the order they were sent', async (t) => {
    const files = [1, 2, 3, 4, 5].map((n) => ({ name: `part${n}.txt`, data: `file ${n}\n` }));
    const res = await f.owner.post(f.messages, form({ content: 'five' }, files));
    t.equal(res.status, 201);
    t.same(
      res.body.attachments.map((a: { name: string; size: number }) => [a.name, a.size]),
      files.map((file) => [file.name, file.data.length]),
    );
    for (const a of res.body.attachments) t.ok(fs.existsSync(path.join(f.uploadsDir, a.id)));
  });

  t.test('a message with only attachments and empty content is valid', async (t) => {
    const withEmpty = await f.owner.post(f.messages, form({ content: '' }, [{ name: 'a.txt', data: 'a' }]));
    t.equal(withEmpty.status, 201);
    t.equal(withEmpty.body.content, '');
    const withoutField = await f.owner.post(f.messages, form({}, [{ name: 'b.txt', data: 'b' }]));
    t.equal(withoutField.status, 201);
    t.equal(withoutField.body.content, '');
  });

  t.test('a multipart message with neither content nor files is 400', async (t) => {
    for (const fields of [{}, { content: '' }, { content: '   ' }] as Record<string, string>[]) {
      const res = await f.owner.post(f.messages, form(fields));
      t.equal(res.status, 400, JSON.stringify(fields));
      t.match(res.text, /content must not be empty/);
    }
  });

  t.test('line breaks a browser sends as CRLF in a multipart field are stored as LF', async (t) => {
    const res = await f.owner.post(f.messages, form({ content: 'first line\r\nsecond line' }, [{ name: 'a.txt', data: 'a' }]));
    t.equal(res.status, 201);
    t.equal(res.body.content, 'first line\nsecond line');
  });

  t.test('reply_to works in a multipart message', async (t) => {
    const first = await f.owner.post(f.messages, { content: 'question' });
    const res = await f.owner.post(f.messages, form({ content: 'answer', reply_to: first.body.id }, [{ name: 'a.txt', data: 'x' }]));
    t.equal(res.status, 201);
    t.equal(res.body.reply_to, first.body.id);
  });

  t.test('a message refused after the upload leaves no file behind', async (t) => {
    const before = fs.readdirSync(f.uploadsDir).length;
    const cases: [string, Record<string, string>][] = [
      ['a reply_to that is not a UUID', { content: 'x', reply_to: 'nope' }],
      ['a reply_to from nowhere', { content: 'x', reply_to: UNKNOWN_ID }],
      ['content over 4000 characters', { content: 'x'.repeat(4001) }],
    ];
    for (const [what, fields] of cases) {
      const res = await f.owner.post(f.messages, form(fields, [{ name: 'a.txt', data: 'a' }]));
      t.equal(res.status, 400, what);
    }
    t.equal((await leftOnDisk(f.uploadsDir, 0)).length, before, 'no new file');
  });
});

t.test('upload limits are enforced while the body streams', async (t) => {
  const f = await setup(t);
  const file = (n: number, size = 1024): Part => ({ file: 'attachments', filename: `f${n}.bin`, size });

  t.test('a sixth file is 413, and no message or file is left', async (t) => {
    const body = multipart([{ field: 'content', value: 'six' }, ...[1, 2, 3, 4, 5, 6].map((n) => file(n, 256 * 1024))]);
    const res = await postMultipart(f.server.url, f.messages, body, { cookie: f.owner.cookie });
    t.equal(res.status, 413);
    t.match(res.text, /at most 5 files/);
    t.equal(messageCount(f), 0);
    t.same(await leftOnDisk(f.uploadsDir), []);
  });

  t.test('a file of exactly 25 MiB is accepted with its exact size', async (t) => {
    const body = multipart([file(1, MAX_ATTACHMENT_BYTES)]);
    const res = await postMultipart(f.server.url, f.messages, body, { cookie: f.owner.cookie });
    t.equal(res.status, 201);
    const a = res.body.attachments[0];
    t.equal(a.size, MAX_ATTACHMENT_BYTES);
    t.equal(fs.statSync(path.join(f.uploadsDir, a.id)).size, MAX_ATTACHMENT_BYTES);
    t.equal(a.content_type, 'text/plain; charset=utf-8', 'a file of letters is text');
    const deleted = await f.owner.delete(`${f.messages}/${res.body.id}`);
    t.equal(deleted.status, 204);
    t.same(await leftOnDisk(f.uploadsDir), []);
  });

  t.test('one byte over 25 MiB is 413 before the body ends, and nothing is left behind', async (t) => {
    const count = messageCount(f);
    // The oversized file comes after a good one: that one must go too.
    const body = multipart([{ field: 'content', value: 'too big' }, file(1, 2048), file(2, MAX_ATTACHMENT_BYTES + 1), file(3, 4 * 1024 * 1024)]);
    const res = await postMultipart(f.server.url, f.messages, body, { cookie: f.owner.cookie });
    t.equal(res.status, 413);
    t.match(res.text, /25 MiB/);
    t.equal(res.headers.connection, 'close', 'the rest of the body is not read');
    t.equal(messageCount(f), count);
    t.same(await leftOnDisk(f.uploadsDir), []);
  });

  t.test('a declared length beyond five full files is 413 before any byte is read', async (t) => {
    const { port } = new URL(f.server.url);
    const answer = await new Promise<string>((resolve) => {
      const socket = net.connect(Number(port), '127.0.0.1');
      let text = '';
      socket.on('data', (c) => (text += c.toString('latin1')));
      socket.on('error', () => {});
      socket.on('close', () => resolve(text));
      socket.write(
        `POST ${f.messages} HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: ${f.owner.cookie}\r\n` +
          `Content-Type: multipart/form-data; boundary=x\r\nContent-Length: ${6 * MAX_ATTACHMENT_BYTES}\r\n\r\n`,
      );
    });
    t.match(answer, /^HTTP\/1\.1 413/);
  });

  t.test('an upload cut off by the client leaves no file', async (t) => {
    const count = messageCount(f);
    const body = multipart([{ field: 'content', value: 'bye' }, file(1, 2048), file(2, 8 * 1024 * 1024)]);
    const res = await postMultipart(f.server.url, f.messages, body, { cookie: f.owner.cookie, abortAfter: 3 * 1024 * 1024 });
    t.equal(res.status, 0, 'the client went away before any answer');
    t.same(await leftOnDisk(f.uploadsDir), []);
    t.equal(messageCount(f), count);
  });

  t.test('fields and file fields other than content, reply_to and attachments are 400', async (t) => {
    const cases: [string, Part[]][] = [
      [
        'an unknown text field',
        [
          { field: 'title', value: 'x' },
          { field: 'content', value: 'x' },
        ],
      ],
      ['a file under another name', [{ file: 'upload', filename: 'a.txt', data: 'a' }]],
      [
        'content given twice',
        [
          { field: 'content', value: 'a' },
          { field: 'content', value: 'b' },
        ],
      ],
      ['attachments as a text field', [{ field: 'attachments', value: 'a' }]],
      ['a field over the size bound', [{ field: 'content', value: 'é'.repeat(9000) }]],
    ];
    for (const [what, parts] of cases) {
      const res = await postMultipart(f.server.url, f.messages, multipart([...parts, file(9)]), { cookie: f.owner.cookie });
      t.equal(res.status, 400, what);
      t.match(res.headers['content-type'], /^text\/plain/, what);
    }
    t.same(await leftOnDisk(f.uploadsDir), []);
  });

  t.test('a malformed multipart body is 400', async (t) => {
    const missingBoundary = await f.owner.post(f.messages, 'x', { 'content-type': 'multipart/form-data' });
    t.equal(missingBoundary.status, 400);
    const truncated = await f.owner.post(f.messages, '--b\r\nContent-Disposition: form-data; name="content"\r\n\r\nhi', {
      'content-type': 'multipart/form-data; boundary=b',
    });
    t.equal(truncated.status, 400);
    t.match(truncated.text, /malformed/);
  });

  t.test('no refused or cut-off upload ended in a server error', async (t) => {
    t.same(
      f.server.logs.filter((line) => / 5\d\d /.test(line) || line.startsWith('unexpected')),
      [],
    );
  });

  t.test('a cross-site multipart POST is 403 and writes nothing', async (t) => {
    const body = multipart([{ field: 'content', value: 'csrf' }, file(1, 1024 * 1024)]);
    const res = await postMultipart(f.server.url, f.messages, body, {
      cookie: f.owner.cookie,
      headers: { origin: 'https://evil.example' },
    });
    t.equal(res.status, 403);
    t.same(await leftOnDisk(f.uploadsDir, 200), []);
  });
});

t.test('partial files, and files no message holds, left by an earlier process are removed at start-up', async (t) => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'chat-uploads-'));
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  fs.mkdirSync(path.join(dataDir, 'uploads'));
  const partial = path.join(dataDir, 'uploads', `${UNKNOWN_ID}.part`);
  const complete = path.join(dataDir, 'uploads', UNKNOWN_ID);
  fs.writeFileSync(partial, 'half');
  fs.writeFileSync(complete, 'whole');
  const server = await startServer({ env: { DATA_DIR: dataDir } });
  t.teardown(server.close);
  t.notOk(fs.existsSync(partial), 'the partial file is gone');
  t.notOk(fs.existsSync(complete), 'a complete file no row holds is an orphan: removed too (test/hardening.test.ts 6)');
});

t.test('content types come from the bytes and the name, never from the claim alone', async (t) => {
  const f = await setup(t);
  const cases: [string, Buffer | string, string | undefined, string, string][] = [
    ['pixel.png', PNG, 'image/png', 'image/png', 'image'],
    ['song.mp3', MP3, 'audio/mpeg', 'audio/mpeg', 'audio'],
    ['song.ogg', OGG, undefined, 'audio/ogg', 'audio'],
    ['sound.wav', WAV, 'audio/wav', 'audio/wav', 'audio'],
    ['clip.mp4', MP4, 'video/mp4', 'video/mp4', 'video'],
    ['script.py', "print('hi')\n", 'text/x-python', 'text/x-python; charset=utf-8', 'code'],
    ['page.html', HTML, 'text/html', 'text/html; charset=utf-8', 'code'],
    ['drawing.svg', SVG, 'image/svg+xml', 'image/svg+xml; charset=utf-8', 'code'],
    ['fake.png', HTML, 'image/png', 'text/plain; charset=utf-8', 'code'],
    ['photo.txt', PNG, 'text/plain', 'image/png', 'image'],
    ['blob.bin', Buffer.from([0, 1, 2, 3, 255, 254]), 'image/png', 'application/octet-stream', 'code'],
  ];
  for (const [name, data, claimed, type, kind] of cases) {
    const a = await upload(f, name, data, claimed);
    t.equal(a.content_type, type, `${name} claimed as ${claimed}`);
    t.equal(a.preview_kind, kind, `${name} previews as ${kind}`);
  }
});

t.test('file names are cleaned of path parts and control characters', async (t) => {
  const f = await setup(t);
  const cases: [string, string][] = [
    ['../../etc/passwd', 'passwd'],
    ['C:\\Users\\me\\report.pdf', 'report.pdf'],
    ['bad\u0007name\u0000\r\n.txt', 'badname.txt'],
    ['\u0001\u001f', 'file'],
    ['evil\u202Egnp.exe', 'evilgnp.exe'],
    ['ünïcødé 名前.txt', 'ünïcødé 名前.txt'],
  ];
  for (const [raw, cleaned] of cases) {
    const body = multipart([{ file: 'attachments', filename: raw, data: 'x', encodeName: true }]);
    const res = await postMultipart(f.server.url, f.messages, body, { cookie: f.owner.cookie });
    t.equal(res.status, 201, JSON.stringify(raw));
    t.equal(res.body.attachments[0].name, cleaned, JSON.stringify(raw));
  }

  t.test('cleanFileName', async (t) => {
    t.equal(cleanFileName(''), 'file');
    t.equal(cleanFileName(undefined), 'file');
    t.equal(cleanFileName('dir/..'), 'file');
    t.equal(cleanFileName('  spaced.txt  '), 'spaced.txt');
    const long = cleanFileName(`${'n'.repeat(300)}.tar`);
    t.equal(long.length, 255);
    t.ok(long.endsWith('.tar'), 'a long name keeps its extension');
    t.equal([...cleanFileName('😀'.repeat(300))].length, 255, 'counted in characters, never splitting one');
  });

  t.test('contentDisposition follows RFC 6266 with an ASCII fallback', async (t) => {
    t.equal(contentDisposition('attachment', 'a.txt'), `attachment; filename="a.txt"; filename*=UTF-8''a.txt`);
    t.equal(
      contentDisposition('attachment', 'say "hi"\\ 100%.txt'),
      `attachment; filename="say _hi__ 100_.txt"; filename*=UTF-8''say%20%22hi%22%5C%20100%25.txt`,
    );
    t.equal(contentDisposition('inline', 'é.png'), `inline; filename="_.png"; filename*=UTF-8''%C3%A9.png`);
    t.equal(contentDisposition('attachment', "it's (1).txt"), `attachment; filename="it's (1).txt"; filename*=UTF-8''it%27s%20%281%29.txt`);
  });
});

t.test('GET /uploads/{attachment_id}', async (t) => {
  const f = await setup(t);
  const png = await upload(f, 'pixel.png', PNG, 'image/png');
  const text = await upload(f, 'notes.txt', 'hello world, this is a text file\n');
  const html = await upload(f, 'page.html', HTML, 'text/html');
  const svg = await upload(f, 'drawing.svg', SVG, 'image/svg+xml');
  const fake = await upload(f, 'fake.png', HTML, 'image/png');
  const named = await upload(f, 'résumé final.txt', 'cv');

  t.test('only members of the server can download; anyone else gets the unknown-id 404', async (t) => {
    const outsider = await signUp(f.server.url);
    const cases: [string, Client | null, string, number][] = [
      ['the uploader', f.owner, png.url, 200],
      ['a non-member', outsider, png.url, 404],
      ['a member, unknown id', f.owner, `/uploads/${UNKNOWN_ID}`, 404],
      ['a member, malformed id', f.owner, '/uploads/not-a-uuid', 400],
    ];
    for (const [who, client, url, status] of cases) {
      const res = await (client ?? outsider).get(url);
      t.equal(res.status, status, who);
    }
    const anonymous = await fetch(f.server.url + png.url);
    t.equal(anonymous.status, 401, 'no session');

    const invite = await f.owner.post(`/api/servers/${f.serverId}/invites`);
    const joined = await outsider.post(`/api/invites/${invite.body.token}/accept`);
    t.equal(joined.status, 200);
    t.equal((await outsider.get(png.url)).status, 200, 'after joining, the same user may download');
  });

  t.test('an image renders inline with its own type; the bytes are the upload', async (t) => {
    const res = await fetch(f.server.url + png.url, { headers: { cookie: f.owner.cookie! } });
    t.equal(res.status, 200);
    t.equal(res.headers.get('content-type'), 'image/png');
    t.equal(res.headers.get('content-disposition'), `inline; filename="pixel.png"; filename*=UTF-8''pixel.png`);
    t.same(Buffer.from(await res.arrayBuffer()), PNG);
  });

  t.test('every download carries nosniff, a sandbox CSP and private caching', async (t) => {
    for (const a of [png, text, html, svg, fake]) {
      const res = await f.owner.get(a.url);
      t.equal(res.headers.get('x-content-type-options'), 'nosniff', a.name);
      t.match(res.headers.get('content-security-policy'), /^sandbox; default-src 'none'/, a.name);
      t.match(res.headers.get('cache-control'), /^private, max-age=\d+$/, a.name);
      t.equal(res.headers.get('etag'), `"${a.id}"`, a.name);
      t.equal(res.headers.get('accept-ranges'), 'bytes', a.name);
    }
  });

  t.test('text, HTML, SVG and HTML posing as PNG are downloads, never rendered', async (t) => {
    const cases: [string, { url: string }, string][] = [
      ['text', text, 'text/plain; charset=utf-8'],
      ['HTML', html, 'text/plain; charset=utf-8'],
      ['SVG', svg, 'text/plain; charset=utf-8'],
      ['HTML claiming image/png', fake, 'text/plain; charset=utf-8'],
    ];
    for (const [what, a, type] of cases) {
      const res = await f.owner.get(a.url);
      t.equal(res.status, 200, what);
      t.match(res.headers.get('content-disposition'), /^attachment; /, what);
      t.equal(res.headers.get('content-type'), type, what);
    }
    t.equal((await f.owner.get(html.url)).text, HTML, 'the bytes are untouched');
  });

  t.test('a non-ASCII file name is encoded for Content-Disposition (RFC 6266)', async (t) => {
    const res = await f.owner.get(named.url);
    t.equal(res.headers.get('content-disposition'), `attachment; filename="r_sum_ final.txt"; filename*=UTF-8''r%C3%A9sum%C3%A9%20final.txt`);
  });

  t.test('byte ranges', async (t) => {
    const body = 'hello world, this is a text file\n';
    const size = Buffer.byteLength(body);
    const cases: [string, string, number, string | null, string][] = [
      ['first bytes', 'bytes=0-4', 206, `bytes 0-4/${size}`, 'hello'],
      ['the middle', 'bytes=6-10', 206, `bytes 6-10/${size}`, 'world'],
      ['a suffix', 'bytes=-5', 206, `bytes ${size - 5}-${size - 1}/${size}`, 'file\n'],
      ['open-ended', 'bytes=13-', 206, `bytes 13-${size - 1}/${size}`, body.slice(13)],
      ['an end past the file', 'bytes=28-999', 206, `bytes 28-${size - 1}/${size}`, body.slice(28)],
      ['a suffix longer than the file', 'bytes=-999', 206, `bytes 0-${size - 1}/${size}`, body],
      ['several ranges: the whole file', 'bytes=0-1,4-5', 200, null, body],
      ['another unit: the whole file', 'items=0-1', 200, null, body],
      ['malformed: the whole file', 'bytes=5-2', 200, null, body],
    ];
    for (const [what, range, status, contentRange, expected] of cases) {
      const res = await f.owner.get(text.url, { range });
      t.equal(res.status, status, what);
      t.equal(res.headers.get('content-range'), contentRange, what);
      t.equal(res.text, expected, what);
      t.equal(res.headers.get('content-length'), String(Buffer.byteLength(expected)), what);
    }
    for (const range of [`bytes=${size}-`, `bytes=${size + 10}-${size + 20}`, 'bytes=-0']) {
      const res = await f.owner.get(text.url, { range });
      t.equal(res.status, 416, range);
      t.equal(res.headers.get('content-range'), `bytes */${size}`, range);
    }
    const stale = await f.owner.get(text.url, { range: 'bytes=0-4', 'if-range': '"something-else"' });
    t.equal(stale.status, 200, 'If-Range that does not match gets the whole file');
    const fresh = await f.owner.get(text.url, { range: 'bytes=0-4', 'if-range': `"${text.id}"` });
    t.equal(fresh.status, 206, 'If-Range that matches gets the range');
  });

  t.test('a matching If-None-Match is 304 without a body', async (t) => {
    const res = await f.owner.get(png.url, { 'if-none-match': `"${png.id}"` });
    t.equal(res.status, 304);
    t.equal(res.text, '');
    t.equal((await f.owner.get(png.url, { 'if-none-match': `W/"x", "${png.id}"` })).status, 304, 'in a list');
    t.equal((await f.owner.get(png.url, { 'if-none-match': '"other"' })).status, 200);
  });

  t.test('HEAD answers the headers only', async (t) => {
    const res = await fetch(f.server.url + png.url, { method: 'HEAD', headers: { cookie: f.owner.cookie! } });
    t.equal(res.status, 200);
    t.equal(res.headers.get('content-length'), String(PNG.length));
    t.equal(res.headers.get('content-type'), 'image/png');
  });

  t.test('a file missing from disk is 404, not 500', async (t) => {
    const lost = await upload(f, 'lost.txt', 'gone');
    fs.unlinkSync(path.join(f.uploadsDir, lost.id));
    t.equal((await f.owner.get(lost.url)).status, 404);
  });
});

t.test('deleting a message removes its files from disk', async (t) => {
  const f = await setup(t);
  const res = await f.owner.post(
    f.messages,
    form({ content: 'temp' }, [
      { name: 'a.png', data: PNG },
      { name: 'b.txt', data: 'b' },
    ]),
  );
  const ids: string[] = res.body.attachments.map((a: { id: string }) => a.id);
  for (const id of ids) t.ok(fs.existsSync(path.join(f.uploadsDir, id)));
  t.equal((await f.owner.delete(`${f.messages}/${res.body.id}`)).status, 204);
  t.same(await leftOnDisk(f.uploadsDir), []);
  t.equal((await f.owner.get(`/uploads/${ids[0]}`)).status, 404, 'the download is gone with it');
});

t.test('conversation messages carry attachments too, visible to the conversation only', async (t) => {
  const f = await setup(t);
  const [bob, carol] = [await signUp(f.server.url), await signUp(f.server.url)];
  const request = await f.owner.post('/api/friends/requests', { username: bob.username });
  t.equal(request.status, 201);
  t.equal((await bob.post(`/api/friends/requests/${request.body.id}/accept`)).status, 200);
  const dm = await f.owner.post('/api/conversations/dm', { usernames: [bob.username] });
  t.equal(dm.status, 201);
  const messages = `/api/conversations/${dm.body.id}/messages`;

  const res = await f.owner.post(messages, form({ content: '' }, [{ name: 'song.mp3', data: MP3, type: 'audio/mpeg' }]));
  t.equal(res.status, 201);
  const a = res.body.attachments[0];
  t.equal(a.preview_kind, 'audio');
  t.equal(res.body.conversation_id, dm.body.id);

  const seen = await bob.get(a.url);
  t.equal(seen.status, 200, 'the other member downloads it');
  t.equal(seen.headers.get('content-type'), 'audio/mpeg');
  t.match(seen.headers.get('content-disposition'), /^inline; /);
  t.equal((await carol.get(a.url)).status, 404, 'an outsider gets 404');

  const big = multipart([
    { field: 'content', value: 'x' },
    { file: 'attachments', filename: 'big.bin', size: MAX_ATTACHMENT_BYTES + 1 },
  ]);
  t.equal((await postMultipart(f.server.url, messages, big, { cookie: bob.cookie })).status, 413, 'the same limits apply');

  t.equal((await f.owner.delete(`${messages}/${res.body.id}`)).status, 204);
  t.same(await leftOnDisk(f.uploadsDir), [], 'deleting the DM message removes its file');
});

t.test('parseRange', async (t) => {
  const cases: [string | undefined, number, ReturnType<typeof parseRange>][] = [
    [undefined, 10, null],
    ['bytes=0-0', 10, { start: 0, end: 0 }],
    ['bytes=9-', 10, { start: 9, end: 9 }],
    ['bytes=10-', 10, 'unsatisfiable'],
    ['bytes=-1', 10, { start: 9, end: 9 }],
    ['bytes=-', 10, null],
    ['bytes=0-1, 3-4', 10, null],
    ['bytes=0-1', 0, 'unsatisfiable'],
    ['bytes=-3', 0, 'unsatisfiable'],
  ];
  for (const [header, size, expected] of cases) t.same(parseRange(header, size), expected, `${header} of ${size}`);
});

t.test('a form field in a charset the parser cannot decode is 400, and the server goes on (found by the fuzzer)', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const owner = await signUp(server.url);
  const serverId = (await owner.post('/api/servers', { name: 'charsets' })).body.id;
  const channel = (await owner.get(`/api/servers/${serverId}/channels`)).body[0].id;
  const path = `/api/servers/${serverId}/channels/${channel}/messages`;
  const send = (charset: string) =>
    fetch(server.url + path, {
      method: 'POST',
      headers: { cookie: owner.cookie!, 'content-type': 'multipart/form-data; boundary=XX' },
      body: `--XX\r\nContent-Disposition: form-data; name="content"\r\nContent-Type: text/plain; charset=${charset}\r\n\r\nhello\r\n--XX--\r\n`,
    });
  const refused = await send('utf-16');
  t.equal(refused.status, 400);
  t.match(await refused.text(), 'content could not be read: send form fields as UTF-8');
  t.equal((await send('utf-8')).status, 201, 'a named UTF-8 is fine');
  t.equal((await owner.get('/api/users/me')).status, 200, 'the server still answers');
  t.notOk(
    server.logs.some((line) => line.includes('unexpected error')),
    'nothing was an unexpected error',
  );
});
