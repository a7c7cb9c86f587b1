import { HttpError, badRequest, forbidden, notFound } from '../core/http/errors';
import { noContent } from '../core/http/respond';
import type { Services } from '../parts/services';
import type { Ctx, Route } from '../core/types';
import { auditReason, bool, uuid } from '../core/validate';
import { VIEW, type Flag, has } from '../rules/channel-permissions';
import { VOICE_NOT_SET_UP } from '../parts/voice/voice';

type Deps = Pick<Services, 'db' | 'perms' | 'directory' | 'audit' | 'voice'>;

/**
 * Voice moderation (issue 48, docs/api.md "Voice"): server mute, server deafen, move and
 * disconnect. Signaling itself rides the voice socket (GET /api/voice/ws, src/parts/live/sockets.ts).
 */
export function voiceRoutes(deps: Deps): Route[] {
  const h = voiceHandlers(deps);
  return [{ method: 'PATCH', path: '/api/servers/:server_id/members/:user_id/voice', auth: 'user', body: 'json', handler: h.moderate }];
}

function voiceHandlers({ db, perms, directory, audit, voice }: Deps) {
  return { moderate };

  /**
   * {mute?, deaf?, channel_id?}: server mute (their audio stops at the media server), server
   * deafen, move to another voice channel of the server, or `channel_id: null` to disconnect;
   * for holders of mute_members, deafen_members, move_members in the voice channel the member is
   * in (the owner and full server administrators when they are not in voice: a mute outlasts a
   * call). Never the owner, but by the owner. 204; audited.
   */
  function moderate(ctx: Ctx) {
    const { server_id: serverId, user_id: userId } = ctx.params;
    const actorRank = perms.rank(ctx.user.id, serverId);
    if (actorRank === null) throw notFound('server not found');
    // A malformed body is 400 whether or not voice is set up here.
    const body = ctx.body;
    const mute = body.mute === undefined ? undefined : bool(body, 'mute');
    const deaf = body.deaf === undefined ? undefined : bool(body, 'deaf');
    const moving = body.channel_id !== undefined;
    const channelId = !moving || body.channel_id === null ? null : uuid(body, 'channel_id');
    if (mute === undefined && deaf === undefined && !moving) throw badRequest('give mute, deaf or channel_id');
    if (!voice.configured) throw new HttpError(503, VOICE_NOT_SET_UP);
    const targetRank = perms.rank(userId, serverId);
    if (targetRank === null) throw notFound('member not found');
    if (targetRank === 'owner' && actorRank !== 'owner') throw forbidden('only the owner can mute, deafen or move the owner in voice');

    const rules = perms.channelRules(serverId);
    // Where they are counts only if the caller sees that channel: otherwise the answers would tell
    // who sits in a channel hidden from the caller (the same answer as for someone in no call).
    const state = voice.stateOf(userId);
    const seen = state !== null && state.server_id === serverId && (rules?.flags(ctx.user.id, state.channel_id) ?? 0) & VIEW;
    const here = seen ? state : null;
    const require = (flag: Flag, action: string) => {
      if (here === null) return void perms.requireServerAdmin(ctx.user, serverId, `${action} a member who is not in voice`);
      if (!has(rules?.flags(ctx.user.id, here.channel_id) ?? 0, flag)) throw forbidden(`you do not have permission to ${action} members in this voice channel`);
    };
    if (mute !== undefined) require('mute_members', 'mute');
    if (deaf !== undefined) require('deafen_members', 'deafen');
    if (moving) {
      if (here === null) throw badRequest('they are not in a voice channel of this server');
      require('move_members', 'move');
      if (channelId !== null) {
        const target = directory.channel(channelId);
        const actorFlags = target && target.server_id === serverId ? (rules?.flags(ctx.user.id, channelId) ?? 0) : 0;
        if (!target || !(actorFlags & VIEW)) throw notFound('channel not found');
        if (target.type !== 'voice') throw badRequest('channel_id must be a voice channel');
        if (!has(actorFlags, 'move_members')) throw forbidden('you do not have permission to move members into that voice channel');
        if (!has(rules?.flags(userId, channelId) ?? 0, 'connect')) throw forbidden('they do not have permission to connect to that voice channel');
      }
    }

    const before = voice.moderationOf(serverId, userId);
    const after = { mute: mute ?? before.mute, deaf: deaf ?? before.deaf };
    const reason = auditReason(ctx);
    db.transaction(() => {
      if (after.mute !== before.mute || after.deaf !== before.deaf) {
        voice.saveModeration(serverId, userId, after);
        audit.write({ serverId, action: 'member_voice_update', actorId: ctx.user.id, targetId: userId, targetKind: 'user', reason, changes: after });
      }
      if (moving && here !== null && channelId !== here.channel_id) {
        const action = channelId === null ? 'member_disconnect' : 'member_move';
        audit.write({
          serverId,
          action,
          actorId: ctx.user.id,
          targetId: userId,
          targetKind: 'user',
          reason,
          changes: { from: here.channel_id, channel_id: channelId },
        });
      }
    })();
    // Committed, then applied: the media server is told, and those who see the channel.
    voice.applyModeration(serverId, userId);
    if (moving) voice.moveOrDisconnect(userId, channelId);
    return noContent();
  }
}
