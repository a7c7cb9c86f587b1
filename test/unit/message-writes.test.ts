import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';

// One writer per row (issue 46): every statement that writes a row of `messages` is in
// src/parts/messages/message-writes.ts, which the store, the import worker and claims call, each
// on its own connection. The migrations of src/core/db.ts write the old shapes of the table and
// stand apart.
const SRC = path.join(__dirname, '..', '..', 'src');
const WRITER = path.join('parts', 'messages', 'message-writes.ts');
const MIGRATIONS = path.join('core', 'db.ts');
const WRITE = /\b(?:INSERT(?:\s+OR\s+\w+)?\s+INTO|UPDATE(?:\s+OR\s+\w+)?|DELETE\s+FROM)\s+messages\b/gi;

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** "file: statement" for every write of `messages` in `files` (relative path -> text). */
const writesIn = (files: Map<string, string>) =>
  [...files].flatMap(([file, text]) => [...text.matchAll(WRITE)].map((m) => `${file}: ${m[0].replace(/\s+/g, ' ')}`));

t.test('the finder finds each kind of write, and not a table that only starts with the name', async (t) => {
  const sample = new Map([
    ['a.ts', "db.prepare('INSERT INTO messages (id) VALUES (?)'); db.prepare(`UPDATE  messages SET x = 1`)"],
    ['b.ts', "'DELETE FROM messages WHERE seq = ?'; 'INSERT OR IGNORE INTO messages_fts (x) VALUES (1)'; 'update or ignore messages set y = 2'"],
  ]);
  t.same(writesIn(sample), ['a.ts: INSERT INTO messages', 'a.ts: UPDATE messages', 'b.ts: DELETE FROM messages', 'b.ts: update or ignore messages']);
});

t.test('every write of a messages row is the message writer’s', async (t) => {
  const files = new Map(sourceFiles(SRC).map((file) => [path.relative(SRC, file), fs.readFileSync(file, 'utf8')]));
  files.delete(MIGRATIONS);
  const found = writesIn(files);
  t.ok(found.length >= 3, `${found.length} writes found`);
  t.same(
    found.filter((w) => !w.startsWith(`${WRITER}:`)),
    [],
    `only ${WRITER} writes messages rows`,
  );
});
