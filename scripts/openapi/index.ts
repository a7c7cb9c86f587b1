/**
 * docs/openapi.json, built from typed data: the schemas (schemas.ts) and one entry per route
 * (paths.ts). `make openapi` writes the file; test/openapi.test.ts fails while the committed file
 * differs from what this builds, and checks the document against the route table both ways.
 */
import fs from 'node:fs';
import path from 'node:path';
import { EVERYWHERE, errorResponses, op } from './dsl';
import { operations } from './paths';
import { schemas } from './schemas';

/** The repository root: the nearest folder with package.json (this file runs from scripts/ or dist-scripts/). */
function repositoryRoot(dir = __dirname): string {
  return fs.existsSync(path.join(dir, 'package.json')) ? dir : repositoryRoot(path.dirname(dir));
}

export const OPENAPI_FILE = path.join(repositoryRoot(), 'docs', 'openapi.json');

const TAGS: [string, string][] = [
  ['Accounts', 'Register, sessions, users, the account record'],
  ['Sign-in', 'Signing in with an OpenID Provider (docs/sso.md) or a passkey; linked identities'],
  ['Email', 'Email verification and password reset'],
  ['Servers', 'Servers, channels, roles, members, invites'],
  ['Messages', 'Channel messages, reactions and attachments'],
  ['Emoji', "A server's custom emoji and stickers"],
  ['Friends', 'Friends and friend requests'],
  ['Conversations', 'Direct messages and group chats'],
  ['Search', 'Message search'],
  ['Attachments', 'Downloads'],
  ['WebSocket', 'Live events (upgrades)'],
  ['Moderation', 'Reports and administration'],
  ['Imports', 'Imports from Discord: uploads, dry runs, progress, placeholders and claims'],
  ['Notifications', 'Notification settings, marking servers and everything read'],
  ['Integrations', 'Bots (Authorization: Bot <token>) and incoming webhooks in Discord, Slack and GitHub formats'],
  ['Cluster', 'What a core answers its gateways (ROLE=core; docs/scaling.md): not for clients'],
  ['App', 'The installable app: its web app manifest, and the page another app shares to'],
];

export function buildOpenApi(): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const [method, route, spec] of operations) {
    paths[route] ??= {};
    if (paths[route][method.toLowerCase()]) throw new Error(`${method} ${route} is described twice`);
    paths[route][method.toLowerCase()] = op(method, route, spec);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'chat',
      version: '1.0.0',
      description:
        'A self-hosted chat service: accounts, servers with channels and roles, friends, direct messages and ' +
        'group chats, attachments, live delivery over WebSocket, reports and moderation. The readable guide, ' +
        'with every decision, is docs/api.md. Errors are plain text with the status; success bodies are JSON. ' +
        'Input the schemas call invalid is refused with a 4xx; input they call valid is refused with 400 only by the rules an ' +
        `operation lists under x-rules-in-prose, and these everywhere: ${EVERYWHERE.map((p) => p.rule).join('; ')}.`,
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
    },
    'x-rules-in-prose': EVERYWHERE,
    servers: [{ url: '/', description: 'the server this document was fetched from (its BASE_URL)' }],
    security: [{ session: [] }],
    tags: TAGS.map(([name, description]) => ({ name, description })),
    paths,
    components: {
      securitySchemes: {
        session: { type: 'apiKey', in: 'cookie', name: 'app_session', description: 'set by POST /api/login' },
        bot: {
          type: 'apiKey',
          in: 'header',
          name: 'Authorization',
          description: '`Bot <token>`: a bot account (POST /api/bots); not a cookie, so cross-site rules do not apply. Every operation listing it takes it',
        },
      },
      schemas,
      responses: errorResponses(),
    },
  };
}

/** The document as committed: two-space JSON and a final newline. */
export const renderOpenApi = (): string => `${JSON.stringify(buildOpenApi(), null, 2)}\n`;

export const API_GUIDE_FILE = path.join(repositoryRoot(), 'docs', 'api.md');
const TABLE_START = '<!-- endpoint table: generated from docs/openapi.json by `make openapi`; do not edit by hand -->';
const TABLE_END = '<!-- end of endpoint table -->';
const AUTH_WORDS: Record<string, string> = {
  none: 'none',
  user: 'session',
  account: 'session (suspended too)',
  admin: 'administrator',
};

/** docs/api.md's "Every endpoint" table, so the guide and the contract list the same operations. */
export function renderEndpointTable(): string {
  const paths = buildOpenApi().paths as Record<string, Record<string, { responses: object }>>;
  const rows = operations.map(([method, route, spec]) => {
    const statuses = Object.keys(paths[route][method.toLowerCase()].responses).filter((s) => s !== '500' && s !== '503');
    return `| ${method} | ${route} | ${AUTH_WORDS[spec.auth]} | ${spec.summary} | ${statuses.join(', ')} |`;
  });
  const note = 'Every operation may also answer **500** (unexpected, logged) and **503** (shutting down).';
  return [TABLE_START, '', '| method | path | auth | what | statuses |', '|---|---|---|---|---|', ...rows, '', note, '', TABLE_END].join('\n');
}

/** docs/api.md with its endpoint table replaced by the current one. */
export function renderApiGuide(current: string): string {
  const start = current.indexOf(TABLE_START);
  const end = current.indexOf(TABLE_END);
  if (start === -1 || end === -1) throw new Error('docs/api.md has no endpoint table markers');
  return current.slice(0, start) + renderEndpointTable() + current.slice(end + TABLE_END.length);
}

if (require.main === module) {
  fs.writeFileSync(OPENAPI_FILE, renderOpenApi());
  fs.writeFileSync(API_GUIDE_FILE, renderApiGuide(fs.readFileSync(API_GUIDE_FILE, 'utf8')));
  console.log(`wrote ${path.relative(process.cwd(), OPENAPI_FILE)} and the endpoint table of ${path.relative(process.cwd(), API_GUIDE_FILE)}`);
}
