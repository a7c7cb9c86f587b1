import fs from 'node:fs';
import path from 'node:path';
import { badRequest, notFound } from '../core/http/errors';
import { receiveFile } from '../core/http/multipart';
import { created, json, noContent } from '../core/http/respond';
import type { Ctx, Route } from '../core/types';
import { bool, oneOf, text } from '../core/validate';
import { serverEntry } from '../parts/live/ready';
import { ImportError, openExport } from '../parts/import/export-files';
import type { Removed } from '../parts/import/claims';
import type { Services } from '../parts/services';
import { MAX_NAME_CHARS } from '../rules/sizes';

type Deps = Pick<
  Services,
  | 'config'
  | 'log'
  | 'perms'
  | 'limits'
  | 'hub'
  | 'directory'
  | 'readStates'
  | 'presence'
  | 'members'
  | 'uploads'
  | 'imports'
  | 'claims'
  | 'joinGate'
  | 'notifications'
  | 'clock'
>;

/** A Discord data package is read for one small file; past this, upload a zip of its Account folder alone. */
export const MAX_PACKAGE_BYTES = 1024 * 1024 * 1024;
/** Servers one choice of a data-package claim may name. */
const MAX_PACKAGE_CHOICES = 100;
/** `Account/user.json` of a data package is a few KiB. */
const MAX_USER_JSON_BYTES = 1024 * 1024;

/**
 * Imports from Discord (docs/import.md): an export uploaded and checked, then imported into a
 * new server while the progress is read; the people it names, listed for the owner with their
 * claim codes; claims by code or by Discord data package; and a claimer hiding or erasing their
 * imported messages.
 */
export function importRoutes(deps: Deps): Route[] {
  const h = importHandlers(deps);
  return [
    { method: 'GET', path: '/api/imports', auth: 'user', body: 'none', handler: h.listImports },
    { method: 'POST', path: '/api/imports', auth: 'user', body: 'multipart', handler: h.uploadExport },
    { method: 'GET', path: '/api/imports/:import_id', auth: 'user', body: 'none', handler: h.getImport },
    { method: 'POST', path: '/api/imports/:import_id/start', auth: 'user', body: 'json-optional', handler: h.startImport },
    { method: 'DELETE', path: '/api/imports/:import_id', auth: 'user', body: 'none', handler: h.discardImport },
    { method: 'GET', path: '/api/servers/:server_id/imported-people', auth: 'user', body: 'none', handler: h.listImportedPeople },
    { method: 'GET', path: '/api/account/claims', auth: 'user', body: 'none', handler: h.listMyClaims },
    { method: 'POST', path: '/api/account/claims', auth: 'user', body: 'json', handler: h.claimByCode },
    { method: 'POST', path: '/api/account/claims/discord-package', auth: 'user', body: 'multipart', handler: h.claimByPackage },
    { method: 'POST', path: '/api/account/claims/discord-package/choose', auth: 'user', body: 'json', handler: h.choosePackageClaims },
    { method: 'POST', path: '/api/account/imported-messages', auth: 'user', body: 'json', handler: h.hideOrErase },
  ];
}

function importHandlers(deps: Deps) {
  const { config, log, perms, limits, hub, directory, members, uploads, imports, claims, joinGate } = deps;

  return {
    listImports,
    uploadExport,
    getImport,
    startImport,
    discardImport,
    listImportedPeople,
    listMyClaims,
    claimByCode,
    claimByPackage,
    choosePackageClaims,
    hideOrErase,
  };

  function listImports(ctx: Ctx) {
    return json(imports.list(ctx.user.id));
  }

  /**
   * Multipart, the zip in `export`; `?server_name=` names the new server. 201 import (checked, with
   * its dry run); 400 refused; 429 while another upload of the caller's is pending, 503 while too
   * many are (both before the body is read, and before the rate limit is spent).
   */
  async function uploadExport(ctx: Ctx) {
    const name = ctx.query.get('server_name');
    const serverName = name === null ? null : text({ server_name: name }, 'server_name', { max: MAX_NAME_CHARS });
    imports.admit(ctx.user.id);
    limits.importsPerUser.take(ctx.user.id, 'exports uploaded');
    return created(await imports.upload(ctx.req, ctx.user.id, serverName));
  }

  function getImport(ctx: Ctx) {
    return json(imports.get(ctx.params.import_id, ctx.user.id));
  }

  /** {system?: 'lines'|'skip', package_claims?: boolean}; 202 import, now running. */
  function startImport(ctx: Ctx) {
    const body = ctx.body ?? {};
    const system = body.system === undefined ? 'lines' : oneOf(body, 'system', ['lines', 'skip'] as const);
    const packageClaims = body.package_claims === undefined ? false : bool(body, 'package_claims');
    return json(imports.start(ctx.params.import_id, ctx.user.id, { system, packageClaims }), 202);
  }

  function discardImport(ctx: Ctx) {
    imports.discard(ctx.params.import_id, ctx.user.id);
    return noContent();
  }

  /** manage_server (the owner and full server administrators hold it): the placeholders and their claim codes. */
  function listImportedPeople(ctx: Ctx) {
    perms.requireServerFlag(ctx.user, ctx.params.server_id, 'manage_server');
    return json(claims.people(ctx.params.server_id));
  }

  /** The histories the caller claimed, in servers they are still in: what they may hide or erase. */
  function listMyClaims(ctx: Ctx) {
    return json(claims.mine(ctx.user.id));
  }

  /** {code}: the history the code names becomes the caller's. */
  function claimByCode(ctx: Ctx) {
    const code = text(ctx.body, 'code', { max: 64 });
    limits.claimsPerUser.take(ctx.user.id, 'claim codes tried');
    const person = claims.byCode(code);
    return json({ claimed: claimAndAnnounce(ctx, [person.userId]) });
  }

  /**
   * Multipart, the data package's zip in `package`: the Discord id in its `Account/user.json`
   * (either letter case) is read, and the servers holding an unclaimed history of that id whose
   * import allows data-package claims are listed; nothing is claimed or joined. A package is not
   * signed (anyone can forge an export naming someone's id), so the person chooses where to go:
   * the id is remembered for PACKAGE_CHOICE_MS for the choice (choosePackageClaims).
   */
  async function claimByPackage(ctx: Ctx) {
    limits.claimsPerUser.take(ctx.user.id, 'claims tried');
    const dir = path.join(config.dataDir, 'imports');
    const file = await receiveFile(ctx.req, { field: 'package', what: 'a data package', maxBytes: MAX_PACKAGE_BYTES, dir }, log);
    let discordId: string;
    try {
      discordId = await accountIdOf(file);
    } finally {
      fs.rmSync(file, { force: true });
    }
    const found = claims.byDiscordId(discordId);
    if (found.length === 0) {
      throw notFound("no imported history of this Discord account here is open to data-package claims (ask the server's owner for your claim code)");
    }
    claims.rememberPackage(ctx.user.id, discordId);
    return json({
      claimed: [],
      discord_id: discordId,
      servers: found.map((c) => ({ server_id: c.serverId, name: c.serverName, discord_name: c.discordName, messages: c.messages })),
    });
  }

  /** {server_ids}: of the servers the caller's data package listed, the histories in these become theirs (they join them). */
  function choosePackageClaims(ctx: Ctx) {
    const serverIds = ctx.body.server_ids;
    if (
      !Array.isArray(serverIds) ||
      serverIds.length === 0 ||
      serverIds.length > MAX_PACKAGE_CHOICES ||
      !serverIds.every((id) => typeof id === 'string' && id.length <= 64)
    ) {
      throw badRequest(`server_ids must be a list of 1 to ${MAX_PACKAGE_CHOICES} server ids`);
    }
    const discordId = claims.packageOf(ctx.user.id);
    if (discordId === null) throw notFound('no data package of yours was read in the last 15 minutes: send it again');
    const candidates = claims.byDiscordId(discordId);
    const chosen = [...new Set(serverIds as string[])].map((id) => {
      const found = candidates.find((c) => c.serverId === id);
      if (!found) throw notFound(`server ${id} holds no unclaimed history of your Discord account open to data-package claims`);
      return found.userId;
    });
    return json({ claimed: claimAndAnnounce(ctx, chosen) });
  }

  /** Claims, then tells: the claimer joins the servers they were not in, members see them join and the placeholder go. */
  function claimAndAnnounce(ctx: Ctx, placeholderIds: string[]) {
    const before = new Set(directory.serversOf(ctx.user.id).map((s) => s.id));
    const done = claims.claim(ctx.user.id, placeholderIds);
    for (const [i, claimed] of done.entries()) {
      const serverId = claimed.server_id;
      if (!before.has(serverId)) {
        before.add(serverId);
        joinGate.joined(serverId, ctx.user.id);
        hub.toUsers([ctx.user.id], { event: 'server_joined', server: serverEntry(deps, ctx.user.id, directory.server(serverId)!) });
        hub.toServer(serverId, { event: 'member_joined', server_id: serverId, member: members.record(serverId, ctx.user.id)! });
      } else {
        const member = members.record(serverId, ctx.user.id);
        if (member) hub.toServer(serverId, { event: 'member_updated', server_id: serverId, member });
      }
      hub.toServer(serverId, { event: 'member_left', server_id: serverId, user_id: placeholderIds[i] });
      // The placeholder's messages changed author, and mentions of it name the claimer: open tabs redraw (issue 47 #6).
      hub.toServer(serverId, { event: 'history_claimed', server_id: serverId, from_user_id: placeholderIds[i], to_user_id: ctx.user.id });
    }
    return done;
  }

  /** {server_id, action: 'hide'|'erase'}: the caller's imported messages there go back to a nameless placeholder, or are deleted. */
  function hideOrErase(ctx: Ctx) {
    const serverId = text(ctx.body, 'server_id', { max: 64 });
    const action = oneOf(ctx.body, 'action', ['hide', 'erase'] as const);
    if (!directory.server(serverId)) throw notFound('server not found');
    const removed: Removed = action === 'hide' ? claims.hide(ctx.user.id, serverId) : claims.erase(ctx.user.id, serverId);
    let count = 0;
    for (const [channelId, gone] of removed.byChannel) {
      count += gone.length;
      if (action === 'erase')
        for (const { id, seq } of gone) hub.message({ kind: 'channel', id: channelId, serverId }, { kind: 'deleted', messageId: id, seq });
    }
    uploads.deleteFiles(removed.fileIds);
    return json({ action, messages: count });
  }
}

/** The account id a Discord data package names (`Account/user.json`, `account/user.json`, maybe inside one folder). */
async function accountIdOf(file: string): Promise<string> {
  let files;
  try {
    files = await openExport(file);
  } catch (err) {
    if (err instanceof ImportError) throw badRequest(`not a Discord data package: ${err.message}`);
    throw err;
  }
  try {
    const entry = files
      .paths()
      .filter((p) => /(^|\/)account\/user\.json$/i.test(p))
      .sort((a, b) => a.length - b.length)[0];
    if (!entry) throw badRequest('not a Discord data package: it has no Account/user.json');
    if ((files.size(entry) ?? 0) > MAX_USER_JSON_BYTES) throw badRequest('Account/user.json is too large to be a data package');
    let id: unknown;
    try {
      id = (JSON.parse((await files.read(entry)).toString('utf8')) as { id?: unknown }).id;
    } catch {
      throw badRequest('Account/user.json is not JSON');
    }
    if (typeof id !== 'string' || !/^[0-9]{1,20}$/.test(id)) throw badRequest('Account/user.json has no Discord id');
    return id;
  } finally {
    files.close();
  }
}
