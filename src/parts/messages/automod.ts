import crypto from 'node:crypto';
import { logFailure } from '../../core/callbacks';
import { type Clock, iso } from '../../core/clock';
import type { DB } from '../../core/db';
import { type Embed, isObject } from '../../core/embed';
import { badRequest, forbidden, notFound } from '../../core/http/errors';
import { isUuid } from '../../core/http/router';
import type { Body, Container, Log, User } from '../../core/types';
import { bool, integer, oneOf, stringArray, text } from '../../core/validate';
import {
  ACTION_TYPES,
  type Action,
  type AutomodRule,
  MAX_ALLOW_LIST,
  MAX_CUSTOM_MESSAGE_CHARS,
  MAX_EXEMPT_CHANNELS,
  MAX_EXEMPT_ROLES,
  MAX_KEYWORDS,
  MAX_KEYWORD_CHARS,
  MAX_MENTION_LIMIT,
  MAX_RULES_OF_TYPE,
  MAX_RULE_NAME_CHARS,
  SPAM_BURST_MESSAGES,
  SPAM_BURST_MS,
  SPAM_SAME_CHANNELS,
  SPAM_WINDOW_MS,
  TRIGGER_TYPES,
  type Trigger,
  distinctMentions,
  hasDiscordInvite,
  inviteTokenCandidates,
  linkHosts,
  withinDomain,
} from '../../rules/automod';
import { type KeywordMatcher, compileKeywords } from '../../rules/keyword-matcher';
import type { Permissions } from '../../rules/permissions';
import { VIEW } from '../../rules/channel-permissions';
import type { AuditLog } from '../community/audit';
import type { Directory } from '../community/directory';
import type { Members } from '../community/members';
import type { Hub } from '../delivery/hub';
import type { MessageStore } from './message-store';

/** Shortest and longest timeout an AutoMod rule gives (as a moderator's: src/api/community.ts). */
const MIN_TIMEOUT_SECONDS = 60;
const MAX_TIMEOUT_SECONDS = 2_419_200;

/** Who is writing what, where: what the rules look at. */
export interface Said {
  author: User;
  /** A server channel (AutoMod is a server's; a conversation has none). */
  container: Extract<Container, { kind: 'channel' }>;
  /** A webhook's message: the rules that apply to webhooks only, and no timeout. */
  webhook: boolean;
  content: string;
  /** An edit: the spam trigger does not look at it (it is not a new message). */
  edit: boolean;
}

/** What the rules decided of a message they let through: their alerts and timeouts, once it is written. */
export interface Screened {
  written(messageId: string): void;
}

const NOTHING: Screened = { written: () => {} };

/**
 * AutoMod (issue 53): a server's rules (the one owner of automod_rules rows) and their judgement
 * of each message before it is written (src/parts/messages/posting.ts asks `screen`).
 *
 * A rule's keywords are compiled into one automaton when the rule changes (the server's compiled
 * rules are dropped on any change and built again at the next message), so a message costs one
 * pass over its text per keyword rule whatever the number of keywords.
 */
export interface Automod {
  list(serverId: string): AutomodRule[];
  create(serverId: string, actor: User, body: Body): AutomodRule;
  update(serverId: string, ruleId: string, actor: User, body: Body): AutomodRule;
  remove(serverId: string, ruleId: string, actor: User): void;
  /**
   * Runs the server's rules on a message about to be written. A rule that blocks it: its alerts
   * and timeouts are done, audited, and a 403 carries the block's reason. Otherwise, what the
   * matched rules do once the message is written (its id in the alert).
   */
  screen(said: Said): Screened;
}

export interface AutomodParts {
  db: DB;
  clock: Clock;
  log: Log;
  perms: Permissions;
  directory: Directory;
  members: Members;
  audit: AuditLog;
  hub: Hub;
  messages: MessageStore;
  /** The author of a server's alerts (an account of its own, never signed in: src/app.ts makes it). */
  alertAuthor(serverId: string): User;
}

interface Row {
  id: string;
  server_id: string;
  name: string;
  enabled: number;
  trigger: string;
  actions: string;
  exempt_role_ids: string;
  exempt_channel_ids: string;
  creator_id: string;
  created_at: string;
}

/** A rule ready to judge: its keywords compiled. */
interface Compiled {
  rule: AutomodRule;
  keywords: KeywordMatcher | null;
}

interface Hit {
  rule: AutomodRule;
  /** What set it off, for the alert and the audit entry (a keyword, a link's host, "5 mentions"). */
  cause: string;
}

const toRule = (r: Row): AutomodRule => ({
  id: r.id,
  server_id: r.server_id,
  name: r.name,
  enabled: r.enabled === 1,
  trigger: JSON.parse(r.trigger) as Trigger,
  actions: JSON.parse(r.actions) as Action[],
  exempt_role_ids: JSON.parse(r.exempt_role_ids) as string[],
  exempt_channel_ids: JSON.parse(r.exempt_channel_ids) as string[],
  creator_id: r.creator_id,
  created_at: r.created_at,
});

/** A keyword as Discord takes one: 1 to 60 characters, `*` only at either end, no line breaks. */
function checkKeyword(key: string, word: string): string {
  const value = word.trim();
  if (value.replaceAll('*', '').length === 0) throw badRequest(`${key}: a keyword needs a letter or digit besides '*'`);
  if ([...value].length > MAX_KEYWORD_CHARS) throw badRequest(`${key}: each keyword is at most ${MAX_KEYWORD_CHARS} characters`);
  if (value.slice(1, -1).includes('*'))
    throw badRequest(`${key}: '*' stands only at the start or the end of a keyword (${JSON.stringify(value.slice(0, 60))})`);
  if (/[\u0000-\u001f\u007f]/.test(value)) throw badRequest(`${key}: a keyword has no control characters`);
  return value;
}

const DOMAIN = /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/;

function readTrigger(value: unknown): Trigger {
  if (!isObject(value)) throw badRequest('trigger must be an object with a type');
  const type = oneOf(value, 'type', TRIGGER_TYPES);
  const list = (key: string, max: number, required: boolean) =>
    value[key] === undefined && !required ? [] : [...new Set(stringArray(value, key, required ? 1 : 0, max).map((w) => checkKeyword(`trigger.${key}`, w)))];
  switch (type) {
    case 'keyword':
      if (value.keyword_filter === undefined) throw badRequest('trigger.keyword_filter: a keyword rule needs 1 to 1000 keywords');
      return { type, keyword_filter: list('keyword_filter', MAX_KEYWORDS, true), allow_list: list('allow_list', MAX_ALLOW_LIST, false) };
    case 'mention_spam':
      return { type, mention_total_limit: integer(value, 'mention_total_limit', 1, MAX_MENTION_LIMIT) };
    case 'links': {
      const domains = value.allow_list === undefined ? [] : stringArray(value, 'allow_list', 0, MAX_ALLOW_LIST);
      for (const d of domains)
        if (!DOMAIN.test(d.toLowerCase())) throw badRequest(`trigger.allow_list: ${JSON.stringify(d.slice(0, 60))} is not a domain name (example.com)`);
      return { type, allow_list: [...new Set(domains.map((d) => d.toLowerCase()))] };
    }
    default:
      return { type };
  }
}

/** How many servers' compiled rules stay in memory at once (the most recently judged). */
const COMPILED_SERVERS = 64;

export function createAutomod({ db, clock, log, perms, directory, members, audit, hub, messages, alertAuthor }: AutomodParts): Automod {
  const COLUMNS = 'id, server_id, name, enabled, trigger, actions, exempt_role_ids, exempt_channel_ids, creator_id, created_at';
  const rulesOf = db.prepare<[string], Row>(`SELECT ${COLUMNS} FROM automod_rules WHERE server_id = ? ORDER BY created_at, id`);
  const ruleById = db.prepare<[string, string], Row>(`SELECT ${COLUMNS} FROM automod_rules WHERE id = ? AND server_id = ?`);
  const insert = db.prepare(
    `INSERT INTO automod_rules (id, server_id, name, enabled, trigger, actions, exempt_role_ids, exempt_channel_ids, creator_id, created_at)
     VALUES (@id, @server_id, @name, @enabled, @trigger, @actions, @exempt_role_ids, @exempt_channel_ids, @creator_id, @created_at)`,
  );
  const updateRow = db.prepare(
    `UPDATE automod_rules SET name = @name, enabled = @enabled, trigger = @trigger, actions = @actions,
       exempt_role_ids = @exempt_role_ids, exempt_channel_ids = @exempt_channel_ids WHERE id = @id`,
  );
  const deleteRow = db.prepare('DELETE FROM automod_rules WHERE id = ?');
  const roleInServer = db.prepare<[string, string], { id: string }>('SELECT id FROM roles WHERE id = ? AND server_id = ?');
  const inviteServer = db.prepare<[string], string>('SELECT server_id FROM invites WHERE token = ?').pluck();

  /**
   * Each server's enabled rules, compiled; dropped when one of its rules changes, and the least
   * recently judged past COMPILED_SERVERS (six full keyword rules hold about 16 MB: memory stays
   * bounded whoever makes servers; a server dropped is compiled again at its next message).
   */
  const compiled = new Map<string, Compiled[]>();
  const rulesFor = (serverId: string): Compiled[] => {
    let list = compiled.get(serverId);
    if (list) {
      compiled.delete(serverId);
      compiled.set(serverId, list);
    } else {
      list = rulesOf
        .all(serverId)
        .map(toRule)
        .filter((r) => r.enabled)
        .map((rule) => ({ rule, keywords: rule.trigger.type === 'keyword' ? compileKeywords(rule.trigger.keyword_filter, rule.trigger.allow_list) : null }));
      compiled.set(serverId, list);
      if (compiled.size > COMPILED_SERVERS) compiled.delete(compiled.keys().next().value!);
    }
    return list;
  };

  /** What each member sent lately, per server (the spam trigger): time, channel, text. */
  const recent = new Map<string, { at: number; channelId: string; content: string }[]>();
  const SPAM_KEEP_MS = Math.max(SPAM_WINDOW_MS, SPAM_BURST_MS);
  function spamCause(said: Said): string | null {
    const key = `${said.container.serverId}:${said.author.id}`;
    const now = clock.now();
    const list = (recent.get(key) ?? []).filter((m) => now - m.at < SPAM_KEEP_MS);
    list.push({ at: now, channelId: said.container.id, content: said.content.trim().toLowerCase() });
    recent.set(key, list.slice(-50));
    if (recent.size > 100_000) for (const [k, l] of recent) if (now - l[l.length - 1].at > SPAM_KEEP_MS) recent.delete(k);
    const burst = list.filter((m) => now - m.at < SPAM_BURST_MS).length;
    if (burst > SPAM_BURST_MESSAGES) return `${burst} messages in ${SPAM_BURST_MS / 1000} s`;
    const text = list[list.length - 1].content;
    if (text === '') return null;
    const channels = new Set(list.filter((m) => m.content === text && now - m.at < SPAM_WINDOW_MS).map((m) => m.channelId));
    return channels.size >= SPAM_SAME_CHANNELS ? `the same message in ${channels.size} channels` : null;
  }

  /** What in `said` sets off the rule's trigger; null when nothing does. */
  function causeOf({ rule, keywords }: Compiled, said: Said): string | null {
    const t = rule.trigger;
    switch (t.type) {
      case 'keyword': {
        const word = keywords!.find(said.content);
        return word === null ? null : `keyword ${word}`;
      }
      case 'mention_spam': {
        const n = distinctMentions(said.content);
        return n > t.mention_total_limit ? `${n} mentions` : null;
      }
      case 'links': {
        const host = linkHosts(said.content).find((h) => !t.allow_list.some((d) => withinDomain(h, d)));
        return host === undefined ? null : `link to ${host}`;
      }
      case 'invite_links': {
        if (hasDiscordInvite(said.content)) return 'a Discord invite';
        const other = inviteTokenCandidates(said.content).find((token) => {
          const server = inviteServer.get(token);
          return server !== undefined && server !== said.container.serverId;
        });
        return other === undefined ? null : 'an invite to another server';
      }
      case 'spam':
        return null;
    }
  }

  /** The rule's exemptions: its channels (a thread: its parent's too) and its roles. */
  function exempt(rule: AutomodRule, said: Said, roles: () => string[]): boolean {
    const { id, serverId } = said.container;
    const parent = perms.channelRules(serverId)?.parentOf(id);
    if (rule.exempt_channel_ids.includes(id) || (parent && rule.exempt_channel_ids.includes(parent))) return true;
    return rule.exempt_role_ids.length > 0 && roles().some((r) => rule.exempt_role_ids.includes(r));
  }

  /**
   * Who no rule looks at: the owner, full administrators and manage_server holders (Discord
   * exempts Administrator and Manage Server).
   */
  const exemptAuthor = (said: Said): boolean => !said.webhook && perms.holdsInServer(said.author, said.container.serverId, 'manage_server');

  const announceMember = (serverId: string, userId: string) => {
    const member = members.record(serverId, userId);
    if (member) hub.toServer(serverId, { event: 'member_updated', server_id: serverId, member });
  };

  /** The alert card: who, where, what, which rule; the ids the browser's quick actions call with. */
  function alertEmbed(hit: Hit, said: Said, blocked: boolean, messageId: string | null): Embed {
    const channel = directory.channel(said.container.id);
    const content = said.content.length > 3500 ? `${said.content.slice(0, 3500)}…` : said.content;
    return {
      title: `AutoMod ${blocked ? 'blocked' : 'flagged'} a message`,
      description: content || '(no text)',
      color: 0xe0a030,
      fields: [
        { name: 'Author', value: `@${said.author.username}${said.webhook ? ' (webhook)' : ''}`, inline: true },
        { name: 'Channel', value: `#${channel?.name ?? 'unknown'}`, inline: true },
        { name: 'Rule', value: `${hit.rule.name.slice(0, 100)} (${hit.cause.slice(0, 120)})`, inline: false },
      ],
      footer: {
        text: `automod server:${said.container.serverId} user:${said.webhook ? '-' : said.author.id} channel:${said.container.id}${messageId ? ` message:${messageId}` : ''}`,
      },
    };
  }

  /**
   * Does what the matched rules say, each action audited: an alert in the rule's channel (its
   * content is for that channel's viewers: the moderator chose it), a timeout through the
   * members' one path (as a moderator's: member_timeout, announced). The AutoMod account acts.
   */
  async function act(hits: Hit[], said: Said, blocked: boolean, messageId: string | null): Promise<void> {
    const { serverId } = said.container;
    const bot = alertAuthor(serverId);
    const changes = (hit: Hit) => ({ rule_id: hit.rule.id, rule_name: hit.rule.name, channel_id: said.container.id, cause: hit.cause });
    let timedOut = false;
    db.transaction(() => {
      for (const hit of hits) {
        if (blocked && hit.rule.actions.some((a) => a.type === 'block_message')) {
          audit.write({
            serverId,
            action: 'automod_block',
            actorId: bot.id,
            targetId: said.author.id,
            targetKind: 'user',
            reason: `AutoMod: ${hit.rule.name}`,
            changes: changes(hit),
          });
        }
        for (const a of hit.rule.actions) {
          if (a.type !== 'timeout' || said.webhook || timedOut) continue;
          const until = iso(clock.now() + a.duration_seconds * 1000);
          members.setTimeout(serverId, said.author.id, until);
          audit.write({
            serverId,
            action: 'member_timeout',
            actorId: bot.id,
            targetId: said.author.id,
            targetKind: 'user',
            reason: `AutoMod: ${hit.rule.name}`,
            changes: { timeout_until: until },
          });
          timedOut = true;
        }
      }
    })();
    if (timedOut) announceMember(serverId, said.author.id);
    for (const hit of hits) {
      for (const a of hit.rule.actions) {
        if (a.type !== 'send_alert_message') continue;
        const channel = directory.channel(a.channel_id);
        if (!channel || channel.server_id !== serverId) continue;
        const at = { kind: 'channel' as const, id: channel.id, serverId };
        const alert = await messages.create(
          at,
          bot,
          { content: '', replyTo: null, files: [], embeds: [alertEmbed(hit, said, blocked, messageId)] },
          { mayMentionEveryone: false },
        );
        db.transaction(() =>
          audit.write({
            serverId,
            action: 'automod_alert',
            actorId: bot.id,
            targetId: said.author.id,
            targetKind: 'user',
            reason: `AutoMod: ${hit.rule.name}`,
            changes: { ...changes(hit), alert_message_id: alert.id },
          }),
        )();
      }
    }
  }

  /** Refused names, unknown ids: 400 (an alert channel the caller cannot see: 400 too, never a hint of it). */
  function readActions(serverId: string, actor: User, value: unknown): Action[] {
    if (!Array.isArray(value) || value.length < 1 || value.length > ACTION_TYPES.length)
      throw badRequest(`actions must hold 1 to ${ACTION_TYPES.length} actions`);
    const actions = value.map((a): Action => {
      if (!isObject(a)) throw badRequest('each action must be an object with a type');
      const type = oneOf(a, 'type', ACTION_TYPES);
      switch (type) {
        case 'block_message':
          return {
            type,
            custom_message: a.custom_message === undefined || a.custom_message === null ? null : text(a, 'custom_message', { max: MAX_CUSTOM_MESSAGE_CHARS }),
          };
        case 'send_alert_message': {
          if (!isUuid(a.channel_id)) throw badRequest('channel_id must be a UUID');
          const channel = directory.channel(a.channel_id.toLowerCase());
          const sees = channel && channel.server_id === serverId && (perms.channelRules(serverId)?.flags(actor.id, channel.id) ?? 0) & VIEW;
          if (!channel || !sees) throw badRequest('channel_id: no such channel in this server');
          if (channel.type !== 'text') throw badRequest('channel_id: alerts go to a text channel');
          return { type, channel_id: channel.id };
        }
        case 'timeout':
          return { type, duration_seconds: integer(a, 'duration_seconds', MIN_TIMEOUT_SECONDS, MAX_TIMEOUT_SECONDS) };
      }
    });
    if (new Set(actions.map((a) => a.type)).size !== actions.length) throw badRequest('actions: each type of action at most once');
    return actions;
  }

  function readExempt(serverId: string, body: Body, key: 'exempt_role_ids' | 'exempt_channel_ids'): string[] {
    const max = key === 'exempt_role_ids' ? MAX_EXEMPT_ROLES : MAX_EXEMPT_CHANNELS;
    const ids = [...new Set(stringArray(body, key, 0, max).map((id) => id.toLowerCase()))];
    for (const id of ids) {
      const known = isUuid(id) && (key === 'exempt_role_ids' ? !!roleInServer.get(id, serverId) : directory.channel(id)?.server_id === serverId);
      if (!known) throw badRequest(`${key}: ${JSON.stringify(id.slice(0, 40))} is not a ${key === 'exempt_role_ids' ? 'role' : 'channel'} of this server`);
    }
    return ids;
  }

  const rowOf = (r: AutomodRule) => ({
    id: r.id,
    server_id: r.server_id,
    name: r.name,
    enabled: r.enabled ? 1 : 0,
    trigger: JSON.stringify(r.trigger),
    actions: JSON.stringify(r.actions),
    exempt_role_ids: JSON.stringify(r.exempt_role_ids),
    exempt_channel_ids: JSON.stringify(r.exempt_channel_ids),
    creator_id: r.creator_id,
    created_at: r.created_at,
  });
  /** What an audit entry keeps of a rule: its settings, never more than a count of its keywords. */
  const summary = (r: AutomodRule) => ({
    name: r.name,
    enabled: r.enabled,
    trigger_type: r.trigger.type,
    ...(r.trigger.type === 'keyword' ? { keywords: r.trigger.keyword_filter.length } : {}),
    actions: r.actions.map((a) => a.type),
  });

  /** A rule of this server (404 for any other id). */
  const findRule = (serverId: string, ruleId: string): AutomodRule => {
    const row = isUuid(ruleId) ? ruleById.get(ruleId.toLowerCase(), serverId) : undefined;
    if (!row) throw notFound('unknown AutoMod rule');
    return toRule(row);
  };
  /** One change of a rule and its audit entry, together; the server's compiled rules are dropped. */
  function change(
    action: 'automod_rule_create' | 'automod_rule_update' | 'automod_rule_delete',
    actor: User,
    rule: AutomodRule,
    write: () => void,
  ): AutomodRule {
    db.transaction(() => {
      write();
      audit.write({ serverId: rule.server_id, action, actorId: actor.id, targetId: rule.id, targetKind: 'automod_rule', reason: null, changes: summary(rule) });
    })();
    compiled.delete(rule.server_id);
    return rule;
  }

  return {
    list: (serverId) => rulesOf.all(serverId).map(toRule),

    create(serverId, actor, body) {
      const trigger = readTrigger(body.trigger);
      const rule: AutomodRule = {
        id: crypto.randomUUID(),
        server_id: serverId,
        name: text(body, 'name', { max: MAX_RULE_NAME_CHARS }),
        enabled: body.enabled === undefined ? true : bool(body, 'enabled'),
        trigger,
        actions: readActions(serverId, actor, body.actions),
        exempt_role_ids: body.exempt_role_ids === undefined ? [] : readExempt(serverId, body, 'exempt_role_ids'),
        exempt_channel_ids: body.exempt_channel_ids === undefined ? [] : readExempt(serverId, body, 'exempt_channel_ids'),
        creator_id: actor.id,
        created_at: iso(clock.now()),
      };
      return change('automod_rule_create', actor, rule, () => {
        const same = rulesOf.all(serverId).filter((r) => (JSON.parse(r.trigger) as Trigger).type === trigger.type).length;
        const max = MAX_RULES_OF_TYPE[trigger.type];
        if (same >= max) throw badRequest(`a server has at most ${max} ${trigger.type} rule${max === 1 ? '' : 's'}`);
        insert.run(rowOf(rule));
      });
    },

    update(serverId, ruleId, actor, body) {
      const before = findRule(serverId, ruleId);
      const trigger = body.trigger === undefined ? before.trigger : readTrigger(body.trigger);
      if (trigger.type !== before.trigger.type) throw badRequest("trigger.type: a rule's trigger type cannot change (make a new rule)");
      const rule: AutomodRule = {
        ...before,
        name: body.name === undefined ? before.name : text(body, 'name', { max: MAX_RULE_NAME_CHARS }),
        enabled: body.enabled === undefined ? before.enabled : bool(body, 'enabled'),
        trigger,
        actions: body.actions === undefined ? before.actions : readActions(serverId, actor, body.actions),
        exempt_role_ids: body.exempt_role_ids === undefined ? before.exempt_role_ids : readExempt(serverId, body, 'exempt_role_ids'),
        exempt_channel_ids: body.exempt_channel_ids === undefined ? before.exempt_channel_ids : readExempt(serverId, body, 'exempt_channel_ids'),
      };
      return change('automod_rule_update', actor, rule, () => updateRow.run(rowOf(rule)));
    },

    remove(serverId, ruleId, actor) {
      const rule = findRule(serverId, ruleId);
      change('automod_rule_delete', actor, rule, () => deleteRow.run(rule.id));
    },

    screen(said) {
      const rules = rulesFor(said.container.serverId);
      if (rules.length === 0 || exemptAuthor(said)) return NOTHING;
      let roles: string[] | null = null;
      const rolesOf = () => (roles ??= said.webhook ? [] : (directory.roleIdsOf(said.author.id, said.container.serverId).get(said.container.serverId) ?? []));
      const hits: Hit[] = [];
      for (const c of rules) {
        // Spam is a person's (or a bot's) flood of new messages; a webhook's messages are its integration's.
        const cause = c.rule.trigger.type === 'spam' ? (said.webhook || said.edit ? null : spamCause(said)) : causeOf(c, said);
        if (cause !== null && !exempt(c.rule, said, rolesOf)) hits.push({ rule: c.rule, cause });
      }
      if (hits.length === 0) return NOTHING;
      const block = hits.find((h) => h.rule.actions.some((a) => a.type === 'block_message'));
      if (block) {
        act(hits, said, true, null).catch(logFailure(log, 'AutoMod alert'));
        const action = block.rule.actions.find((a) => a.type === 'block_message') as Extract<Action, { type: 'block_message' }>;
        throw forbidden(action.custom_message ?? `Your message was blocked by this server’s AutoMod rule “${block.rule.name}”.`);
      }
      return { written: (messageId) => void act(hits, said, false, messageId).catch(logFailure(log, 'AutoMod alert')) };
    },
  };
}
