-- The whole schema, applied idempotently at every start-up (see src/core/db.ts).
-- Changes after the first release go through numbered migrations on PRAGMA user_version,
-- never by editing a CREATE TABLE here alone.
--
-- Identifiers are UUID strings. Timestamps are ISO 8601 UTC strings (sortable as text).
-- Messages also carry an integer `seq` (the rowid) that orders history and backs paging.

CREATE TABLE IF NOT EXISTS users (
  id            TEXT PRIMARY KEY,
  username      TEXT NOT NULL UNIQUE COLLATE NOCASE, -- `Alice` cannot impersonate `alice`
  password_hash TEXT NOT NULL,
  is_admin      INTEGER NOT NULL DEFAULT 0,
  standing      INTEGER NOT NULL DEFAULT 0 CHECK (standing BETWEEN 0 AND 4),
  -- the standing an administrator last set by hand (0: none): warnings raise the standing, never below it
  standing_by_hand INTEGER NOT NULL DEFAULT 0,
  email         TEXT,
  email_verified INTEGER NOT NULL DEFAULT 0,
  created_at    TEXT NOT NULL,
  -- what the user chose to show: online, idle, dnd or invisible (offline to others)
  presence      TEXT NOT NULL DEFAULT 'online',
  -- shown instead of the username where names are shown; NULL: the username
  display_name  TEXT,
  -- 0: no avatar; n: /avatars/<id>?v=n (a new upload is a new URL, so it may be cached forever)
  avatar_version INTEGER NOT NULL DEFAULT 0,
  -- a deleted account keeps its row (its messages keep their author) under the name deleted-<id>
  deleted_at    TEXT,
  -- TOTP secrets, encrypted with the data directory's key (src/core/secret-box.ts); pending until confirmed
  totp_secret   TEXT,
  totp_pending  TEXT,
  -- the last time step whose code was accepted: a code is good once
  totp_last_step INTEGER NOT NULL DEFAULT 0,
  -- 1: the placeholder of a person an import named (imported_people); it cannot sign in
  imported      INTEGER NOT NULL DEFAULT 0,
  -- 0: a person; 1: a bot account (signs in with its token only); 2: the author of a webhook's messages
  bot           INTEGER NOT NULL DEFAULT 0,
  -- a bot's owner, who may reset its token or delete it
  bot_owner_id  TEXT REFERENCES users (id),
  -- SHA-256 of a bot's token secret (a high-entropy secret needs no slow hash)
  bot_token_hash TEXT,
  -- 0: the username was made from an OpenID Provider's claim, and its owner may change it once
  username_chosen INTEGER NOT NULL DEFAULT 1
);
CREATE INDEX IF NOT EXISTS users_email ON users (email COLLATE NOCASE);
-- The columns a request's user is made of (src/parts/accounts/users.ts keeps them in memory): see generations.
CREATE TRIGGER IF NOT EXISTS users_updated AFTER UPDATE OF username, is_admin, standing, display_name, avatar_version, deleted_at ON users
BEGIN UPDATE generations SET n = random() WHERE name = 'users'; END;
CREATE TRIGGER IF NOT EXISTS users_deleted AFTER DELETE ON users BEGIN UPDATE generations SET n = random() WHERE name = 'users'; END;

-- How a user is shown to others: a deleted account as deleted-user / Deleted user.
CREATE VIEW IF NOT EXISTS profiles AS
SELECT id,
       -- COLLATE NOCASE: lists ordered by this name sort as the column does, in any letter case
       CASE WHEN deleted_at IS NULL THEN username ELSE 'deleted-user' END COLLATE NOCASE AS username,
       CASE WHEN deleted_at IS NULL THEN display_name ELSE 'Deleted user' END AS display_name,
       CASE WHEN deleted_at IS NULL AND avatar_version > 0 THEN '/avatars/' || id || '?v=' || avatar_version END AS avatar_url,
       bot
  FROM users;

-- Two-factor recovery codes (SHA-256 of each; high-entropy codes need no slow hash): each works once.
CREATE TABLE IF NOT EXISTS recovery_codes (
  user_id   TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  code_hash TEXT NOT NULL,
  PRIMARY KEY (user_id, code_hash)
) WITHOUT ROWID;

-- Remembered devices (src/parts/accounts/devices.ts): the SHA-256 of each browser's current
-- secret, rotated at every use; and the secrets rotated away, so that one coming back is seen.
CREATE TABLE IF NOT EXISTS devices (
  id           TEXT PRIMARY KEY,
  user_id      TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  secret_hash  TEXT NOT NULL UNIQUE,
  user_agent   TEXT NOT NULL,
  address      TEXT NOT NULL,
  created_at   TEXT NOT NULL,
  last_used_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS devices_by_user ON devices (user_id, last_used_at);
CREATE TABLE IF NOT EXISTS device_retired_secrets (
  secret_hash TEXT PRIMARY KEY,
  user_id     TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  retired_at  TEXT NOT NULL
) WITHOUT ROWID;

-- Identities at OpenID Providers linked to accounts (src/parts/accounts/identities.ts): a
-- provider's issuer and subject name one person there, linked to one account at most.
CREATE TABLE IF NOT EXISTS identities (
  id           TEXT PRIMARY KEY,
  user_id      TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  -- the provider's id in OIDC_PROVIDERS when it was linked (the issuer is what identifies it)
  provider_id  TEXT NOT NULL,
  issuer       TEXT NOT NULL,
  subject      TEXT NOT NULL,
  -- the email the provider gave at the last sign-in, shown to the account's owner only
  email        TEXT,
  created_at   TEXT NOT NULL,
  last_used_at TEXT NOT NULL,
  UNIQUE (issuer, subject)
);
CREATE INDEX IF NOT EXISTS identities_by_user ON identities (user_id);

-- Passkeys (WebAuthn credentials, src/parts/accounts/passkeys.ts): the public key of each, never a secret.
CREATE TABLE IF NOT EXISTS passkeys (
  id            TEXT PRIMARY KEY,
  user_id       TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  -- base64url, as the authenticator made it: what a sign-in names
  credential_id TEXT NOT NULL UNIQUE,
  -- COSE_Key bytes
  public_key    BLOB NOT NULL,
  -- the authenticator's signature counter (0 for those that keep none)
  counter       INTEGER NOT NULL,
  -- JSON array of how the browser may reach it (internal, hybrid, usb, ...)
  transports    TEXT NOT NULL,
  name          TEXT NOT NULL,
  -- 1: synced to the owner's other devices (a passkey manager)
  backed_up     INTEGER NOT NULL,
  created_at    TEXT NOT NULL,
  last_used_at  TEXT
);
CREATE INDEX IF NOT EXISTS passkeys_by_user ON passkeys (user_id);

CREATE TABLE IF NOT EXISTS servers (
  id          TEXT PRIMARY KEY,
  name        TEXT NOT NULL,
  owner_id    TEXT NOT NULL REFERENCES users (id),
  created_at  TEXT NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  -- the channel permissions everyone has unless a channel says otherwise (a bit mask of
  -- src/rules/channel-permissions.ts BITS; 138735: EVERYONE_DEFAULT, all but mention_everyone,
  -- manage_threads, the voice moderators' three and manage_emojis; the inserts name it, as an
  -- older database's default is 47)
  everyone_permissions INTEGER NOT NULL DEFAULT 138735,
  -- 0: links posted in this server get no preview cards (issue 51; LINK_PREVIEWS=off turns them off everywhere)
  link_previews INTEGER NOT NULL DEFAULT 1,
  -- raid protection (issue 53, docs/moderation.md): who may post (0 none, 1 a verified email,
  -- 2 an account older than 5 minutes, 3 a member for 10 minutes: src/rules/verification.ts)
  verification_level INTEGER NOT NULL DEFAULT 0,
  -- 1: a moderator's power is refused to an account without two-factor sign-in
  two_factor_for_moderators INTEGER NOT NULL DEFAULT 0,
  -- joins per minute past which join_rate_action ('pause' or 'alert') happens; 0: off
  join_rate_threshold INTEGER NOT NULL DEFAULT 0,
  join_rate_action TEXT NOT NULL DEFAULT 'alert',
  -- 1: invites take nobody in; joins_paused 1: no one joins by any way until a moderator resumes
  invites_paused INTEGER NOT NULL DEFAULT 0,
  joins_paused INTEGER NOT NULL DEFAULT 0
);

-- Named groups of a server's channels, in position order (0 first, dense).
CREATE TABLE IF NOT EXISTS categories (
  id         TEXT PRIMARY KEY,
  server_id  TEXT NOT NULL REFERENCES servers (id) ON DELETE CASCADE,
  name       TEXT NOT NULL,
  position   INTEGER NOT NULL,
  created_at TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS channels (
  id         TEXT PRIMARY KEY,
  server_id  TEXT NOT NULL REFERENCES servers (id) ON DELETE CASCADE,
  name       TEXT NOT NULL,
  position   INTEGER NOT NULL,
  created_at TEXT NOT NULL,
  topic      TEXT NOT NULL DEFAULT '',
  -- seconds a member (not the owner or a full server administrator) waits between messages here
  slowmode_seconds INTEGER NOT NULL DEFAULT 0,
  -- the category it is listed under, or NULL for none
  category_id TEXT REFERENCES categories (id) ON DELETE SET NULL,
  -- 1: the channel follows its category's overwrites (none without a category); 0: its own
  permissions_synced INTEGER NOT NULL DEFAULT 1,
  -- what kind of channel (src/core/records.ts CHANNEL_TYPES): text, forum, thread
  type TEXT NOT NULL DEFAULT 'text',
  -- the channel it belongs to (a thread's text or forum channel), or NULL
  parent_id TEXT REFERENCES channels (id) ON DELETE CASCADE,
  -- a forum's: its tags (a JSON array of {id, name, emoji, moderated}), the reaction its posts
  -- offer first, and how its posts are listed ('latest_activity' or 'creation'); its guidelines are its topic
  available_tags TEXT NOT NULL DEFAULT '[]',
  default_reaction TEXT,
  default_sort TEXT NOT NULL DEFAULT 'latest_activity',
  -- a voice channel's: at most this many people in it at once (0: no limit); NULL for other kinds
  user_limit INTEGER,
  -- a voice channel's audio bitrate, bits per second; NULL for other kinds
  bitrate INTEGER
);
-- A name is a server's once, in any letter case, among its listed channels; threads are not bound
-- by it (schema 19: the table was made anew without the UNIQUE it had before).
CREATE UNIQUE INDEX IF NOT EXISTS channels_name ON channels (server_id, name COLLATE NOCASE) WHERE parent_id IS NULL;
CREATE INDEX IF NOT EXISTS channels_by_parent ON channels (parent_id) WHERE parent_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS categories_by_server ON categories (server_id, position);

-- What is a thread's own (docs/api.md "Threads and forums"): a thread is a channels row of type
-- 'thread' with a parent; this row holds the rest, apart from channels, whose every change
-- reloads what is kept of it (docs/internals.md). src/parts/community/threads.ts is its one writer.
CREATE TABLE IF NOT EXISTS threads (
  channel_id  TEXT PRIMARY KEY REFERENCES channels (id) ON DELETE CASCADE,
  server_id   TEXT NOT NULL,
  parent_id   TEXT NOT NULL,
  owner_id    TEXT NOT NULL REFERENCES users (id),
  -- 1: seen only by its members and by manage_threads (fixed at creation)
  private     INTEGER NOT NULL DEFAULT 0,
  archived    INTEGER NOT NULL DEFAULT 0,
  archived_at TEXT,
  locked      INTEGER NOT NULL DEFAULT 0,
  auto_archive_minutes INTEGER NOT NULL DEFAULT 1440 CHECK (auto_archive_minutes IN (60, 1440, 4320, 10080)),
  -- when it archives by itself unless something happens: its last activity (made, a message,
  -- unarchived, a new auto_archive_minutes) plus auto_archive_minutes; kept by the trigger below
  archive_at  TEXT NOT NULL,
  -- counted by the triggers below, whoever writes messages (the store, the import, claims)
  message_count   INTEGER NOT NULL DEFAULT 0,
  last_message_at TEXT,
  -- a forum post's tags: a JSON array of ids of its forum's available_tags
  applied_tags TEXT NOT NULL DEFAULT '[]',
  -- the message it was started from (in its parent), or a forum post's first message
  starter_message_id TEXT
);
CREATE INDEX IF NOT EXISTS threads_of_parent ON threads (parent_id, archived, archived_at);
CREATE INDEX IF NOT EXISTS threads_active ON threads (server_id) WHERE archived = 0;
CREATE INDEX IF NOT EXISTS threads_due ON threads (archive_at) WHERE archived = 0;
CREATE INDEX IF NOT EXISTS threads_by_starter ON threads (starter_message_id) WHERE starter_message_id IS NOT NULL;
-- Who follows a thread (its members): posting or being mentioned in it joins; a member of the
-- server who leaves leaves its threads.
CREATE TABLE IF NOT EXISTS thread_members (
  thread_id TEXT NOT NULL REFERENCES threads (channel_id) ON DELETE CASCADE,
  user_id   TEXT NOT NULL,
  server_id TEXT NOT NULL,
  joined_at TEXT NOT NULL,
  PRIMARY KEY (thread_id, user_id),
  FOREIGN KEY (server_id, user_id) REFERENCES members (server_id, user_id) ON DELETE CASCADE
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS thread_members_by_user ON thread_members (user_id, server_id);

-- Values moved to a new random one by every change to what is kept in memory, in the same
-- transaction (triggers): 'channels' (the channel lists, src/parts/community/directory.ts) and 'users' (the users
-- every request looks up, src/parts/accounts/users.ts). While a value stays the same, what was kept is what is
-- committed, whichever process wrote; random rather than counted, so a rolled-back change is
-- never mistaken for a later one.
CREATE TABLE IF NOT EXISTS generations (
  name TEXT PRIMARY KEY,
  n    INTEGER NOT NULL
) WITHOUT ROWID;
INSERT OR IGNORE INTO generations (name, n) VALUES ('channels', 0), ('users', 0);
CREATE TRIGGER IF NOT EXISTS channels_inserted AFTER INSERT ON channels BEGIN UPDATE generations SET n = random() WHERE name = 'channels'; END;
CREATE TRIGGER IF NOT EXISTS channels_updated AFTER UPDATE ON channels BEGIN UPDATE generations SET n = random() WHERE name = 'channels'; END;
CREATE TRIGGER IF NOT EXISTS channels_deleted AFTER DELETE ON channels BEGIN UPDATE generations SET n = random() WHERE name = 'channels'; END;
-- Categories are kept in memory beside the channel lists, under the same generation.
CREATE TRIGGER IF NOT EXISTS categories_inserted AFTER INSERT ON categories BEGIN UPDATE generations SET n = random() WHERE name = 'channels'; END;
CREATE TRIGGER IF NOT EXISTS categories_updated AFTER UPDATE ON categories BEGIN UPDATE generations SET n = random() WHERE name = 'channels'; END;
CREATE TRIGGER IF NOT EXISTS categories_deleted AFTER DELETE ON categories BEGIN UPDATE generations SET n = random() WHERE name = 'channels'; END;

-- position: the order roles are listed and shown in (0 first, dense, set by PATCH .../roles/{id});
-- color: 0xRRGGBB or NULL; hoist: its holders are a group of their own in the member list;
-- mentionable: @name counts as a mention of every holder (from who may use @everyone).
CREATE TABLE IF NOT EXISTS roles (
  id                TEXT PRIMARY KEY,
  server_id         TEXT NOT NULL REFERENCES servers (id) ON DELETE CASCADE,
  name              TEXT NOT NULL,
  full_server_admin INTEGER NOT NULL DEFAULT 0,
  created_at        TEXT NOT NULL,
  color             INTEGER,
  position          INTEGER NOT NULL DEFAULT 0,
  hoist             INTEGER NOT NULL DEFAULT 0,
  mentionable       INTEGER NOT NULL DEFAULT 0,
  -- the channel permissions holders have server-wide, beside everyone's (a bit mask)
  permissions       INTEGER NOT NULL DEFAULT 0,
  -- 1: a member takes or drops it themselves (issue 53); never a role with a power
  self_assignable   INTEGER NOT NULL DEFAULT 0,
  UNIQUE (server_id, name COLLATE NOCASE)
);

-- One row per member. joined_seq: the newest message seq when they joined; everything up to it
-- counts as read. role_id is unused since schema 11 (member_roles holds a member's roles; SQLite
-- cannot drop a column with a foreign key, so migrated databases keep it, and so does this file).
CREATE TABLE IF NOT EXISTS members (
  server_id  TEXT NOT NULL REFERENCES servers (id) ON DELETE CASCADE,
  user_id    TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  role_id    TEXT REFERENCES roles (id) ON DELETE SET NULL,
  joined_at  TEXT NOT NULL,
  joined_seq INTEGER NOT NULL DEFAULT 0,
  -- until then the member can read but not send, edit, react or type in the server
  timeout_until TEXT,
  -- 1: in membership screening (src/parts/community/onboarding.ts): reads, does not write or
  -- react until they accept the server's rules (the owner and holders of powers never count as so)
  pending INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (server_id, user_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS members_by_user ON members (user_id);

-- A server's membership screening (issue 53, docs/moderation.md "Membership screening and
-- onboarding"): its rules, its questions (JSON: [{id, title, required, single_select, answers:
-- [{id, title, role_ids, channel_ids}]}]) and the channels shown to everyone first. No row: off.
CREATE TABLE IF NOT EXISTS server_onboarding (
  server_id           TEXT PRIMARY KEY REFERENCES servers (id) ON DELETE CASCADE,
  enabled             INTEGER NOT NULL DEFAULT 0,
  rules               TEXT NOT NULL DEFAULT '[]',
  questions           TEXT NOT NULL DEFAULT '[]',
  default_channel_ids TEXT NOT NULL DEFAULT '[]',
  updated_at          TEXT NOT NULL
) WITHOUT ROWID;

-- The roles a member holds, any number (PUT .../members/{user_id}/role adds one).
CREATE TABLE IF NOT EXISTS member_roles (
  server_id TEXT NOT NULL,
  user_id   TEXT NOT NULL,
  role_id   TEXT NOT NULL REFERENCES roles (id) ON DELETE CASCADE,
  PRIMARY KEY (server_id, user_id, role_id),
  FOREIGN KEY (server_id, user_id) REFERENCES members (server_id, user_id) ON DELETE CASCADE
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS member_roles_by_role ON member_roles (role_id);

-- A member's server mute and server deafen in voice (PATCH …/members/{user_id}/voice,
-- src/parts/voice/voice.ts): kept while they are a member, so leaving voice and coming back
-- does not lift them.
CREATE TABLE IF NOT EXISTS voice_moderation (
  server_id TEXT NOT NULL,
  user_id   TEXT NOT NULL,
  mute      INTEGER NOT NULL DEFAULT 0,
  deaf      INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (server_id, user_id),
  FOREIGN KEY (server_id, user_id) REFERENCES members (server_id, user_id) ON DELETE CASCADE
) WITHOUT ROWID;

-- Channel permission overwrites (src/rules/channel-permissions.ts): for everyone (target_id the
-- server's id), a role, or a member, on a channel or on a category (which its synced channels
-- follow). allow and deny are bit masks; an overwrite of a role or member outlives neither.
CREATE TABLE IF NOT EXISTS channel_overwrites (
  channel_id TEXT NOT NULL REFERENCES channels (id) ON DELETE CASCADE,
  target_id  TEXT NOT NULL,
  kind       TEXT NOT NULL CHECK (kind IN ('everyone', 'role', 'member')),
  allow      INTEGER NOT NULL,
  deny       INTEGER NOT NULL,
  server_id  TEXT NOT NULL,
  PRIMARY KEY (channel_id, target_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS category_overwrites (
  category_id TEXT NOT NULL REFERENCES categories (id) ON DELETE CASCADE,
  target_id   TEXT NOT NULL,
  kind        TEXT NOT NULL CHECK (kind IN ('everyone', 'role', 'member')),
  allow       INTEGER NOT NULL,
  deny        INTEGER NOT NULL,
  server_id   TEXT NOT NULL,
  PRIMARY KEY (category_id, target_id)
) WITHOUT ROWID;

-- Per server, moved to a new random value by every change to what decides channel access (the
-- owner, everyone's flags, roles and who holds them, members, channels'
-- categories and syncing, overwrites), in the same transaction: src/rules/channel-access.ts keeps
-- each server's rules in memory while its value stays. A server with no row has not changed.
-- An insert then an update, never INSERT OR REPLACE: a trigger's conflict clause gives way to
-- the outer statement's, so under an INSERT OR IGNORE into members a REPLACE would be ignored.
CREATE TABLE IF NOT EXISTS access_generations (server_id TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID;
CREATE TRIGGER IF NOT EXISTS access_servers AFTER UPDATE OF owner_id, everyone_permissions ON servers
BEGIN INSERT OR IGNORE INTO access_generations (server_id, n) VALUES (new.id, 0); UPDATE access_generations SET n = random() WHERE server_id = new.id; END;
CREATE TRIGGER IF NOT EXISTS access_roles_updated AFTER UPDATE OF permissions, full_server_admin ON roles
BEGIN INSERT OR IGNORE INTO access_generations (server_id, n) VALUES (new.server_id, 0); UPDATE access_generations SET n = random() WHERE server_id = new.server_id; END;
CREATE TRIGGER IF NOT EXISTS access_roles_deleted AFTER DELETE ON roles
BEGIN INSERT OR IGNORE INTO access_generations (server_id, n) VALUES (old.server_id, 0); UPDATE access_generations SET n = random() WHERE server_id = old.server_id; END;
CREATE TRIGGER IF NOT EXISTS access_member_roles_added AFTER INSERT ON member_roles
BEGIN INSERT OR IGNORE INTO access_generations (server_id, n) VALUES (new.server_id, 0); UPDATE access_generations SET n = random() WHERE server_id = new.server_id; END;
CREATE TRIGGER IF NOT EXISTS access_member_roles_removed AFTER DELETE ON member_roles
BEGIN INSERT OR IGNORE INTO access_generations (server_id, n) VALUES (old.server_id, 0); UPDATE access_generations SET n = random() WHERE server_id = old.server_id; END;
CREATE TRIGGER IF NOT EXISTS access_members_added AFTER INSERT ON members
BEGIN INSERT OR IGNORE INTO access_generations (server_id, n) VALUES (new.server_id, 0); UPDATE access_generations SET n = random() WHERE server_id = new.server_id; END;
CREATE TRIGGER IF NOT EXISTS access_members_removed AFTER DELETE ON members
BEGIN INSERT OR IGNORE INTO access_generations (server_id, n) VALUES (old.server_id, 0); UPDATE access_generations SET n = random() WHERE server_id = old.server_id; END;
-- A timeout changes who may act as an administrator (src/rules/permissions.ts rank).
CREATE TRIGGER IF NOT EXISTS access_members_timeout AFTER UPDATE OF timeout_until ON members
BEGIN INSERT OR IGNORE INTO access_generations (server_id, n) VALUES (new.server_id, 0); UPDATE access_generations SET n = random() WHERE server_id = new.server_id; END;
-- joined_seq is the history floor of a member without read_history (src/rules/channel-access.ts
-- historyFloor); the import's worker moves it on its own connection. A new trigger name, so the
-- idempotent run of this file at every start adds it to older databases without a migration.
CREATE TRIGGER IF NOT EXISTS access_members_joined_seq AFTER UPDATE OF joined_seq ON members
BEGIN INSERT OR IGNORE INTO access_generations (server_id, n) VALUES (new.server_id, 0); UPDATE access_generations SET n = random() WHERE server_id = new.server_id; END;
CREATE TRIGGER IF NOT EXISTS access_channels_added AFTER INSERT ON channels
BEGIN INSERT OR IGNORE INTO access_generations (server_id, n) VALUES (new.server_id, 0); UPDATE access_generations SET n = random() WHERE server_id = new.server_id; END;
CREATE TRIGGER IF NOT EXISTS access_channels_updated AFTER UPDATE OF category_id, permissions_synced ON channels
BEGIN INSERT OR IGNORE INTO access_generations (server_id, n) VALUES (new.server_id, 0); UPDATE access_generations SET n = random() WHERE server_id = new.server_id; END;
CREATE TRIGGER IF NOT EXISTS access_channels_deleted AFTER DELETE ON channels
BEGIN INSERT OR IGNORE INTO access_generations (server_id, n) VALUES (old.server_id, 0); UPDATE access_generations SET n = random() WHERE server_id = old.server_id; END;
-- A thread's own row (its parent, whether private) comes in the same transaction as its channel.
CREATE TRIGGER IF NOT EXISTS access_threads_added AFTER INSERT ON threads
BEGIN INSERT OR IGNORE INTO access_generations (server_id, n) VALUES (new.server_id, 0); UPDATE access_generations SET n = random() WHERE server_id = new.server_id; END;
-- Who sees a private thread: its members (src/rules/channel-access.ts keeps them with the rest).
CREATE TRIGGER IF NOT EXISTS access_private_thread_joined AFTER INSERT ON thread_members
WHEN (SELECT private FROM threads WHERE channel_id = new.thread_id) = 1
BEGIN INSERT OR IGNORE INTO access_generations (server_id, n) VALUES (new.server_id, 0); UPDATE access_generations SET n = random() WHERE server_id = new.server_id; END;
CREATE TRIGGER IF NOT EXISTS access_private_thread_left AFTER DELETE ON thread_members
WHEN (SELECT private FROM threads WHERE channel_id = old.thread_id) = 1
BEGIN INSERT OR IGNORE INTO access_generations (server_id, n) VALUES (old.server_id, 0); UPDATE access_generations SET n = random() WHERE server_id = old.server_id; END;
CREATE TRIGGER IF NOT EXISTS access_channel_overwrites_added AFTER INSERT ON channel_overwrites
BEGIN INSERT OR IGNORE INTO access_generations (server_id, n) VALUES (new.server_id, 0); UPDATE access_generations SET n = random() WHERE server_id = new.server_id; END;
CREATE TRIGGER IF NOT EXISTS access_channel_overwrites_updated AFTER UPDATE ON channel_overwrites
BEGIN INSERT OR IGNORE INTO access_generations (server_id, n) VALUES (new.server_id, 0); UPDATE access_generations SET n = random() WHERE server_id = new.server_id; END;
CREATE TRIGGER IF NOT EXISTS access_channel_overwrites_removed AFTER DELETE ON channel_overwrites
BEGIN INSERT OR IGNORE INTO access_generations (server_id, n) VALUES (old.server_id, 0); UPDATE access_generations SET n = random() WHERE server_id = old.server_id; END;
CREATE TRIGGER IF NOT EXISTS access_category_overwrites_added AFTER INSERT ON category_overwrites
BEGIN INSERT OR IGNORE INTO access_generations (server_id, n) VALUES (new.server_id, 0); UPDATE access_generations SET n = random() WHERE server_id = new.server_id; END;
CREATE TRIGGER IF NOT EXISTS access_category_overwrites_updated AFTER UPDATE ON category_overwrites
BEGIN INSERT OR IGNORE INTO access_generations (server_id, n) VALUES (new.server_id, 0); UPDATE access_generations SET n = random() WHERE server_id = new.server_id; END;
CREATE TRIGGER IF NOT EXISTS access_category_overwrites_removed AFTER DELETE ON category_overwrites
BEGIN INSERT OR IGNORE INTO access_generations (server_id, n) VALUES (old.server_id, 0); UPDATE access_generations SET n = random() WHERE server_id = old.server_id; END;

-- A member removed by someone else (kicked). Their old invites no longer let them back in:
-- only an invite an owner or full server administrator created after the removal does.
CREATE TABLE IF NOT EXISTS server_removals (
  server_id  TEXT NOT NULL REFERENCES servers (id) ON DELETE CASCADE,
  user_id    TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  removed_by TEXT NOT NULL REFERENCES users (id),
  removed_at TEXT NOT NULL,
  PRIMARY KEY (server_id, user_id)
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS invites (
  token      TEXT PRIMARY KEY,
  server_id  TEXT NOT NULL REFERENCES servers (id) ON DELETE CASCADE,
  created_by TEXT NOT NULL REFERENCES users (id),
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  max_uses   INTEGER,           -- NULL: unlimited
  uses       INTEGER NOT NULL DEFAULT 0
);

-- A banned user cannot join the server again until unbanned.
CREATE TABLE IF NOT EXISTS bans (
  server_id  TEXT NOT NULL REFERENCES servers (id) ON DELETE CASCADE,
  user_id    TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  reason     TEXT,
  banned_by  TEXT NOT NULL REFERENCES users (id),
  created_at TEXT NOT NULL,
  PRIMARY KEY (server_id, user_id)
) WITHOUT ROWID;

-- What owners and administrators did in a server, written in the same transaction as the change.
CREATE TABLE IF NOT EXISTS audit_log (
  seq         INTEGER PRIMARY KEY,
  id          TEXT NOT NULL UNIQUE,
  server_id   TEXT NOT NULL REFERENCES servers (id) ON DELETE CASCADE,
  action      TEXT NOT NULL,
  actor_id    TEXT NOT NULL REFERENCES users (id),
  target_id   TEXT,
  target_kind TEXT,
  reason      TEXT,
  changes     TEXT,  -- JSON
  created_at  TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS audit_log_by_server ON audit_log (server_id, seq);

-- AutoMod's rules of a server (issue 53; src/parts/messages/automod.ts is their one writer):
-- trigger and actions are JSON in the API's shape (src/rules/automod.ts), checked before they are
-- stored; exempt roles and channels are JSON arrays of ids (a deleted one simply matches nothing).
-- A table a database lacks is made here, after any migration: no migration needed.
CREATE TABLE IF NOT EXISTS automod_rules (
  id                 TEXT PRIMARY KEY,
  server_id          TEXT NOT NULL REFERENCES servers (id) ON DELETE CASCADE,
  name               TEXT NOT NULL,
  enabled            INTEGER NOT NULL CHECK (enabled IN (0, 1)),
  trigger            TEXT NOT NULL,
  actions            TEXT NOT NULL,
  exempt_role_ids    TEXT NOT NULL DEFAULT '[]',
  exempt_channel_ids TEXT NOT NULL DEFAULT '[]',
  creator_id         TEXT NOT NULL REFERENCES users (id),
  created_at         TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS automod_rules_by_server ON automod_rules (server_id);

-- Who blocked whom. Either direction keeps the two apart in DMs, groups and friend requests.
CREATE TABLE IF NOT EXISTS blocks (
  blocker_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  blocked_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  created_at TEXT NOT NULL,
  PRIMARY KEY (blocker_id, blocked_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS blocks_by_blocked ON blocks (blocked_id);

-- A friendship is an accepted request. A rejected request is deleted so it can be sent again.
CREATE TABLE IF NOT EXISTS friend_requests (
  id          TEXT PRIMARY KEY,
  from_user   TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  to_user     TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  status      TEXT NOT NULL CHECK (status IN ('pending', 'accepted')),
  -- the unordered pair, so one row at most exists between two users in either direction
  pair_key    TEXT NOT NULL UNIQUE,
  created_at  TEXT NOT NULL,
  accepted_at TEXT
);
CREATE INDEX IF NOT EXISTS friend_requests_to ON friend_requests (to_user, status);
CREATE INDEX IF NOT EXISTS friend_requests_from ON friend_requests (from_user, status);

CREATE TABLE IF NOT EXISTS conversations (
  id         TEXT PRIMARY KEY,
  kind       TEXT NOT NULL CHECK (kind IN ('dm', 'group')),
  name       TEXT,
  -- for a DM, the unordered pair of its two users: the same DM whoever opens it
  dm_key     TEXT UNIQUE,
  created_by TEXT NOT NULL REFERENCES users (id),
  created_at TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS conversation_members (
  conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
  user_id         TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  joined_seq      INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (conversation_id, user_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS conversation_members_by_user ON conversation_members (user_id);

-- A message lives in exactly one container: a channel or a conversation.
CREATE TABLE IF NOT EXISTS messages (
  seq             INTEGER PRIMARY KEY,
  id              TEXT NOT NULL UNIQUE,
  channel_id      TEXT REFERENCES channels (id) ON DELETE CASCADE,
  conversation_id TEXT REFERENCES conversations (id) ON DELETE CASCADE,
  author_id       TEXT NOT NULL REFERENCES users (id),
  content         TEXT NOT NULL,
  -- kept when the target is deleted, so a reply can still say what it answered
  reply_to        TEXT,
  created_at      TEXT NOT NULL,
  edited_at       TEXT,
  -- the users the content mentions (a JSON array of ids), NULL when none
  mentions        TEXT,
  -- @everyone by the owner or a full server administrator
  mention_everyone INTEGER NOT NULL DEFAULT 0,
  pinned_at       TEXT,
  pinned_by       TEXT,
  -- the mentionable roles the content mentions (a JSON array of ids), NULL when none
  mention_roles   TEXT,
  -- a webhook's message: the webhook (its row may be gone), the name and avatar link it gave for this message
  webhook_id      TEXT,
  author_name     TEXT,
  author_avatar   TEXT,
  -- embeds (a JSON array, src/core/embed.ts) and their text, which search indexes with the content
  embeds          TEXT,
  embed_text      TEXT,
  -- 1: the author (or a moderator) removed its link previews, and none are fetched again (issue 51)
  embeds_suppressed INTEGER NOT NULL DEFAULT 0,
  CHECK ((channel_id IS NULL) <> (conversation_id IS NULL))
);
CREATE INDEX IF NOT EXISTS messages_by_channel ON messages (channel_id, seq) WHERE channel_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS messages_by_conversation ON messages (conversation_id, seq) WHERE conversation_id IS NOT NULL;
-- a user's own messages: the account export reads them in order
CREATE INDEX IF NOT EXISTS messages_by_author ON messages (author_id, seq);
CREATE INDEX IF NOT EXISTS messages_mentioning_everyone ON messages (channel_id, seq) WHERE mention_everyone = 1;
CREATE INDEX IF NOT EXISTS messages_pinned_in_channel ON messages (channel_id, pinned_at) WHERE pinned_at IS NOT NULL;
CREATE INDEX IF NOT EXISTS messages_pinned_in_conversation ON messages (conversation_id, pinned_at) WHERE pinned_at IS NOT NULL;
-- A thread's messages counted and its last activity kept (archive_at), whoever writes them (the
-- message store, the import, claims); a deleted message uncounted.
CREATE TRIGGER IF NOT EXISTS thread_message_added AFTER INSERT ON messages
WHEN new.channel_id IS NOT NULL AND EXISTS (SELECT 1 FROM threads WHERE channel_id = new.channel_id)
BEGIN
  UPDATE threads SET message_count = message_count + 1,
    last_message_at = MAX(COALESCE(last_message_at, ''), new.created_at),
    archive_at = MAX(archive_at, strftime('%Y-%m-%dT%H:%M:%fZ', new.created_at, '+' || auto_archive_minutes || ' minutes'))
  WHERE channel_id = new.channel_id;
END;
CREATE TRIGGER IF NOT EXISTS thread_message_removed AFTER DELETE ON messages
WHEN old.channel_id IS NOT NULL
BEGIN UPDATE threads SET message_count = MAX(message_count - 1, 0) WHERE channel_id = old.channel_id; END;

-- The search index (src/parts/messages/search.ts): the current text of every message, tokenized by
-- unicode61 with case and diacritics folded. Contentless: the text itself stays in messages only.
-- A message's key in the index is its seq, in the range of its server: (range << 32) | seq, range
-- 0 for the messages of conversations. So a search reads the ranges of the servers its caller is
-- in, and its cost follows what they can see, not the whole database (docs/performance.md).
CREATE VIRTUAL TABLE IF NOT EXISTS messages_fts USING fts5(
  content, content = '', tokenize = 'unicode61 remove_diacritics 2', columnsize = 0, prefix = '3'
);
-- A setting stored in the index (written again at each start, which changes nothing): new
-- segments are merged 16 at a time instead of 4, so a commit spends less on merging (the prefix
-- index doubles what each commit writes) and queries stay as fast (docs/api.md "Index and cost").
INSERT INTO messages_fts (messages_fts, rank) VALUES ('automerge', 16);
-- Each server's range number, and each channel's (its server's). Rows stay when their server or
-- channel is deleted: the index's delete trigger needs them for the messages deleted after.
CREATE TABLE IF NOT EXISTS search_ranges (
  container_id TEXT PRIMARY KEY,
  n            INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS search_ranges_by_n ON search_ranges (n);
CREATE TRIGGER IF NOT EXISTS servers_search_range AFTER INSERT ON servers BEGIN
  INSERT INTO search_ranges (container_id, n) VALUES (new.id, (SELECT COALESCE(MAX(n), 0) + 1 FROM search_ranges));
END;
CREATE TRIGGER IF NOT EXISTS channels_search_range AFTER INSERT ON channels BEGIN
  INSERT INTO search_ranges (container_id, n) SELECT new.id, n FROM search_ranges WHERE container_id = new.server_id;
END;
CREATE TRIGGER IF NOT EXISTS messages_fts_insert AFTER INSERT ON messages BEGIN
  INSERT INTO messages_fts (rowid, content)
  VALUES ((COALESCE((SELECT n FROM search_ranges WHERE container_id = new.channel_id), 0) << 32) | new.seq, new.content || COALESCE(char(10) || new.embed_text, ''));
END;
CREATE TRIGGER IF NOT EXISTS messages_fts_delete AFTER DELETE ON messages BEGIN
  INSERT INTO messages_fts (messages_fts, rowid, content)
  VALUES ('delete', (COALESCE((SELECT n FROM search_ranges WHERE container_id = old.channel_id), 0) << 32) | old.seq, old.content || COALESCE(char(10) || old.embed_text, ''));
END;
CREATE TRIGGER IF NOT EXISTS messages_fts_update AFTER UPDATE OF content ON messages BEGIN
  INSERT INTO messages_fts (messages_fts, rowid, content)
  VALUES ('delete', (COALESCE((SELECT n FROM search_ranges WHERE container_id = old.channel_id), 0) << 32) | old.seq, old.content || COALESCE(char(10) || old.embed_text, ''));
  INSERT INTO messages_fts (rowid, content)
  VALUES ((COALESCE((SELECT n FROM search_ranges WHERE container_id = new.channel_id), 0) << 32) | new.seq, new.content || COALESCE(char(10) || new.embed_text, ''));
END;

-- Every earlier version of an edited message, oldest first (the current one is in messages).
CREATE TABLE IF NOT EXISTS message_edits (
  message_seq INTEGER NOT NULL REFERENCES messages (seq) ON DELETE CASCADE,
  content     TEXT NOT NULL,
  written_at  TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS message_edits_by_message ON message_edits (message_seq);

-- One row per mentioned user of a message, so a user's mentions after their read marker are an
-- index range. container_id is the message's channel or conversation.
CREATE TABLE IF NOT EXISTS message_mentions (
  user_id      TEXT NOT NULL,
  container_id TEXT NOT NULL,
  message_seq  INTEGER NOT NULL REFERENCES messages (seq) ON DELETE CASCADE,
  PRIMARY KEY (user_id, container_id, message_seq)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS message_mentions_by_message ON message_mentions (message_seq);

-- How far each user has read each channel or conversation (only ever moves forward). Without a
-- row, the member's joined_seq is their marker.
CREATE TABLE IF NOT EXISTS read_states (
  user_id       TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  container_id  TEXT NOT NULL,
  last_read_seq INTEGER NOT NULL,
  PRIMARY KEY (user_id, container_id)
) WITHOUT ROWID;

-- A server's custom emoji (issue 50): the image is DATA_DIR/emojis/<id>.webp (src/parts/community/emojis.ts).
-- A name is unique in its server whatever its case; `<:name:id>` in a message names one.
CREATE TABLE IF NOT EXISTS emojis (
  id         TEXT PRIMARY KEY,
  server_id  TEXT NOT NULL REFERENCES servers (id) ON DELETE CASCADE,
  name       TEXT NOT NULL COLLATE NOCASE,
  animated   INTEGER NOT NULL CHECK (animated IN (0, 1)),
  creator_id TEXT NOT NULL REFERENCES users (id),
  created_at TEXT NOT NULL,
  -- set when deleted: the row stays so old reactions still name it (as `:name:` text)
  deleted_at TEXT
);
CREATE UNIQUE INDEX IF NOT EXISTS emojis_name ON emojis (server_id, name) WHERE deleted_at IS NULL;

-- A server's stickers (issue 50): the image is DATA_DIR/stickers/<id>.webp (src/parts/community/stickers.ts);
-- a deleted one keeps its row (deleted_at) for the messages that carried it.
CREATE TABLE IF NOT EXISTS stickers (
  id          TEXT PRIMARY KEY,
  server_id   TEXT NOT NULL REFERENCES servers (id) ON DELETE CASCADE,
  name        TEXT NOT NULL,
  description TEXT NOT NULL,
  tags        TEXT NOT NULL,
  animated    INTEGER NOT NULL CHECK (animated IN (0, 1)),
  creator_id  TEXT NOT NULL REFERENCES users (id),
  created_at  TEXT NOT NULL,
  deleted_at  TEXT
);
CREATE INDEX IF NOT EXISTS stickers_by_server ON stickers (server_id);

-- The stickers a message carries (at most 3), in order.
CREATE TABLE IF NOT EXISTS message_stickers (
  message_seq INTEGER NOT NULL REFERENCES messages (seq) ON DELETE CASCADE,
  position    INTEGER NOT NULL,
  sticker_id  TEXT NOT NULL REFERENCES stickers (id),
  PRIMARY KEY (message_seq, position)
) WITHOUT ROWID;

-- A message's poll (issue 50; src/parts/messages/polls.ts): its answers as JSON [{answer_id, text,
-- emoji}]. Once ended (expired, or ended early by its author) `results` holds the frozen counts.
CREATE TABLE IF NOT EXISTS polls (
  message_seq       INTEGER PRIMARY KEY REFERENCES messages (seq) ON DELETE CASCADE,
  question          TEXT NOT NULL,
  answers           TEXT NOT NULL,
  allow_multiselect INTEGER NOT NULL CHECK (allow_multiselect IN (0, 1)),
  expires_at        TEXT NOT NULL,
  ended_at          TEXT,
  results           TEXT
);
CREATE INDEX IF NOT EXISTS polls_open ON polls (expires_at) WHERE ended_at IS NULL;

CREATE TABLE IF NOT EXISTS poll_votes (
  message_seq INTEGER NOT NULL REFERENCES polls (message_seq) ON DELETE CASCADE,
  answer_id   TEXT NOT NULL,
  user_id     TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  created_at  TEXT NOT NULL,
  PRIMARY KEY (message_seq, answer_id, user_id)
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS reactions (
  message_seq INTEGER NOT NULL REFERENCES messages (seq) ON DELETE CASCADE,
  emoji       TEXT NOT NULL,
  user_id     TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  created_at  TEXT NOT NULL,
  PRIMARY KEY (message_seq, emoji, user_id)
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS attachments (
  id           TEXT PRIMARY KEY,
  message_seq  INTEGER NOT NULL REFERENCES messages (seq) ON DELETE CASCADE,
  name         TEXT NOT NULL,
  content_type TEXT NOT NULL,
  size         INTEGER NOT NULL,
  preview_kind TEXT NOT NULL CHECK (preview_kind IN ('code', 'image', 'audio', 'video')),
  position     INTEGER NOT NULL,
  created_at   TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS attachments_by_message ON attachments (message_seq, position);

-- Email tokens are stored only as SHA-256 hashes; the link carries the token itself.
CREATE TABLE IF NOT EXISTS email_tokens (
  token_hash TEXT PRIMARY KEY,
  user_id    TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  purpose    TEXT NOT NULL CHECK (purpose IN ('verify', 'reset')),
  email      TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS email_tokens_by_user ON email_tokens (user_id, purpose);

CREATE TABLE IF NOT EXISTS warnings (
  id         TEXT PRIMARY KEY,
  user_id    TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  issued_by  TEXT NOT NULL REFERENCES users (id),
  reason     TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS warnings_by_user ON warnings (user_id, created_at);

-- A report keeps a JSON snapshot of its target, taken when filed, so deletions and edits
-- cannot hide what was reported. target is not a foreign key for the same reason.
CREATE TABLE IF NOT EXISTS reports (
  id          TEXT PRIMARY KEY,
  reporter_id TEXT NOT NULL REFERENCES users (id),
  type        TEXT NOT NULL CHECK (type IN ('user', 'server', 'server_message', 'conversation_message')),
  target      TEXT NOT NULL,
  reason      TEXT NOT NULL,
  snapshot    TEXT NOT NULL,
  status      TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'resolved')),
  created_at  TEXT NOT NULL,
  updated_at  TEXT,
  updated_by  TEXT REFERENCES users (id)
);
CREATE INDEX IF NOT EXISTS reports_queue ON reports (status, created_at);

-- Imports from Discord (src/parts/import/). An import: a DiscordChatExporter export checked (its
-- dry run kept as plan), then brought into a new server. Re-running an export of the same Discord
-- server (guild_id) by the owner of the server it went into appends to that server.
CREATE TABLE IF NOT EXISTS imports (
  id          TEXT PRIMARY KEY,
  owner_id    TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  guild_id    TEXT NOT NULL,
  server_name TEXT NOT NULL,
  -- the server it went into, once it exists
  server_id   TEXT REFERENCES servers (id) ON DELETE CASCADE,
  -- the uploaded zip under DATA_DIR/imports/ (NULL from the CLI, which reads in place)
  upload      TEXT,
  -- interrupted: a CLI import whose process ended mid-way (kill -9); the same command resumes it
  status      TEXT NOT NULL CHECK (status IN ('checked', 'running', 'interrupted', 'done', 'failed')),
  -- the dry run's report (JSON)
  plan        TEXT NOT NULL,
  -- messages brought so far, of total
  done        INTEGER NOT NULL DEFAULT 0,
  total       INTEGER NOT NULL DEFAULT 0,
  error       TEXT,
  -- 1: a person may claim their placeholder with their Discord data package (which anyone can forge)
  package_claims INTEGER NOT NULL DEFAULT 0,
  -- system lines (joins, pins): 'lines' in italics, or 'skip'; kept so a resumed import does as asked
  system      TEXT NOT NULL DEFAULT 'lines' CHECK (system IN ('lines', 'skip')),
  created_at  TEXT NOT NULL,
  finished_at TEXT,
  -- the process running it (the server's, or a CLI's), while it runs
  runner_pid  INTEGER,
  -- what came across of custom emoji, stickers and polls and what stayed text (JSON lines), once done
  report      TEXT
);
CREATE INDEX IF NOT EXISTS imports_by_owner ON imports (owner_id, created_at);
CREATE INDEX IF NOT EXISTS imports_by_guild ON imports (guild_id);
-- The lock of an import: one running import of a Discord server into one owner's server at a time
-- (two at once would each make a server, or write every message twice).
CREATE UNIQUE INDEX IF NOT EXISTS imports_one_running ON imports (guild_id, owner_id) WHERE status = 'running';

-- What a Discord role, category and channel became, per server; for a channel, the newest Discord
-- message brought (an import resumes, and a newer export appends, after it).
CREATE TABLE IF NOT EXISTS import_map (
  server_id       TEXT NOT NULL REFERENCES servers (id) ON DELETE CASCADE,
  kind            TEXT NOT NULL CHECK (kind IN ('role', 'category', 'channel')),
  discord_id      TEXT NOT NULL,
  local_id        TEXT NOT NULL,
  last_message_id TEXT,
  PRIMARY KEY (server_id, kind, discord_id)
) WITHOUT ROWID;

-- The placeholder account of each person an import names (users.imported = 1), and its claim: a
-- one-time code the owner hands over; claimed_by the account the history moved to. A person has one
-- unclaimed placeholder per server at most: what a later import brings of someone who claimed goes
-- to a new one (never to the claimer's account), which they may claim again.
CREATE TABLE IF NOT EXISTS imported_people (
  user_id      TEXT PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
  server_id    TEXT NOT NULL REFERENCES servers (id) ON DELETE CASCADE,
  discord_id   TEXT NOT NULL,
  discord_name TEXT NOT NULL,
  -- as the export had it ('0000' or a four-digit tag), for the way out; NULL when imported before it was kept
  discord_discriminator TEXT,
  claim_code   TEXT NOT NULL UNIQUE,
  claimed_by   TEXT REFERENCES users (id) ON DELETE SET NULL,
  claimed_at   TEXT,
  -- the claimer gave the messages back to the placeholder, now nameless (a later import keeps them there)
  hidden_at    TEXT
);
CREATE UNIQUE INDEX IF NOT EXISTS imported_people_unclaimed ON imported_people (server_id, discord_id) WHERE claimed_at IS NULL;
CREATE INDEX IF NOT EXISTS imported_people_by_discord_id ON imported_people (discord_id, server_id);
CREATE INDEX IF NOT EXISTS imported_people_by_claimer ON imported_people (claimed_by);
-- A placeholder goes with its server (its messages went with the server's channels first).
CREATE TRIGGER IF NOT EXISTS imported_people_deleted AFTER DELETE ON imported_people
BEGIN DELETE FROM users WHERE id = old.user_id AND imported = 1; END;

-- Each imported message's Discord id (replies find their target by it; the export writes it back).
CREATE TABLE IF NOT EXISTS imported_messages (
  seq        INTEGER PRIMARY KEY REFERENCES messages (seq) ON DELETE CASCADE,
  server_id  TEXT NOT NULL,
  discord_id TEXT NOT NULL,
  -- its Discord type when not Default or Reply (a system line: GuildMemberJoin...), for the way out
  discord_type TEXT,
  UNIQUE (server_id, discord_id)
);

-- The custom emoji an import saw, with their Discord ids, so that the way out writes them as they
-- came: `emoji` is a reaction's `:name:` when the export held no image of it, or the id of the
-- server's emoji the import made of its image (issue 50; a later import uses it again).
CREATE TABLE IF NOT EXISTS imported_emoji (
  server_id    TEXT NOT NULL REFERENCES servers (id) ON DELETE CASCADE,
  emoji        TEXT NOT NULL,
  discord_id   TEXT NOT NULL,
  discord_name TEXT NOT NULL,
  animated     INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (server_id, emoji)
) WITHOUT ROWID;

-- The stickers an import brought (issue 50), by their Discord id: a later import of the same
-- Discord server uses them again rather than making them twice (custom emoji: imported_emoji).
CREATE TABLE IF NOT EXISTS imported_stickers (
  server_id  TEXT NOT NULL REFERENCES servers (id) ON DELETE CASCADE,
  discord_id TEXT NOT NULL,
  sticker_id TEXT NOT NULL REFERENCES stickers (id) ON DELETE CASCADE,
  PRIMARY KEY (server_id, discord_id)
) WITHOUT ROWID;

-- Reactions an export counted without naming who reacted: counted, attributed to no one.
CREATE TABLE IF NOT EXISTS reaction_extras (
  message_seq INTEGER NOT NULL REFERENCES messages (seq) ON DELETE CASCADE,
  emoji       TEXT NOT NULL,
  extra       INTEGER NOT NULL CHECK (extra > 0),
  PRIMARY KEY (message_seq, emoji)
) WITHOUT ROWID;

-- Notification settings (docs/api.md "Notifications"): a user's choice for a server, a channel
-- (over its server's) or a conversation. No row: the default (all messages, nothing muted).
CREATE TABLE IF NOT EXISTS notification_settings (
  user_id           TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  target_id         TEXT NOT NULL,
  target_kind       TEXT NOT NULL CHECK (target_kind IN ('server', 'channel', 'conversation')),
  level             TEXT NOT NULL CHECK (level IN ('all', 'mentions', 'nothing')),
  muted_until       TEXT,
  suppress_everyone INTEGER NOT NULL DEFAULT 0,
  suppress_roles    INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (user_id, target_id)
) WITHOUT ROWID;
-- A setting goes with what it is about.
CREATE TRIGGER IF NOT EXISTS notification_settings_server_gone AFTER DELETE ON servers
BEGIN DELETE FROM notification_settings WHERE target_id = old.id; END;
CREATE TRIGGER IF NOT EXISTS notification_settings_channel_gone AFTER DELETE ON channels
BEGIN DELETE FROM notification_settings WHERE target_id = old.id; END;
CREATE TRIGGER IF NOT EXISTS notification_settings_conversation_gone AFTER DELETE ON conversations
BEGIN DELETE FROM notification_settings WHERE target_id = old.id; END;

-- Web Push subscriptions (docs/api.md "Push notifications"): one per browser that asked, tied to
-- the session that made it (and its remembered device): they end together.
CREATE TABLE IF NOT EXISTS push_subscriptions (
  id         TEXT PRIMARY KEY,
  user_id    TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  endpoint   TEXT NOT NULL UNIQUE,
  p256dh     TEXT NOT NULL,
  auth       TEXT NOT NULL,
  session_id TEXT NOT NULL,
  device_id  TEXT REFERENCES devices (id) ON DELETE CASCADE,
  show_text  INTEGER NOT NULL DEFAULT 0,
  user_agent TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS push_subscriptions_by_user ON push_subscriptions (user_id);
CREATE INDEX IF NOT EXISTS push_subscriptions_by_session ON push_subscriptions (session_id);
CREATE INDEX IF NOT EXISTS push_subscriptions_by_device ON push_subscriptions (device_id);

-- Incoming webhooks: a URL with a secret token that posts into one channel as the webhook
-- (src/parts/integrations/webhooks.ts). Its messages' author is a users row of its own (bot = 2),
-- which stays when the webhook is deleted, so its messages keep their author.
CREATE TABLE IF NOT EXISTS webhooks (
  id            TEXT PRIMARY KEY,
  server_id     TEXT NOT NULL REFERENCES servers (id) ON DELETE CASCADE,
  channel_id    TEXT NOT NULL REFERENCES channels (id) ON DELETE CASCADE,
  user_id       TEXT NOT NULL REFERENCES users (id),
  name          TEXT NOT NULL,
  -- SHA-256 of the token in its URL
  token_hash    TEXT NOT NULL,
  -- the secret GitHub signs its deliveries with, encrypted with the data directory's key; NULL: none
  github_secret TEXT,
  created_by    TEXT NOT NULL REFERENCES users (id),
  created_at    TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS webhooks_by_channel ON webhooks (channel_id);
CREATE INDEX IF NOT EXISTS webhooks_by_server ON webhooks (server_id);
CREATE INDEX IF NOT EXISTS users_by_bot_owner ON users (bot_owner_id) WHERE bot_owner_id IS NOT NULL;
