import { pipeline } from 'node:stream';
import yazl from 'yazl';
import { contentDisposition } from '../core/http/downloads';
import { forbidden } from '../core/http/errors';
import { HANDLED } from '../core/http/respond';
import { describeError } from '../core/callbacks';
import { exportFileName, writeServerExport } from '../parts/import/discord-export';
import type { Services } from '../parts/services';
import type { Ctx, Route } from '../core/types';

type Deps = Pick<Services, 'db' | 'config' | 'perms' | 'limits' | 'log'>;

/** A whole server in DiscordChatExporter's JSON shape, for its owner (src/parts/import/discord-export.ts). */
export function serverExportRoutes(deps: Deps): Route[] {
  const h = serverExportHandlers(deps);
  return [{ method: 'GET', path: '/api/servers/:server_id/export', auth: 'user', body: 'none', handler: h.exportServer }];
}

function serverExportHandlers({ db, config, perms, limits, log }: Deps) {
  const nameOf = db.prepare<[string], string>('SELECT name FROM servers WHERE id = ?').pluck();
  return { exportServer };

  /**
   * GET /api/servers/{server_id}/export
   * - the owner only: 403 to other members, 404 to everyone else (as for any server);
   * - 3 exports, then one an hour, per user (429 with Retry-After);
   * - 200 application/zip, streamed as it is made: nothing of it waits on disk or in memory.
   *   Once the answer has begun, a failure can only cut it short (logged): a zip without its
   *   central directory, which no unzipper takes for whole.
   */
  async function exportServer(ctx: Ctx) {
    const serverId = ctx.params.server_id;
    if (perms.serverAccess(ctx.user, serverId) !== 'owner') throw forbidden('only the owner can export a server');
    const headers = {
      'Content-Type': 'application/zip',
      'Content-Disposition': contentDisposition('attachment', `${exportFileName(nameOf.get(serverId)!)}.zip`),
      'Cache-Control': 'private, no-store',
    };
    if (ctx.req.method === 'HEAD') {
      ctx.res.writeHead(200, headers);
      ctx.res.end();
      return HANDLED;
    }
    limits.serverExportsPerUser.take(ctx.user.id, 'server exports');
    const started = performance.now();
    const zip = new yazl.ZipFile();
    // Every stream of the zip reports here, whenever it fails (a file deleted while it is read,
    // the client leaving): that one download ends, the process does not.
    const cut = (err: unknown) => {
      log(`export of server ${serverId} failed: ${describeError(err)}`);
      ctx.res.destroy();
    };
    zip.on('error', cut);
    ctx.res.writeHead(200, headers);
    pipeline(zip.outputStream, ctx.res, (err) => {
      if (err && err.code !== 'ERR_STREAM_PREMATURE_CLOSE') cut(err);
    });
    try {
      const { channels, messages, files } = await writeServerExport(db, config.dataDir, serverId, zip);
      zip.end();
      log(
        `export of server ${serverId}: ${channels} channels, ${messages} messages, ${files} files written in ${((performance.now() - started) / 1000).toFixed(1)} s`,
      );
    } catch (err) {
      if (!ctx.res.destroyed) cut(err);
    }
    return HANDLED;
  }
}
