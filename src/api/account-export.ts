import fs from 'node:fs';
import { pipeline } from 'node:stream';
import { contentDisposition } from '../core/http/downloads';
import { notFound } from '../core/http/errors';
import { HANDLED, json } from '../core/http/respond';
import type { Services } from '../parts/services';
import type { Ctx, Route } from '../core/types';

type Deps = Pick<Services, 'accountExports' | 'limits' | 'log'>;

/** The account export: start one, see how it goes, download the zip (src/parts/accounts/account-export.ts). */
export function accountExportRoutes(deps: Deps): Route[] {
  const h = accountExportHandlers(deps);
  return [
    { method: 'POST', path: '/api/account/export', auth: 'account', body: 'none', handler: h.startExport },
    { method: 'GET', path: '/api/account/export', auth: 'account', body: 'none', handler: h.exportStatus },
    { method: 'GET', path: '/api/account/export/file', auth: 'account', body: 'none', handler: h.downloadExport },
  ];
}

function accountExportHandlers({ accountExports, limits, log }: Deps) {
  return { startExport, exportStatus, downloadExport };

  /** 202 {status: "running"}; 409 while one runs; a new export replaces the last. */
  function startExport(ctx: Ctx) {
    accountExports.start(ctx.user.id, () => limits.exportsPerUser.take(ctx.user.id, 'exports'));
    return json({ status: 'running' }, 202);
  }

  /** {status: none | running | ready, url, created_at, size}. */
  function exportStatus(ctx: Ctx) {
    return json(accountExports.status(ctx.user.id));
  }

  /** The zip; 404 when no export is ready. */
  async function downloadExport(ctx: Ctx) {
    const file = accountExports.file(ctx.user.id);
    const stat = file ? await fs.promises.stat(file).catch(() => null) : null;
    if (!file || !stat) throw notFound('no export is ready: start one with POST /api/account/export');
    ctx.res.writeHead(200, {
      'Content-Type': 'application/zip',
      'Content-Length': stat.size,
      'Content-Disposition': contentDisposition('attachment', `chat-export-${ctx.user.username}.zip`),
      'Cache-Control': 'private, no-store',
    });
    if (ctx.req.method === 'HEAD') {
      ctx.res.end();
      return HANDLED;
    }
    pipeline(fs.createReadStream(file), ctx.res, (err) => {
      if (err && err.code !== 'ERR_STREAM_PREMATURE_CLOSE') log(`export download failed: ${err.message}`);
    });
    return HANDLED;
  }
}
