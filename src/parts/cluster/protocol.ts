/**
 * What a core and its gateways say to each other over HTTP (docs/scaling.md): the routes the
 * core answers (src/api/cluster.ts), the headers, and how often a gateway reports.
 */
export const OPEN_SOCKET_PATH = '/api/cluster/sockets';
export const REPORT_PATH = '/api/cluster/alive';
/** The request headers a gateway forwards of an upgrade: what authorizing a socket reads. */
export const FORWARDED_HEADERS = ['cookie', 'authorization', 'origin', 'host', 'sec-fetch-site', 'user-agent'] as const;
/** The key the core keeps in Redis, shown by a gateway on every request. */
export const GATEWAY_KEY_HEADER = 'x-gateway-key';
/** On every answer to a gateway that showed the right key: the core's epoch (a random id per start). */
export const EPOCH_HEADER = 'x-core-epoch';
/** On an opened socket: whose it is (the gateway's log and indexes). */
export const USER_HEADER = 'x-socket-user';
/** A gateway reports the sockets it holds this often; the core takes one silent for GATEWAY_TIMEOUT_MS for gone. */
export const GATEWAY_ALIVE_MS = 2_000;
export const GATEWAY_TIMEOUT_MS = 10_000;
