import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';

export type DB = Database.Database;

/**
 * Numbered migrations for changes after the first schema. Entry N moves a database from
 * user_version N to N + 1. schema.sql always holds the latest full schema, so a new
 * database runs schema.sql and is stamped with the latest version directly.
 */
// The triggers that keep the search index in step with messages (as in schema.sql).
const SEARCH_INDEX_TRIGGERS = `
  CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts (rowid, content) VALUES (new.seq, new.content);
  END;
  CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, content) VALUES ('delete', old.seq, old.content);
  END;
  CREATE TRIGGER messages_fts_update AFTER UPDATE OF content ON messages BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, content) VALUES ('delete', old.seq, old.content);
    INSERT INTO messages_fts (rowid, content) VALUES (new.seq, new.content);
  END;`;

/**
 * A step from one schema version to the next. One that makes a table anew (create, copy, drop,
 * rename) says so (`rebuildsTables`, see rebuildingTables): it runs with foreign keys off, as
 * SQLite's procedure for other table changes asks, and must leave no row pointing at nothing.
 */
type Migration = ((db: DB) => void) & { rebuildsTables?: true };
const rebuildingTables = (step: (db: DB) => void): Migration => Object.assign(step, { rebuildsTables: true as const });

const MIGRATIONS: Migration[] = [
  // 1 -> 2: members removed from a server (kicked), so an old invite cannot bring them back.
  (db) =>
    db.exec(`CREATE TABLE server_removals (
      server_id  TEXT NOT NULL REFERENCES servers (id) ON DELETE CASCADE,
      user_id    TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      removed_by TEXT NOT NULL REFERENCES users (id),
      removed_at TEXT NOT NULL,
      PRIMARY KEY (server_id, user_id)
    ) WITHOUT ROWID`),
  // 2 -> 3: read markers, mentions, presence. Members who were there before start with
  // everything read, as a new member does.
  (db) =>
    db.exec(`
      CREATE TABLE read_states (
        user_id       TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        container_id  TEXT NOT NULL,
        last_read_seq INTEGER NOT NULL,
        PRIMARY KEY (user_id, container_id)
      ) WITHOUT ROWID;
      ALTER TABLE members ADD COLUMN joined_seq INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE conversation_members ADD COLUMN joined_seq INTEGER NOT NULL DEFAULT 0;
      UPDATE members SET joined_seq = (SELECT COALESCE(MAX(seq), 0) FROM messages);
      UPDATE conversation_members SET joined_seq = (SELECT COALESCE(MAX(seq), 0) FROM messages);
      ALTER TABLE messages ADD COLUMN mentions TEXT;
      ALTER TABLE messages ADD COLUMN mention_everyone INTEGER NOT NULL DEFAULT 0;
      CREATE TABLE message_mentions (
        user_id      TEXT NOT NULL,
        container_id TEXT NOT NULL,
        message_seq  INTEGER NOT NULL REFERENCES messages (seq) ON DELETE CASCADE,
        PRIMARY KEY (user_id, container_id, message_seq)
      ) WITHOUT ROWID;
      ALTER TABLE users ADD COLUMN presence TEXT NOT NULL DEFAULT 'online';
    `),
  // 3 -> 4: community tools: descriptions, topics, slow mode, invite limits, bans, timeouts,
  // the audit log, pins, edit history, blocks.
  (db) =>
    db.exec(`
      ALTER TABLE servers ADD COLUMN description TEXT NOT NULL DEFAULT '';
      ALTER TABLE channels ADD COLUMN topic TEXT NOT NULL DEFAULT '';
      ALTER TABLE channels ADD COLUMN slowmode_seconds INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE invites ADD COLUMN max_uses INTEGER;
      ALTER TABLE invites ADD COLUMN uses INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE members ADD COLUMN timeout_until TEXT;
      ALTER TABLE messages ADD COLUMN pinned_at TEXT;
      ALTER TABLE messages ADD COLUMN pinned_by TEXT;
      CREATE TABLE bans (
        server_id  TEXT NOT NULL REFERENCES servers (id) ON DELETE CASCADE,
        user_id    TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        reason     TEXT,
        banned_by  TEXT NOT NULL REFERENCES users (id),
        created_at TEXT NOT NULL,
        PRIMARY KEY (server_id, user_id)
      ) WITHOUT ROWID;
      CREATE TABLE audit_log (
        seq         INTEGER PRIMARY KEY,
        id          TEXT NOT NULL UNIQUE,
        server_id   TEXT NOT NULL REFERENCES servers (id) ON DELETE CASCADE,
        action      TEXT NOT NULL,
        actor_id    TEXT NOT NULL REFERENCES users (id),
        target_id   TEXT,
        target_kind TEXT,
        reason      TEXT,
        changes     TEXT,
        created_at  TEXT NOT NULL
      );
      CREATE TABLE message_edits (
        message_seq INTEGER NOT NULL REFERENCES messages (seq) ON DELETE CASCADE,
        content     TEXT NOT NULL,
        written_at  TEXT NOT NULL
      );
      CREATE TABLE blocks (
        blocker_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        blocked_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        created_at TEXT NOT NULL,
        PRIMARY KEY (blocker_id, blocked_id)
      ) WITHOUT ROWID;
    `),
  // 4 -> 5: the search index and the triggers that keep it in step, built from every message.
  (db) =>
    db.exec(`
      CREATE VIRTUAL TABLE messages_fts USING fts5(
        content, content = 'messages', content_rowid = 'seq',
        tokenize = 'unicode61 remove_diacritics 2', columnsize = 0
      );
      ${SEARCH_INDEX_TRIGGERS}
      INSERT INTO messages_fts (messages_fts) VALUES ('rebuild');
    `),
  // 5 -> 6: profiles (display name, avatar), two-factor sign-in, deleted accounts.
  (db) =>
    db.exec(`
      ALTER TABLE users ADD COLUMN display_name TEXT;
      ALTER TABLE users ADD COLUMN avatar_version INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE users ADD COLUMN deleted_at TEXT;
      ALTER TABLE users ADD COLUMN totp_secret TEXT;
      ALTER TABLE users ADD COLUMN totp_pending TEXT;
      ALTER TABLE users ADD COLUMN totp_last_step INTEGER NOT NULL DEFAULT 0;
      CREATE TABLE recovery_codes (
        user_id   TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        code_hash TEXT NOT NULL,
        PRIMARY KEY (user_id, code_hash)
      ) WITHOUT ROWID;
      CREATE INDEX messages_by_author ON messages (author_id, seq);
    `),
  // 6 -> 7: the search index gains an index of three-letter prefixes (`zea*`), rebuilt from
  // every message (an FTS5 table's options cannot be altered).
  (db) =>
    db.exec(`
      DROP TRIGGER messages_fts_insert;
      DROP TRIGGER messages_fts_delete;
      DROP TRIGGER messages_fts_update;
      DROP TABLE messages_fts;
      CREATE VIRTUAL TABLE messages_fts USING fts5(
        content, content = 'messages', content_rowid = 'seq',
        tokenize = 'unicode61 remove_diacritics 2', columnsize = 0, prefix = '3'
      );
      ${SEARCH_INDEX_TRIGGERS}
      INSERT INTO messages_fts (messages_fts) VALUES ('rebuild');
    `),
  // 7 -> 8: generations, moved by triggers at every change to channels and to users (what the
  // server keeps of them in memory).
  (db) =>
    db.exec(`
      CREATE TABLE generations (name TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID;
      INSERT INTO generations (name, n) VALUES ('channels', 0), ('users', 0);
      CREATE TRIGGER channels_inserted AFTER INSERT ON channels BEGIN UPDATE generations SET n = random() WHERE name = 'channels'; END;
      CREATE TRIGGER channels_updated AFTER UPDATE ON channels BEGIN UPDATE generations SET n = random() WHERE name = 'channels'; END;
      CREATE TRIGGER channels_deleted AFTER DELETE ON channels BEGIN UPDATE generations SET n = random() WHERE name = 'channels'; END;
      CREATE TRIGGER users_updated AFTER UPDATE OF username, is_admin, standing, display_name, avatar_version, deleted_at ON users
      BEGIN UPDATE generations SET n = random() WHERE name = 'users'; END;
      CREATE TRIGGER users_deleted AFTER DELETE ON users BEGIN UPDATE generations SET n = random() WHERE name = 'users'; END;
    `),
  // 8 -> 9: the search index keys each message by its server's range (schema.sql), rebuilt from
  // every message; schema.sql then adds the triggers that keep it in step.
  (db) => {
    db.exec(`
      DROP TRIGGER messages_fts_insert;
      DROP TRIGGER messages_fts_delete;
      DROP TRIGGER messages_fts_update;
      DROP TABLE messages_fts;
      CREATE TABLE search_ranges (container_id TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID;
      CREATE INDEX search_ranges_by_n ON search_ranges (n);
      INSERT INTO search_ranges (container_id, n) SELECT id, ROW_NUMBER() OVER (ORDER BY created_at, id) FROM servers;
      INSERT INTO search_ranges (container_id, n) SELECT c.id, r.n FROM channels c JOIN search_ranges r ON r.container_id = c.server_id;
      CREATE VIRTUAL TABLE messages_fts USING fts5(
        content, content = '', tokenize = 'unicode61 remove_diacritics 2', columnsize = 0, prefix = '3'
      );
    `);
    fillSearchIndex(db);
  },
  // 9 -> 10: remembered devices; schema.sql creates their tables (nothing to carry over).
  () => {},
  // 10 -> 11: several roles per member (member_roles, from members.role_id, which stays unused:
  // SQLite cannot drop a column with a foreign key), and what a role looks like: colour,
  // position (creation order to begin with), hoist, mentionable; the roles a message mentions.
  (db) =>
    db.exec(`
      CREATE TABLE member_roles (
        server_id TEXT NOT NULL,
        user_id   TEXT NOT NULL,
        role_id   TEXT NOT NULL REFERENCES roles (id) ON DELETE CASCADE,
        PRIMARY KEY (server_id, user_id, role_id),
        FOREIGN KEY (server_id, user_id) REFERENCES members (server_id, user_id) ON DELETE CASCADE
      ) WITHOUT ROWID;
      CREATE INDEX member_roles_by_role ON member_roles (role_id);
      INSERT INTO member_roles (server_id, user_id, role_id) SELECT server_id, user_id, role_id FROM members WHERE role_id IS NOT NULL;
      UPDATE members SET role_id = NULL;
      ALTER TABLE roles ADD COLUMN color INTEGER;
      ALTER TABLE roles ADD COLUMN position INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE roles ADD COLUMN hoist INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE roles ADD COLUMN mentionable INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE messages ADD COLUMN mention_roles TEXT;
      -- Every role was a group of the member list until now: so it stays.
      UPDATE roles SET hoist = 1;
      UPDATE roles SET position = (
        SELECT COUNT(*) FROM roles o
         WHERE o.server_id = roles.server_id AND (o.created_at < roles.created_at OR (o.created_at = roles.created_at AND o.rowid < roles.rowid))
      );
    `),
  // 11 -> 12: categories; a channel may belong to one (a category deleted lets its channels go).
  (db) =>
    db.exec(`
      CREATE TABLE categories (
        id         TEXT PRIMARY KEY,
        server_id  TEXT NOT NULL REFERENCES servers (id) ON DELETE CASCADE,
        name       TEXT NOT NULL,
        position   INTEGER NOT NULL,
        created_at TEXT NOT NULL
      );
      ALTER TABLE channels ADD COLUMN category_id TEXT REFERENCES categories (id) ON DELETE SET NULL;
    `),
  // 12 -> 13: channel permissions. Everyone keeps what they could do (47: every flag but
  // mention_everyone, src/rules/channel-permissions.ts); roles grant nothing more until set; no
  // overwrites; every channel follows its category (it has none yet). The overwrite tables and
  // the access_generations triggers come from schema.sql, run after every migration.
  (db) =>
    db.exec(`
      ALTER TABLE servers ADD COLUMN everyone_permissions INTEGER NOT NULL DEFAULT 47;
      ALTER TABLE roles ADD COLUMN permissions INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE channels ADD COLUMN permissions_synced INTEGER NOT NULL DEFAULT 1;
    `),
  // 13 -> 14: imports from Discord. Nobody was imported before; the import tables come from schema.sql.
  (db) => db.exec('ALTER TABLE users ADD COLUMN imported INTEGER NOT NULL DEFAULT 0'),
  // 14 -> 15: bots and webhooks. Everyone so far is a person; no message came from a webhook or
  // has embeds. The profiles view and the search triggers are made again by schema.sql (the
  // view gains `bot`, the triggers index embed text), which changes nothing for existing rows;
  // the webhooks table comes from schema.sql.
  (db) =>
    db.exec(`
      ALTER TABLE users ADD COLUMN bot INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE users ADD COLUMN bot_owner_id TEXT REFERENCES users (id);
      ALTER TABLE users ADD COLUMN bot_token_hash TEXT;
      ALTER TABLE messages ADD COLUMN webhook_id TEXT;
      ALTER TABLE messages ADD COLUMN author_name TEXT;
      ALTER TABLE messages ADD COLUMN author_avatar TEXT;
      ALTER TABLE messages ADD COLUMN embeds TEXT;
      ALTER TABLE messages ADD COLUMN embed_text TEXT;
      DROP VIEW IF EXISTS profiles;
      DROP TRIGGER IF EXISTS messages_fts_insert;
      DROP TRIGGER IF EXISTS messages_fts_delete;
      DROP TRIGGER IF EXISTS messages_fts_update;
    `),
  // 15 -> 16: a standing set by hand is kept apart, so warnings never lower it. Which standings
  // so far were set by hand is not known: none is taken to be (as before, the warnings decide).
  (db) => db.exec('ALTER TABLE users ADD COLUMN standing_by_hand INTEGER NOT NULL DEFAULT 0'),
  // 16 -> 17: imports (issue 45). An import may be 'interrupted' (a CLI import whose process
  // ended: the same command resumes it) and names the process running it; one runs per Discord
  // server and owner (imports_one_running, from schema.sql): CLI imports left 'running' were cut
  // off (kill -9) and are interrupted now. A person may have several placeholders in a server,
  // one unclaimed at most (what a later import brings of someone who claimed goes to a new one).
  // Both tables are made anew (a CHECK and a UNIQUE cannot be altered); a database from before
  // the import tables has none yet (schema.sql makes them).
  (db) => {
    const has = (table: string) => db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(table) !== undefined;
    if (has('imports')) {
      db.exec(`
        CREATE TABLE imports_v17 (
          id TEXT PRIMARY KEY, owner_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE, guild_id TEXT NOT NULL,
          server_name TEXT NOT NULL, server_id TEXT REFERENCES servers (id) ON DELETE CASCADE, upload TEXT,
          status TEXT NOT NULL CHECK (status IN ('checked', 'running', 'interrupted', 'done', 'failed')),
          plan TEXT NOT NULL, done INTEGER NOT NULL DEFAULT 0, total INTEGER NOT NULL DEFAULT 0, error TEXT,
          package_claims INTEGER NOT NULL DEFAULT 0, system TEXT NOT NULL DEFAULT 'lines' CHECK (system IN ('lines', 'skip')),
          created_at TEXT NOT NULL, finished_at TEXT, runner_pid INTEGER
        );
        INSERT INTO imports_v17 (id, owner_id, guild_id, server_name, server_id, upload, status, plan, done, total, error, package_claims, system, created_at, finished_at)
          SELECT id, owner_id, guild_id, server_name, server_id, upload,
                 CASE WHEN status = 'running' AND upload IS NULL THEN 'interrupted' ELSE status END,
                 plan, done, total, error, package_claims, system, created_at, finished_at
            FROM imports ORDER BY rowid;
        UPDATE imports_v17 SET status = 'failed', error = 'stopped: another import of the same Discord server ran at the same time'
         WHERE status = 'running' AND rowid NOT IN (SELECT MIN(rowid) FROM imports_v17 WHERE status = 'running' GROUP BY guild_id, owner_id);
        DROP TABLE imports;
        ALTER TABLE imports_v17 RENAME TO imports;
      `);
    }
    if (has('imported_people')) {
      db.exec(`
        CREATE TABLE imported_people_v17 (
          user_id TEXT PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE, server_id TEXT NOT NULL REFERENCES servers (id) ON DELETE CASCADE,
          discord_id TEXT NOT NULL, discord_name TEXT NOT NULL, claim_code TEXT NOT NULL UNIQUE,
          claimed_by TEXT REFERENCES users (id) ON DELETE SET NULL, claimed_at TEXT, hidden_at TEXT
        );
        INSERT INTO imported_people_v17 SELECT user_id, server_id, discord_id, discord_name, claim_code, claimed_by, claimed_at, hidden_at FROM imported_people ORDER BY rowid;
        DROP TABLE imported_people;
        ALTER TABLE imported_people_v17 RENAME TO imported_people;
      `);
    }
  },
  // 17 -> 18: every channel has a type ('text' for all until now) and may belong to another (a
  // thread's parent channel, issues 48 and 49).
  (db) => {
    const columns = new Set(
      db
        .prepare<[], { name: string }>('PRAGMA table_info(channels)')
        .all()
        .map((c) => c.name),
    );
    if (!columns.has('type')) db.exec("ALTER TABLE channels ADD COLUMN type TEXT NOT NULL DEFAULT 'text'");
    if (!columns.has('parent_id')) db.exec('ALTER TABLE channels ADD COLUMN parent_id TEXT REFERENCES channels (id) ON DELETE CASCADE');
  },
  // 18 -> 19: threads and forums (issue 49). A thread is a channel with a parent, whose name no
  // listed channel's binds: the table is made anew without its UNIQUE (server_id, name), which
  // schema.sql's partial index channels_name replaces (listed channels only), from its own
  // definition so any column it has is kept; its triggers and indexes come back from schema.sql.
  // Forums' columns; the threads tables come from schema.sql. The four thread flags (bits 6 to 9 of
  // src/rules/channel-permissions.ts FLAGS) go where sending went: whoever could send may start and
  // talk in threads (everyone's, roles' and overwrites' allows), and where sending was denied, so
  // are they (a channel made read-only before threads stays so); manage_threads is given to no one.
  rebuildingTables((db) => {
    const own = db.prepare<[], string>("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'channels'").pluck().get()!;
    const unique = /,\s*UNIQUE\s*\(\s*server_id\s*,\s*name\s+COLLATE\s+NOCASE\s*\)/i;
    if (unique.test(own)) {
      const made = own.replace(unique, '').replace(/^CREATE TABLE\s+(IF NOT EXISTS\s+)?("?channels"?)/i, 'CREATE TABLE channels_v19');
      // Foreign keys are off for this migration (rebuildingTables): DROP TABLE would otherwise
      // delete every row first, and with them (ON DELETE CASCADE) their messages.
      if (db.pragma('foreign_keys', { simple: true }) !== 0) throw new Error('the threads migration rebuilds channels: foreign keys must be off');
      db.exec(`${made}; INSERT INTO channels_v19 SELECT * FROM channels;`);
      // The rename checks nothing else of the schema (the table it replaces is gone meanwhile).
      db.pragma('legacy_alter_table = ON');
      db.exec('DROP TABLE channels; ALTER TABLE channels_v19 RENAME TO channels;');
      db.pragma('legacy_alter_table = OFF');
    }
    const columns = new Set(
      db
        .prepare<[], { name: string }>('PRAGMA table_info(channels)')
        .all()
        .map((c) => c.name),
    );
    if (!columns.has('available_tags')) db.exec("ALTER TABLE channels ADD COLUMN available_tags TEXT NOT NULL DEFAULT '[]'");
    if (!columns.has('default_reaction')) db.exec('ALTER TABLE channels ADD COLUMN default_reaction TEXT');
    if (!columns.has('default_sort')) db.exec("ALTER TABLE channels ADD COLUMN default_sort TEXT NOT NULL DEFAULT 'latest_activity'");
    const SEND = 2;
    const THREADS = 64 | 128 | 256;
    db.exec(`
      UPDATE servers SET everyone_permissions = everyone_permissions | ${THREADS} WHERE everyone_permissions & ${SEND};
      UPDATE roles SET permissions = permissions | ${THREADS} WHERE permissions & ${SEND};
    `);
    // The overwrite tables came with schema 13 from schema.sql: a database from before has none yet.
    for (const table of ['channel_overwrites', 'category_overwrites']) {
      if (!db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(table)) continue;
      db.exec(`
        UPDATE ${table} SET allow = allow | ${THREADS} WHERE allow & ${SEND};
        UPDATE ${table} SET deny = deny | ${THREADS} WHERE deny & ${SEND};
      `);
    }
  }),
  // 19 -> 20: signing in with an OpenID Provider or a passkey (issue 55). Everyone so far chose
  // their username; nobody has an identity or a passkey yet (the tables as schema.sql has them).
  (db) => {
    const columns = new Set(
      db
        .prepare<[], { name: string }>('PRAGMA table_info(users)')
        .all()
        .map((c) => c.name),
    );
    if (!columns.has('username_chosen')) db.exec('ALTER TABLE users ADD COLUMN username_chosen INTEGER NOT NULL DEFAULT 1');
    db.exec(`
      CREATE TABLE IF NOT EXISTS identities (
        id TEXT PRIMARY KEY, user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE, provider_id TEXT NOT NULL,
        issuer TEXT NOT NULL, subject TEXT NOT NULL, email TEXT, created_at TEXT NOT NULL, last_used_at TEXT NOT NULL,
        UNIQUE (issuer, subject)
      );
      CREATE INDEX IF NOT EXISTS identities_by_user ON identities (user_id);
      CREATE TABLE IF NOT EXISTS passkeys (
        id TEXT PRIMARY KEY, user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE, credential_id TEXT NOT NULL UNIQUE,
        public_key BLOB NOT NULL, counter INTEGER NOT NULL, transports TEXT NOT NULL, name TEXT NOT NULL,
        backed_up INTEGER NOT NULL, created_at TEXT NOT NULL, last_used_at TEXT
      );
      CREATE INDEX IF NOT EXISTS passkeys_by_user ON passkeys (user_id);
    `);
  },
  // 20 -> 21: voice channels (issue 48). A voice channel's user_limit and bitrate (NULL for the
  // others); everyone may connect, speak and use video wherever they could before (bits 10, 11
  // and 12 of src/rules/channel-permissions.ts BITS: 7168), as every member could do all there
  // was to do; server mutes and deafens are a table of their own (schema.sql voice_moderation).
  // Idempotent (the order of migrations made on parallel branches is settled when they meet): the
  // flags are granted with the columns, once, so a database that has them is left as it is.
  (db) => {
    const columns = new Set(
      db
        .prepare<[], { name: string }>('PRAGMA table_info(channels)')
        .all()
        .map((c) => c.name),
    );
    if (columns.has('user_limit') && columns.has('bitrate')) return;
    if (!columns.has('user_limit')) db.exec('ALTER TABLE channels ADD COLUMN user_limit INTEGER');
    if (!columns.has('bitrate')) db.exec('ALTER TABLE channels ADD COLUMN bitrate INTEGER');
    db.exec('UPDATE servers SET everyone_permissions = everyone_permissions | 7168');
  },
  // 21 -> 22: link previews (issue 51). A message whose previews were removed
  // (embeds_suppressed) and a server's switch for them (link_previews, on). The previews
  // themselves are embeds like a webhook's, in the same column. Idempotent, as the one before.
  (db) => {
    const has = (table: string, column: string) =>
      db
        .prepare<[], { name: string }>(`PRAGMA table_info(${table})`)
        .all()
        .some((c) => c.name === column);
    if (!has('messages', 'embeds_suppressed')) db.exec('ALTER TABLE messages ADD COLUMN embeds_suppressed INTEGER NOT NULL DEFAULT 0');
    if (!has('servers', 'link_previews')) db.exec('ALTER TABLE servers ADD COLUMN link_previews INTEGER NOT NULL DEFAULT 1');
  },
  // 22 -> 23: an export keeps what an import brought (issue 52): each person's Discord
  // discriminator, each message's Discord type where it is not Default or Reply (a system line),
  // and the Discord ids of the custom emoji reacted with (imported_emoji, which schema.sql makes
  // after the migrations, as every table a database lacks). Nothing imported before knew them:
  // NULL. Idempotent: a column is added only to a table that has it not (and has the table).
  (db) => {
    const columnsOf = (table: string) =>
      new Set(
        db
          .prepare<[], { name: string }>(`PRAGMA table_info(${table})`)
          .all()
          .map((c) => c.name),
      );
    const people = columnsOf('imported_people');
    if (people.size > 0 && !people.has('discord_discriminator')) db.exec('ALTER TABLE imported_people ADD COLUMN discord_discriminator TEXT');
    const messages = columnsOf('imported_messages');
    if (messages.size > 0 && !messages.has('discord_type')) db.exec('ALTER TABLE imported_messages ADD COLUMN discord_type TEXT');
  },
  // 23 -> 24: custom emoji and polls (issue 50). Everyone may send polls wherever they could
  // before (send_polls, bit 17 of src/rules/channel-permissions.ts BITS: 131072, in everyone's
  // flags); nobody but the owner and full administrators manages emoji (manage_emojis, bit 16,
  // given to no one). Idempotent (the order of migrations made on parallel branches is settled
  // when they meet): the flag is granted with the emojis table, once, so a database that has it is
  // left as it is; the table's full definition is schema.sql's (run after every migration).
  (db) => {
    if (db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'emojis'").get()) return;
    db.exec(`
      CREATE TABLE emojis (
        id         TEXT PRIMARY KEY,
        server_id  TEXT NOT NULL REFERENCES servers (id) ON DELETE CASCADE,
        name       TEXT NOT NULL COLLATE NOCASE,
        animated   INTEGER NOT NULL CHECK (animated IN (0, 1)),
        creator_id TEXT NOT NULL REFERENCES users (id),
        created_at TEXT NOT NULL,
        -- set when deleted: the row stays so old reactions still name it (as :name: text)
        deleted_at TEXT
      );
      CREATE UNIQUE INDEX emojis_name ON emojis (server_id, name) WHERE deleted_at IS NULL;
      UPDATE servers SET everyone_permissions = everyone_permissions | 131072;
    `);
  },
  // 24 -> 25: an import's report (issue 50): which custom emoji, stickers and polls came across
  // and which stayed text, in words, once it is done (JSON lines). Imports before had none: NULL.
  // Idempotent (the order of migrations made on parallel branches is settled when they meet).
  (db) => {
    const columns = db.prepare<[], { name: string }>('PRAGMA table_info(imports)').all();
    if (columns.length > 0 && !columns.some((c) => c.name === 'report')) db.exec('ALTER TABLE imports ADD COLUMN report TEXT');
  },
  // 25 -> 26 (issue 53; the order of migrations made on parallel branches is settled when they
  // meet): raid protection and self-assigned roles. A
  // server's verification level (0: none), two-factor for moderators (off), its join-rate
  // threshold (0: off) and action, invites and joins paused (no); a role is not self-assignable.
  // Idempotent: each column is added only when missing, so a run in another place changes nothing.
  (db) => {
    const has = (table: string, column: string) => db.prepare(`SELECT 1 FROM pragma_table_info('${table}') WHERE name = ?`).get(column) !== undefined;
    const add = (table: string, column: string, definition: string) => {
      if (!has(table, column)) db.exec(`ALTER TABLE ${table} ADD COLUMN ${column} ${definition}`);
    };
    add('servers', 'verification_level', 'INTEGER NOT NULL DEFAULT 0');
    add('servers', 'two_factor_for_moderators', 'INTEGER NOT NULL DEFAULT 0');
    add('servers', 'join_rate_threshold', 'INTEGER NOT NULL DEFAULT 0');
    add('servers', 'join_rate_action', "TEXT NOT NULL DEFAULT 'alert'");
    add('servers', 'invites_paused', 'INTEGER NOT NULL DEFAULT 0');
    add('servers', 'joins_paused', 'INTEGER NOT NULL DEFAULT 0');
    add('roles', 'self_assignable', 'INTEGER NOT NULL DEFAULT 0');
  },
  // 26 -> 27: membership screening (issue 53): members.pending, 0 for everyone already in (only
  // who joins once a server turns screening on waits); the onboarding itself is a table of its own
  // (schema.sql server_onboarding, made after the migrations as every table a database lacks).
  // Idempotent (the order of migrations made on parallel branches is settled when they meet).
  (db) => {
    const has = db.prepare("SELECT 1 FROM pragma_table_info('members') WHERE name = 'pending'").get();
    if (!has) db.exec('ALTER TABLE members ADD COLUMN pending INTEGER NOT NULL DEFAULT 0');
  },
];
export const SCHEMA_VERSION = 1 + MIGRATIONS.length;

/**
 * Indexes every message for search at once (the 8 -> 9 migration, and benchmarks that seed rows
 * with the index triggers off), then merges the index into one segment.
 */
export function fillSearchIndex(db: DB): void {
  // Embed text is indexed with the content (schema 15); an older migration runs this before the column exists.
  const embeds = db.prepare("SELECT 1 FROM pragma_table_info('messages') WHERE name = 'embed_text'").get() ? "|| COALESCE(char(10) || m.embed_text, '')" : '';
  db.exec(`
    INSERT INTO messages_fts (rowid, content)
      SELECT (COALESCE(r.n, 0) << 32) | m.seq, m.content ${embeds} FROM messages m LEFT JOIN search_ranges r ON r.container_id = m.channel_id;
    INSERT INTO messages_fts (messages_fts) VALUES ('optimize');
  `);
}

const SCHEMA_FILE = path.join(__dirname, '..', '..', 'schema.sql');

export function openDatabase(file: string, durability: 'normal' | 'strict' = 'normal'): DB {
  const db = openConnection(file, durability);
  migrate(db);
  return db;
}

/**
 * One more connection to a database the server has open (an import's worker thread): the same
 * settings, no migration (the server ran it).
 */
export function openConnection(file: string, durability: 'normal' | 'strict' = 'normal'): DB {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  // NORMAL under WAL: a power cut can lose the last commits but never corrupts the file (a
  // kill -9 loses nothing: the WAL is in the OS's hands). FULL (DURABILITY=strict) fsyncs
  // the WAL at every commit, every message send, so a power cut loses nothing acknowledged.
  db.pragma(durability === 'strict' ? 'synchronous = FULL' : 'synchronous = NORMAL');
  writeFirst(db);
  return db;
}

/**
 * Every transaction begins IMMEDIATE: it takes the write lock at BEGIN, waiting for it as
 * busy_timeout says. A deferred one reads first and asks for the lock at its first write; if
 * another connection (an import's worker thread, the CLI) committed in between, SQLite cannot
 * wait (the snapshot is stale) and answers SQLITE_BUSY at once, which would be a 500.
 */
function writeFirst(db: DB): void {
  const transaction = db.transaction.bind(db);
  db.transaction = ((fn: (...args: never[]) => unknown) => {
    const made = transaction(fn);
    return Object.assign((...args: never[]) => made.immediate(...args), made);
  }) as DB['transaction'];
}

function migrate(db: DB): void {
  const version = db.pragma('user_version', { simple: true }) as number;
  if (version === 0) {
    db.exec(fs.readFileSync(SCHEMA_FILE, 'utf8'));
    db.pragma(`user_version = ${SCHEMA_VERSION}`);
    return;
  }
  if (version > SCHEMA_VERSION) {
    throw new Error(`database schema version ${version} is newer than this program (${SCHEMA_VERSION})`);
  }
  for (let v = version; v < SCHEMA_VERSION; v++) {
    // PRAGMA foreign_keys is a no-op inside a transaction: set around it.
    const rebuilds = MIGRATIONS[v - 1].rebuildsTables === true;
    if (rebuilds) db.pragma('foreign_keys = OFF');
    try {
      db.transaction(() => {
        MIGRATIONS[v - 1](db);
        if (rebuilds && (db.pragma('foreign_key_check') as unknown[]).length > 0) throw new Error(`migration ${v + 1} left rows pointing at nothing`);
        db.pragma(`user_version = ${v + 1}`);
      })();
    } finally {
      if (rebuilds) db.pragma('foreign_keys = ON');
    }
  }
  // Idempotent: CREATE ... IF NOT EXISTS adds anything missing without touching data.
  db.exec(fs.readFileSync(SCHEMA_FILE, 'utf8'));
}

/**
 * For a copy kept in memory: true when the `generations` row `name` moved since the last call
 * (schema.sql: triggers move it at every change, in the same transaction, whoever writes).
 */
export function generationWatch(db: DB, name: 'channels' | 'users'): () => boolean {
  const current = db.prepare<[string], number>('SELECT n FROM generations WHERE name = ?').pluck();
  let seen: number | undefined;
  return () => {
    const now = current.get(name);
    if (now === seen) return false;
    seen = now;
    return true;
  };
}
