import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { SCHEMA_VERSION, openDatabase } from '../src/core/db';
import { Client } from './helpers/client';
import { startServer } from './helpers/server';

// test/fixtures/schema-v1.sql: a database as the last release (schema version 1) made it, with
// rows in every table. Each migration since must carry every one of them over.
const FIXTURE = path.join(__dirname, 'fixtures', 'schema-v1.sql');

function v1Database(): { dataDir: string; file: string; counts: Record<string, number> } {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'chat-migrate-'));
  const file = path.join(dataDir, 'chat.db');
  const db = new Database(file);
  db.exec(fs.readFileSync(FIXTURE, 'utf8'));
  const tables = db.prepare<[], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").all();
  const counts = Object.fromEntries(tables.map(({ name }) => [name, (db.prepare(`SELECT COUNT(*) AS n FROM "${name}"`).get() as { n: number }).n]));
  db.close();
  return { dataDir, file, counts };
}

t.test('a version 1 database is migrated to the current schema with every row kept', async (t) => {
  const { dataDir, file, counts } = v1Database();
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  t.ok(
    Object.values(counts).every((n) => n > 0),
    `the fixture has rows in every table: ${JSON.stringify(counts)}`,
  );

  const db = openDatabase(file);
  t.teardown(() => db.close());
  t.equal(db.pragma('user_version', { simple: true }), SCHEMA_VERSION, `user_version is now ${SCHEMA_VERSION}`);
  for (const [table, n] of Object.entries(counts)) {
    t.equal((db.prepare(`SELECT COUNT(*) AS n FROM "${table}"`).get() as { n: number }).n, n, `${table}: ${n} row(s) kept`);
  }
  t.equal(db.pragma('integrity_check', { simple: true }), 'ok');
  t.same(db.pragma('foreign_key_check'), [], 'no row points at nothing');
  const message = db.prepare("SELECT content, edited_at FROM messages WHERE id = '019a0000-0000-7000-8000-000000000002'").get();
  t.same(message, { content: 'hi @alice', edited_at: '2026-11-01T10:02:00.000Z' }, 'values are kept, not only rows');
  // Schema 11: the one role a member had is now their first of several; every old role stays a
  // group of its own in the member list, as it was shown.
  t.same(
    db.prepare('SELECT server_id, user_id, role_id FROM member_roles').all(),
    [{ server_id: '00000000-0000-4000-8000-000000000010', user_id: '00000000-0000-4000-8000-000000000002', role_id: '00000000-0000-4000-8000-000000000030' }],
    "a member's role is carried over to member_roles",
  );
  t.same(
    db.prepare('SELECT position, hoist, mentionable, color FROM roles').all(),
    [{ position: 0, hoist: 1, mentionable: 0, color: null }],
    'an old role: first, hoisted, not mentionable, no colour',
  );
  // Schema 15: everyone so far is a person; messages gain the webhook and embed columns, and the
  // search index takes embed text (the triggers were made again).
  t.same(db.prepare('SELECT DISTINCT bot FROM profiles').all(), [{ bot: 0 }], 'every old user is a person');
  t.same(
    db.prepare('SELECT DISTINCT webhook_id, embeds, embed_text FROM messages').all(),
    [{ webhook_id: null, embeds: null, embed_text: null }],
    'no old message has a webhook or embeds',
  );
  t.match(db.prepare("SELECT sql FROM sqlite_master WHERE name = 'messages_fts_insert'").pluck().get(), /embed_text/, 'the index trigger takes embed text');
  // Every table the current schema has exists after the migration.
  const fresh = new Database(':memory:');
  fresh.exec(fs.readFileSync(path.join(__dirname, '..', 'schema.sql'), 'utf8'));
  const want = fresh.prepare<[], { name: string }>("SELECT name FROM sqlite_master WHERE type IN ('table', 'index') AND name NOT LIKE 'sqlite_%'").all();
  fresh.close();
  const have = new Set(
    db
      .prepare<[], { name: string }>("SELECT name FROM sqlite_master WHERE type IN ('table', 'index')")
      .all()
      .map((r) => r.name),
  );
  for (const { name } of want) t.ok(have.has(name), `${name} exists`);
});

t.test('the server starts on a migrated database and serves its history', async (t) => {
  const { dataDir } = v1Database();
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const server = await startServer({ dataDir });
  t.teardown(server.close);
  // The fixture's password hashes are not real: sign in as a new user and join by the old invite.
  const client = new Client(server.url);
  await client.post('/api/register', { username: 'newcomer', password: 'correct horse' });
  await client.post('/api/login', { username: 'newcomer', password: 'correct horse' });
  t.equal((await client.post('/api/invites/AbCdEfGhIjKlMnOpQrStUvWx/accept')).status, 404, 'the old invite expired long ago');
  server.app.db.prepare("UPDATE invites SET expires_at = '2999-01-01T00:00:00.000Z'").run();
  t.equal((await client.post('/api/invites/AbCdEfGhIjKlMnOpQrStUvWx/accept')).status, 200);
  const history = await client.get('/api/servers/00000000-0000-4000-8000-000000000010/channels/00000000-0000-4000-8000-000000000020/messages');
  t.equal(history.status, 200);
  t.same(
    history.body.map((m: { content: string }) => m.content),
    ['hi @alice', 'hello town'],
  );
  t.equal(history.body[0].reply_preview.content, 'hello town');
  t.same(history.body[1].reactions, [{ emoji: '👍', count: 1, reacted: false }]);
});

t.test('a version 4 database with messages gains the search index (4 -> 5) and its prefix index (6 -> 7), kept in step afterwards', async (t) => {
  // Built as version 4 made it: that schema, the rows of the v1 fixture (every later column has a default).
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'chat-migrate-'));
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const old = new Database(path.join(dataDir, 'chat.db'));
  old.exec(fs.readFileSync(path.join(__dirname, 'fixtures', 'schema-v4.sql'), 'utf8'));
  const rows = fs
    .readFileSync(FIXTURE, 'utf8')
    .split('\n')
    .filter((line) => line.startsWith('INSERT INTO'));
  old.exec(rows.join('\n'));
  old.pragma('user_version = 4');
  t.equal((old.prepare("SELECT COUNT(*) AS n FROM sqlite_master WHERE name = 'messages_fts'").get() as { n: number }).n, 0, 'no index before');
  old.close();

  const server = await startServer({ dataDir });
  t.teardown(server.close);
  const db = server.app.db;
  t.equal(db.pragma('user_version', { simple: true }), SCHEMA_VERSION);
  // Keys are (range << 32) | seq (8 -> 9): the seq, and the range apart.
  const keys = (q: string) => db.prepare<[string], number>('SELECT rowid FROM messages_fts WHERE messages_fts MATCH ? ORDER BY rowid').pluck().all(q);
  const matches = (q: string) => keys(q).map((key) => key % 2 ** 32);
  t.same(matches('"town"'), [1], 'the old messages are indexed');
  t.same(matches('"private"'), [3]);
  t.same(
    keys('"town"').map((key) => Math.floor(key / 2 ** 32)),
    [1],
    "a server message is in its server's range (8 -> 9)",
  );
  t.same(
    keys('"private"').map((key) => Math.floor(key / 2 ** 32)),
    [0],
    'a conversation message is in range 0',
  );
  const definition = (db.prepare("SELECT sql FROM sqlite_master WHERE name = 'messages_fts'").get() as { sql: string }).sql;
  t.match(definition, /prefix = '3'/, 'rebuilt with three-letter prefixes (6 -> 7)');
  t.same(matches('"tow" *'), [1], 'a three-letter prefix finds the old messages');
  t.same(db.prepare("SELECT v FROM messages_fts_config WHERE k = 'automerge'").pluck().all(), [16], 'segments merged 16 at a time');
  t.same(db.prepare('SELECT name FROM generations ORDER BY name').pluck().all(), ['channels', 'users'], 'generations (7 -> 8)');
  t.same(
    db.prepare("SELECT name FROM sqlite_master WHERE name IN ('devices', 'device_retired_secrets') ORDER BY name").pluck().all(),
    ['device_retired_secrets', 'devices'],
    'remembered devices (9 -> 10)',
  );
  const channelsAt = db.prepare("SELECT n FROM generations WHERE name = 'channels'").pluck();
  const before = channelsAt.get();
  db.prepare("UPDATE channels SET topic = 'moved' WHERE rowid = (SELECT MIN(rowid) FROM channels)").run();
  t.not(channelsAt.get(), before, 'a change to a channel moves its generation');

  const client = new Client(server.url);
  await client.post('/api/register', { username: 'newcomer', password: 'correct horse' });
  await client.post('/api/login', { username: 'newcomer', password: 'correct horse' });
  server.app.db.prepare("UPDATE invites SET expires_at = '2999-01-01T00:00:00.000Z'").run();
  t.equal((await client.post('/api/invites/AbCdEfGhIjKlMnOpQrStUvWx/accept')).status, 200);
  const found = await client.get('/api/search?q=town');
  t.same(
    found.body.results.map((m: { content: string }) => m.content),
    ['hello town'],
    'an old message is found through the API',
  );
  t.same((await client.get('/api/search?q=private')).body.results, [], 'the old DM stays private');
  // Channel permissions (12 -> 13): everyone keeps what they could do, in every channel; and
  // (18 -> 19) who could send may start and talk in threads; (20 -> 21) may connect, speak and use
  // video in voice channels; (issue 50) may send polls.
  t.same(
    db.prepare('SELECT DISTINCT everyone_permissions FROM servers').pluck().all(),
    [138735],
    "everyone's flags: all but mention_everyone, manage_threads, the voice moderators' three and manage_emojis",
  );
  t.same(db.prepare('SELECT DISTINCT permissions_synced FROM channels').pluck().all(), [1]);
  // Imports (13 -> 14): nobody was imported before.
  t.same(db.prepare('SELECT DISTINCT imported FROM users').pluck().all(), [0], 'no account is a placeholder');
  const channels = await client.get('/api/servers/00000000-0000-4000-8000-000000000010/channels');
  t.equal(
    channels.body.length,
    db.prepare("SELECT COUNT(*) FROM channels WHERE server_id = '00000000-0000-4000-8000-000000000010'").pluck().get(),
    'a member sees every channel',
  );
  for (const c of channels.body)
    t.same(
      c.permissions,
      [
        'view_channel',
        'send_messages',
        'attach_files',
        'add_reactions',
        'read_history',
        'create_public_threads',
        'create_private_threads',
        'send_messages_in_threads',
        'connect',
        'speak',
        'video',
        'send_polls',
      ],
      `and may do in ${c.name} what they could, start and talk in threads, and join voice`,
    );
  const posted = await client.post('/api/servers/00000000-0000-4000-8000-000000000010/channels/00000000-0000-4000-8000-000000000020/messages', {
    content: 'town hall tonight',
  });
  t.equal(posted.status, 201);
  t.same(
    (await client.get('/api/search?q=town')).body.results.map((m: { content: string }) => m.content),
    ['town hall tonight', 'hello town'],
    'new messages join the index',
  );
  t.equal(db.pragma('integrity_check', { simple: true }), 'ok');
  // FTS5's own check: throws (SQLITE_CORRUPT_VTAB) when the index differs from the messages.
  t.doesNotThrow(() => db.prepare("INSERT INTO messages_fts (messages_fts, rank) VALUES ('integrity-check', 1)").run(), 'the index matches the messages');
});

t.test('a version 16 database: imports may be interrupted, CLI imports left running are, and a person may have several placeholders (16 -> 17)', async (t) => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'chat-migrate-'));
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const file = path.join(dataDir, 'chat.db');
  // Today's schema with the two import tables as version 16 had them, and rows in them.
  const old = new Database(file);
  old.exec(fs.readFileSync(path.join(__dirname, '..', 'schema.sql'), 'utf8'));
  old.exec(`
    DROP TABLE imports;
    DROP TABLE imported_people;
    CREATE TABLE imports (
      id TEXT PRIMARY KEY, owner_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE, guild_id TEXT NOT NULL, server_name TEXT NOT NULL,
      server_id TEXT REFERENCES servers (id) ON DELETE CASCADE, upload TEXT,
      status TEXT NOT NULL CHECK (status IN ('checked', 'running', 'done', 'failed')), plan TEXT NOT NULL,
      done INTEGER NOT NULL DEFAULT 0, total INTEGER NOT NULL DEFAULT 0, error TEXT, package_claims INTEGER NOT NULL DEFAULT 0,
      system TEXT NOT NULL DEFAULT 'lines' CHECK (system IN ('lines', 'skip')), created_at TEXT NOT NULL, finished_at TEXT
    );
    CREATE TABLE imported_people (
      user_id TEXT PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE, server_id TEXT NOT NULL REFERENCES servers (id) ON DELETE CASCADE,
      discord_id TEXT NOT NULL, discord_name TEXT NOT NULL, claim_code TEXT NOT NULL UNIQUE,
      claimed_by TEXT REFERENCES users (id) ON DELETE SET NULL, claimed_at TEXT, hidden_at TEXT, UNIQUE (server_id, discord_id)
    );
    INSERT INTO users (id, username, password_hash, created_at) VALUES ('u1', 'owner', '!', '2026-01-01T00:00:00.000Z'), ('u2', 'claimer', '!', '2026-01-01T00:00:00.000Z');
    INSERT INTO users (id, username, password_hash, created_at, imported) VALUES ('p1', 'alice-discord', '!', '2026-01-01T00:00:00.000Z', 1);
    INSERT INTO servers (id, name, owner_id, created_at) VALUES ('s1', 'Club', 'u1', '2026-01-01T00:00:00.000Z');
    INSERT INTO imports (id, owner_id, guild_id, server_name, server_id, upload, status, plan, created_at) VALUES
      ('cli-killed', 'u1', 'g1', 'Club', 's1', NULL, 'running', '{}', '2026-01-01T00:00:00.000Z'),
      ('cli-killed-too', 'u1', 'g1', 'Club', 's1', NULL, 'running', '{}', '2026-01-01T00:00:01.000Z'),
      ('browser', 'u1', 'g2', 'Club', NULL, 'browser.zip', 'running', '{}', '2026-01-01T00:00:02.000Z'),
      ('browser-too', 'u1', 'g2', 'Club', NULL, 'browser-too.zip', 'running', '{}', '2026-01-01T00:00:03.000Z'),
      ('finished', 'u1', 'g1', 'Club', 's1', NULL, 'done', '{}', '2026-01-01T00:00:04.000Z');
    INSERT INTO imported_people VALUES ('p1', 's1', 'd1', 'alice', 'AAAA-BBBB-CCCC', 'u2', '2026-01-02T00:00:00.000Z', NULL);
  `);
  old.pragma('user_version = 16');
  old.close();

  const db = openDatabase(file);
  t.teardown(() => db.close());
  t.equal(db.pragma('user_version', { simple: true }), SCHEMA_VERSION);
  t.same(
    db
      .prepare('SELECT id, status, runner_pid FROM imports ORDER BY created_at')
      .all()
      .map((r: any) => [r.id, r.status, r.runner_pid]),
    [
      ['cli-killed', 'interrupted', null],
      ['cli-killed-too', 'interrupted', null],
      ['browser', 'running', null],
      ['browser-too', 'failed', null],
      ['finished', 'done', null],
    ],
    'CLI imports left running are interrupted; one running browser import per Discord server and owner (the server resumes it)',
  );
  t.same(
    db.prepare('SELECT * FROM imported_people').all(),
    [
      {
        user_id: 'p1',
        server_id: 's1',
        discord_id: 'd1',
        discord_name: 'alice',
        discord_discriminator: null,
        claim_code: 'AAAA-BBBB-CCCC',
        claimed_by: 'u2',
        claimed_at: '2026-01-02T00:00:00.000Z',
        hidden_at: null,
      },
    ],
    'placeholders kept',
  );
  db.prepare(
    "INSERT INTO users (id, username, password_hash, created_at, imported) VALUES ('p2', 'alice-discord-2', '!', '2026-01-03T00:00:00.000Z', 1)",
  ).run();
  db.prepare(
    "INSERT INTO imported_people (user_id, server_id, discord_id, discord_name, claim_code) VALUES ('p2', 's1', 'd1', 'alice', 'DDDD-EEEE-FFFF')",
  ).run();
  t.pass('a second placeholder of a person who claimed');
  t.throws(
    () =>
      db
        .prepare("INSERT INTO imported_people (user_id, server_id, discord_id, discord_name, claim_code) VALUES ('u1', 's1', 'd1', 'alice', 'GGGG-HHHH-JJJJ')")
        .run(),
    /UNIQUE/,
    'but one unclaimed at a time',
  );
  db.prepare("DELETE FROM imported_people WHERE user_id = 'p2'").run();
  t.equal(db.prepare("SELECT COUNT(*) FROM users WHERE id = 'p2'").pluck().get(), 0, 'the placeholder goes with its row (the trigger is back)');
  t.equal(db.pragma('integrity_check', { simple: true }), 'ok');
  t.same(db.pragma('foreign_key_check'), []);
});

t.test('a version 17 database: every channel is a text channel of no parent (17 -> 18)', async (t) => {
  const { dataDir, file } = v1Database();
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const db = openDatabase(file);
  t.teardown(() => db.close());
  t.equal(db.pragma('user_version', { simple: true }), SCHEMA_VERSION);
  const channels = db.prepare<[], { type: string; parent_id: string | null }>('SELECT type, parent_id FROM channels').all();
  t.ok(channels.length > 0, `${channels.length} channels carried over`);
  t.same([...new Set(channels.map((c) => `${c.type}/${c.parent_id}`))], ['text/null'], 'all text, none under another');
});

t.test(
  'a version 18 database: channels made anew without losing a row, thread flags where sending was (18 -> 19), and run twice changes nothing',
  async (t) => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'chat-migrate-'));
    t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
    const file = path.join(dataDir, 'chat.db');
    const old = new Database(file);
    old.exec(fs.readFileSync(path.join(__dirname, 'fixtures', 'schema-v18.sql'), 'utf8'));
    const at = '2026-12-01T10:00:00.000Z';
    const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
    old.exec(`
    INSERT INTO users (id, username, password_hash, created_at) VALUES ('${id(1)}', 'alice', 'x', '${at}'), ('${id(2)}', 'bob', 'x', '${at}');
    INSERT INTO servers (id, name, owner_id, created_at, everyone_permissions) VALUES ('${id(10)}', 'Town', '${id(1)}', '${at}', 47), ('${id(11)}', 'Library', '${id(1)}', '${at}', 33);
    INSERT INTO roles (id, server_id, name, created_at, permissions) VALUES ('${id(30)}', '${id(11)}', 'writers', '${at}', 2), ('${id(31)}', '${id(11)}', 'readers', '${at}', 1);
    INSERT INTO members (server_id, user_id, joined_at) VALUES ('${id(10)}', '${id(1)}', '${at}'), ('${id(10)}', '${id(2)}', '${at}');
    INSERT INTO channels (id, server_id, name, position, created_at) VALUES
      ('${id(20)}', '${id(10)}', 'general', 0, '${at}'), ('${id(21)}', '${id(10)}', 'announcements', 1, '${at}'), ('${id(22)}', '${id(11)}', 'stacks', 0, '${at}');
    INSERT INTO channel_overwrites (channel_id, target_id, kind, allow, deny, server_id) VALUES
      ('${id(21)}', '${id(10)}', 'everyone', 0, 2, '${id(10)}'), ('${id(22)}', '${id(30)}', 'role', 2, 0, '${id(11)}');
    INSERT INTO messages (seq, id, channel_id, author_id, content, created_at) VALUES
      (1, '${id(40)}', '${id(20)}', '${id(1)}', 'hello town', '${at}'), (2, '${id(41)}', '${id(21)}', '${id(1)}', 'town hall tonight', '${at}');
    INSERT INTO reactions (message_seq, emoji, user_id, created_at) VALUES (1, '👍', '${id(2)}', '${at}');
  `);
    old.pragma('user_version = 18');
    t.match(
      old.prepare("SELECT sql FROM sqlite_master WHERE name = 'channels'").pluck().get(),
      /UNIQUE \(server_id, name COLLATE NOCASE\)/,
      'names unique in the table itself before',
    );
    old.close();

    const migrated = () => {
      const db = openDatabase(file);
      const state = {
        version: db.pragma('user_version', { simple: true }),
        everyone: db.prepare('SELECT everyone_permissions FROM servers ORDER BY id').pluck().all(),
        roles: db.prepare('SELECT permissions FROM roles ORDER BY id').pluck().all(),
        overwrites: db.prepare('SELECT allow, deny FROM channel_overwrites ORDER BY channel_id').all(),
        messages: db.prepare('SELECT id, channel_id, content FROM messages ORDER BY seq').all(),
        reactions: db.prepare('SELECT COUNT(*) FROM reactions').pluck().get(),
        channels: db.prepare('SELECT id, name, type, parent_id, available_tags, default_reaction, default_sort FROM channels ORDER BY id').all(),
        dangling: db.pragma('foreign_key_check'),
        found: db.prepare('SELECT COUNT(*) FROM messages_fts WHERE messages_fts MATCH \'"town"\'').pluck().get(),
      };
      return { db, state };
    };
    const { db, state } = migrated();
    t.equal(state.version, SCHEMA_VERSION);
    t.same(
      state.everyone,
      [495 | 7168 | 131072, 33 | 7168 | 131072],
      'who could send may start and talk in threads; a server where everyone only reads stays so (and voice, 20 -> 21, adds connect, speak and video for all; issue 50 send_polls, which without send_messages does nothing)',
    );
    t.same(state.roles, [2 | 64 | 128 | 256, 1], "a role's flags likewise");
    t.same(
      state.overwrites,
      [
        { allow: 0, deny: 2 | 64 | 128 | 256 },
        { allow: 2 | 64 | 128 | 256, deny: 0 },
      ],
      'a channel made read-only stays read-only in its threads; an allow to send allows threads',
    );
    t.same(
      state.messages.map((m: any) => m.content),
      ['hello town', 'town hall tonight'],
      'every message kept (no cascade from the rebuilt channels)',
    );
    t.equal(state.reactions, 1, 'and their reactions');
    t.equal(state.found, 2, 'the search index still finds them');
    t.same(
      state.channels.map((c: any) => [c.name, c.type, c.parent_id, c.available_tags, c.default_reaction, c.default_sort]),
      [
        ['general', 'text', null, '[]', null, 'latest_activity'],
        ['announcements', 'text', null, '[]', null, 'latest_activity'],
        ['stacks', 'text', null, '[]', null, 'latest_activity'],
      ],
    );
    t.same(state.dangling, [], 'no row points at nothing');
    t.equal(db.pragma('foreign_keys', { simple: true }), 1, 'foreign keys back on');
    t.notMatch(db.prepare("SELECT sql FROM sqlite_master WHERE name = 'channels'").pluck().get(), /UNIQUE/, 'the table binds no name');
    for (const name of [
      'channels_inserted',
      'access_channels_added',
      'channels_search_range',
      'notification_settings_channel_gone',
      'channels_name',
      'threads',
      'thread_members',
    ]) {
      t.equal(db.prepare('SELECT COUNT(*) FROM sqlite_master WHERE name = ?').pluck().get(name), 1, `${name} is there`);
    }
    const channel = db.prepare('INSERT INTO channels (id, server_id, name, position, created_at, type, parent_id) VALUES (?, ?, ?, 0, ?, ?, ?)');
    t.throws(() => channel.run(id(23), id(10), 'GENERAL', at, 'text', null), /UNIQUE/, 'a listed channel still takes no name of another, in any case');
    channel.run(id(24), id(10), 'general', at, 'thread', id(20));
    t.pass('a thread may take it');
    db.prepare('DELETE FROM channels WHERE id = ?').run(id(24));
    // Run again (the order of migrations may change at a merge): nothing moves.
    db.pragma('user_version = 18');
    db.close();
    const again = migrated();
    t.teardown(() => again.db.close());
    t.same(again.state, state, 'the migration run a second time changes nothing');
  },
);

t.test('a version 19 database: everyone chose their username, nobody has an identity or a passkey (19 -> 20)', async (t) => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'chat-migrate-'));
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const file = path.join(dataDir, 'chat.db');
  // Today's schema as version 19 had it: no identities, no passkeys, no username_chosen; and a user.
  const old = new Database(file);
  old.exec(fs.readFileSync(path.join(__dirname, '..', 'schema.sql'), 'utf8'));
  old.exec(`
    DROP TABLE identities;
    DROP TABLE passkeys;
    ALTER TABLE users DROP COLUMN username_chosen;
    INSERT INTO users (id, username, password_hash, created_at) VALUES ('u1', 'alice', '$argon2id$x', '2026-01-01T00:00:00.000Z');
  `);
  old.pragma('user_version = 19');
  old.close();

  const db = openDatabase(file);
  t.teardown(() => db.close());
  t.equal(db.pragma('user_version', { simple: true }), SCHEMA_VERSION);
  t.same(
    db.prepare('SELECT id, username, username_chosen FROM users').all(),
    [{ id: 'u1', username: 'alice', username_chosen: 1 }],
    'an old username counts as chosen: it cannot be changed as a claim-made one',
  );
  t.same(db.prepare('SELECT COUNT(*) FROM identities').pluck().get(), 0);
  t.same(db.prepare('SELECT COUNT(*) FROM passkeys').pluck().get(), 0);
  const identity = db.prepare(
    "INSERT INTO identities (id, user_id, provider_id, issuer, subject, created_at, last_used_at) VALUES (?, 'u1', 'org', 'https://id.example', 's1', 'now', 'now')",
  );
  identity.run('i1');
  t.throws(() => identity.run('i2'), /UNIQUE/, 'an identity opens one account');
  t.equal(db.pragma('integrity_check', { simple: true }), 'ok');
  t.same(db.pragma('foreign_key_check'), []);
});

t.test('a version 20 database: voice settings and voice flags arrive, and new servers get them too (20 -> 21)', async (t) => {
  const { dataDir, file } = v1Database();
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const db = openDatabase(file);
  const columns = db
    .prepare<[], { name: string }>('PRAGMA table_info(channels)')
    .all()
    .map((c) => c.name);
  t.ok(columns.includes('user_limit') && columns.includes('bitrate'), 'channels have user_limit and bitrate');
  t.same(db.prepare('SELECT DISTINCT user_limit, bitrate FROM channels').all(), [{ user_limit: null, bitrate: null }], 'none set on the text channels');
  // The column's default stays the old one (SQLite cannot change a default): a new server names its flags.
  t.match(db.prepare("SELECT sql FROM sqlite_master WHERE name = 'servers'").pluck().get(), /DEFAULT 47/);
  db.close();
  const server = await startServer({ dataDir });
  t.teardown(server.close);
  const client = new Client(server.url);
  await client.post('/api/register', { username: 'voicefan', password: 'correct horse' });
  await client.post('/api/login', { username: 'voicefan', password: 'correct horse' });
  const made = await client.post('/api/servers', { name: 'after the upgrade' });
  t.same(made.body.permissions, [
    'view_channel',
    'send_messages',
    'attach_files',
    'add_reactions',
    'read_history',
    'create_public_threads',
    'create_private_threads',
    'send_messages_in_threads',
    'connect',
    'speak',
    'video',
    'send_polls',
  ]);
  const voice = await client.post(`/api/servers/${made.body.id}/channels`, { name: 'lounge', type: 'voice' });
  t.match(voice.body, { type: 'voice', user_limit: 0, bitrate: 64_000 }, 'a voice channel on a migrated database');
});

t.test('the voice migration is idempotent: run again (its place among migrations moved), it changes nothing (20 -> 21)', async (t) => {
  const { dataDir, file } = v1Database();
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  openDatabase(file).close();
  // A server whose owner then took connect away from everyone; the migration is run a second time.
  const raw = new Database(file);
  raw.exec('UPDATE servers SET everyone_permissions = 47');
  raw.pragma('user_version = 20');
  raw.close();
  const db = openDatabase(file);
  t.teardown(() => db.close());
  t.equal(db.pragma('user_version', { simple: true }), SCHEMA_VERSION);
  t.same(db.prepare('SELECT DISTINCT everyone_permissions FROM servers').pluck().all(), [47], 'connect is not granted again');
  t.equal(
    db
      .prepare<[], { name: string }>('PRAGMA table_info(channels)')
      .all()
      .filter((c) => c.name === 'user_limit' || c.name === 'bitrate').length,
    2,
    'the columns are there once',
  );
});

t.test('link previews (21 -> 22): an older database gets embeds_suppressed and link_previews, once, every row kept (issue 51)', async (t) => {
  const { dataDir, file } = v1Database();
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  openDatabase(file).close();
  // As a database from before the columns: dropped, and the migration run (twice: its place may move).
  const raw = new Database(file);
  raw.exec('ALTER TABLE messages DROP COLUMN embeds_suppressed; ALTER TABLE servers DROP COLUMN link_previews');
  const messages = raw.prepare('SELECT COUNT(*) FROM messages').pluck().get();
  raw.pragma('user_version = 21');
  raw.close();
  openDatabase(file).close();
  const again = new Database(file);
  again.pragma('user_version = 21');
  again.close();
  const db = openDatabase(file);
  t.teardown(() => db.close());
  t.equal(db.pragma('user_version', { simple: true }), SCHEMA_VERSION);
  t.same(db.prepare('SELECT DISTINCT embeds_suppressed FROM messages').pluck().all(), [0], 'no message has its previews removed');
  t.same(db.prepare('SELECT DISTINCT link_previews FROM servers').pluck().all(), [1], 'every server has previews on');
  t.equal(db.prepare('SELECT COUNT(*) FROM messages').pluck().get(), messages, 'every message kept');
});

t.test('a version 21 database: what an import brought keeps its Discord tag, type and emoji ids from now on (22 -> 23), idempotent', async (t) => {
  const { dataDir, file } = v1Database();
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  openDatabase(file).close();
  const columnsOf = (db: Database.Database, table: string) =>
    db
      .prepare<[], { name: string }>(`PRAGMA table_info(${table})`)
      .all()
      .map((c) => c.name);
  // As a version 21 database had them: without the columns and the table.
  const raw = new Database(file);
  raw.exec(`
    ALTER TABLE imported_people DROP COLUMN discord_discriminator;
    ALTER TABLE imported_messages DROP COLUMN discord_type;
    DROP TABLE imported_emoji;
  `);
  raw.pragma('user_version = 21');
  raw.close();
  let db = openDatabase(file);
  t.equal(db.pragma('user_version', { simple: true }), SCHEMA_VERSION);
  t.ok(columnsOf(db, 'imported_people').includes('discord_discriminator'));
  t.ok(columnsOf(db, 'imported_messages').includes('discord_type'));
  t.same(db.prepare('SELECT COUNT(*) FROM imported_emoji').pluck().get(), 0, 'no emoji known before');
  db.close();
  // Run again (its place among migrations may move at a merge): nothing changes, nothing fails.
  const again = new Database(file);
  again.pragma('user_version = 21');
  again.close();
  db = openDatabase(file);
  t.teardown(() => db.close());
  t.equal(columnsOf(db, 'imported_people').filter((c) => c === 'discord_discriminator').length, 1);
  t.equal(db.pragma('integrity_check', { simple: true }), 'ok');
});

t.test('the emoji migration: an older database gains the emojis table and send_polls for everyone, once (issue 50)', async (t) => {
  const { dataDir, file } = v1Database();
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  openDatabase(file).close();
  // (Version 23: the one before issue 50's migration, whatever migrations came after it.)
  // The database as it was before issue 50 (no emojis table, nobody with send_polls; one server
  // whose owner gave everyone manage_emojis by hand is not possible yet), then migrated from there.
  const raw = new Database(file);
  raw.exec('DROP TABLE emojis; UPDATE servers SET everyone_permissions = everyone_permissions & ~131072');
  raw.pragma('user_version = 23');
  raw.close();
  let db = openDatabase(file);
  t.equal(db.pragma('user_version', { simple: true }), SCHEMA_VERSION);
  t.same(db.prepare('SELECT DISTINCT everyone_permissions FROM servers').pluck().all(), [138735], 'everyone may send polls where they could send');
  t.same(db.prepare('SELECT COUNT(*) FROM emojis').pluck().get(), 0, 'the emojis table is there, empty');
  const insert = db.prepare(
    "INSERT INTO emojis (id, server_id, name, animated, creator_id, created_at) VALUES (?, '00000000-0000-4000-8000-000000000010', ?, 0, '00000000-0000-4000-8000-000000000001', 'now')",
  );
  insert.run('e1', 'blob');
  t.throws(() => insert.run('e2', 'BLOB'), /UNIQUE/, 'a name is unique in its server whatever its case');
  // Run again (its place among migrations may move at a merge): an owner who since took send_polls away keeps it away.
  db.exec('UPDATE servers SET everyone_permissions = 7663');
  db.pragma('user_version = 23');
  db.close();
  db = openDatabase(file);
  t.teardown(() => db.close());
  t.same(db.prepare('SELECT DISTINCT everyone_permissions FROM servers').pluck().all(), [7663], 'send_polls is not granted again');
  t.same(db.prepare('SELECT name FROM emojis').pluck().all(), ['blob'], 'the emoji stays');
  t.equal(db.pragma('integrity_check', { simple: true }), 'ok');
});

t.test('the import report (24 -> 25): an older database gains imports.report, once, its imports kept (issue 50)', async (t) => {
  const { dataDir, file } = v1Database();
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  openDatabase(file).close();
  const raw = new Database(file);
  raw.exec(`
    ALTER TABLE imports DROP COLUMN report;
    INSERT INTO imports (id, owner_id, guild_id, server_name, status, plan, created_at)
      VALUES ('i1', '00000000-0000-4000-8000-000000000001', '1', 'Club', 'done', '{}', 'now');
  `);
  raw.pragma('user_version = 24');
  raw.close();
  let db = openDatabase(file);
  t.equal(db.pragma('user_version', { simple: true }), SCHEMA_VERSION);
  t.same(db.prepare('SELECT id, report FROM imports').all(), [{ id: 'i1', report: null }], 'an earlier import has no report');
  db.pragma('user_version = 24');
  db.close();
  db = openDatabase(file);
  t.teardown(() => db.close());
  t.equal(db.prepare("SELECT COUNT(*) FROM pragma_table_info('imports') WHERE name = 'report'").pluck().get(), 1, 'once');
  t.equal(db.pragma('integrity_check', { simple: true }), 'ok');
});

t.test('AutoMod (issue 53): an older database gains the automod_rules table, empty, with no migration of its own', async (t) => {
  const { dataDir, file } = v1Database();
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  openDatabase(file).close();
  // The database as it was before issue 53's AutoMod (reserved migration number 26: none was
  // needed, as schema.sql makes every table a database lacks after the migrations).
  const raw = new Database(file);
  raw.exec('DROP TABLE automod_rules');
  raw.pragma(`user_version = ${SCHEMA_VERSION - 1}`);
  raw.close();
  const db = openDatabase(file);
  t.teardown(() => db.close());
  t.equal(db.pragma('user_version', { simple: true }), SCHEMA_VERSION);
  t.equal(db.prepare('SELECT COUNT(*) FROM automod_rules').pluck().get(), 0, 'the table is there, empty');
  const insert = db.prepare(
    `INSERT INTO automod_rules (id, server_id, name, enabled, trigger, actions, creator_id, created_at)
     VALUES ('r1', '00000000-0000-4000-8000-000000000010', 'rule', 1, '{"type":"spam"}', '[{"type":"block_message","custom_message":null}]', '00000000-0000-4000-8000-000000000001', 'now')`,
  );
  insert.run();
  t.same(db.prepare('SELECT exempt_role_ids, exempt_channel_ids FROM automod_rules').get(), { exempt_role_ids: '[]', exempt_channel_ids: '[]' });
  db.exec("DELETE FROM servers WHERE id = '00000000-0000-4000-8000-000000000010'");
  t.equal(db.prepare('SELECT COUNT(*) FROM automod_rules').pluck().get(), 0, "a server's rules go with it");
  t.equal(db.pragma('integrity_check', { simple: true }), 'ok');
});

t.test('raid protection (25 -> 26, issue 53): an older database gains the server settings and self_assignable, off, once, every row kept', async (t) => {
  const { dataDir, file } = v1Database();
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  openDatabase(file).close();
  const SERVER_COLUMNS = ['verification_level', 'two_factor_for_moderators', 'join_rate_threshold', 'join_rate_action', 'invites_paused', 'joins_paused'];
  const columnsOf = (db: Database.Database, table: string) =>
    db
      .prepare<[], { name: string }>(`PRAGMA table_info(${table})`)
      .all()
      .map((c) => c.name);
  // As the database was before issue 53's raid protection: without the columns.
  const raw = new Database(file);
  const servers = raw.prepare('SELECT COUNT(*) FROM servers').pluck().get() as number;
  const roles = raw.prepare('SELECT COUNT(*) FROM roles').pluck().get() as number;
  for (const column of SERVER_COLUMNS) raw.exec(`ALTER TABLE servers DROP COLUMN ${column}`);
  raw.exec('ALTER TABLE roles DROP COLUMN self_assignable');
  raw.pragma('user_version = 25');
  raw.close();
  let db = openDatabase(file);
  t.equal(db.pragma('user_version', { simple: true }), SCHEMA_VERSION);
  for (const column of SERVER_COLUMNS) t.ok(columnsOf(db, 'servers').includes(column), column);
  t.same(
    db
      .prepare(
        'SELECT DISTINCT verification_level, two_factor_for_moderators, join_rate_threshold, join_rate_action, invites_paused, joins_paused FROM servers',
      )
      .all(),
    [{ verification_level: 0, two_factor_for_moderators: 0, join_rate_threshold: 0, join_rate_action: 'alert', invites_paused: 0, joins_paused: 0 }],
    'every server as before: nothing asked, nothing paused',
  );
  t.same(db.prepare('SELECT DISTINCT self_assignable FROM roles').pluck().all(), roles > 0 ? [0] : [], 'no role is self-assignable');
  t.equal(db.prepare('SELECT COUNT(*) FROM servers').pluck().get(), servers, 'every server kept');
  // Run again (its place among migrations may move at a merge): nothing changes, nothing fails.
  db.exec('UPDATE servers SET verification_level = 2');
  db.pragma('user_version = 25');
  db.close();
  db = openDatabase(file);
  t.teardown(() => db.close());
  t.same(db.prepare('SELECT DISTINCT verification_level FROM servers').pluck().all(), [2], 'a level set since stays');
  t.equal(columnsOf(db, 'roles').filter((c) => c === 'self_assignable').length, 1);
  t.equal(db.pragma('integrity_check', { simple: true }), 'ok');
});

t.test(
  'the screening migration (26 -> 27): members gain pending, 0 for everyone already in, and servers an empty onboarding table, once (issue 53)',
  async (t) => {
    const { dataDir, file } = v1Database();
    t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
    openDatabase(file).close();
    // The database as it was before (no pending column, no onboarding table), then migrated from there.
    const raw = new Database(file);
    raw.exec('DROP TABLE server_onboarding; ALTER TABLE members DROP COLUMN pending');
    const members = raw.prepare('SELECT COUNT(*) FROM members').pluck().get() as number;
    raw.pragma(`user_version = ${SCHEMA_VERSION - 1}`);
    raw.close();
    let db = openDatabase(file);
    t.equal(db.pragma('user_version', { simple: true }), SCHEMA_VERSION);
    t.ok(members > 0, 'the fixture has members');
    t.same(db.prepare('SELECT pending, COUNT(*) AS n FROM members GROUP BY pending').all(), [{ pending: 0, n: members }], 'nobody already in waits');
    t.same(db.prepare('SELECT COUNT(*) FROM server_onboarding').pluck().get(), 0, 'no server has screening on');
    // Run again (its place among migrations may move at a merge): a member pending since stays so.
    db.exec('UPDATE members SET pending = 1 WHERE (server_id, user_id) IN (SELECT server_id, user_id FROM members LIMIT 1)');
    db.pragma(`user_version = ${SCHEMA_VERSION - 1}`);
    db.close();
    db = openDatabase(file);
    t.teardown(() => db.close());
    t.equal(db.prepare('SELECT COUNT(*) FROM members WHERE pending = 1').pluck().get(), 1, 'the column is added once, its values kept');
    t.equal(db.pragma('integrity_check', { simple: true }), 'ok');
  },
);
