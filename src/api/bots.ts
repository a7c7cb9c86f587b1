import { forbidden, notFound } from '../core/http/errors';
import { created, json, noContent } from '../core/http/respond';
import { type Ctx, type Route, refOf } from '../core/types';
import { readUsername } from '../parts/accounts/users';
import { serverEntry } from '../parts/live/ready';
import type { Services } from '../parts/services';
import { assertAllowed } from '../rules/standing';

type Deps = Pick<
  Services,
  'db' | 'clock' | 'bots' | 'users' | 'avatars' | 'limits' | 'perms' | 'members' | 'hub' | 'directory' | 'audit' | 'readStates' | 'presence' | 'notifications'
>;

/**
 * Bot accounts (docs/api.md "Bots"): a person makes, lists, re-keys and deletes their bots; a
 * server's owner or full administrator adds a bot by its name. Bots themselves may not call these.
 */
export function botRoutes(deps: Deps): Route[] {
  const h = botHandlers(deps);
  return [
    { method: 'GET', path: '/api/bots', auth: 'user', body: 'none', handler: h.listBots },
    { method: 'POST', path: '/api/bots', auth: 'user', body: 'json', handler: h.createBot },
    { method: 'DELETE', path: '/api/bots/:bot_id', auth: 'user', body: 'none', handler: h.deleteBot },
    { method: 'POST', path: '/api/bots/:bot_id/token', auth: 'user', body: 'none', handler: h.resetBotToken },
    { method: 'PUT', path: '/api/bots/:bot_id/avatar', auth: 'user', body: 'multipart', handler: h.uploadBotAvatar },
    { method: 'POST', path: '/api/servers/:server_id/bots', auth: 'user', body: 'json', handler: h.addBotToServer },
  ];
}

function botHandlers(deps: Deps) {
  const { db, bots, users, avatars, limits, perms, members, hub, directory, audit } = deps;
  const banOf = db.prepare<[string, string], number>('SELECT 1 FROM bans WHERE server_id = ? AND user_id = ?').pluck();
  const deleteRemoval = db.prepare('DELETE FROM server_removals WHERE server_id = ? AND user_id = ?');

  return { listBots, createBot, deleteBot, resetBotToken, uploadBotAvatar, addBotToServer };

  /** 200 the caller's bots, oldest first, without tokens. */
  function listBots(ctx: Ctx) {
    return json(bots.list(ctx.user.id));
  }

  /** `{"name"}` (a username: 3 to 32 letters, digits, _ and -): 201 the bot with its token, shown this once. */
  function createBot(ctx: Ctx) {
    const name = readUsername({ username: ctx.body.name });
    limits.creationsPerUser.take(ctx.user.id, 'creations');
    const bot = bots.create(ctx.user.id, name);
    return created({
      id: bot.id,
      username: bot.username,
      token: bot.token,
      display_name: bot.display_name,
      avatar_url: bot.avatar_url,
      bot: true,
      created_at: bot.created_at,
    });
  }

  /** 204; the bot leaves every server, its token stops working, its messages stay (as deleted-user). */
  function deleteBot(ctx: Ctx) {
    bots.remove(ctx.user.id, ctx.params.bot_id);
    return noContent();
  }

  /** 200 `{token}`: a new one; the old one stops at once and the bot's sockets close. */
  function resetBotToken(ctx: Ctx) {
    return json({ token: bots.resetToken(ctx.user.id, ctx.params.bot_id) });
  }

  /** Multipart `avatar`, as PUT /api/account/avatar: 200 `{avatar_url}`. */
  async function uploadBotAvatar(ctx: Ctx) {
    const bot = bots.owned(ctx.user.id, ctx.params.bot_id);
    limits.avatarsPerUser.take(ctx.user.id, 'avatar uploads');
    await avatars.replace(bot.id, ctx.req);
    const updated = users.byId(bot.id)!;
    hub.toUsers(directory.peopleWhoSee(bot.id), { event: 'user_updated', user: refOf(updated) });
    return json({ avatar_url: updated.avatarUrl });
  }

  /**
   * `{"username"}` of a bot: a holder of manage_server (as on Discord) adds it as a member
   * (people join by invite only). 200 `{server_id, user_id}`; a banned bot 403; a bot whose
   * standing may not join servers 403; a name that is no bot 404.
   */
  function addBotToServer(ctx: Ctx) {
    const serverId = ctx.params.server_id;
    perms.requireServerFlag(ctx.user, serverId, 'manage_server');
    const bot = users.byUsername(readUsername(ctx.body));
    if (!bot?.bot) throw notFound('no bot has that name');
    assertAllowed(bot, 'join_server');
    if (banOf.get(serverId, bot.id)) throw forbidden('this bot is banned from this server');
    if (perms.rank(bot.id, serverId)) return json({ server_id: serverId, user_id: bot.id });
    members.requireRoom(bot.id);
    db.transaction(() => {
      members.add(serverId, bot.id);
      // An owner or administrator adding it again is what a new invite from them would be.
      deleteRemoval.run(serverId, bot.id);
      audit.write({ serverId, action: 'bot_add', actorId: ctx.user.id, targetId: bot.id, targetKind: 'user', reason: null });
    })();
    const server = directory.server(serverId)!;
    hub.toUsers([bot.id], { event: 'server_joined', server: serverEntry(deps, bot.id, server) });
    hub.toServer(serverId, { event: 'member_joined', server_id: serverId, member: members.record(serverId, bot.id)! });
    return json({ server_id: serverId, user_id: bot.id });
  }
}
