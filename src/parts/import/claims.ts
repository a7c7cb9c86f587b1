import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { type Clock, iso } from '../../core/clock';
import type { DB } from '../../core/db';
import { conflict, forbidden, notFound } from '../../core/http/errors';
import type { UserRef } from '../../core/types';
import type { AccountRows } from '../accounts/account-rows';
import type { JoinGate } from '../community/join-rate';
import type { Members } from '../community/members';
import type { Onboarding } from '../community/onboarding';
import type { ChannelTails } from '../messages/channel-tails';
import { createMessageWrites } from '../messages/message-writes';

/**
 * The people of an import and their history (docs/import.md "Claiming"): each person an import
 * named has a placeholder account (src/parts/import/discord-import.ts) and a one-time claim code
 * the owner hands over. A claim moves the placeholder's messages, reactions, mentions, membership
 * and roles to the claimer's account; its messages' text names the claimer where it named the
 * placeholder. A claimer may later hide their imported messages (they go back to the placeholder,
 * now nameless) or erase them. Each is one transaction; the caller announces after it.
 */

export interface ImportedPerson {
  /** The placeholder account. */
  user_id: string;
  username: string;
  display_name: string | null;
  avatar_url: string | null;
  discord_id: string;
  discord_name: string;
  /** The one-time code, until it is used. */
  claim_code: string | null;
  claimed_by: UserRef | null;
  claimed_at: string | null;
  hidden: boolean;
  /** Imported messages held by the placeholder now. */
  messages: number;
}

export interface Claimed {
  server_id: string;
  discord_name: string;
  /** Messages that became the claimer's. */
  messages: number;
}

/** What an erase or a hide touched: for the events, the caches and the files. */
export interface Removed {
  /** Channel id -> its messages that went (the seq tells the hub who may read them: read_history). */
  byChannel: Map<string, { id: string; seq: number }[]>;
  /** Attachment ids of erased messages (their files go after the commit). */
  fileIds: string[];
}

/** A history the user claimed (GET /api/account/claims): what the account page offers to hide or erase. */
export interface MyClaim {
  server_id: string;
  discord_name: string;
  claimed_at: string;
  /** Hidden since: its messages are on a nameless "Former member". */
  hidden: boolean;
}

export interface Claims {
  people(serverId: string): ImportedPerson[];
  /** The histories a user claimed, oldest claim first, in servers they are still in. */
  mine(userId: string): MyClaim[];
  /** The placeholder a code names: 404 unknown, 409 used. */
  byCode(code: string): { userId: string; serverId: string };
  /** Placeholders of a Discord account that may be claimed with its data package (their import allows it), with their servers. */
  byDiscordId(discordId: string): PackageCandidate[];
  /** Remembers, for PACKAGE_CHOICE_MS, the Discord id a data package of this account named. */
  rememberPackage(userId: string, discordId: string): void;
  /** The Discord id this account's data package named in the last PACKAGE_CHOICE_MS, or null. */
  packageOf(userId: string): string | null;
  /** Moves each placeholder's history to the claimer; 403 in a server that banned them. */
  claim(claimerId: string, placeholderIds: string[]): Claimed[];
  /** The claimer's imported messages in a server go back to their placeholder, made nameless. */
  hide(userId: string, serverId: string): Removed;
  /** The claimer's imported messages in a server (theirs or given back) are deleted. */
  erase(userId: string, serverId: string): Removed;
}

/** A placeholder a data package may claim, and where: what the person chooses from. */
export interface PackageCandidate {
  userId: string;
  serverId: string;
  serverName: string;
  discordName: string;
  messages: number;
}

/** How long the Discord id of a data package is remembered for the choice of servers. */
export const PACKAGE_CHOICE_MS = 15 * 60_000;

/** What a hidden placeholder is called. */
export const FORMER_MEMBER = 'Former member';

export interface ClaimsParts {
  db: DB;
  clock: Clock;
  dataDir: string;
  members: Pick<Members, 'add' | 'requireRoom'>;
  /** Paused joins keep claimers out as they keep anyone (the API counts the join after the commit). */
  joinGate: Pick<JoinGate, 'requireOpen' | 'screens'>;
  /** Join-rate protection's `screen`: a claimer coming in during a surge waits in screening too. */
  screening: Pick<Onboarding, 'markPending'>;
  /** The placeholders' rows: made nameless here when hidden. */
  accountRows: Pick<AccountRows, 'anonymize'>;
  /** Told of every channel whose messages changed author or went. */
  tails: Pick<ChannelTails, 'changed'>;
}

export function createClaims({ db, clock, dataDir, members, joinGate, screening, accountRows, tails }: ClaimsParts): Claims {
  const peopleOf = db.prepare<
    [string],
    Omit<ImportedPerson, 'claimed_by' | 'hidden'> & {
      hidden_at: string | null;
      c_id: string | null;
      c_username: string | null;
      c_display_name: string | null;
      c_avatar_url: string | null;
    }
  >(
    `SELECT p.user_id, u.username, u.display_name, u.avatar_url, p.discord_id, p.discord_name,
            CASE WHEN p.claimed_by IS NULL AND p.claimed_at IS NULL THEN p.claim_code END AS claim_code, p.claimed_at, p.hidden_at,
            c.id AS c_id, c.username AS c_username, c.display_name AS c_display_name, c.avatar_url AS c_avatar_url,
            (SELECT COUNT(*) FROM messages m WHERE m.author_id = p.user_id) AS messages
       FROM imported_people p JOIN profiles u ON u.id = p.user_id LEFT JOIN profiles c ON c.id = p.claimed_by
      WHERE p.server_id = ? ORDER BY p.discord_name COLLATE NOCASE, p.discord_id`,
  );
  const personByCode = db.prepare<[string], { user_id: string; server_id: string; claimed_at: string | null }>(
    'SELECT user_id, server_id, claimed_at FROM imported_people WHERE claim_code = ?',
  );
  const personByDiscordId = db.prepare<[string], PackageCandidate>(
    `SELECT p.user_id AS userId, p.server_id AS serverId, s.name AS serverName, p.discord_name AS discordName,
            (SELECT COUNT(*) FROM messages m WHERE m.author_id = p.user_id) AS messages
       FROM imported_people p JOIN servers s ON s.id = p.server_id
      WHERE p.discord_id = ? AND p.claimed_at IS NULL
        AND EXISTS (SELECT 1 FROM imports i WHERE i.server_id = p.server_id AND i.package_claims = 1)
      ORDER BY s.name COLLATE NOCASE, s.id`,
  );
  /** Account id -> the Discord id its data package named, and until when (in memory: a restart forgets). */
  const packages = new Map<string, { discordId: string; until: number }>();
  const personOf = db.prepare<[string], { server_id: string; discord_name: string; claimed_at: string | null }>(
    'SELECT server_id, discord_name, claimed_at FROM imported_people WHERE user_id = ?',
  );
  const banned = db.prepare<[string, string], number>('SELECT 1 FROM bans WHERE server_id = ? AND user_id = ?').pluck();
  const isMember = db.prepare<[string, string], number>('SELECT 1 FROM members WHERE server_id = ? AND user_id = ?').pluck();
  const usernameOf = db.prepare<[string], string>('SELECT username FROM users WHERE id = ?').pluck();
  // The rows of messages are written through the messages area's one writer.
  const writes = createMessageWrites(db);
  // The messages whose text or mentions name the placeholder: found through the mention rows, and
  // the placeholder's own messages (a self-mention has no row).
  const naming = db.prepare<
    [string, string],
    { seq: number; author_id: string; content: string; mentions: string; mention_everyone: number; mention_roles: string | null }
  >(
    `SELECT seq, author_id, content, mentions, mention_everyone, mention_roles FROM messages
      WHERE seq IN (SELECT message_seq FROM message_mentions WHERE user_id = ?) OR (author_id = ? AND mentions IS NOT NULL)`,
  );
  const moveMentions = db.prepare('UPDATE OR IGNORE message_mentions SET user_id = ? WHERE user_id = ?');
  const dropMentions = db.prepare('DELETE FROM message_mentions WHERE user_id = ?');
  const dropOwnMentions = db.prepare('DELETE FROM message_mentions WHERE user_id = ? AND message_seq IN (SELECT seq FROM messages WHERE author_id = ?)');
  const moveReactions = db.prepare('UPDATE OR IGNORE reactions SET user_id = ? WHERE user_id = ?');
  const dropReactions = db.prepare('DELETE FROM reactions WHERE user_id = ?');
  const copyRoles = db.prepare(
    'INSERT OR IGNORE INTO member_roles (server_id, user_id, role_id) SELECT server_id, ?, role_id FROM member_roles WHERE server_id = ? AND user_id = ?',
  );
  const leave = db.prepare('DELETE FROM members WHERE server_id = ? AND user_id = ?');
  const setClaimed = db.prepare('UPDATE imported_people SET claimed_by = ?, claimed_at = ? WHERE user_id = ?');
  // The claimer's imported messages in a server: by them, or by a placeholder they claimed (given back).
  const importedOf = db.prepare<[string, string, string, string], { seq: number; id: string; channel_id: string }>(
    `SELECT m.seq, m.id, m.channel_id FROM imported_messages i JOIN messages m ON m.seq = i.seq
      WHERE i.server_id = ? AND (m.author_id = ? OR m.author_id IN (SELECT user_id FROM imported_people WHERE server_id = ? AND claimed_by = ?))`,
  );
  const claimedIn = db.prepare<[string, string], { user_id: string }>('SELECT user_id FROM imported_people WHERE server_id = ? AND claimed_by = ?');
  const setHidden = db.prepare('UPDATE imported_people SET hidden_at = ? WHERE user_id = ?');
  const claimsOf = db.prepare<[string], { server_id: string; discord_name: string; claimed_at: string; hidden_at: string | null }>(
    `SELECT p.server_id, p.discord_name, p.claimed_at, p.hidden_at FROM imported_people p
      JOIN members m ON m.server_id = p.server_id AND m.user_id = p.claimed_by
      WHERE p.claimed_by = ? ORDER BY p.claimed_at, p.server_id`,
  );
  const channelsOf = db.prepare<[string], string>('SELECT id FROM channels WHERE server_id = ?').pluck();
  const forgetTails = (channelIds: Iterable<string>) => {
    for (const id of channelIds) tails.changed(id);
  };

  /** `@old` (as mentions.ts reads a name) becomes `@new` in a message's text. */
  const renamed = (content: string, from: string, to: string) => content.replace(new RegExp(`(?<![A-Za-z0-9_@.-])@${from}(?![A-Za-z0-9_-])`, 'gi'), `@${to}`);

  const claimOne = (claimerId: string, placeholderId: string, now: string): Claimed => {
    const person = personOf.get(placeholderId);
    if (!person) throw notFound('no such imported person');
    if (person.claimed_at) throw conflict('this history was claimed already');
    const serverId = person.server_id;
    if (banned.get(serverId, claimerId)) throw forbidden('you are banned from the server this history is in');
    if (!isMember.get(serverId, claimerId)) {
      joinGate.requireOpen(serverId, 'claim');
      members.requireRoom(claimerId);
      members.add(serverId, claimerId);
      if (joinGate.screens(serverId)) screening.markPending(serverId, claimerId);
    }
    const from = usernameOf.get(placeholderId)!;
    const to = usernameOf.get(claimerId)!;
    for (const m of naming.all(placeholderId, placeholderId)) {
      const ids = [...new Set((JSON.parse(m.mentions ?? '[]') as string[]).map((id) => (id === placeholderId ? claimerId : id)))];
      // A renaming, not an edit: edited_at stays.
      const roleIds = m.mention_roles === null ? [] : (JSON.parse(m.mention_roles) as string[]);
      writes.setText(m.seq, renamed(m.content, from, to), { userIds: ids, everyone: m.mention_everyone === 1, roleIds }, null);
    }
    const messages = writes.moveAuthor(placeholderId, claimerId);
    moveMentions.run(claimerId, placeholderId);
    dropMentions.run(placeholderId);
    dropOwnMentions.run(claimerId, claimerId);
    moveReactions.run(claimerId, placeholderId);
    dropReactions.run(placeholderId);
    copyRoles.run(claimerId, serverId, placeholderId);
    leave.run(serverId, placeholderId);
    setClaimed.run(claimerId, now, placeholderId);
    return { server_id: serverId, discord_name: person.discord_name, messages };
  };

  const grouped = (rows: { seq: number; id: string; channel_id: string }[]) => {
    const byChannel: Removed['byChannel'] = new Map();
    for (const { channel_id, id, seq } of rows) {
      const list = byChannel.get(channel_id);
      if (list) list.push({ id, seq });
      else byChannel.set(channel_id, [{ id, seq }]);
    }
    return byChannel;
  };

  return {
    people: (serverId) =>
      peopleOf.all(serverId).map(({ hidden_at, c_id, c_username, c_display_name, c_avatar_url, ...row }) => ({
        ...row,
        claimed_by: c_id ? { user_id: c_id, username: c_username!, display_name: c_display_name, avatar_url: c_avatar_url } : null,
        hidden: hidden_at !== null,
      })),

    mine: (userId) => claimsOf.all(userId).map(({ hidden_at, ...row }) => ({ ...row, hidden: hidden_at !== null })),

    byCode(code) {
      const person = personByCode.get(code.trim().toUpperCase());
      if (!person) throw notFound('no such claim code');
      if (person.claimed_at) throw conflict('this claim code was used already');
      return { userId: person.user_id, serverId: person.server_id };
    },

    byDiscordId: (discordId) => personByDiscordId.all(discordId),

    rememberPackage(userId, discordId) {
      const now = clock.now();
      for (const [id, entry] of packages) if (entry.until <= now) packages.delete(id);
      packages.set(userId, { discordId, until: now + PACKAGE_CHOICE_MS });
    },

    packageOf(userId) {
      const entry = packages.get(userId);
      if (!entry || entry.until <= clock.now()) return null;
      return entry.discordId;
    },

    claim(claimerId, placeholderIds) {
      const done = db.transaction(() => placeholderIds.map((id) => claimOne(claimerId, id, iso(clock.now()))))();
      for (const serverId of new Set(done.map((c) => c.server_id))) forgetTails(channelsOf.all(serverId));
      return done;
    },

    hide(userId, serverId) {
      const removed = db.transaction(() => {
        const placeholders = claimedIn.all(serverId, userId).map((r) => r.user_id);
        if (placeholders.length === 0) throw notFound('you have claimed no imported history in this server');
        const rows = importedOf.all(serverId, userId, serverId, userId);
        // One placeholder takes them (a person claims one in a server, or a few: the first).
        const [keeper] = placeholders;
        for (const row of rows) writes.setAuthor(row.seq, keeper);
        for (const id of placeholders) {
          accountRows.anonymize(id, `former-${crypto.randomBytes(6).toString('hex')}`, FORMER_MEMBER);
          setHidden.run(iso(clock.now()), id);
        }
        return { byChannel: grouped(rows), fileIds: [], placeholders };
      })();
      // Their pictures go once nothing names them (usernames are checked ids: a path is built from a UUID).
      for (const id of removed.placeholders) fs.rmSync(path.join(dataDir, 'avatars', `${id}.webp`), { force: true });
      forgetTails(removed.byChannel.keys());
      return removed;
    },

    erase(userId, serverId) {
      const removed = db.transaction(() => {
        if (claimedIn.all(serverId, userId).length === 0) throw notFound('you have claimed no imported history in this server');
        const rows = importedOf.all(serverId, userId, serverId, userId);
        const fileIds: string[] = [];
        for (const row of rows) fileIds.push(...writes.remove(row.seq));
        return { byChannel: grouped(rows), fileIds };
      })();
      forgetTails(removed.byChannel.keys());
      return removed;
    },
  };
}
