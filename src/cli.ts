import fs from 'node:fs';
import path from 'node:path';
import { ConfigError, loadConfig } from './config';
import { openDatabase } from './db';

const USAGE = `usage:
  node dist/cli.js admin grant <username>
  node dist/cli.js admin revoke <username>
  node dist/cli.js admin list`;

/**
 * Administration for self-hosters, safe while the server runs: it writes the same SQLite file
 * (WAL allows it), and the server reads is_admin fresh on every request.
 */
function main(argv: string[]): number {
  const [area, command, username] = argv;
  if (area !== 'admin' || !['grant', 'revoke', 'list'].includes(command ?? '') || (command !== 'list' && !username)) {
    console.error(USAGE);
    return 2;
  }
  let dataDir: string;
  try {
    dataDir = loadConfig(process.env).dataDir;
  } catch (err) {
    console.error(err instanceof ConfigError ? err.message : String(err));
    return 2;
  }
  if (!fs.existsSync(path.join(dataDir, 'chat.db'))) {
    // Opening would create an empty database: a mistyped DATA_DIR must not look like "no users".
    console.error(`no database at ${path.join(dataDir, 'chat.db')}; set DATA_DIR to the server's data directory`);
    return 1;
  }
  let db;
  try {
    db = openDatabase(path.join(dataDir, 'chat.db'));
  } catch (err) {
    console.error(`cannot open the database in ${dataDir}: ${(err as Error).message}`);
    return 1;
  }
  try {
    if (command === 'list') {
      const rows = db.prepare('SELECT username FROM users WHERE is_admin = 1 ORDER BY username').all() as { username: string }[];
      console.log(rows.length ? rows.map((r) => r.username).join('\n') : '(no administrators)');
      return 0;
    }
    const result = db
      .prepare('UPDATE users SET is_admin = ? WHERE username = ? COLLATE NOCASE')
      .run(command === 'grant' ? 1 : 0, username);
    if (result.changes === 0) {
      console.error(`no user named ${username}`);
      return 1;
    }
    console.log(`${username} ${command === 'grant' ? 'is now' : 'is no longer'} an administrator`);
    return 0;
  } finally {
    db.close();
  }
}

process.exitCode = main(process.argv.slice(2));
