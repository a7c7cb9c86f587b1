/**
 * A small vocabulary for writing the OpenAPI document (docs/openapi.json) as typed data: JSON
 * Schema shorthands, and `op()`, which expands one operation of the route table into an OpenAPI
 * operation with its parameters, request body, success responses and the plain-text errors
 * every route of its kind can answer.
 */
export type Schema = Record<string, unknown>;

export const str: Schema = { type: 'string' };
export const uuid: Schema = { type: 'string', format: 'uuid' };
export const time: Schema = { type: 'string', format: 'date-time' };
export const int: Schema = { type: 'integer' };
export const bool: Schema = { type: 'boolean' };
export const nullable = (schema: Schema): Schema => ({ anyOf: [schema, { type: 'null' }] });
export const arr = (items: Schema): Schema => ({ type: 'array', items });
export const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
/** An enum, with its type stated (generators and linters want both). */
export const oneOf = (...values: (string | number)[]): Schema => ({
  type: values.every((v) => typeof v === 'string') ? 'string' : values.every(Number.isInteger) ? 'integer' : 'number',
  enum: values,
});
/** The bytes of a file (a multipart part or a download). */
export const binary: Schema = { type: 'string', format: 'binary', contentMediaType: 'application/octet-stream' };
export const withText = (schema: Schema, description: string): Schema => ({ ...schema, description });

/** An object whose listed properties are all required (except `optional`) and which has no others. */
export function obj(properties: Record<string, Schema>, optional: string[] = []): Schema {
  const required = Object.keys(properties).filter((key) => !optional.includes(key));
  return { type: 'object', properties, ...(required.length ? { required } : {}), additionalProperties: false };
}

/** A request body object: its fields as documented, any other key ignored by the server. */
export function input(properties: Record<string, Schema>, optional: string[] = []): Schema {
  const required = Object.keys(properties).filter((key) => !optional.includes(key));
  return { type: 'object', properties, ...(required.length ? { required } : {}) };
}

export type Auth = 'none' | 'user' | 'account' | 'admin';

/** A success answer: JSON with a schema, or one of the other kinds the service sends. */
export type Success =
  | { status: number; json: Schema; description?: string; headers?: Record<string, string> }
  | { status: number; kind: 'empty' | 'redirect' | 'html' | 'file' | 'websocket' | 'not-modified'; description: string; headers?: Record<string, string> };

export interface OpSpec {
  /** Route table area; the tag of the operation. */
  tag: string;
  summary: string;
  auth: Auth;
  description?: string;
  /** Query parameters: name -> schema (all optional). */
  query?: Record<string, Schema & { description?: string }>;
  /** json: application/json; form: JSON or a browser form; message: JSON or multipart; multipart: multipart only (the schema is its parts). */
  body?: { kind: 'json' | 'form' | 'message' | 'multipart'; schema: Schema; optional?: boolean };
  ok: Success[];
  /** Statuses particular to this operation (409, 429, ...), on top of those of its kind. */
  errors?: number[];
}

const ERROR_TEXT: Record<number, string> = {
  400: 'a path id, query parameter or body field is invalid',
  401: 'no valid session',
  403: 'not permitted: a cross-site request, a suspended account, a standing restriction or a missing permission',
  404: 'not found, or not visible to the caller',
  408: 'the body did not arrive in time',
  409: 'conflict with existing state',
  413: 'the body is too large',
  415: 'wrong Content-Type',
  416: 'range not satisfiable',
  426: 'a WebSocket path asked without the upgrade (Upgrade: websocket names it)',
  429: 'rate limited or over a cap on open sockets (Retry-After says when to try again)',
  500: 'unexpected error (logged)',
  503: 'the server is shutting down, or the client holds too many connections',
};

const STATE_CHANGING = new Set(['post', 'put', 'patch', 'delete']);

/** Expands an operation: path parameters from `{name}` segments, the errors its kind can answer. */
export function op(method: string, path: string, spec: OpSpec): Record<string, unknown> {
  const lower = method.toLowerCase();
  const pathParams = [...path.matchAll(/\{([a-z_]+)\}/g)].map((m) => m[1]);
  const parameters = [
    ...pathParams.map((name) => ({
      name,
      in: 'path',
      required: true,
      schema: name.endsWith('_id') ? uuid : str,
    })),
    ...Object.entries(spec.query ?? {}).map(([name, { description, ...schema }]) => ({
      name,
      in: 'query',
      required: false,
      ...(description ? { description } : {}),
      schema,
    })),
  ];
  const errors = new Set<number>([500, 503, ...(spec.errors ?? [])]);
  if (pathParams.length || spec.body || spec.query) errors.add(400);
  if (pathParams.length) errors.add(404);
  if (spec.auth !== 'none') errors.add(401).add(403);
  if (STATE_CHANGING.has(lower)) errors.add(403);
  if (spec.body) errors.add(400).add(408).add(413).add(415);
  if (spec.ok.some((ok) => 'kind' in ok && ok.kind === 'websocket')) errors.add(426);

  const responses: Record<string, unknown> = {};
  for (const ok of spec.ok) responses[String(ok.status)] = success(ok);
  for (const status of [...errors].sort()) {
    responses[String(status)] = { $ref: `#/components/responses/E${status}` };
  }
  const operation: Record<string, unknown> = {
    operationId: operationId(lower, path),
    tags: [spec.tag],
    summary: spec.summary,
    ...(spec.description ? { description: spec.description } : {}),
    'x-auth': spec.auth,
    security: spec.auth === 'none' ? [] : [{ session: [] }],
    ...(parameters.length ? { parameters } : {}),
    ...(spec.body ? { requestBody: requestBody(spec.body) } : {}),
    responses,
  };
  return operation;
}

function requestBody({ kind, schema, optional }: NonNullable<OpSpec['body']>): Record<string, unknown> {
  if (kind === 'multipart') return { required: !optional, content: { 'multipart/form-data': { schema } } };
  const content: Record<string, unknown> = { 'application/json': { schema } };
  if (kind === 'form') content['application/x-www-form-urlencoded'] = { schema };
  if (kind === 'message') {
    content['multipart/form-data'] = {
      schema: {
        type: 'object',
        properties: { content: str, reply_to: uuid, attachments: arr(binary) },
      },
      encoding: { attachments: { contentType: 'application/octet-stream' } },
    };
  }
  return { required: !optional, content };
}

/** Response headers: name -> description; a description starting with "always:" marks the header required. */
function headerObjects(headers: Record<string, string> = {}): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(headers).map(([name, description]) => [
      name,
      { description: description.replace(/^always: /, ''), ...(description.startsWith('always: ') ? { required: true } : {}), schema: str },
    ]),
  );
}

function success(ok: Success): Record<string, unknown> {
  const headers = 'kind' in ok && ok.kind === 'redirect' ? { Location: 'always: where the browser goes next', ...ok.headers } : ok.headers;
  const head = headers ? { headers: headerObjects(headers) } : {};
  if ('json' in ok) return { description: ok.description ?? 'success', ...head, content: { 'application/json': { schema: ok.json } } };
  switch (ok.kind) {
    case 'html':
      return { description: ok.description, ...head, content: { 'text/html': { schema: str } } };
    case 'file':
      return { description: ok.description, ...head, content: { '*/*': { schema: binary } } };
    default:
      return { description: ok.description, ...head };
  }
}

/** getServersByServerIdChannels-style ids from method and path, unique per operation (pages end in Page). */
function operationId(method: string, path: string): string {
  const page = path.startsWith('/api/') ? [] : ['page'];
  const words = path
    .split('/')
    .filter((part) => part && part !== 'api')
    .map((part) => (part.startsWith('{') ? `by_${part.slice(1, -1)}` : part))
    .join('_')
    .split(/[^a-zA-Z0-9]+/)
    .filter(Boolean);
  return [method, ...words, ...page].map((w, i) => (i === 0 ? w : w[0].toUpperCase() + w.slice(1))).join('');
}

/** Headers an error answer always carries. */
const ERROR_HEADERS: Record<number, Record<string, string>> = {
  426: { Upgrade: 'always: websocket' },
  429: { 'Retry-After': 'always: seconds to wait before trying again' },
};

/** The shared plain-text error responses, one per status. */
export function errorResponses(): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(ERROR_TEXT).map(([status, description]) => [
      `E${status}`,
      {
        description: `${description}; the body is a one-line plain-text reason`,
        ...(ERROR_HEADERS[Number(status)] ? { headers: headerObjects(ERROR_HEADERS[Number(status)]) } : {}),
        content: { 'text/plain': { schema: { type: 'string' } } },
      },
    ]),
  );
}
