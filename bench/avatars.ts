/**
 * Avatars under one user's flood (issue 28): one user uploads, four at a time and without pause,
 * the heaviest avatar the server accepts (a 1.5 MB PNG of 24 megapixels) and the one that used to
 * hold the decoders (a PNG claiming 40 megapixels at 16 bits, now refused from its header), while
 * other users set small avatars one after another. Rate limits on, as deployed. Targets: the
 * server's RSS rises at most 64 MiB over its idle figure; the other users' small avatars p99 <= 500 ms.
 *
 * Run alone: node dist-bench/bench/avatars.js
 */
import { fork } from 'node:child_process';
import crypto from 'node:crypto';
import sharp from 'sharp';
import { type Row, login, mib, ms, percentile, printTable, register, request, rssKb, runAlone, sampleRss, sleep, startChat, tempDir, verdict } from './lib';

const VICTIMS = 20;
const UPLOADS_PER_VICTIM = 5;
const FLOOD_CONNECTIONS = Number(process.env.AVATAR_FLOOD ?? 4);
export const RSS_RISE_MIB = 64;
export const SMALL_P99_MS = 500;

function form(image: Buffer): { body: Buffer; type: string } {
  const boundary = `bench${crypto.randomBytes(8).toString('hex')}`;
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="avatar"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n`;
  return { body: Buffer.concat([Buffer.from(head), image, Buffer.from(`\r\n--${boundary}--\r\n`)]), type: `multipart/form-data; boundary=${boundary}` };
}

/** The heaviest accepted: 6000 x 4000 of a pattern that compresses to about 1.5 MB (within 32 pixels a byte). */
async function heavyPng(): Promise<Buffer> {
  const [w, h] = [6000, 4000];
  const raw = Buffer.alloc(w * h * 3);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const i = (y * w + x) * 3;
      raw[i] = (x ^ y) & 255;
      raw[i + 1] = (y >> 4) & 255;
      raw[i + 2] = 90;
    }
  }
  return sharp(raw, { raw: { width: w, height: h, channels: 3 } })
    .png({ compressionLevel: 9 })
    .toBuffer();
}

async function floodImages(): Promise<{ heavy: Buffer; bomb: Buffer }> {
  const bomb = await sharp({ create: { width: 8000, height: 5000, channels: 3, background: { r: 1, g: 2, b: 3 } } })
    .toColourspace('rgb16')
    .png({ compressionLevel: 9 })
    .toBuffer();
  return { heavy: await heavyPng(), bomb };
}

/** The flooding process: FLOOD_CONNECTIONS loops until told to stop, then the count of each answer. */
async function flood(base: string, cookie: string): Promise<void> {
  const images = await floodImages();
  const [heavy, bomb] = [form(images.heavy), form(images.bomb)];
  const counts = new Map<number, number>();
  let flooding = true;
  process.once('message', () => (flooding = false));
  process.send!('started');
  await Promise.all(
    Array.from({ length: FLOOD_CONNECTIONS }, async (_, i) => {
      for (let n = 0; flooding; n++) {
        const upload = (n + i) % 2 === 0 ? heavy : bomb;
        // Refused before its body is read, an upload may find the connection closed under it (0).
        const status = await request(base, 'PUT', '/api/account/avatar', upload.body, { cookie, 'content-type': upload.type }).then(
          (res) => res.status,
          () => 0,
        );
        counts.set(status, (counts.get(status) ?? 0) + 1);
      }
    }),
  );
  process.send!([...counts.entries()], () => process.exit(0));
}

export interface AvatarFigures {
  heavyBytes: number;
  bombBytes: number;
  idleKb: number;
  peakKb: number;
  small: number[];
  flood: Map<number, number>;
}

export async function measureAvatars(): Promise<AvatarFigures> {
  const dataDir = tempDir('chat-bench-avatars-');
  const { heavy, bomb } = await floodImages();
  const [heavyBytes, bombBytes] = [heavy.length, bomb.length];
  const small = form(
    await sharp({ create: { width: 64, height: 64, channels: 3, background: { r: 200, g: 40, b: 90 } } })
      .png()
      .toBuffer(),
  );
  const names = ['flooder', 'warmer', ...Array.from({ length: VICTIMS }, (_, i) => `victim${i}`)];

  // Accounts made with rate limits off (registrations are limited per address), then the real run.
  let chat = await startChat(dataDir);
  for (const name of names) await register(chat.base, name);
  await chat.stop();
  chat = await startChat(dataDir, { env: { RATE_LIMIT: 'on' } });
  try {
    const cookies = new Map<string, string>();
    for (const name of names) cookies.set(name, await login(chat.base, name));
    const put = (name: string, upload: { body: Buffer; type: string }) =>
      request(chat.base, 'PUT', '/api/account/avatar', upload.body, { cookie: cookies.get(name)!, 'content-type': upload.type });
    // Warm: sharp loaded, one avatar made; then the idle figure.
    await put('warmer', small);
    await sleep(1000);
    const idleKb = rssKb(chat.pid);

    const peak = sampleRss(chat.pid);
    // The flood comes from a process of its own, so its traffic does not slow this one's clock.
    const flooder = fork(__filename, ['flood', chat.base, cookies.get('flooder')!], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    await new Promise((resolve) => flooder.once('message', resolve));
    const flood = new Promise<Map<number, number>>((resolve) => flooder.once('message', (counts: [number, number][]) => resolve(new Map(counts))));
    const times: number[] = [];
    for (let round = 0; round < UPLOADS_PER_VICTIM; round++) {
      for (let v = 0; v < VICTIMS; v++) {
        const started = performance.now();
        const res = await put(`victim${v}`, small);
        if (res.status !== 200) throw new Error(`a small avatar answered ${res.status}: ${res.text.trim()}`);
        times.push(performance.now() - started);
      }
    }
    flooder.send('stop');
    const counts = await flood;
    const peakKb = peak.stop();
    times.sort((a, b) => a - b);
    return { heavyBytes: heavyBytes, bombBytes, idleKb, peakKb, small: times, flood: counts };
  } finally {
    await chat.stop();
  }
}

export function avatarRows(f: AvatarFigures): Row[] {
  const rise = (f.peakKb - f.idleKb) / 1024;
  const p99 = percentile(f.small, 99);
  const answers = [...f.flood.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([status, n]) => `${n} x ${status}`)
    .join(', ');
  return [
    [
      'the flood: 4 connections of one user, alternating',
      `a ${(f.heavyBytes / 1e6).toFixed(1)} MB PNG of 24 MP and a ${(f.bombBytes / 1024).toFixed(0)} KiB PNG of 40 MP at 16 bits`,
      '',
      '',
    ],
    ['what the flood got', answers, '', ''],
    ['server RSS: idle, peak under the flood', `${mib(f.idleKb)}, ${mib(f.peakKb)}`, '', ''],
    ['RSS rise under the flood', `${rise.toFixed(1)} MiB`, `<= ${RSS_RISE_MIB} MiB`, verdict(rise <= RSS_RISE_MIB)],
    [
      `${f.small.length} small avatars of other users (64 x 64 PNG): p50 / p99`,
      `${ms(percentile(f.small, 50))} / ${ms(p99)}`,
      `p99 <= ${SMALL_P99_MS} ms`,
      verdict(p99 <= SMALL_P99_MS),
    ],
  ];
}

if (process.argv[2] === 'flood') void flood(process.argv[3], process.argv[4]);
else
  runAlone(module, 'avatars', async () => {
    printTable("11. Avatars under one user's flood (rate limits on)", avatarRows(await measureAvatars()));
  });
