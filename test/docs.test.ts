import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { buildRoutes } from '../src/api';
import { startServer } from './helpers/server';

t.test('every route in the route table is documented in docs/api.md', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const doc = fs.readFileSync(path.join(__dirname, '..', 'docs', 'api.md'), 'utf8');
  const routes = buildRoutes(server.app);
  t.ok(routes.length > 50, `the table has ${routes.length} routes`);
  for (const route of routes) {
    const documented = route.path.replace(/:([a-z_]+)/g, '{$1}');
    t.ok(doc.includes(documented), `${route.method} ${documented}`);
  }
});
