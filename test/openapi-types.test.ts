// People generate clients from docs/openapi.json. This generates TypeScript types from it with
// openapi-typescript, as they would, and type-checks a small client that reads the fields of
// every free-form-looking answer (audit changes, report snapshots and targets, headers) without
// a single cast. A client that reads a field the document does not promise must fail to compile.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';
import t from 'tap';
import ts from 'typescript';
import { OPENAPI_FILE } from '../scripts/openapi';

const CLIENT = `
import type { components, paths } from './api';

type Schemas = components['schemas'];

/** One line per audit entry, reading what each action recorded. */
export function describeAudit(entry: Schemas['AuditEntry']): string {
  switch (entry.action) {
    case 'channel_update':
      return entry.changes?.name ? \`renamed #\${entry.changes.name.from} to #\${entry.changes.name.to}\` : \`slow mode \${entry.changes?.slowmode_seconds?.to ?? 0}\`;
    case 'thread_update':
      return entry.changes?.archived ? \`archived: \${entry.changes.archived.to}\` : \`thread \${entry.changes?.name?.to ?? ''}\`;
    case 'channel_create':
    case 'channel_delete':
    case 'thread_delete':
    case 'role_delete':
      return \`\${entry.action} \${entry.changes?.name ?? ''}\`;
    case 'role_create':
      return \`role \${entry.changes?.name} admin=\${entry.changes?.full_server_admin}\`;
    case 'role_update':
      return \`role admin \${entry.changes?.full_server_admin?.to}\`;
    case 'role_assign':
      return \`gave \${entry.changes?.role ?? 'no role'} (\${entry.changes?.role_id ?? '-'})\`;
    case 'category_create':
    case 'category_delete':
      return \`\${entry.action} \${entry.changes?.name}\`;
    case 'category_update':
      return \`category \${entry.changes?.name?.to ?? ''} at \${entry.changes?.position?.to ?? '-'}\`;
    case 'role_unassign':
      return \`took \${entry.changes?.role} (\${entry.changes?.roles.from.join()} -> \${entry.changes?.roles.to.join()})\`;
    case 'member_timeout':
      return \`timed out until \${entry.changes?.timeout_until}\`;
    case 'member_voice_update':
      return \`voice: mute \${entry.changes?.mute}, deaf \${entry.changes?.deaf}\`;
    case 'member_move':
    case 'member_disconnect':
      return \`voice: from \${entry.changes?.from} to \${entry.changes?.channel_id ?? 'nowhere'}\`;
    case 'owner_transfer':
      return \`owner is now \${entry.changes?.owner_id}\`;
    case 'server_update':
      return \`server \${entry.changes?.description?.to ?? entry.changes?.name?.to} \${entry.changes?.permissions?.to.join() ?? ''}\`;
    case 'overwrite_update':
    case 'overwrite_delete':
      return \`\${entry.changes?.kind} \${entry.changes?.target_id}: allow \${entry.changes?.allow.to?.join() ?? '-'}, deny \${entry.changes?.deny.from?.join() ?? '-'}\`;
    case 'webhook_create':
      return \`webhook \${entry.changes?.name} in \${entry.changes?.channel_id}\`;
    case 'webhook_update':
      return \`webhook \${entry.changes?.name ?? ''} secret=\${entry.changes?.github_secret_set ?? '-'}\`;
    case 'webhook_delete':
      return \`webhook \${entry.changes?.name} gone with \${entry.changes?.messages_deleted} messages\`;
    case 'emoji_create':
    case 'sticker_create':
      return \`\${entry.action} \${entry.changes?.name} animated=\${entry.changes?.animated}\`;
    case 'emoji_update':
    case 'sticker_update':
      return \`renamed \${entry.changes?.name?.from} to \${entry.changes?.name?.to}\`;
    case 'emoji_delete':
    case 'sticker_delete':
      return \`\${entry.action} \${entry.changes?.name}\`;
    case 'automod_rule_create':
    case 'automod_rule_update':
    case 'automod_rule_delete':
      return \`\${entry.action} \${entry.changes?.name} (\${entry.changes?.trigger_type}, \${entry.changes?.keywords ?? 0} keywords): \${entry.changes?.actions.join()}\`;
    case 'automod_block':
    case 'automod_alert':
      return \`AutoMod \${entry.changes?.rule_name} in \${entry.changes?.channel_id}: \${entry.changes?.cause} \${entry.changes?.alert_message_id ?? ''}\`;
    case 'joins_pause':
      return \`joins paused: \${entry.changes?.joins_paused.to}\`;
    case 'onboarding_update':
      return \`screening \${entry.changes?.enabled?.to ?? '-'}, \${entry.changes?.rules?.to ?? '-'} rules, \${entry.changes?.questions?.to ?? '-'} questions, \${entry.changes?.let_in ?? 0} let in\`;
    case 'onboarding_accept':
      return \`accepted with \${entry.changes?.answers.join()} (\${entry.changes?.role_ids.join()})\`;
    default: {
      const none: null = entry.changes;
      return \`\${entry.action} on \${entry.target_kind} \${entry.target_id} \${none}\`;
    }
  }
}

/** What an administrator sees of a report, from its snapshot and context. */
export function describeReport(report: Schemas['ReportWithContext']): string {
  switch (report.type) {
    case 'user':
      return \`\${report.snapshot.username} (now \${report.context.target.username})\`;
    case 'server':
      return \`\${report.snapshot.name ?? report.snapshot.server_id} owned by \${report.snapshot.owner_username} (now \${report.context.target.name})\`;
    default:
      return \`\${report.context.target.username}: \${report.snapshot.content} (\${report.snapshot.versions.length} versions, \${report.snapshot.attachments.map((a) => a.name).join()})\`;
  }
}

type LoginHeaders = paths['/api/login']['post']['responses'][200]['headers'];
export const cookieOf = (headers: LoginHeaders): string => headers['Set-Cookie'];
type Limited = components['responses']['E429']['headers'];
export const waitOf = (headers: Limited): number => Number(headers['Retry-After']);
type Download = paths['/uploads/{attachment_id}']['get']['responses'][200]['content']['*/*'];
export const bytesOf = (body: Download): string => body;
`;

// Each line reads something the document does not promise for that kind: each must not compile.
const WRONG = [
  "export const a = (r: S['ReportWithContext']) => r.type === 'user' ? r.snapshot.content : '';",
  "export const b = (e: S['AuditEntry']) => e.action === 'member_kick' ? e.changes.name : '';",
  "export const c = (e: S['AuditEntry']) => e.action === 'channel_create' ? e.changes?.topic : '';",
];

/** Type-checks the files together (one program: the generated types are read once); the errors of each. */
function compile(dir: string, files: Record<string, string>): Map<string, string[]> {
  for (const [file, source] of Object.entries(files)) fs.writeFileSync(path.join(dir, file), source);
  const names = Object.keys(files).map((file) => path.join(dir, file));
  const program = ts.createProgram(names, { strict: true, noEmit: true, target: ts.ScriptTarget.ES2022, types: [] });
  const errors = new Map<string, string[]>(Object.keys(files).map((file) => [file, []]));
  for (const d of ts.getPreEmitDiagnostics(program)) {
    const file = d.file ? path.basename(d.file.fileName) : 'client.ts';
    errors.get(file)?.push(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
  }
  return errors;
}

t.test('types generated from the document with openapi-typescript type-check a client that reads every field without a cast', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chat-types-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const ast = await openapiTS(pathToFileURL(OPENAPI_FILE));
  fs.writeFileSync(path.join(dir, 'api.d.ts'), astToString(ast));
  t.notMatch(CLIENT, / as |<any>|: any\b/, 'the client has no cast');
  const wrong = Object.fromEntries(
    WRONG.map((line, i) => [`wrong${i}.ts`, `import type { components } from './api';\ntype S = components['schemas'];\n${line}\n`]),
  );
  const errors = compile(dir, { 'client.ts': CLIENT, ...wrong });
  t.same(errors.get('client.ts'), [], 'the client compiles under strict');
  WRONG.forEach((line, i) => t.ok(errors.get(`wrong${i}.ts`)!.length > 0, `refused: ${line.slice(0, 90)}`));
});
