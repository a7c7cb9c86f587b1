// Importing from Discord, part one (issue 31): reading and checking a DiscordChatExporter export,
// from a folder or a zip, and the dry run's report, on the CLI as a self-hoster runs it. The
// exports are synthetic (test/helpers/discord-export.ts). Hostile exports are refused with a
// clear error.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { startServer } from './helpers/server';
import { cli } from './helpers/cli';
import { signUp } from './helpers/client';
import { ALICE, BOB, GUILD, channelFile, message, nextId, standardExport, writeExport, writeZip } from './helpers/discord-export';
import { EXPORT_LIMITS, ImportError, insidePath, openExport } from '../src/parts/import/export-files';
import { planDiscordImport } from '../src/parts/import/discord-plan';

const plan = async (source: string, limits = EXPORT_LIMITS) => {
  const files = await openExport(source, limits);
  try {
    return await planDiscordImport(files);
  } finally {
    files.close();
  }
};

t.test('paths inside an export: Windows separators, and nothing that leaves it', async (t) => {
  t.equal(insidePath('a\\b/c.png'), 'a/b/c.png');
  t.equal(insidePath('./a//b/../c.png'), 'a/c.png');
  for (const bad of ['../x', 'a/../../x', '/etc/passwd', 'C:\\x', 'c:/x', 'a\0b']) t.equal(insidePath(bad), null, bad);
});

t.test('the dry run of a folder and of the same zip: every channel, partition, type and file counted', async (t) => {
  const files = standardExport();
  const folder = writeExport(files);
  const zip = await writeZip(files);
  t.teardown(() => fs.rmSync(folder, { recursive: true, force: true }));
  for (const [what, source] of [
    ['folder', folder],
    ['zip', zip],
  ]) {
    const p = await plan(source);
    t.same(p.guild, { id: GUILD.id, name: GUILD.name }, `${what}: the server`);
    t.same(p.categories, ['Text', 'Voice'], `${what}: categories (a thread's parent is not one)`);
    const by = Object.fromEntries(p.channels.map((c) => [c.name, c]));
    t.same(Object.keys(by).sort(), ['general', 'lounge', 'news', 'plans']);
    const general = by.general;
    t.equal(general.files, 2, `${what}: two partitions joined`);
    t.equal(general.messages, 6);
    t.equal(general.authors, 2);
    t.same(general.attachments, { found: 2, missing: 1 }, `${what}: a file present, one with Windows separators, one only on Discord's CDN`);
    t.equal(general.reactions, 5);
    t.equal(general.pins, 1);
    t.equal(general.system, 2, 'a pin line and a join');
    t.equal(general.first, '2024-01-01T10:00:00.000+00:00');
    t.equal(general.last, '2024-01-03T11:00:00.000+00:00');
    t.equal(general.becomes, 'channel');
    t.equal(by.news.becomes, 'channel');
    t.equal(by.plans.becomes, 'thread');
    t.equal(by.plans.parent, 'general');
    t.equal(by.lounge.becomes, 'voice');
    t.same(by.lounge.unknownTypes, { AutoModerationAction: 1 }, 'an unknown message type is named');
    t.equal(p.people, 2);
    t.equal(p.roles, 1);
    t.ok(
      p.notCarried.some((n) => /who reacted/.test(n)),
      'reactions without their users are said',
    );
    t.ok(p.notCarried.some((n) => /attachments the export does not hold/.test(n)));
  }
});

t.test('the CLI: --dry-run reports and writes nothing; refusals are clear', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const owner = await signUp(server.url);
  const folder = writeExport(standardExport());
  t.teardown(() => fs.rmSync(folder, { recursive: true, force: true }));
  const db = server.app.db;
  const counts = () =>
    db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'messages_fts%' AND name NOT LIKE 'sqlite_%'")
      .pluck()
      .all()
      .map((name) => [
        name,
        db
          .prepare(`SELECT COUNT(*) FROM "${name as string}"`)
          .pluck()
          .get(),
      ]);
  const before = counts();
  const dry = await cli(['import', 'discord', folder, '--owner', owner.username, '--dry-run'], server.dataDir);
  t.equal(dry.code, 0, dry.stderr);
  t.match(dry.stdout, /Server "Hobby Club" \(Discord id 800000000000000001\): 4 channels, 2 categories, 2 people, 1 roles/);
  t.match(
    dry.stdout,
    /#general \(GuildTextChat, under Text\): becomes a channel\n {2}6 messages by 2 authors from 2 files; 2024-01-01T10:00:00.000\+00:00 to 2024-01-03T11:00:00.000\+00:00\n {2}attachments 2 found, 1 missing/,
  );
  t.match(dry.stdout, /unknown message types: AutoModerationAction x1/);
  t.match(dry.stdout, /Dry run: nothing was written\./);
  t.same(counts(), before, 'nothing was written');

  const refused: [string[], RegExp, number][] = [
    [['import', 'discord', folder, '--dry-run'], /--owner <username> is needed/, 2],
    [['import', 'discord', folder, '--owner', 'nobody_here', '--dry-run'], /no user named nobody_here/, 1],
    [['import', 'discord', path.join(folder, 'missing'), '--owner', owner.username, '--dry-run'], /cannot import: .*no such file or folder/, 1],
    [['import', 'discord', folder, '--owner'], /usage:/, 2],
    [['import', 'discord', folder, '--owner', owner.username, '--dry-run', '--frobnicate'], /usage:/, 2],
  ];
  for (const [args, says, code] of refused) {
    const res = await cli(args, server.dataDir);
    t.equal(res.code, code, args.join(' '));
    t.match(res.stderr, says, args.join(' '));
  }
  t.match(
    (await cli(['help'], server.dataDir)).stdout,
    /import discord <folder or zip> --owner <username> \[--server <name>\] \[--skip-system\] \[--package-claims\] \[--dry-run\]/,
    'in the usage text',
  );
});

t.test('hostile or broken exports are refused with a clear error', async (t) => {
  const general = { id: '810000000000000009', type: 'GuildTextChat', name: 'general' };
  const one = message({ author: ALICE });
  const cases: [string, Record<string, unknown>, RegExp][] = [
    ['no channel files', { 'readme.txt': Buffer.from('hi') }, /no DiscordChatExporter JSON files/],
    ['not JSON', { 'a.json': Buffer.from('{"guild": ') }, /a\.json: not JSON/],
    [
      'wrong types',
      { 'a.json': { ...channelFile({ ...general, messages: [] }), messages: 'many' } },
      /a\.json: not a DiscordChatExporter channel file: \/messages/,
    ],
    ['a bad id', { 'a.json': channelFile({ ...general, messages: [{ ...one, id: '12x' }] }) }, /\/messages\/0\/id/],
    ['a bad timestamp', { 'a.json': channelFile({ ...general, messages: [message({ timestamp: 'yesterday' })] }) }, /has no valid timestamp/],
    [
      'a message id twice',
      { 'a [part 1].json': channelFile({ ...general, messages: [one] }), 'a [part 2].json': channelFile({ ...general, messages: [one] }) },
      /message \d+ is also in a \[part 1\]\.json/,
    ],
    [
      'only direct messages',
      { 'a.json': channelFile({ ...general, type: 'DirectTextChat', messages: [] }) },
      /this export holds only direct messages: nothing to import/,
    ],
    [
      'two servers',
      {
        'a.json': channelFile({ ...general, messages: [] }),
        'b.json': channelFile({ ...general, id: '810000000000000010', messages: [] }, { ...GUILD, id: '800000000000000002' }),
      },
      /a channel of another server/,
    ],
    [
      'an attachment path that leaves the export',
      {
        'a.json': channelFile({
          ...general,
          messages: [message({ attachments: [{ id: nextId(), url: '../../etc/passwd', fileName: 'passwd', fileSizeBytes: 1 }] })],
        }),
      },
      /an attachment path leaves the export/,
    ],
  ];
  for (const [what, files, says] of cases) {
    const folder = writeExport(files);
    await t.rejects(plan(folder), { constructor: ImportError, message: says }, `folder: ${what}`);
    await t.rejects(plan(await writeZip(files)), { constructor: ImportError, message: says }, `zip: ${what}`);
    fs.rmSync(folder, { recursive: true, force: true });
  }

  // Zips that climb out, or unpack past the limits (a zip bomb: a small entry that unpacks big).
  // yazl writes no such names: a safe name of the same length is written, then its bytes changed.
  const hostileZip = async (safe: string, hostile: string) => {
    const file = await writeZip({ [safe]: channelFile({ ...general, messages: [] }) });
    const bytes = fs.readFileSync(file);
    fs.writeFileSync(file, Buffer.from(bytes.toString('latin1').split(safe).join(hostile), 'latin1'));
    return file;
  };
  await t.rejects(plan(await hostileZip('zz/evil.json', '../evil.json')), {
    constructor: ImportError,
    message: /\.\.\/evil\.json: a path that leaves the export/,
  });
  await t.rejects(plan(await hostileZip('Xabs.json', '/abs.json')), { constructor: ImportError, message: /a path that leaves the export/ });
  const bomb = await writeZip({ 'a.json': channelFile({ ...general, messages: [] }), 'zeros.bin': Buffer.alloc(5_000_000) });
  t.ok(fs.statSync(bomb).size < 100_000, 'five megabytes of zeros pack small');
  await t.rejects(plan(bomb, { ...EXPORT_LIMITS, fileBytes: 1_000_000 }), {
    constructor: ImportError,
    message: /zeros\.bin: 5000000 bytes unpacked, more than 1000000/,
  });
  await t.rejects(plan(bomb, { ...EXPORT_LIMITS, totalBytes: 2_000_000 }), { constructor: ImportError, message: /unpacks to more than 2000000 bytes/ });
  const many = writeExport({ 'a.json': channelFile({ ...general, messages: [] }), 'b.bin': Buffer.from('x'), 'c.bin': Buffer.from('y') });
  await t.rejects(plan(many, { ...EXPORT_LIMITS, files: 2 }), { constructor: ImportError, message: /more than 2 files/ });
  // A huge JSON file: refused before it is read.
  const huge = writeExport({
    'a.json': channelFile({ ...general, messages: Array.from({ length: 200 }, () => message({ content: 'x'.repeat(500), author: BOB })) }),
  });
  await t.rejects(plan(huge, { ...EXPORT_LIMITS, fileBytes: 50_000 }), { constructor: ImportError, message: /a\.json: \d+ bytes, more than 50000/ });
  const hugeFiles = await openExport(huge);
  await t.rejects(
    planDiscordImport(hugeFiles, 50_000),
    { constructor: ImportError, message: /a\.json: \d+ bytes, more than 50000 for one channel file: export with --partition/ },
    'a channel file past its own limit',
  );
  hugeFiles.close();
  await t.rejects(plan(path.join(huge, 'a.json')), { constructor: ImportError, message: /not a zip file/ }, 'a file that is not a zip');
  for (const dir of [many, huge]) fs.rmSync(dir, { recursive: true, force: true });
});
