import fs from 'node:fs';
import { notFound } from '../core/http/errors';
import { json, noContent, sendWebp } from '../core/http/respond';
import type { Services } from '../parts/services';
import { type Ctx, type PublicCtx, type Route, refOf } from '../core/types';

type Deps = Pick<Services, 'users' | 'avatars' | 'hub' | 'directory' | 'limits'>;

/** A year: an avatar URL carries its version, so its bytes never change. */
export const AVATAR_MAX_AGE_S = 365 * 24 * 60 * 60;

/** Avatars: upload (re-encoded to 256 × 256 WebP), removal, and the images themselves. */
export function profileRoutes(deps: Deps): Route[] {
  const h = profileHandlers(deps);
  return [
    { method: 'PUT', path: '/api/account/avatar', auth: 'user', body: 'multipart', handler: h.uploadAvatar },
    { method: 'DELETE', path: '/api/account/avatar', auth: 'user', body: 'none', handler: h.removeAvatar },
    { method: 'GET', path: '/avatars/:user_id', auth: 'none', body: 'none', handler: h.downloadAvatar },
  ];
}

function profileHandlers({ users, avatars, hub, directory, limits }: Deps) {
  return { uploadAvatar, removeAvatar, downloadAvatar };

  /** The new name and picture, to everyone who shows them. */
  function announce(userId: string) {
    const user = users.byId(userId)!;
    hub.toUsers(directory.peopleWhoSee(userId), { event: 'user_updated', user: refOf(user) });
    return user;
  }

  /** Multipart, one image (PNG, JPEG, GIF, WebP; at most 8 MiB) in `avatar`: 200 {avatar_url}; 400 for anything that does not decode. */
  async function uploadAvatar(ctx: Ctx) {
    limits.avatarsPerUser.take(ctx.user.id, 'avatar uploads');
    await avatars.replace(ctx.user.id, ctx.req);
    return json({ avatar_url: announce(ctx.user.id).avatarUrl });
  }

  /** 204; the initials show again. */
  function removeAvatar(ctx: Ctx) {
    if (avatars.remove(ctx.user.id)) announce(ctx.user.id);
    return noContent();
  }

  /**
   * The WebP, cached for a year (`?v=` changes with every upload); 404 when the user has none.
   * Public like a profile picture on any chat service: the URL holds an unguessable user id.
   */
  function downloadAvatar(ctx: PublicCtx) {
    return sendImage(ctx, avatars.file(ctx.params.user_id), 'no avatar');
  }
}

/**
 * A stored WebP (an avatar, a custom emoji, a sticker), cached for a year (its URL changes when
 * its bytes do), sandboxed; 404 `missing` when there is none.
 */
export async function sendImage(ctx: PublicCtx, file: string | null, missing: string) {
  const body = file ? await fs.promises.readFile(file).catch(() => null) : null;
  if (!body) throw notFound(missing);
  return sendWebp(ctx.req, ctx.res, body, `public, max-age=${AVATAR_MAX_AGE_S}, immutable`);
}
