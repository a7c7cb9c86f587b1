import crypto from 'node:crypto';
import { type Clock, iso } from '../../core/clock';
import type { DB } from '../../core/db';
import { badRequest, forbidden } from '../../core/http/errors';
import type { User } from '../../core/types';
import { VIEW } from '../../rules/channel-permissions';
import { type Permissions, requireGrantable } from '../../rules/permissions';
import { ONBOARDING_LIMITS } from '../../rules/sizes';
import type { AuditLog } from './audit';
import type { Directory } from './directory';
import type { Members } from './members';

/**
 * Membership screening and onboarding (issue 53, docs/moderation.md "Membership screening and
 * onboarding"): a server's rules, the questions whose answers give roles and point at channels,
 * and the channels shown to everyone first. Whoever joins while it is on is pending (members.add
 * marks them): they read, and may not write, react or type (`requireAccepted`, asked by
 * posting's requireMayWrite) until they accept. Writes run in one transaction with their audit
 * entry; the routes announce after the commit.
 */

export interface OnboardingAnswer {
  id: string;
  title: string;
  role_ids: string[];
  channel_ids: string[];
}

export interface OnboardingQuestion {
  id: string;
  title: string;
  required: boolean;
  single_select: boolean;
  answers: OnboardingAnswer[];
}

export interface OnboardingSettings {
  enabled: boolean;
  rules: string[];
  questions: OnboardingQuestion[];
  default_channel_ids: string[];
}

export interface OnboardingRecord extends OnboardingSettings {
  server_id: string;
  /** Whether the caller is pending in this server now. */
  pending: boolean;
}

/** The answers a member picked, by question id. */
export type Picked = Map<string, string[]>;

export interface Onboarding {
  /** The server's onboarding as `user` may see it: channel ids of channels they do not see are left out. */
  get(user: User, serverId: string): OnboardingRecord;
  /**
   * Replaces the onboarding (the caller holds manage_server): every role and channel must be this
   * server's, every role one the caller may grant (see `requireOnboardingRole`). Turning it off
   * lets every pending member in: who was let in (to announce).
   */
  set(actor: User, serverId: string, settings: OnboardingSettings, reason: string | null): { freed: string[] };
  /**
   * A pending member accepts: required questions answered, one answer to a single-select one;
   * the answers' roles granted (through members.addRole, in the caller's access-changes
   * around); pending ends; audited. Returns the roles given and the channels to show first.
   * Call inside accessChanges.around.
   */
  accept(user: User, serverId: string, picked: Picked): { role_ids: string[]; channel_ids: string[] };
  /** 403 while the user is pending in the server: posting's requireMayWrite asks it. */
  requireAccepted(user: User, serverId: string): void;
  /**
   * Puts a member into screening (join-rate protection, at the join): inside the caller's
   * transaction; the caller announces (member_joined carries `pending`). They accept as anyone
   * pending does, even when the server has no onboarding turned on.
   */
  markPending(serverId: string, userId: string): void;
}

interface Row {
  enabled: number;
  rules: string;
  questions: string;
  default_channel_ids: string;
}

interface RoleRow {
  id: string;
  name: string;
  position: number;
  full_server_admin: number;
  permissions: number;
}

const OFF: OnboardingSettings = { enabled: false, rules: [], questions: [], default_channel_ids: [] };

export function createOnboarding({
  db,
  clock,
  perms,
  members,
  directory,
  audit,
}: {
  db: DB;
  clock: Clock;
  perms: Permissions;
  members: Members;
  directory: Pick<Directory, 'channelsOf'>;
  audit: AuditLog;
}): Onboarding {
  const row = db.prepare<[string], Row>('SELECT enabled, rules, questions, default_channel_ids FROM server_onboarding WHERE server_id = ?');
  const upsert = db.prepare(
    `INSERT INTO server_onboarding (server_id, enabled, rules, questions, default_channel_ids, updated_at) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (server_id) DO UPDATE SET enabled = excluded.enabled, rules = excluded.rules, questions = excluded.questions,
       default_channel_ids = excluded.default_channel_ids, updated_at = excluded.updated_at`,
  );
  const roleById = db.prepare<[string, string], RoleRow>('SELECT id, name, position, full_server_admin, permissions FROM roles WHERE id = ? AND server_id = ?');

  /** The stored onboarding, roles and channels deleted since left out. */
  const stored = (serverId: string): OnboardingSettings => {
    const r = row.get(serverId);
    if (!r) return OFF;
    const channels = new Set(directory.channelsOf(serverId).map((c) => c.id));
    const keepChannels = (ids: string[]) => ids.filter((id) => channels.has(id));
    const keepRoles = (ids: string[]) => ids.filter((id) => roleById.get(id, serverId));
    return {
      enabled: r.enabled === 1,
      rules: JSON.parse(r.rules) as string[],
      questions: (JSON.parse(r.questions) as OnboardingQuestion[]).map((q) => ({
        ...q,
        answers: q.answers.map((a) => ({ ...a, role_ids: keepRoles(a.role_ids), channel_ids: keepChannels(a.channel_ids) })),
      })),
      default_channel_ids: keepChannels(JSON.parse(r.default_channel_ids) as string[]),
    };
  };

  /**
   * A role an answer may give, set by `actor`: one they may change (below their highest role,
   * src/rules/permissions.ts isAboveRole), giving no flag they lack, and never one with powers
   * or one above a role with powers (src/rules/permissions.ts strangerRoleProblem, as for a role
   * members take themselves), whoever sets it: screening hands its roles to strangers who clicked
   * an answer.
   */
  function requireOnboardingRole(actor: User, serverId: string, roleId: string): void {
    const role = roleById.get(roleId, serverId);
    if (!role) throw badRequest(`role_ids: no role ${JSON.stringify(roleId.slice(0, 40))} in this server`);
    const problem = perms.strangerRoleProblem(serverId, role);
    if (problem === 'power') throw forbidden(`an answer cannot give the role ${role.name}: it holds an administrator's or a moderator's power`);
    if (!perms.isAboveRole(actor.id, serverId, role)) throw forbidden(`an answer cannot give the role ${role.name}: it is not below your highest role`);
    if (problem === 'above') throw forbidden(`an answer cannot give the role ${role.name}: it sits above a moderator role (move it below them first)`);
    requireGrantable(perms.channelRules(serverId)?.serverFlags(actor.id) ?? 0, role.permissions);
  }

  return {
    get(user, serverId) {
      perms.serverAccess(user, serverId);
      const settings = stored(serverId);
      const rules = perms.channelRules(serverId);
      // What a member is told of channels is what they see: a hidden channel's id stays hidden.
      const sees = (ids: string[]) => ids.filter((id) => rules && (rules.flags(user.id, id) & VIEW) !== 0);
      return {
        server_id: serverId,
        ...settings,
        questions: settings.questions.map((q) => ({ ...q, answers: q.answers.map((a) => ({ ...a, channel_ids: sees(a.channel_ids) })) })),
        default_channel_ids: sees(settings.default_channel_ids),
        pending: members.isPending(serverId, user.id),
      };
    },

    set(actor, serverId, settings, reason) {
      const rules = perms.channelRules(serverId);
      const listed = new Set(directory.channelsOf(serverId).map((c) => c.id));
      const requireChannel = (id: string, field: string) => {
        if (!listed.has(id) || !rules || (rules.flags(actor.id, id) & VIEW) === 0) {
          throw badRequest(`${field}: no channel ${JSON.stringify(id.slice(0, 40))} in this server`);
        }
      };
      for (const id of settings.default_channel_ids) requireChannel(id, 'default_channel_ids');
      for (const q of settings.questions) {
        for (const a of q.answers) {
          for (const id of a.channel_ids) requireChannel(id, 'channel_ids');
          for (const id of a.role_ids) requireOnboardingRole(actor, serverId, id);
        }
      }
      return db.transaction(() => {
        const before = stored(serverId);
        upsert.run(
          serverId,
          settings.enabled ? 1 : 0,
          JSON.stringify(settings.rules),
          JSON.stringify(settings.questions),
          JSON.stringify(settings.default_channel_ids),
          iso(clock.now()),
        );
        // Screening off: nobody waits any more (join-rate protection's too).
        const freed = settings.enabled ? [] : members.clearPending(serverId);
        audit.write({
          serverId,
          action: 'onboarding_update',
          actorId: actor.id,
          targetId: serverId,
          targetKind: 'server',
          reason,
          changes: {
            enabled: { from: before.enabled, to: settings.enabled },
            rules: { from: before.rules.length, to: settings.rules.length },
            questions: { from: before.questions.length, to: settings.questions.length },
            ...(freed.length > 0 ? { let_in: freed.length } : {}),
          },
        });
        return { freed };
      })();
    },

    accept(user, serverId, picked) {
      perms.serverAccess(user, serverId);
      const settings = stored(serverId);
      const byId = new Map(settings.questions.map((q) => [q.id, q]));
      for (const id of picked.keys()) if (!byId.has(id)) throw badRequest(`answers: no question ${JSON.stringify(id.slice(0, 40))}`);
      const chosen: OnboardingAnswer[] = [];
      for (const q of settings.questions) {
        const ids = [...new Set(picked.get(q.id) ?? [])];
        if (q.required && ids.length === 0) throw badRequest(`answers: the question "${q.title}" needs an answer`);
        if (q.single_select && ids.length > 1) throw badRequest(`answers: the question "${q.title}" takes one answer`);
        for (const id of ids) {
          const answer = q.answers.find((a) => a.id === id);
          if (!answer) throw badRequest(`answers: no answer ${JSON.stringify(id.slice(0, 40))} to the question "${q.title}"`);
          chosen.push(answer);
        }
      }
      if (!members.isPending(serverId, user.id)) throw badRequest('you are not waiting to accept this server’s rules');
      // Checked again as the roles go out: one that gained a power since is not given.
      const roleIds = [...new Set(chosen.flatMap((a) => a.role_ids))].filter((id) => {
        const role = roleById.get(id, serverId);
        return role && perms.strangerRoleProblem(serverId, role) === null;
      });
      db.transaction(() => {
        for (const id of roleIds) members.addRole(serverId, user.id, id);
        members.setPending(serverId, user.id, false);
        audit.write({
          serverId,
          action: 'onboarding_accept',
          actorId: user.id,
          targetId: user.id,
          targetKind: 'user',
          reason: null,
          changes: { answers: chosen.map((a) => a.title), role_ids: roleIds },
        });
      })();
      return { role_ids: roleIds, channel_ids: [...new Set([...settings.default_channel_ids, ...chosen.flatMap((a) => a.channel_ids)])] };
    },

    requireAccepted(user, serverId) {
      if (members.isPending(serverId, user.id)) {
        throw forbidden("accept the server's rules first: open the server to read them and accept");
      }
    },

    markPending(serverId, userId) {
      members.setPending(serverId, userId, true);
    },
  };
}

/** A client's id for a question or an answer, or a new one. */
const idOf = (value: unknown, field: string): string => {
  if (value === undefined) return crypto.randomUUID();
  if (typeof value !== 'string' || !/^[A-Za-z0-9_-]{1,36}$/.test(value)) throw badRequest(`${field} must be 1 to 36 letters, digits, - or _`);
  return value;
};

const list = (value: unknown, field: string, max: number): unknown[] => {
  if (!Array.isArray(value)) throw badRequest(`${field} must be an array`);
  if (value.length > max) throw badRequest(`${field} must hold at most ${max} entries`);
  return value;
};

const objectOf = (value: unknown, field: string): Record<string, unknown> => {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw badRequest(`${field} must be an object`);
  return value as Record<string, unknown>;
};

const textOf = (value: unknown, field: string, max: number): string => {
  if (typeof value !== 'string') throw badRequest(`${field} must be a string`);
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(value)) throw badRequest(`${field} contains control characters`);
  const trimmed = value.trim();
  if (trimmed.length === 0) throw badRequest(`${field} must not be empty`);
  if ([...value].length > max) throw badRequest(`${field} must be at most ${max} characters`);
  return trimmed;
};

const flagOf = (value: unknown, field: string): boolean => {
  if (value === undefined) return false;
  if (typeof value !== 'boolean') throw badRequest(`${field} must be true or false`);
  return value;
};

const uuids = (value: unknown, field: string, max: number): string[] => {
  if (value === undefined) return [];
  const ids = list(value, field, max);
  for (const id of ids)
    if (typeof id !== 'string' || !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) throw badRequest(`${field} must hold UUIDs`);
  return [...new Set((ids as string[]).map((id) => id.toLowerCase()))];
};

const unique = (ids: string[], field: string) => {
  if (new Set(ids).size !== ids.length) throw badRequest(`${field}: two share one id`);
};

/** A PUT body read as an onboarding (400 naming the field); what it names is checked by `set`. */
export function checkOnboarding(body: Record<string, unknown>): OnboardingSettings {
  const L = ONBOARDING_LIMITS;
  if (typeof body.enabled !== 'boolean') throw badRequest('enabled must be true or false');
  const rules = list(body.rules ?? [], 'rules', L.rules).map((r, i) => textOf(r, `rules[${i}]`, L.ruleChars));
  const questions = list(body.questions ?? [], 'questions', L.questions).map((raw, i): OnboardingQuestion => {
    const q = objectOf(raw, `questions[${i}]`);
    const answers = list(q.answers, `questions[${i}].answers`, L.answers).map((rawAnswer, j): OnboardingAnswer => {
      const a = objectOf(rawAnswer, `questions[${i}].answers[${j}]`);
      const at = `questions[${i}].answers[${j}]`;
      return {
        id: idOf(a.id, `${at}.id`),
        title: textOf(a.title, `${at}.title`, L.answerChars),
        role_ids: uuids(a.role_ids, `${at}.role_ids`, L.answerTargets),
        channel_ids: uuids(a.channel_ids, `${at}.channel_ids`, L.answerTargets),
      };
    });
    if (answers.length === 0) throw badRequest(`questions[${i}].answers must hold at least one answer`);
    unique(
      answers.map((a) => a.id),
      `questions[${i}].answers`,
    );
    return {
      id: idOf(q.id, `questions[${i}].id`),
      title: textOf(q.title, `questions[${i}].title`, L.questionChars),
      required: flagOf(q.required, `questions[${i}].required`),
      single_select: flagOf(q.single_select, `questions[${i}].single_select`),
      answers,
    };
  });
  unique(
    questions.map((q) => q.id),
    'questions',
  );
  const settings = { enabled: body.enabled, rules, questions, default_channel_ids: uuids(body.default_channel_ids, 'default_channel_ids', L.defaultChannels) };
  if (settings.enabled && rules.length === 0 && questions.length === 0) throw badRequest('an onboarding turned on needs at least one rule or question');
  return settings;
}

/** An accept body: `{answers: {question_id: [answer_id...]}}` (answers may be left out: none). */
export function checkPicked(body: Record<string, unknown>): Picked {
  if (body.answers === undefined) return new Map();
  const answers = objectOf(body.answers, 'answers');
  const entries = Object.entries(answers);
  if (entries.length > ONBOARDING_LIMITS.questions) throw badRequest(`answers must name at most ${ONBOARDING_LIMITS.questions} questions`);
  const picked: Picked = new Map();
  for (const [id, ids] of entries) {
    const chosen = list(ids, `answers.${id.slice(0, 40)}`, ONBOARDING_LIMITS.answers);
    if (chosen.some((a) => typeof a !== 'string')) throw badRequest(`answers.${id.slice(0, 40)} must hold answer ids`);
    picked.set(id, chosen as string[]);
  }
  return picked;
}
