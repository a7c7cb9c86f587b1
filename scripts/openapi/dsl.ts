/**
 * A small vocabulary for writing the OpenAPI document (docs/openapi.json) as typed data: JSON
 * Schema shorthands, and `op()`, which expands one operation of the route table into an OpenAPI
 * operation with its parameters, request body, success responses and the plain-text errors
 * every route of its kind can answer.
 */
import { assertBotMayUse } from '../../src/rules/bots';

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

// Text rules as src/core/validate.ts text() applies them, written so JavaScript and Python regex
// engines read them alike: classes spell whitespace out (never \s, which the two define
// differently), and `$(?!\u000a)` stops Python's `$` from also matching before a final newline.
/** What String.prototype.trim removes: a name of nothing but these is empty. */
const SPACE = '\\u0009-\\u000d\\u0020\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff';
/** Control characters refused on one line, and on several (tab and line breaks allowed there). */
const CONTROLS_LINE = '\\u0000-\\u001f\\u007f';
const CONTROLS_LINES = '\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f';
const END = '$(?!\\u000a)';

/**
 * A text field: at most `max` characters (code points) as sent, no control characters (tab and
 * line breaks allowed when `multiline`), nor any of `refused`; with `blank: false` (the default)
 * at least one character that is not a space. Surrounding spaces are trimmed when stored.
 */
export function text(max: number, opts: { multiline?: boolean; blank?: boolean; refused?: string } = {}): Schema {
  const bad = (opts.multiline ? CONTROLS_LINES : CONTROLS_LINE) + (opts.refused ?? '');
  const pattern = opts.blank ? `^[^${bad}]*${END}` : `^[^${bad}]*[^${bad}${SPACE}][^${bad}]*${END}`;
  return { type: 'string', ...(opts.blank ? {} : { minLength: 1 }), maxLength: max, pattern };
}

/** A username (src/parts/accounts/users.ts USERNAME_RULE). */
export const username: Schema = { type: 'string', minLength: 3, maxLength: 32, pattern: `^[A-Za-z0-9_-]{3,32}${END}` };
/** A new password: 8 to 72 characters of any kind (argon2 reads at most 72 bytes' worth meaningfully). */
export const password: Schema = { type: 'string', minLength: 8, maxLength: 72 };
/** One email address, a dot-atom local part and an LDH domain of two labels or more (src/api/email.ts). */
export const email: Schema = {
  type: 'string',
  format: 'email',
  maxLength: 254,
  pattern:
    "^(?=[^@]{1,64}@)[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@" +
    `[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+${END}`,
};
/** An invite token as issued (src/api/invites.ts): any other string names no invite (404). */
export const inviteToken: Schema = { type: 'string', pattern: `^[A-Za-z0-9_-]{16,64}${END}` };
/** One emoji or a `:shortcode:`: the shape only (which sequences are emoji is a rule in prose). */
export const emoji: Schema = {
  type: 'string',
  minLength: 1,
  maxLength: 32,
  pattern: `^(?::[a-z0-9_+-]{1,30}:|[0-9#*]\\ufe0f?\\u20e3|[^\\u0000-\\u007f]+)${END}`,
  examples: ['👍', ':+1:', '🇫🇷'],
};
/** A custom emoji's name (src/parts/community/emojis.ts EMOJI_NAME). */
export const emojiName: Schema = { type: 'string', minLength: 2, maxLength: 32, pattern: `^[A-Za-z0-9_]{2,32}${END}` };
/** Search words: not blank, at most 256 characters. */
export const searchWords: Schema = { type: 'string', minLength: 1, maxLength: 256, pattern: `[^${SPACE}]` };

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
  | { status: number; json: Schema; description?: string; headers?: Record<string, string>; mediaType?: string }
  | {
      status: number;
      kind: 'empty' | 'redirect' | 'html' | 'text' | 'file' | 'websocket' | 'not-modified';
      description: string;
      headers?: Record<string, string>;
    };

/** A rule stated in words: what it is, and how the server's 400 for it begins. */
export interface Prose {
  rule: string;
  refusal: string;
}
export const rule = (text: string, refusal: string): Prose => ({ rule: text, refusal });

/** Rules of every operation (stated at the document's root, `x-rules-in-prose`). */
export const EVERYWHERE: Prose[] = [
  rule('a JSON or form body is UTF-8', 'is not valid UTF-8'),
  rule('JSON nests at most 64 levels deep', 'JSON body nests deeper than'),
  rule('text holds no lone surrogate (UTF-16 halves cannot be stored as UTF-8)', 'is not valid Unicode text'),
];

export interface OpSpec {
  /** Route table area; the tag of the operation. */
  tag: string;
  summary: string;
  auth: Auth;
  description?: string;
  /** Query parameters: name -> schema (optional unless `required`). */
  query?: Record<string, Schema & { description?: string; required?: boolean; style?: string; explode?: boolean }>;
  /** Path parameters whose schema is not the default (a UUID for `*_id`, else a string). */
  path?: Record<string, Schema>;
  /**
   * json: application/json; form: JSON, and a browser form (said in prose: its every answer is a
   * redirect); message: JSON or multipart; multipart: multipart only (the schema is its parts).
   * `multipart` replaces the multipart schema of a message body.
   */
  body?: { kind: 'json' | 'form' | 'message' | 'multipart'; schema: Schema; optional?: boolean; multipart?: Schema };
  /** Reads the optional X-Audit-Log-Reason header (kept in the audit log). */
  audited?: boolean;
  /**
   * Rules no schema can state, under which input the schema calls valid is refused with 400:
   * listed in the description and in `x-rules-in-prose` with how the refusal begins, so a
   * generator can tell such a refusal from a defect.
   */
  prose?: Prose[];
  ok: Success[];
  /** Statuses particular to this operation (409, 429, ...), on top of those of its kind. */
  errors?: number[];
  /** Its errors are Discord's JSON (`{"code", "message"}`), not plain text: Discord's own paths (docs/integrations.md). */
  discordErrors?: boolean;
}

const FORM_NOTE =
  'A browser form may post the same fields as application/x-www-form-urlencoded: then every answer, errors included, ' +
  'is a 303 redirect (to `/?error=<code>` on failure), so a page never shows plain text.';

/** The optional reason of a moderation action, as sent (src/parts/community/audit.ts). */
const auditReasonHeader = {
  name: 'X-Audit-Log-Reason',
  in: 'header',
  required: false,
  description: 'why, for the audit log: percent-encoded UTF-8 (printable ASCII as sent); decoded, line breaks become spaces and it is cut at 512 characters',
  schema: { type: 'string', maxLength: 6144, pattern: `^[\\u0020-\\u007e]*${END}` },
};

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
  501: 'not served by this process (a voice socket asked of a gateway: the core serves it)',
  502: 'an OpenID Provider did not answer (sign-in through it): try again later',
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
      schema: spec.path?.[name] ?? (name.endsWith('_id') ? uuid : str),
    })),
    ...Object.entries(spec.query ?? {}).map(([name, { description, required, style, explode, ...schema }]) => ({
      name,
      in: 'query',
      required: required ?? false,
      ...(description ? { description } : {}),
      ...(style ? { style, explode } : {}),
      schema,
    })),
    ...(spec.audited ? [auditReasonHeader] : []),
  ];
  const errors = new Set<number>([500, 503, ...(spec.errors ?? [])]);
  if (pathParams.length || spec.body || spec.query || spec.audited) errors.add(400);
  if (pathParams.length) errors.add(404);
  if (spec.auth !== 'none') errors.add(401).add(403);
  if (STATE_CHANGING.has(lower)) errors.add(403);
  if (spec.body) errors.add(400).add(408).add(413).add(415);
  if (spec.ok.some((ok) => 'kind' in ok && ok.kind === 'websocket')) errors.add(426);

  const responses: Record<string, unknown> = {};
  for (const ok of spec.ok) responses[String(ok.status)] = success(ok);
  for (const status of [...errors].sort()) {
    responses[String(status)] = { $ref: `#/components/responses/${spec.discordErrors ? 'D' : 'E'}${status}` };
  }
  const description = [
    spec.description,
    spec.body?.kind === 'form' ? FORM_NOTE : undefined,
    spec.prose?.length ? `Refused with 400 by rules the schema cannot state: ${[...new Set(spec.prose.map((p) => p.rule))].join('; ')}.` : undefined,
  ].filter(Boolean);
  const operation: Record<string, unknown> = {
    operationId: operationId(lower, path),
    tags: [spec.tag],
    summary: spec.summary,
    ...(description.length ? { description: description.join('\n\n') } : {}),
    'x-auth': spec.auth,
    ...(spec.prose?.length ? { 'x-rules-in-prose': spec.prose } : {}),
    security: spec.auth === 'none' ? [] : botMay(method, path) && spec.auth !== 'admin' ? [{ session: [] }, { bot: [] }] : [{ session: [] }],
    ...(parameters.length ? { parameters } : {}),
    ...(spec.body ? { requestBody: requestBody(spec.body) } : {}),
    responses,
  };
  return operation;
}

function requestBody({ kind, schema, optional, multipart }: NonNullable<OpSpec['body']>): Record<string, unknown> {
  if (kind === 'multipart') return { required: !optional, content: { 'multipart/form-data': { schema } } };
  const content: Record<string, unknown> = { 'application/json': { schema } };
  if (multipart) content['multipart/form-data'] = { schema: multipart, encoding: { attachments: { contentType: 'application/octet-stream' } } };
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
  if ('json' in ok) return { description: ok.description ?? 'success', ...head, content: { [ok.mediaType ?? 'application/json']: { schema: ok.json } } };
  switch (ok.kind) {
    case 'html':
      return { description: ok.description, ...head, content: { 'text/html': { schema: str } } };
    case 'text':
      return { description: ok.description, ...head, content: { 'text/plain': { schema: str } } };
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

/** Discord's JSON error (src/core/http/respond.ts sendDiscordError): a 429 adds retry_after (seconds) and global. */
const DISCORD_ERROR: Schema = {
  type: 'object',
  required: ['code', 'message'],
  additionalProperties: false,
  properties: { code: int, message: str, retry_after: { type: 'number' }, global: bool },
};

/** The shared error responses, one per status: plain text (E…), and Discord's JSON on Discord's own paths (D…). */
export function errorResponses(): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(ERROR_TEXT).flatMap(([status, description]) => {
      const headers = ERROR_HEADERS[Number(status)] ? { headers: headerObjects(ERROR_HEADERS[Number(status)]) } : {};
      return [
        [
          `E${status}`,
          { description: `${description}; the body is a one-line plain-text reason`, ...headers, content: { 'text/plain': { schema: { type: 'string' } } } },
        ],
        [
          `D${status}`,
          {
            description: `${description}; the body is Discord's JSON error: code (Discord's JSON error code) and message`,
            ...headers,
            content: { 'application/json': { schema: DISCORD_ERROR } },
          },
        ],
      ];
    }),
  );
}

/** Whether a bot's token opens this operation (src/rules/bots.ts, the one rule). */
function botMay(method: string, path: string): boolean {
  try {
    assertBotMayUse(method.toUpperCase(), path.replace(/\{([a-z_]+)\}/g, ':$1'));
    return true;
  } catch {
    return false;
  }
}
