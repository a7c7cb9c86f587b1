import crypto from 'node:crypto';
import { iso } from '../core/clock';
import { badRequest, forbidden, notFound } from '../core/http/errors';
import { HANDLED, created, json, noContent, streamJsonArray } from '../core/http/respond';
import { splitUrl } from '../core/http/router';
import type { Services } from '../parts/services';
import { SUSPENDED } from '../rules/standing';
import { readsEditHistory } from '../rules/permissions';
import type { MessageVersion } from '../parts/messages/message-store';
import { type Ctx, type Reply, type Route, type User, reachedWhole } from '../core/types';
import { auditReason, integer, limitParam, oneOf, text, uuid } from '../core/validate';

type Deps = Pick<Services, 'db' | 'clock' | 'users' | 'perms' | 'messages' | 'limits' | 'audit' | 'directory' | 'accountChanges'>;

/** Messages shown on each side of a reported one. */
export const REPORT_CONTEXT_MESSAGES = 5;

/** Reports (any user) and administration (spec section 4 "Reports and administration"). */
export function moderationRoutes(deps: Deps): Route[] {
  const h = moderationHandlers(deps);
  return [
    { method: 'POST', path: '/api/reports', auth: 'user', body: 'json', handler: h.fileReport },
    { method: 'GET', path: '/api/admin/reports', auth: 'admin', body: 'none', handler: h.listReports },
    { method: 'GET', path: '/api/admin/reports/:report_id', auth: 'admin', body: 'none', handler: h.getReport },
    { method: 'PUT', path: '/api/admin/reports/:report_id', auth: 'admin', body: 'json', handler: h.setReportStatus },
    { method: 'DELETE', path: '/api/admin/messages/:message_id', auth: 'admin', body: 'none', handler: h.deleteAnyMessage },
    { method: 'GET', path: '/api/admin/me', auth: 'admin', body: 'none', handler: h.getAdminMe },
    { method: 'GET', path: '/api/admin/users', auth: 'admin', body: 'none', handler: h.listUsers },
    { method: 'GET', path: '/api/admin/warnings', auth: 'admin', body: 'none', handler: h.listWarnings },
    { method: 'POST', path: '/api/admin/users/:user_id/warnings', auth: 'admin', body: 'json', handler: h.warnUser },
    { method: 'DELETE', path: '/api/admin/warnings/:warning_id', auth: 'admin', body: 'none', handler: h.removeWarning },
    { method: 'PUT', path: '/api/admin/users/:user_id/standing', auth: 'admin', body: 'json', handler: h.setUserStanding },
  ];
}

export const REPORT_TYPES = ['user', 'server', 'server_message', 'conversation_message'] as const;
export const REPORT_STATUSES = ['pending', 'resolved'] as const;
export const MAX_REASON_CHARS = 1000;

interface ReportRow {
  id: string;
  type: string;
  target: string;
  reason: string;
  snapshot: string;
  status: string;
  created_at: string;
  updated_at: string | null;
  reporter_id: string;
  reporter_username: string;
  updated_by: string | null;
  updated_by_username: string | null;
  target_deleted: number;
  server_name: string | null;
  channel_name: string | null;
  conversation_name: string | null;
}

interface WarningRow {
  id: string;
  user_id: string;
  username: string;
  issued_by: string;
  reason: string;
  created_at: string;
}

/** `?offset=` for the administrator lists (they are paged by position, not by cursor). */
function offsetParam(query: URLSearchParams): number {
  const raw = query.get('offset');
  if (raw === null) return 0;
  if (!/^\d{1,9}$/.test(raw)) throw badRequest('offset must be a non-negative integer');
  return Number(raw);
}

/** Rows read at a time when an administrator list is sent whole. */
const STREAM_PAGE = 500;

/**
 * An administrator list. The spec says "all": without `limit` and `offset` every row is sent,
 * streamed a page at a time. With either, one page (`limit` 1-100, default 50) and
 * `X-Total-Count` (the rows matching); while more exist, `Link: <...>; rel="next"`.
 */
async function adminList(ctx: Ctx, total: () => number, page: (limit: number, offset: number) => unknown[]): Promise<Reply> {
  if (!ctx.query.has('limit') && !ctx.query.has('offset')) {
    await streamJsonArray(ctx.res, pagesOf(page), ctx.req.method === 'HEAD');
    return HANDLED;
  }
  const limit = limitParam(ctx.query);
  const offset = offsetParam(ctx.query);
  const count = total();
  ctx.res.setHeader('X-Total-Count', String(count));
  if (offset + limit < count) {
    const next = new URLSearchParams(ctx.query);
    next.set('offset', String(offset + limit));
    next.set('limit', String(limit));
    ctx.res.setHeader('Link', `<${splitUrl(ctx.req.url).pathname}?${next}>; rel="next"`);
  }
  return json(page(limit, offset));
}

function* pagesOf(page: (limit: number, offset: number) => unknown[]): Generator<unknown[]> {
  for (let offset = 0; ; offset += STREAM_PAGE) {
    const rows = page(STREAM_PAGE, offset);
    yield rows;
    if (rows.length < STREAM_PAGE) return;
  }
}

function moderationHandlers({ db, clock, users, perms, messages, limits, audit, directory, accountChanges }: Deps) {
  const insertReport = db.prepare(`INSERT INTO reports (id, reporter_id, type, target, reason, snapshot, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`);
  // A reported message that is gone (its author or an administrator deleted it) shows as such.
  const REPORT_COLUMNS = `r.id, r.type, r.target, r.reason, r.snapshot, r.status, r.created_at, r.updated_at,
      r.reporter_id, ru.username AS reporter_username, r.updated_by, uu.username AS updated_by_username,
      (r.type IN ('server_message', 'conversation_message') AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.id = r.target))
        OR (r.type = 'server' AND NOT EXISTS (SELECT 1 FROM servers s WHERE s.id = r.target)) AS target_deleted,
      (SELECT name FROM servers WHERE id = json_extract(r.snapshot, '$.server_id')) AS server_name,
      (SELECT name FROM channels WHERE id = json_extract(r.snapshot, '$.channel_id')) AS channel_name,
      (SELECT coalesce(c.name, (SELECT group_concat(u.username, ', ') FROM conversation_members cm JOIN users u ON u.id = cm.user_id
          WHERE cm.conversation_id = c.id)) FROM conversations c WHERE c.id = json_extract(r.snapshot, '$.conversation_id')) AS conversation_name
    FROM reports r JOIN users ru ON ru.id = r.reporter_id LEFT JOIN users uu ON uu.id = r.updated_by`;
  const pendingDuplicate = db.prepare<[string, string, string], { id: string }>(
    "SELECT id FROM reports WHERE reporter_id = ? AND type = ? AND target = ? AND status = 'pending'",
  );
  const reportById = db.prepare<[string], ReportRow>(`SELECT ${REPORT_COLUMNS} WHERE r.id = ?`);
  // Pending first, then newest first.
  const reportQueue = db.prepare<[string | null, string | null, number, number], ReportRow>(
    `SELECT ${REPORT_COLUMNS} WHERE (? IS NULL OR r.status = ?)
      ORDER BY r.status = 'pending' DESC, r.created_at DESC, r.rowid DESC LIMIT ? OFFSET ?`,
  );
  const reportCount = db.prepare<[string | null, string | null], { n: number }>('SELECT COUNT(*) AS n FROM reports r WHERE (? IS NULL OR r.status = ?)');
  const updateReportStatus = db.prepare('UPDATE reports SET status = ?, updated_at = ?, updated_by = ? WHERE id = ?');
  const serverSnapshot = db.prepare<[string], { server_id: string; name: string; owner_id: string; owner_username: string }>(
    `SELECT s.id AS server_id, s.name, s.owner_id, u.username AS owner_username
       FROM servers s JOIN users u ON u.id = s.owner_id WHERE s.id = ?`,
  );
  // A placeholder someone claimed is an empty shell (its history is theirs): ?claimed=hide leaves it out.
  const CLAIMED = 'EXISTS (SELECT 1 FROM imported_people p WHERE p.user_id = users.id AND p.claimed_at IS NOT NULL)';
  const MATCHING = `username LIKE ? ESCAPE '\\' AND (? = 0 OR NOT ${CLAIMED})`;
  const usersPage = db.prepare<
    [string, number, number, number],
    { id: string; username: string; standing: number; is_admin: number; created_at: string; imported: number; bot: number; claimed: number }
  >(
    `SELECT id, username, standing, is_admin, created_at, imported, bot, ${CLAIMED} AS claimed FROM users
      WHERE ${MATCHING} ORDER BY username LIMIT ? OFFSET ?`,
  );
  const userCount = db.prepare<[string, number], { n: number }>(`SELECT COUNT(*) AS n FROM users WHERE ${MATCHING}`);
  const WARNING_COLUMNS = `w.id, w.user_id, u.username, iu.username AS issued_by, w.reason, w.created_at
    FROM warnings w JOIN users u ON u.id = w.user_id JOIN users iu ON iu.id = w.issued_by`;
  const warningsOfUsers = db.prepare<[string], WarningRow>(
    `SELECT ${WARNING_COLUMNS} WHERE w.user_id IN (SELECT value FROM json_each(?)) ORDER BY w.created_at DESC, w.rowid DESC`,
  );
  const warningsPage = db.prepare<[number, number], WarningRow>(`SELECT ${WARNING_COLUMNS} ORDER BY w.created_at DESC, w.rowid DESC LIMIT ? OFFSET ?`);
  const warningCount = db.prepare<[], { n: number }>('SELECT COUNT(*) AS n FROM warnings');
  const warningById = db.prepare<[string], WarningRow>(`SELECT ${WARNING_COLUMNS} WHERE w.id = ?`);

  /** Where a reported message is, named as it is now (a name is null once that place is gone); null for other reports. */
  const placeOf = (r: ReportRow, snapshot: Record<string, string>) => {
    if (r.type === 'server_message') {
      return { server_id: snapshot.server_id, server_name: r.server_name, channel_id: snapshot.channel_id, channel_name: r.channel_name };
    }
    if (r.type === 'conversation_message') return { conversation_id: snapshot.conversation_id, conversation_name: r.conversation_name };
    return null;
  };
  const reportRecord = (r: ReportRow) => {
    const snapshot = JSON.parse(r.snapshot);
    return {
      id: r.id,
      type: r.type,
      target: r.target,
      reason: r.reason,
      status: r.status,
      reporter: { user_id: r.reporter_id, username: r.reporter_username },
      snapshot,
      place: placeOf(r, snapshot),
      created_at: r.created_at,
      updated_at: r.updated_at,
      updated_by: r.updated_by ? { user_id: r.updated_by, username: r.updated_by_username } : null,
      target_deleted: r.target_deleted === 1,
    };
  };
  const warningRecord = (w: WarningRow) => ({
    id: w.id,
    user_id: w.user_id,
    username: w.username,
    issued_by: w.issued_by,
    reason: w.reason,
    created_at: w.created_at,
  });
  const requireUser = (userId: string) => {
    const user = users.byId(userId);
    if (!user) throw notFound('user not found');
    return user;
  };
  const adminUserRecord = (userId: string) => {
    const user = requireUser(userId);
    return {
      user_id: user.id,
      username: user.username,
      account_standing: user.standing,
      is_admin: user.isAdmin,
      warnings: warningsOfUsers.all(JSON.stringify([user.id])).map(warningRecord),
    };
  };

  /**
   * An administrator never acts on their own standing through the API: a slip would suspend
   * them with no administrator left to lift it. The CLI (`standing set`, `warnings clear`) can.
   */
  const requireOther = (ctx: Ctx, userId: string) => {
    if (userId === ctx.user.id) throw forbidden('administrators cannot change their own standing or warnings; use the command line');
  };

  /** What the reported thing looked like when reported, so later edits or deletion hide nothing. */
  function snapshotOf(type: (typeof REPORT_TYPES)[number], target: string, reporter: User): object {
    if (type === 'user') {
      const user = requireUser(target);
      return { user_id: user.id, username: user.username };
    }
    if (type === 'server') {
      const server = serverSnapshot.get(target);
      if (!server) throw notFound('server not found');
      return server;
    }
    // Message reports: the reporter must be able to see the message (404 as for one that does
    // not exist), and it must be of the kind the report names.
    const access = perms.messageAccess(reporter, target);
    const { container } = access;
    if (container.kind !== (type === 'server_message' ? 'channel' : 'conversation')) throw notFound('message not found');
    const message = messages.get(access, target, reporter.id);
    return {
      message_id: message.id,
      ...(container.kind === 'channel' ? { server_id: container.serverId, channel_id: container.id } : { conversation_id: container.id }),
      author: message.author,
      content: message.content,
      attachments: message.attachments.map((a) => ({ id: a.id, name: a.name, content_type: a.content_type })),
      created_at: message.created_at,
      edited_at: message.edited_at,
      // Every earlier version too: an edit after the fact cannot hide what was said.
      versions: messages.history(access, target).versions,
    };
  }

  /** A message report's snapshot as its reporter may read it: the versions only with the edit history (src/rules/permissions.ts readsEditHistory). */
  function asReporterSees(snapshot: { versions: MessageVersion[]; author: { user_id: string } }, reporter: User, messageId: string) {
    const { rank } = perms.messageAccess(reporter, messageId);
    return readsEditHistory(reporter, rank, snapshot.author.user_id) ? snapshot : { ...snapshot, versions: snapshot.versions.slice(-1) };
  }

  /** What an administrator needs beside a report: who is who, and a reported message among its neighbours. */
  function contextOf(report: ReturnType<typeof reportRecord>, admin: User) {
    const snapshot = report.snapshot as Record<string, unknown>;
    const context: Record<string, unknown> = { reporter: report.reporter, target: null, messages: [] };
    if (report.type === 'user') {
      const user = users.byId(report.target);
      context.target = { user_id: report.target, username: user?.username ?? snapshot.username };
    } else if (report.type === 'server') {
      const server = directory.server(report.target);
      context.target = { server_id: report.target, name: server?.name ?? snapshot.name };
    } else {
      context.target = snapshot.author;
      const container = perms.locateMessage(report.target);
      if (container) {
        const paging = { before: null, after: null, around: report.target, limit: 2 * REPORT_CONTEXT_MESSAGES + 1 };
        context.messages = messages.list(reachedWhole(container), admin.id, paging).reverse();
      }
    }
    return context;
  }

  return {
    fileReport,
    listReports,
    getReport,
    setReportStatus,
    deleteAnyMessage,
    getAdminMe,
    listUsers,
    listWarnings,
    warnUser,
    removeWarning,
    setUserStanding,
  };

  /** 201 pending report with a snapshot of its target taken now; 404 unknown target or a message the reporter cannot see. */
  function fileReport(ctx: Ctx) {
    const type = oneOf(ctx.body, 'type', REPORT_TYPES);
    const target = uuid(ctx.body, 'target');
    const reason = text(ctx.body, 'reason', { max: MAX_REASON_CHARS, multiline: true });
    if (type === 'user' && target === ctx.user.id) throw badRequest('you cannot report yourself');
    limits.reportsPerUser.take(ctx.user.id, 'reports');
    const snapshot = snapshotOf(type, target, ctx.user);
    // The same reporter reporting the same thing again while the first is pending: one report.
    const duplicate = pendingDuplicate.get(ctx.user.id, type, target);
    const id = duplicate?.id ?? crypto.randomUUID();
    if (!duplicate) insertReport.run(id, ctx.user.id, type, target, reason, JSON.stringify(snapshot), iso(clock.now()));
    const record = reportRecord(reportById.get(id)!);
    // The snapshot is for administrators: the reporter's answer carries no more than they may
    // read. Outside a server they learn nothing of it; of a message, no earlier version unless
    // they may read its edit history.
    if (type === 'server' && perms.rank(ctx.user.id, target) === null) record.snapshot = { server_id: target };
    if (type === 'server_message' || type === 'conversation_message') record.snapshot = asReporterSees(record.snapshot, ctx.user, target);
    return duplicate ? json(record) : created(record);
  }

  /** One report with its context: the names involved and, for a message, up to 5 messages each side. */
  function getReport(ctx: Ctx) {
    const row = reportById.get(ctx.params.report_id);
    if (!row) throw notFound('report not found');
    const report = reportRecord(row);
    return json({ ...report, context: contextOf(report, ctx.user) });
  }

  /** Deletes any message, anywhere; 204; its reports then show target_deleted; audited in its server. */
  function deleteAnyMessage(ctx: Ctx) {
    const messageId = ctx.params.message_id;
    const container = perms.locateMessage(messageId);
    if (!container) throw notFound('message not found');
    const write =
      container.kind === 'channel'
        ? () =>
            audit.write({
              serverId: container.serverId,
              action: 'message_delete',
              actorId: ctx.user.id,
              targetId: messageId,
              targetKind: 'message',
              reason: auditReason(ctx),
            })
        : undefined;
    messages.remove(reachedWhole(container), messageId, ctx.user, true, write);
    return noContent();
  }

  /** Every report (?status= filters), pending first, then newest first; paged with ?limit/?offset. */
  function listReports(ctx: Ctx) {
    const status = ctx.query.get('status');
    if (status !== null && !REPORT_STATUSES.includes(status as never)) {
      throw badRequest('status must be pending or resolved');
    }
    return adminList(
      ctx,
      () => reportCount.get(status, status)!.n,
      (limit, offset) => reportQueue.all(status, status, limit, offset).map(reportRecord),
    );
  }

  /** pending or resolved; records who changed it and when; 200 report record. */
  function setReportStatus(ctx: Ctx) {
    const status = oneOf(ctx.body, 'status', REPORT_STATUSES);
    const result = updateReportStatus.run(status, iso(clock.now()), ctx.user.id, ctx.params.report_id);
    if (result.changes === 0) throw notFound('report not found');
    return json(reportRecord(reportById.get(ctx.params.report_id)!));
  }

  /** 200 {user_id, username, is_admin: true} for an administrator; 403 for others. */
  function getAdminMe(ctx: Ctx) {
    return json({ user_id: ctx.user.id, username: ctx.user.username, is_admin: true });
  }

  /** Every user by username (?prefix=, case-insensitive) with standing, is_admin and warnings; paged with ?limit/?offset. */
  function listUsers(ctx: Ctx) {
    const pattern = `${(ctx.query.get('prefix') ?? '').replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    const claimed = ctx.query.get('claimed') ?? 'show';
    if (claimed !== 'show' && claimed !== 'hide') throw badRequest('claimed must be show or hide');
    const hide = claimed === 'hide' ? 1 : 0;
    return adminList(
      ctx,
      () => userCount.get(pattern, hide)!.n,
      (limit, offset) => {
        const rows = usersPage.all(pattern, hide, limit, offset);
        const warnings = new Map<string, ReturnType<typeof warningRecord>[]>();
        for (const w of warningsOfUsers.all(JSON.stringify(rows.map((u) => u.id)))) {
          warnings.set(w.user_id, [...(warnings.get(w.user_id) ?? []), warningRecord(w)]);
        }
        return rows.map((u) => ({
          user_id: u.id,
          username: u.username,
          account_standing: u.standing,
          is_admin: u.is_admin === 1,
          warnings: warnings.get(u.id) ?? [],
          created_at: u.created_at,
          kind: u.imported === 1 ? ('placeholder' as const) : u.bot === 1 ? ('bot' as const) : u.bot === 2 ? ('webhook' as const) : ('person' as const),
          claimed: u.claimed === 1,
        }));
      },
    );
  }

  /** Every warning with the warned user, newest first; paged with ?limit/?offset. */
  function listWarnings(ctx: Ctx) {
    return adminList(
      ctx,
      () => warningCount.get()!.n,
      (limit, offset) => warningsPage.all(limit, offset).map(warningRecord),
    );
  }

  /** 201 warning; the user's standing becomes min(warning count, 4) at once; 403 on oneself. */
  function warnUser(ctx: Ctx) {
    const userId = ctx.params.user_id;
    requireUser(userId);
    requireOther(ctx, userId);
    const reason = text(ctx.body, 'reason', { max: MAX_REASON_CHARS, multiline: true });
    const id = crypto.randomUUID();
    const standing = accountChanges.warn(userId, ctx.user.id, reason, id);
    return created({ ...warningRecord(warningById.get(id)!), account_standing: standing });
  }

  /** Removes it; the user's standing becomes min(remaining count, 4); 200 {user_id, account_standing}. */
  function removeWarning(ctx: Ctx) {
    const warning = warningById.get(ctx.params.warning_id);
    if (!warning) throw notFound('warning not found');
    requireOther(ctx, warning.user_id);
    const standing = accountChanges.removeWarning(warning.user_id, warning.id);
    return json({ user_id: warning.user_id, account_standing: standing });
  }

  /** An integer 0 to 4 exactly; applies from the next request and closes the user's sockets at 4; 200 admin user record; 403 on oneself. */
  function setUserStanding(ctx: Ctx) {
    const userId = ctx.params.user_id;
    requireUser(userId);
    requireOther(ctx, userId);
    const standing = integer(ctx.body, 'standing', 0, SUSPENDED);
    accountChanges.setStanding(userId, standing);
    return json(adminUserRecord(userId));
  }
}
