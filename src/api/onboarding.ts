import { json } from '../core/http/respond';
import type { Ctx, Route } from '../core/types';
import { auditReason } from '../core/validate';
import { checkOnboarding, checkPicked } from '../parts/community/onboarding';
import type { Services } from '../parts/services';

type Deps = Pick<Services, 'perms' | 'onboarding' | 'members' | 'hub' | 'accessChanges'>;

/** Membership screening (docs/api.md "Membership screening", docs/moderation.md): set by manage_server, read and accepted by members. */
export function onboardingRoutes(deps: Deps): Route[] {
  const h = onboardingHandlers(deps);
  const O = '/api/servers/:server_id/onboarding';
  return [
    { method: 'GET', path: O, auth: 'user', body: 'none', handler: h.getOnboarding },
    { method: 'PUT', path: O, auth: 'user', body: 'json', handler: h.setOnboarding },
    { method: 'POST', path: `${O}/accept`, auth: 'user', body: 'json', handler: h.acceptOnboarding },
  ];
}

function onboardingHandlers({ perms, onboarding, members, hub, accessChanges }: Deps) {
  return { getOnboarding, setOnboarding, acceptOnboarding };

  /** Each member's record after a change of their screening, told to the server. */
  function announceMembers(serverId: string, userIds: readonly string[]) {
    for (const userId of userIds) {
      const member = members.record(serverId, userId);
      if (member) hub.toServer(serverId, { event: 'member_updated', server_id: serverId, member });
    }
  }

  /** Members (a pending one too): 200 the onboarding, channels the caller does not see left out, and whether they are pending. */
  function getOnboarding(ctx: Ctx) {
    return json(onboarding.get(ctx.user, ctx.params.server_id));
  }

  /**
   * manage_server (and manage_roles when an answer gives a role): replaces the onboarding; 200 it. Roles and channels of this server only (400),
   * a role the caller may give and without powers (403); audited (onboarding_update). Off: every
   * pending member is let in (member_updated each).
   */
  function setOnboarding(ctx: Ctx) {
    const serverId = ctx.params.server_id;
    perms.requireServerFlag(ctx.user, serverId, 'manage_server');
    const settings = checkOnboarding(ctx.body);
    // Answers that give roles hand roles out: that is manage_roles' power too.
    if (settings.questions.some((q) => q.answers.some((a) => a.role_ids.length > 0))) perms.requireServerFlag(ctx.user, serverId, 'manage_roles');
    const { freed } = onboarding.set(ctx.user, serverId, settings, auditReason(ctx));
    hub.toServer(serverId, { event: 'onboarding_updated', server_id: serverId, enabled: settings.enabled });
    announceMembers(serverId, freed);
    return json(onboarding.get(ctx.user, serverId));
  }

  /**
   * A pending member: `{answers: {question_id: [answer_id...]}}`; 200 {member, role_ids,
   * channel_ids}: the answers' roles given (the channels they open told as any role's are), the
   * channels to show first (the defaults, then the answers', those the member now sees); audited
   * (onboarding_accept). 400 for a missing required answer, two to a single-select question, or
   * a member who is not pending.
   */
  function acceptOnboarding(ctx: Ctx) {
    const serverId = ctx.params.server_id;
    const picked = checkPicked(ctx.body);
    const given = accessChanges.around(serverId, () => onboarding.accept(ctx.user, serverId, picked), [ctx.user.id]);
    const channelIds = given.channel_ids.filter((id) => perms.rankIn(ctx.user.id, { kind: 'channel', id, serverId }));
    const member = members.record(serverId, ctx.user.id)!;
    hub.toServer(serverId, { event: 'member_updated', server_id: serverId, member });
    return json({ member, role_ids: given.role_ids, channel_ids: channelIds });
  }
}
