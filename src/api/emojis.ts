import { badRequest } from '../core/http/errors';
import { created, json, noContent } from '../core/http/respond';
import type { Ctx, PublicCtx, Route } from '../core/types';
import { checkEmojiName } from '../parts/community/emojis';
import { checkStickerFields } from '../parts/community/stickers';
import type { Services } from '../parts/services';
import { sendImage } from './profile';

type Deps = Pick<Services, 'perms' | 'emojis' | 'stickers' | 'hub' | 'limits'>;

/** A server's custom emoji and stickers (docs/api.md "Custom emoji", "Stickers"): managed with manage_emojis, seen by its members, drawn by anyone holding the URL. */
export function emojiRoutes(deps: Deps): Route[] {
  const h = emojiHandlers(deps);
  const E = '/api/servers/:server_id/emojis';
  const ST = '/api/servers/:server_id/stickers';
  return [
    { method: 'GET', path: E, auth: 'user', body: 'none', handler: h.listEmojis },
    { method: 'POST', path: E, auth: 'user', body: 'multipart', handler: h.createEmoji },
    { method: 'PATCH', path: `${E}/:emoji_id`, auth: 'user', body: 'json', handler: h.renameEmoji },
    { method: 'DELETE', path: `${E}/:emoji_id`, auth: 'user', body: 'none', handler: h.deleteEmoji },
    { method: 'GET', path: '/emojis/:emoji_id', auth: 'none', body: 'none', handler: h.downloadEmoji },
    { method: 'GET', path: ST, auth: 'user', body: 'none', handler: h.listStickers },
    { method: 'POST', path: ST, auth: 'user', body: 'multipart', handler: h.createSticker },
    { method: 'PATCH', path: `${ST}/:sticker_id`, auth: 'user', body: 'json', handler: h.updateSticker },
    { method: 'DELETE', path: `${ST}/:sticker_id`, auth: 'user', body: 'none', handler: h.deleteSticker },
    { method: 'GET', path: '/stickers/:sticker_id', auth: 'none', body: 'none', handler: h.downloadSticker },
  ];
}

function emojiHandlers({ perms, emojis, stickers, hub, limits }: Deps) {
  return { listEmojis, createEmoji, renameEmoji, deleteEmoji, downloadEmoji, listStickers, createSticker, updateSticker, deleteSticker, downloadSticker };

  /** manage_emojis (server-wide), and not timed out. */
  function requireManager(ctx: Ctx) {
    perms.requireServerFlag(ctx.user, ctx.params.server_id, 'manage_emojis');
    perms.requireNotTimedOut(ctx.user, ctx.params.server_id);
  }

  /** Every member sees the new list at once (the picker, the autocomplete). */
  function announce(serverId: string) {
    hub.toServer(serverId, { event: 'emojis_updated', server_id: serverId, emojis: emojis.list(serverId) });
  }

  /** Members: 200 the server's emoji, oldest first. */
  function listEmojis(ctx: Ctx) {
    perms.serverAccess(ctx.user, ctx.params.server_id);
    return json(emojis.list(ctx.params.server_id));
  }

  /** Multipart `name` and one `image` (PNG, JPEG, GIF, WebP; at most 1 MiB, 256 KiB once drawn at 128 × 128): 201 the emoji. */
  async function createEmoji(ctx: Ctx) {
    requireManager(ctx);
    limits.avatarsPerUser.take(ctx.user.id, 'image uploads');
    const emoji = await emojis.create(ctx.params.server_id, ctx.user.id, ctx.req);
    announce(ctx.params.server_id);
    return created(emoji);
  }

  /** `{"name"}`: 200 the emoji. Messages that wrote the old name still draw it (they name it by id). */
  function renameEmoji(ctx: Ctx) {
    requireManager(ctx);
    const emoji = emojis.rename(ctx.params.server_id, ctx.params.emoji_id, ctx.user.id, checkEmojiName(ctx.body.name));
    announce(ctx.params.server_id);
    return json(emoji);
  }

  /** 204; messages and reactions that used it show `:name:` as text from now on. */
  function deleteEmoji(ctx: Ctx) {
    requireManager(ctx);
    emojis.remove(ctx.params.server_id, ctx.params.emoji_id, ctx.user.id);
    announce(ctx.params.server_id);
    return noContent();
  }

  /** Members: 200 the server's stickers, oldest first. */
  function listStickers(ctx: Ctx) {
    perms.serverAccess(ctx.user, ctx.params.server_id);
    return json(stickers.list(ctx.params.server_id));
  }

  /** Multipart `name`, `description`?, `tags` (a Unicode emoji) and one `image` (PNG, APNG, GIF, WebP; 512 KiB, drawn at 320 × 320): 201. */
  async function createSticker(ctx: Ctx) {
    requireManager(ctx);
    limits.avatarsPerUser.take(ctx.user.id, 'image uploads');
    return created(await stickers.create(ctx.params.server_id, ctx.user.id, ctx.req));
  }

  /** `{"name"?, "description"?, "tags"?}`: 200 the sticker. */
  function updateSticker(ctx: Ctx) {
    requireManager(ctx);
    const change = checkStickerFields(ctx.body, true);
    if (Object.keys(change).length === 0) throw badRequest('give name, description or tags');
    return json(stickers.update(ctx.params.server_id, ctx.params.sticker_id, ctx.user.id, change));
  }

  /** 204; messages that carried it show its name. */
  function deleteSticker(ctx: Ctx) {
    requireManager(ctx);
    stickers.remove(ctx.params.server_id, ctx.params.sticker_id, ctx.user.id);
    return noContent();
  }

  /** The sticker's WebP, as an emoji's. */
  function downloadSticker(ctx: PublicCtx) {
    return sendImage(ctx, stickers.file(ctx.params.sticker_id), 'no such sticker');
  }

  /**
   * The WebP, cached for a year (an emoji's image never changes); 404 once deleted. Public like an
   * avatar: any message may show it, and the URL holds an unguessable id.
   */
  function downloadEmoji(ctx: PublicCtx) {
    return sendImage(ctx, emojis.file(ctx.params.emoji_id), 'no such emoji');
  }
}
