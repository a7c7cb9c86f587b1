import { HttpError, badRequest } from '../core/http/errors';
import { HANDLED, json } from '../core/http/respond';
import type { Body, PublicCtx, Route } from '../core/types';
import { integer, text, uuid } from '../core/validate';
import { EPOCH_HEADER, FORWARDED_HEADERS, GATEWAY_KEY_HEADER, OPEN_SOCKET_PATH, REPORT_PATH, USER_HEADER } from '../parts/cluster/protocol';
import type { Services } from '../parts/services';

/** Sockets one gateway may report (twice the open-files limit of a large machine). */
const MAX_REPORTED_SOCKETS = 200_000;
const MAX_SOCKET_ID = 2 ** 31 - 1;

/**
 * What a core answers its gateways (docs/scaling.md); 404 from a server with no gateways
 * (ROLE=all). A gateway
 * shows the key the core keeps in Redis (whoever reads the bus is trusted; nobody else gets past
 * 403). Opening a socket is authorized exactly as an upgrade made to the core: the answer is the
 * upgrade's own refusal (401, 403, 404, 429...) or, for a user stream, its `ready`.
 */
export function clusterRoutes({ cluster }: Pick<Services, 'cluster'>): Route[] {
  return [
    { method: 'POST', path: OPEN_SOCKET_PATH, auth: 'none', body: 'json', handler: openSocket },
    { method: 'POST', path: REPORT_PATH, auth: 'none', body: 'json', handler: reportAlive },
  ];

  /** The cluster, to a gateway that shows the key. */
  function fromGateway(ctx: PublicCtx) {
    if (cluster === null) throw new HttpError(404, 'no gateways here: this server runs alone (ROLE=all)');
    const shown = ctx.req.headers[GATEWAY_KEY_HEADER];
    if (!cluster.keyMatches(typeof shown === 'string' ? shown : undefined)) throw new HttpError(403, 'gateway key refused');
    ctx.res.setHeader(EPOCH_HEADER, cluster.epoch);
    return cluster;
  }

  /** `{gateway, socket, url, headers}` → 200 the `ready` frame (a user stream) or 204 (a room socket); the upgrade's refusal otherwise. */
  function openSocket(ctx: PublicCtx) {
    const cluster = fromGateway(ctx);
    const gateway = uuid(ctx.body, 'gateway');
    const socket = integer(ctx.body, 'socket', 1, MAX_SOCKET_ID);
    const url = text(ctx.body, 'url', { max: 8192 });
    const headers = forwardedHeaders(ctx.body.headers);
    const { ready, userId } = cluster.open(gateway, socket, { method: 'GET', url, headers });
    ctx.res.setHeader(USER_HEADER, userId);
    if (ready === null) ctx.res.writeHead(204).end();
    else ctx.res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(ready) }).end(ready);
    return HANDLED;
  }

  /**
   * `{gateway, sockets, up_to, hidden}`: the ids of every socket the gateway holds or is opening,
   * the highest id it had given when it made the report, and the user streams whose page is
   * hidden → `{epoch, unknown}`.
   */
  function reportAlive(ctx: PublicCtx) {
    const cluster = fromGateway(ctx);
    const gateway = uuid(ctx.body, 'gateway');
    const sockets = ctx.body.sockets;
    if (!isIdList(sockets)) throw badRequest(`sockets must be an array of at most ${MAX_REPORTED_SOCKETS} socket ids`);
    const upTo = integer(ctx.body, 'up_to', 0, MAX_SOCKET_ID);
    const hidden = ctx.body.hidden ?? [];
    if (!isIdList(hidden)) throw badRequest(`hidden must be an array of at most ${MAX_REPORTED_SOCKETS} socket ids`);
    return json({ epoch: cluster.epoch, unknown: cluster.alive(gateway, sockets, upTo, hidden) });
  }
}

function forwardedHeaders(value: Body[string]): Record<string, string> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw badRequest('headers must be an object');
  const headers: Record<string, string> = {};
  for (const name of FORWARDED_HEADERS) {
    const header = (value as Record<string, unknown>)[name];
    if (header === undefined) continue;
    if (typeof header !== 'string' || header.length > 8192) throw badRequest(`headers.${name} must be a string of at most 8192 characters`);
    headers[name] = header;
  }
  return headers;
}

function isIdList(value: unknown): value is number[] {
  return Array.isArray(value) && value.length <= MAX_REPORTED_SOCKETS && value.every((id) => Number.isInteger(id) && id >= 1 && id <= MAX_SOCKET_ID);
}
