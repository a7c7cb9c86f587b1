import crypto from 'node:crypto';
import { iso } from '../core/clock';
import { badRequest, notFound } from '../core/http/errors';
import { created, json, noContent } from '../core/http/respond';
import type { Services } from '../parts/services';
import type { Ctx, Route } from '../core/types';
import { auditReason, integer, text } from '../core/validate';
import { MAX_NAME_CHARS, diff, placed } from './servers';

/** Categories one server may have (Discord allows 50). */
import { MAX_CATEGORIES_PER_SERVER } from '../rules/sizes';
export { MAX_CATEGORIES_PER_SERVER };

type Deps = Pick<Services, 'db' | 'clock' | 'perms' | 'hub' | 'limits' | 'directory' | 'audit' | 'channels' | 'overwrites' | 'accessChanges'>;

/**
 * The categories of a server: named groups its channels are listed under (a channel joins one
 * with PATCH .../channels/{id} {category_id}). Members see them; the owner and full server
 * administrators make, rename, move and delete them, as they do channels.
 */
export function categoryRoutes(deps: Deps): Route[] {
  const h = categoryHandlers(deps);
  const C = '/api/servers/:server_id/categories';
  return [
    { method: 'GET', path: C, auth: 'user', body: 'none', handler: h.listCategories },
    { method: 'POST', path: C, auth: 'user', body: 'json', handler: h.createCategory },
    { method: 'PATCH', path: `${C}/:category_id`, auth: 'user', body: 'json', handler: h.updateCategory },
    { method: 'DELETE', path: `${C}/:category_id`, auth: 'user', body: 'none', handler: h.deleteCategory },
  ];
}

function categoryHandlers({ db, clock, perms, hub, limits, directory, audit, channels, overwrites, accessChanges }: Deps) {
  const insert = db.prepare(
    `INSERT INTO categories (id, server_id, name, position, created_at)
     VALUES (?, ?, ?, (SELECT COUNT(*) FROM categories WHERE server_id = ?), ?)`,
  );
  const rename = db.prepare('UPDATE categories SET name = ? WHERE id = ?');
  const setPosition = db.prepare('UPDATE categories SET position = ? WHERE id = ?');
  const deleteRow = db.prepare('DELETE FROM categories WHERE id = ?');

  /** A category of this server (404 otherwise). */
  const categoryIn = (serverId: string, categoryId: string) => {
    const category = directory.categoriesOf(serverId).find((c) => c.id === categoryId);
    if (!category) throw notFound('category not found');
    return category;
  };
  /** Puts `categoryId` at `position` (null: only closes the gaps): positions stay 0..n-1. */
  const reorder = (serverId: string, categoryId: string | null, position: number) =>
    placed(
      directory.categoriesOf(serverId).map((c) => c.id),
      categoryId,
      position,
    ).forEach((id, index) => setPosition.run(index, id));
  /** Every change reaches the server's members as the whole list, in position order. */
  const announce = (serverId: string) =>
    hub.toServer(serverId, { event: 'categories_updated', server_id: serverId, categories: directory.categoriesOf(serverId) });

  return { listCategories, createCategory, updateCategory, deleteCategory };

  /** The categories, members only, in position order. */
  function listCategories(ctx: Ctx) {
    perms.serverAccess(ctx.user, ctx.params.server_id);
    return json(directory.categoriesOf(ctx.params.server_id));
  }

  /** manage_channels (server-wide): {name}; 201 category, placed last; 400 past 50; audited. */
  function createCategory(ctx: Ctx) {
    const serverId = ctx.params.server_id;
    perms.requireServerFlag(ctx.user, serverId, 'manage_channels');
    const name = text(ctx.body, 'name', { max: MAX_NAME_CHARS });
    const reason = auditReason(ctx);
    if (directory.categoriesOf(serverId).length >= MAX_CATEGORIES_PER_SERVER) {
      throw badRequest(`a server may have at most ${MAX_CATEGORIES_PER_SERVER} categories`);
    }
    limits.creationsPerUser.take(ctx.user.id, 'channels, roles and invites created');
    const id = crypto.randomUUID();
    db.transaction(() => {
      insert.run(id, serverId, name, serverId, iso(clock.now()));
      audit.write({ serverId, action: 'category_create', actorId: ctx.user.id, targetId: id, targetKind: 'category', reason, changes: { name } });
    })();
    announce(serverId);
    return created(categoryIn(serverId, id));
  }

  /** manage_channels (server-wide): {name?, position?}; 200 category; positions stay 0..n-1; audited. */
  function updateCategory(ctx: Ctx) {
    const serverId = ctx.params.server_id;
    perms.requireServerFlag(ctx.user, serverId, 'manage_channels');
    const before = categoryIn(serverId, ctx.params.category_id);
    const name = ctx.body.name === undefined ? before.name : text(ctx.body, 'name', { max: MAX_NAME_CHARS });
    const position = ctx.body.position === undefined ? null : integer(ctx.body, 'position', 0, MAX_CATEGORIES_PER_SERVER);
    const reason = auditReason(ctx);
    const after = db.transaction(() => {
      rename.run(name, before.id);
      if (position !== null) reorder(serverId, before.id, position);
      const after = categoryIn(serverId, before.id);
      const changes = diff(before, { name, position: after.position });
      audit.write({ serverId, action: 'category_update', actorId: ctx.user.id, targetId: before.id, targetKind: 'category', reason, changes });
      return after;
    })();
    announce(serverId);
    return json(after);
  }

  /**
   * manage_channels (server-wide): 204; its channels stay, under no category
   * (channel_updated), those that followed its overwrites keeping them as their own; audited.
   */
  function deleteCategory(ctx: Ctx) {
    const serverId = ctx.params.server_id;
    perms.requireServerFlag(ctx.user, serverId, 'manage_channels');
    const category = categoryIn(serverId, ctx.params.category_id);
    const reason = auditReason(ctx);
    const freed = directory
      .channelsOf(serverId)
      .filter((c) => c.category_id === category.id)
      .map((c) => c.id);
    accessChanges.around(
      serverId,
      () =>
        db.transaction(() => {
          for (const id of freed) overwrites.detach(id);
          channels.leaveCategory(category.id);
          deleteRow.run(category.id);
          reorder(serverId, null, 0);
          audit.write({
            serverId,
            action: 'category_delete',
            actorId: ctx.user.id,
            targetId: category.id,
            targetKind: 'category',
            reason,
            changes: { name: category.name },
          });
        })(),
      undefined,
      freed,
    );
    announce(serverId);
    return noContent();
  }
}
