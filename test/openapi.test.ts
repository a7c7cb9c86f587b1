import fs from 'node:fs';
import { createConfig, lint } from '@redocly/openapi-core';
import { Document, Spectral } from '@stoplight/spectral-core';
import * as Parsers from '@stoplight/spectral-parsers';
import { oas } from '@stoplight/spectral-rulesets';
import t from 'tap';
import { buildRoutes } from '../src/api';
import { SOCKET_PATHS } from '../src/parts/live/sockets';
import { API_GUIDE_FILE, OPENAPI_FILE, renderApiGuide, renderOpenApi } from '../scripts/openapi';
import { Client } from './helpers/client';
import { startServer } from './helpers/server';

const document = JSON.parse(fs.readFileSync(OPENAPI_FILE, 'utf8')) as { paths: Record<string, Record<string, unknown>> };

t.test('docs/openapi.json is what scripts/openapi builds (run `make openapi` after changing it)', async (t) => {
  t.equal(fs.readFileSync(OPENAPI_FILE, 'utf8'), renderOpenApi());
});

t.test("docs/api.md's endpoint table is generated from the same operations", async (t) => {
  const guide = fs.readFileSync(API_GUIDE_FILE, 'utf8');
  t.equal(guide, renderApiGuide(guide));
});

t.test('the document and the route table name the same operations, both ways', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const asDocumented = (path: string) => path.replace(/:([a-z_]+)/g, '{$1}');
  const table = new Set([...buildRoutes(server.app), ...SOCKET_PATHS].map((r) => `${r.method} ${asDocumented(r.path)}`));
  const documented = new Set(Object.entries(document.paths).flatMap(([path, ops]) => Object.keys(ops).map((method) => `${method.toUpperCase()} ${path}`)));
  t.ok(table.size > 60, `${table.size} routes in the table`);
  for (const route of table) t.ok(documented.has(route), `${route} is in docs/openapi.json`);
  for (const route of documented) t.ok(table.has(route), `${route} of docs/openapi.json exists`);
});

t.test('the OpenAPI linter (Redocly, recommended rules) finds no error', async (t) => {
  const problems = await lint({ ref: OPENAPI_FILE, config: await createConfig({ extends: ['recommended'] }) });
  const errors = problems.filter((p) => p.severity === 'error');
  t.same(
    errors.map((p) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`),
    [],
  );
  const warnings = problems.filter((p) => p.severity === 'warn').map((p) => `${p.ruleId} at ${p.location[0]?.pointer}`);
  t.comment(`${warnings.length} warning(s): ${warnings.join('; ')}`);
});

t.test('the Spectral linter (spectral:oas, every rule) finds no error', async (t) => {
  const spectral = new Spectral();
  spectral.setRuleset({ extends: [[oas as never, 'all']] });
  const problems = await spectral.run(new Document(fs.readFileSync(OPENAPI_FILE, 'utf8'), Parsers.Json, OPENAPI_FILE));
  const errors = problems.filter((p) => p.severity === 0).map((p) => `${p.code}: ${p.message} at ${p.path.join('.')}`);
  t.same(errors, []);
  const warnings = new Map<string, number>();
  for (const p of problems.filter((p) => p.severity === 1)) warnings.set(String(p.code), (warnings.get(String(p.code)) ?? 0) + 1);
  t.comment(`warnings by rule: ${[...warnings].map(([code, n]) => `${code} ${n}`).join(', ') || 'none'}`);
});

t.test('GET /api/openapi.json serves the document without a session', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const res = await new Client(server.url).get('/api/openapi.json');
  t.equal(res.status, 200);
  t.same(res.body, document);
});
