import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';

// One writer per row: the tables that many places fill have one module that inserts their rows,
// which the routes, the command line and the import worker (on its own connection) all call, so
// a new column has one place to go. The migrations (src/core/db.ts) are the exception.
const SRC = path.join(__dirname, '..', '..', 'src');
const MIGRATIONS = path.join('core', 'db.ts');

/** Each owned table and the one module of src/ that inserts its rows. */
const OWNERS = new Map([
  ['users', path.join('parts', 'accounts', 'account-rows.ts')],
  ['channels', path.join('parts', 'community', 'channels.ts')],
]);

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

const INSERT = /\b(?:INSERT|REPLACE)(?:\s+OR\s+[A-Z]+)?\s+INTO\s+["`]?([A-Za-z_][A-Za-z0-9_]*)/gi;

/** Table -> the files (relative to src/) whose text inserts into it. */
function insertsOf(files: Map<string, string>): Map<string, string[]> {
  const writers = new Map<string, string[]>();
  for (const [file, text] of files) {
    for (const [, table] of text.matchAll(INSERT)) {
      const list = writers.get(table.toLowerCase()) ?? [];
      if (!list.includes(file)) list.push(file);
      writers.set(table.toLowerCase(), list);
    }
  }
  return writers;
}

const strayWriters = (writers: Map<string, string[]>): string[] =>
  [...OWNERS].flatMap(([table, owner]) =>
    (writers.get(table) ?? []).filter((file) => file !== owner && file !== MIGRATIONS).map((file) => `${file} inserts into ${table}`),
  );

t.test('the writer finder sees every form of an insert, and only inserts', async (t) => {
  const sample = new Map([
    [path.join('parts', 'a.ts'), "db.prepare('INSERT OR IGNORE INTO users (id) VALUES (?)')"],
    [path.join('parts', 'b.ts'), 'db.prepare(`insert   into\n  channels (id) VALUES (?)`)'],
    [path.join('parts', 'c.ts'), 'db.prepare(\'REPLACE INTO "users" (id) VALUES (?)\')'],
    [path.join('parts', 'd.ts'), "db.prepare('SELECT id FROM users'); db.prepare('INSERT INTO users_archive (id) VALUES (?)')"],
    [MIGRATIONS, "db.exec('INSERT INTO channels (id) SELECT id FROM old_channels')"],
    [OWNERS.get('users')!, "db.prepare('INSERT INTO users (id) VALUES (?)')"],
  ]);
  t.same(strayWriters(insertsOf(sample)).sort(), [
    `${path.join('parts', 'a.ts')} inserts into users`,
    `${path.join('parts', 'b.ts')} inserts into channels`,
    `${path.join('parts', 'c.ts')} inserts into users`,
  ]);
});

t.test('users and channels rows are inserted by their owners only (and the migrations)', async (t) => {
  const files = new Map(sourceFiles(SRC).map((file) => [path.relative(SRC, file), fs.readFileSync(file, 'utf8')]));
  const writers = insertsOf(files);
  for (const [table, owner] of OWNERS) t.ok(writers.get(table)?.includes(owner), `${owner} writes ${table}`);
  t.same(strayWriters(writers), []);
});
