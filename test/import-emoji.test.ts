// The Discord import and export of custom emoji, stickers and polls (issue 50, "Import and
// export"): images an export holds (--media) become the server's emoji and stickers through the
// checks of an upload, the most used first while the slots last; what does not stays text and the
// reports name it; a re-import makes nothing twice; hostile images and paths are skipped, never a
// failed import; the server export writes them back, and an import of it brings them again.
// One server; synthetic exports (test/helpers/discord-export.ts).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import t from 'tap';
import type { Client } from './helpers/client';
import { signUp } from './helpers/client';
import { must } from './helpers/community';
import { cli } from './helpers/cli';
import { ALICE, BOB, channelFile, message, writeExport } from './helpers/discord-export';
import { unzip } from './helpers/export';
import { zipForm } from './helpers/imports';
import { startServer } from './helpers/server';
import { openSocket } from './helpers/ws';

const square = (r: number) =>
  sharp({ create: { width: 40, height: 40, channels: 4, background: { r, g: 90, b: 40, alpha: 1 } } })
    .png()
    .toBuffer();
const animatedGif = async () => {
  const frames = [await square(255), await square(0), await square(128)];
  return sharp(frames, { join: { animated: true } })
    .gif({ delay: [100, 100, 100], loop: 0 })
    .toBuffer();
};

const MEDIA = 'Hobby Club - general [810000000000000001].json_Files';
const emoji = (id: string, name: string, imageUrl: string | null, isAnimated = false) => ({ id, name, code: name, isAnimated, imageUrl });
const BLOB = emoji('950000000000000001', 'blob', `${MEDIA}/blob-1.png`);
const BLOB_TOO = emoji('950000000000000002', 'blob', `${MEDIA}/blob-2.png`);
const RARE = emoji('950000000000000003', 'rare', `${MEDIA}/rare.png`);
const PARTY = emoji('950000000000000004', 'party', `${MEDIA}/party.gif`, true);
const BROKEN = emoji('950000000000000005', 'broken', `${MEDIA}/broken.png`);
const CLIMB = emoji('950000000000000006', 'climb', '../../../etc/passwd');
const HUGE = emoji('950000000000000008', 'huge', `${MEDIA}/huge.png`);
const CDN = emoji('950000000000000007', 'cdn', 'https://cdn.discordapp.com/emojis/950000000000000007.png');
const use = (e: { id: string; name: string; isAnimated: boolean }) => `<${e.isAnimated ? 'a' : ''}:${e.name}:${e.id}>`;

async function exportFiles() {
  const png = await square(200);
  const general = [
    {
      ...message({
        id: '900000000000010001',
        author: ALICE,
        content: `hi ${use(BLOB)} ${use(BLOB)} ${use(BLOB_TOO)} ${use(PARTY)} ${use(RARE)} ${use(BROKEN)} ${use(CLIMB)} ${use(CDN)} ${use(HUGE)}`,
        reactions: [
          { emoji: BLOB, count: 3, users: [ALICE] },
          { emoji: BLOB_TOO, count: 2, users: [BOB] },
          { emoji: PARTY, count: 2, users: [ALICE, BOB] },
          { emoji: CDN, count: 1, users: [BOB] },
          { emoji: BROKEN, count: 4 },
        ],
      }),
      inlineEmojis: [BLOB, BLOB_TOO, PARTY, RARE, BROKEN, CLIMB, CDN, HUGE],
    },
    message({
      id: '900000000000010002',
      content: '',
      stickers: [
        { id: '960000000000000001', name: 'Wave', format: 'Png', sourceUrl: `${MEDIA}/wave.png` },
        { id: '960000000000000002', name: 'Dance', format: 'Lottie', sourceUrl: `${MEDIA}/dance.json` },
        { id: '960000000000000003', name: 'Far', format: 'Png', sourceUrl: 'https://media.discordapp.net/stickers/960000000000000003.png' },
        { id: '960000000000000004', name: 'Sneaky', format: 'Png', sourceUrl: '../../secret.png' },
      ],
    }),
    {
      ...message({ id: '900000000000010003', author: ALICE, content: '' }),
      poll: {
        question: { text: 'Pizza or tacos?' },
        answers: [
          { answer_id: 1, poll_media: { text: 'Pizza', emoji: { id: null, name: '🍕' } } },
          { answer_id: 2, poll_media: { text: 'Tacos' } },
        ],
        expiry: '2024-03-02T12:00:00.000+00:00',
        allow_multiselect: false,
        results: {
          is_finalized: true,
          answer_counts: [
            { id: 1, count: 3 },
            { id: 2, count: 1 },
          ],
        },
      },
    },
    {
      ...message({ id: '900000000000010004', content: 'a poll of one' }),
      poll: { question: { text: 'Only one?' }, answers: [{ answer_id: 1, poll_media: { text: 'Yes' } }], results: null },
    },
  ];
  const file = 'Hobby Club - general [810000000000000001].json';
  const head = { id: '810000000000000001', type: 'GuildTextChat', name: 'general' };
  // The first message as an export without --media has it: its images are CDN links.
  const withoutMedia = JSON.parse(JSON.stringify(general[0]).replace(/"Hobby Club - general[^"]*_Files\/[^"]*"/g, '"https://cdn.discordapp.com/emojis/1.png"'));
  const earlier = { [file]: channelFile({ ...head, messages: [withoutMedia] }) };
  const files = {
    [file]: channelFile({ ...head, messages: general }),
    [`${MEDIA}/blob-1.png`]: png,
    [`${MEDIA}/blob-2.png`]: await square(10),
    [`${MEDIA}/rare.png`]: await square(60),
    [`${MEDIA}/party.gif`]: await animatedGif(),
    [`${MEDIA}/broken.png`]: Buffer.concat([png.subarray(0, 40), Buffer.alloc(200, 7)]),
    [`${MEDIA}/wave.png`]: await square(90),
    [`${MEDIA}/dance.json`]: Buffer.from('{"v":"5.5.2"}'),
    [`${MEDIA}/huge.png`]: Buffer.alloc(1024 * 1024 + 1, 1),
  };
  return { earlier, files };
}

async function importZip(owner: Client, files: Record<string, unknown>) {
  const upload = await must(owner.post('/api/imports', await zipForm('export', files)), 201);
  await must(owner.post(`/api/imports/${upload.body.id}/start`, {}), 202);
  for (let i = 0; i < 800; i++) {
    const now = await must(owner.get(`/api/imports/${upload.body.id}`), 200);
    if (now.body.status !== 'running') return { plan: upload.body.plan, record: now.body };
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error('the import did not end');
}

t.test('custom emoji, stickers and polls: imported, re-imported, exported and imported again', async (t) => {
  // Few slots, so that they run out: 2 static, 1 animated.
  const server = await startServer({ settings: { emojiSlots: { static: 2, animated: 1 } } });
  t.teardown(server.close);
  const owner = await signUp(server.url);
  const { earlier, files } = await exportFiles();

  // An earlier export without --media, on the command line: its custom emoji stay text, and say so.
  const cliRun = await cli(['import', 'discord', writeExport(earlier), '--owner', owner.username], server.dataDir);
  t.equal(cliRun.code, 0, cliRun.stderr);
  t.match(cliRun.stdout, /custom emoji whose image the export does not hold: stay :name: text: :blob:, :broken:, :blob:, :party:, :cdn:, :huge:, :rare:\n/);
  t.match(cliRun.stdout, /custom emoji whose image was refused: stay :name: text: :climb: \(its image path leaves the export\)\n/);

  const { plan, record } = await importZip(owner, files);
  t.equal(record.status, 'done', record.error ?? '');
  const notes = plan.notCarried.join('\n');
  // The dry run cannot know an image is corrupt before it is decoded: it counts :broken: in.
  t.match(notes, /past the server's slots \(2 static, 1 animated; the most used are brought\): stay :name: text: :blob:, :rare:\n/, 'the dry run: slots out');
  t.match(notes, /does not hold .*: stay :name: text: :cdn:\n/, 'the dry run: no image (a CDN link is not fetched)');
  t.match(
    notes,
    /image cannot be used: stay :name: text: :climb: \(its image path leaves the export\), :huge: \(its image is 1048577 bytes, more than 1048576\)\n/,
  );
  t.match(notes, /stickers whose image the export does not hold, or Lottie ones .*: Dance, Far, Sneaky\n/);
  t.match(notes, /polls that are not polls here .*: brought as text: “Only one\?”/);
  const report = record.report.join('\n');
  t.match(report, /3 custom emoji brought/);
  t.match(report, /past the server's slots \(2 static, 1 animated\): stay :name: text: :rare:\n/, 'the report: slots out, the most used won');
  t.match(
    report,
    /image was refused: stay :name: text: :broken: \(the emoji is not an image that can be read\), :climb: \(its image path leaves the export\), :huge: \(its image is 1048577 bytes, more than 1048576\)\n/,
    'a corrupt image, a path leaving the export, a file too large: named, not a failed import',
  );
  t.match(report, /image the export does not hold: stay :name: text: :cdn:/);
  t.match(report, /1 stickers brought/);
  t.match(report, /a line naming them in their message: Dance \(Lottie\), Far \(no image in the export\), Sneaky \(its image path leaves the export\)\n/);
  t.match(report, /polls brought as text \(not a poll here\): “Only one\?”/);
  t.match(report, /1 polls brought as polls/);

  const serverId = record.server_id;
  t.equal((await owner.get('/api/servers')).body.length, 1, 'the same server as the earlier run');
  const base = `/api/servers/${serverId}`;
  const emojis = (await must(owner.get(`${base}/emojis`), 200)).body;
  t.same(
    emojis.map((e: { name: string; animated: boolean }) => [e.name, e.animated]),
    [
      ['blob', false],
      ['blob_2', false],
      ['party', true],
    ],
    'the most used first, names made unique, an animated GIF kept animated',
  );
  const [blob, blob2, party] = emojis;
  const image = await fetch(`${server.url}${blob.url}`);
  t.equal(image.headers.get('content-type'), 'image/webp', 'served as an uploaded one is');
  t.equal(
    server.app.db.prepare("SELECT COUNT(*) FROM audit_log WHERE server_id = ? AND action IN ('emoji_create', 'sticker_create')").pluck().get(serverId),
    4,
    'audited',
  );

  const channel = (await owner.get(`${base}/channels`)).body[0];
  const page = (await must(owner.get(`${base}/channels/${channel.id}/messages`), 200)).body;
  const [hi, sticker, poll, textPoll] = [...page].reverse();
  t.equal(
    hi.content,
    `hi <:blob:${blob.id}> <:blob:${blob.id}> <:blob_2:${blob2.id}> <a:party:${party.id}> ${use(RARE)} ${use(BROKEN)} ${use(CLIMB)} ${use(CDN)} ${use(HUGE)}`,
    'the emoji brought point at the new ones, in a message an earlier run brought without them too; the others stay as written (shown as :name:)',
  );
  // Reactions made at one time are listed by their key (an emoji's id): compared in a fixed order.
  const byKey = (reactions: { emoji: string | { name: string }; count: number }[]) =>
    [...reactions].sort((a, b) => (typeof a.emoji === 'string' ? a.emoji : a.emoji.name).localeCompare(typeof b.emoji === 'string' ? b.emoji : b.emoji.name));
  t.same(
    byKey(hi.reactions).map((r) => [r.emoji, r.count]),
    [
      [':broken:', 4],
      [':cdn:', 1],
      [{ id: blob.id, name: 'blob', animated: false, available: true }, 3],
      [{ id: blob2.id, name: 'blob_2', animated: false, available: true }, 2],
      [{ id: party.id, name: 'party', animated: true, available: true }, 2],
    ],
    'reactions with an emoji brought are custom reactions (those an earlier run stored as :blob: moved, none twice); one without stays :name:',
  );
  t.match(sticker.stickers, [{ name: 'Wave', available: true }]);
  t.equal(sticker.stickers.length, 1);
  t.equal(sticker.content, '*[sticker: Dance]*\n*[sticker: Far]*\n*[sticker: Sneaky]*', 'a sticker not brought: a line naming it');
  t.match(poll.poll, {
    question: 'Pizza or tacos?',
    answers: [
      { text: 'Pizza', emoji: '🍕' },
      { text: 'Tacos', emoji: null },
    ],
    ended: true,
    allow_multiselect: false,
    expires_at: '2024-03-02T12:00:00.000Z',
  });
  t.same(
    poll.poll.results.map((r: { count: number }) => r.count),
    [3, 1],
    'the final counts, frozen',
  );
  const answer = poll.poll.answers[0].answer_id;
  t.equal((await owner.put(`${base}/channels/${channel.id}/messages/${poll.id}/poll/answers/${answer}/votes/@me`)).status, 409, 'an imported poll is over');
  t.match(textPoll.content, /a poll of one\n> 📊 \*\*Only one\?\*\*\n> - Yes: 0/);
  t.notOk(textPoll.poll);

  // A re-import of the same export into the same server: nothing made twice; members are told the emoji.
  const stream = await openSocket(server.url, '/api/ws', { client: owner });
  t.teardown(() => stream.close());
  const again = await importZip(owner, files);
  t.same(
    (await stream.event('emojis_updated')).emojis.map((e: { name: string }) => e.name),
    ['blob', 'blob_2', 'party'],
    'emojis_updated, to the server',
  );
  t.equal(again.record.status, 'done', again.record.error ?? '');
  t.equal(again.record.server_id, serverId);
  t.equal((await owner.get(`${base}/emojis`)).body.length, 3, 'no emoji twice');
  t.equal((await owner.get(`${base}/stickers`)).body.length, 1, 'no sticker twice');
  t.match(again.record.report.join('\n'), /past the server's slots .*:rare:/, 'still named');
  const refreshed = (await owner.get(`${base}/channels/${channel.id}/messages`)).body;
  t.same(
    byKey(refreshed.at(-1).reactions).map((r) => r.count),
    [4, 1, 3, 2, 2],
    'the same reactions',
  );

  // The server export writes them back in DiscordChatExporter's shape, images in the zip.
  const res = await fetch(`${server.url}${base}/export`, { headers: { cookie: owner.cookie! } });
  t.equal(res.status, 200);
  const zip = Buffer.from(await res.arrayBuffer());
  const entries = await unzip(zip);
  const [name] = [...entries.keys()].filter((n) => n.endsWith('.json') && !n.includes('_Files/'));
  const out = JSON.parse(entries.get(name)!.toString('utf8')).messages;
  t.equal(
    out[0].content,
    `hi ${use(BLOB)} ${use(BLOB)} <:blob_2:${BLOB_TOO.id}> ${use(PARTY)} ${use(RARE)} ${use(BROKEN)} ${use(CLIMB)} ${use(CDN)} ${use(HUGE)}`,
    'Discord ids again',
  );
  const outBlob = out[0].inlineEmojis.find((e: { id: string }) => e.id === BLOB.id);
  t.match(outBlob, { name: 'blob', isAnimated: false, imageUrl: `emojis_Files/${BLOB.id}.webp` });
  t.ok(entries.has(outBlob.imageUrl), 'the emoji image is in the zip');
  t.match(
    out[0].reactions.find((r: { emoji: { id: string } }) => r.emoji.id === BLOB.id),
    { emoji: { name: 'blob', isAnimated: false, imageUrl: `emojis_Files/${BLOB.id}.webp` }, count: 3 },
    'a reaction: the emoji as DiscordChatExporter writes it, with its image',
  );
  t.match(out[1].stickers, [{ id: '960000000000000001', name: 'Wave', sourceUrl: 'stickers_Files/960000000000000001.webp' }]);
  t.ok(entries.has('stickers_Files/960000000000000001.webp'), 'the sticker image is in the zip');
  t.match(out[2].poll, {
    question: { text: 'Pizza or tacos?' },
    answers: [{ answer_id: 1, poll_media: { text: 'Pizza', emoji: { name: '🍕' } } }, { answer_id: 2 }],
    results: {
      is_finalized: true,
      answer_counts: [
        { id: 1, count: 3 },
        { id: 2, count: 1 },
      ],
    },
  });

  // Imported into a fresh server: the emoji, the sticker and the poll come back.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'emoji-round-trip-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const other = await signUp(server.url);
  const back = await importZip(other, Object.fromEntries(entries));
  t.equal(back.record.status, 'done', back.record.error ?? '');
  const backBase = `/api/servers/${back.record.server_id}`;
  const backEmojis = (await must(other.get(`${backBase}/emojis`), 200)).body;
  t.same(backEmojis.map((e: { name: string }) => e.name).sort(), ['blob', 'blob_2', 'party']);
  const backChannel = (await other.get(`${backBase}/channels`)).body[0];
  const [backHi, backSticker, backPoll] = [...(await must(other.get(`${backBase}/channels/${backChannel.id}/messages`), 200)).body].reverse();
  const backBlob = backEmojis.find((e: { name: string }) => e.name === 'blob');
  t.ok(backHi.content.startsWith(`hi <:blob:${backBlob.id}> <:blob:${backBlob.id}>`), 'the emoji render in the new server');
  t.match(
    backHi.reactions.find((r: { emoji: { id?: string } }) => r.emoji.id === backBlob.id),
    { emoji: { name: 'blob', animated: false }, count: 3 },
  );
  t.match(backSticker.stickers, [{ name: 'Wave', available: true }]);
  t.match(backPoll.poll, { question: 'Pizza or tacos?', ended: true });
  t.same(
    backPoll.poll.results.map((r: { count: number }) => r.count),
    [3, 1],
  );
});
