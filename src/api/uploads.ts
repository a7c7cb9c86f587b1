import fs from 'node:fs';
import path from 'node:path';
import { serveFile } from '../core/http/downloads';
import { notFound } from '../core/http/errors';
import { HANDLED } from '../core/http/respond';
import type { Services } from '../parts/services';
import type { Ctx, Route } from '../core/types';

type Deps = Pick<Services, 'config' | 'log' | 'perms'>;

/** Attachment downloads (spec section 4 "Attachments"); uploads arrive with messages (src/api/messages.ts). */
export function uploadRoutes(deps: Deps): Route[] {
  const h = uploadHandlers(deps);
  return [{ method: 'GET', path: '/uploads/:attachment_id', auth: 'user', body: 'none', handler: h.downloadAttachment }];
}

function uploadHandlers({ config, log, perms }: Deps) {
  const dir = path.join(config.dataDir, 'uploads');
  return { downloadAttachment };

  /**
   * Members of the attachment's server or conversation only (others: the 404 of an unknown id);
   * images, audio and video inline, everything else a download; nosniff and a sandbox CSP
   * always; single byte ranges (206/416); ETag "<id>" with If-None-Match (304). HEAD too.
   */
  async function downloadAttachment(ctx: Ctx) {
    const attachment = perms.attachmentAccess(ctx.user, ctx.params.attachment_id);
    let handle: fs.promises.FileHandle;
    try {
      handle = await fs.promises.open(path.join(dir, attachment.id), 'r');
    } catch (err) {
      log(`attachment ${attachment.id} has no file: ${(err as NodeJS.ErrnoException).code ?? err}`);
      throw notFound('attachment not found');
    }
    try {
      const { size } = await handle.stat();
      serveFile(ctx.req, ctx.res, attachment, handle, size);
    } catch (err) {
      await handle.close();
      throw err;
    }
    return HANDLED;
  }
}
