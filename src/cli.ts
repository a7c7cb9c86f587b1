import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BackupError, backup, restore } from './parts/backup';
import { prepareLocalJanus } from './parts/voice/janus-config';
import { ConfigError, loadConfig } from './core/config';
import { type DB, openDatabase } from './core/db';
import { createAccountChanges } from './parts/accounts/account-changes';
import { createDeviceStore } from './parts/accounts/devices';
import { systemClock } from './core/clock';
import { SUSPENDED } from './rules/standing';
import { turnOffTwoFactor } from './parts/accounts/two-factor';
import { type ExportFiles, ImportError, openExport } from './parts/import/export-files';
import { formatPlan, scanExport } from './parts/import/discord-plan';
import { formatResult, importDiscord, setImportStatus, takeCliImport } from './parts/import/discord-import';

/** A command's outcome: what to print, and the exit code. */
class Refusal extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

/** A command: the words of its arguments (for the usage text), its options, and what it does. */
interface Command {
  args: string[];
  /** `--name`: 'value' takes the next word, 'flag' stands alone; the usage text says which are needed. */
  options?: Record<string, { takes: 'value' | 'flag'; usage: string }>;
  run(db: DB, args: string[], dataDir: string, options: Record<string, string | true>): string | Promise<string>;
  /** Runs without opening the database (restore replaces it). */
  offline?: true;
}

/**
 * Administration for self-hosters, safe while the server runs: it writes the same SQLite file
 * (WAL allows it); a change to a user moves `generations`, so the server sees it at the next request.
 */
const COMMANDS: Record<string, Command> = {
  'admin grant': {
    args: ['<username>'],
    run: (db, [username]) => {
      setAdmin(db, username, true);
      return `${username} is now an administrator`;
    },
  },
  'admin revoke': {
    args: ['<username>'],
    run: (db, [username]) => {
      setAdmin(db, username, false);
      return `${username} is no longer an administrator`;
    },
  },
  'admin list': {
    args: [],
    run: (db) => {
      const rows = db.prepare<[], { username: string }>('SELECT username FROM users WHERE is_admin = 1 ORDER BY username').all();
      return rows.length ? rows.map((r) => r.username).join('\n') : '(no administrators)';
    },
  },
  // The way back for an administrator who suspended themselves: the API refuses changes to
  // one's own standing, and nobody else may be left to lift it.
  'standing set': {
    args: ['<username>', '<0-4>'],
    run: (db, [username, value]) => {
      if (!/^[0-4]$/.test(value)) throw new Refusal(`standing must be an integer from 0 to ${SUSPENDED}`, 2);
      const user = userNamed(db, username);
      changes(db).setStanding(user.id, Number(value));
      return `${user.username} now has standing ${value}`;
    },
  },
  'warnings list': {
    args: ['<username>'],
    run: (db, [username]) => {
      const user = userNamed(db, username);
      const rows = db
        .prepare<[string], { id: string; created_at: string; issued_by: string; reason: string }>(
          `SELECT w.id, w.created_at, u.username AS issued_by, w.reason
             FROM warnings w JOIN users u ON u.id = w.issued_by WHERE w.user_id = ? ORDER BY w.created_at, w.rowid`,
        )
        .all(user.id);
      if (rows.length === 0) return `${user.username} has no warnings (standing ${user.standing})`;
      const lines = rows.map((w) => `${w.created_at}  ${w.id}  by ${w.issued_by}: ${w.reason.replace(/\s+/g, ' ')}`);
      return [...lines, `${rows.length} warning(s), standing ${user.standing}`].join('\n');
    },
  },
  // Clearing warnings recalculates the standing from the count, as removing them one by one would.
  'warnings clear': {
    args: ['<username>'],
    run: (db, [username]) => {
      const user = userNamed(db, username);
      const cleared = changes(db).clearWarnings(user.id);
      return `removed ${cleared} warning(s) of ${user.username}; standing is now ${userNamed(db, username).standing}`;
    },
  },
  // For a user who lost their authenticator and their recovery codes: they sign in with the
  // password alone again (and can turn two-factor sign-in back on from the account page).
  '2fa reset': {
    args: ['<username>'],
    run: (db, [username]) => {
      const user = userNamed(db, username);
      turnOffTwoFactor(db, user.id);
      return `two-factor sign-in is off for ${user.username}; they sign in with their password`;
    },
  },
  // An online, consistent copy while the server runs (src/parts/backup.ts says how).
  backup: {
    args: ['<dir>'],
    run: async (db, [dir], dataDir) => {
      const target = path.resolve(dir);
      const result = await backup(db, dataDir, target);
      const lines = [`backed up ${dataDir} to ${target}: the database and ${result.files} file(s), ${(result.bytes / 1024 / 1024).toFixed(1)} MiB`];
      if (result.missing.length)
        lines.push(`${result.missing.length} attachment(s) already had no file in ${dataDir}: ${result.missing.slice(0, 5).join(', ')}`);
      return lines.join('\n');
    },
  },
  // Reads and checks a DiscordChatExporter export, says what an import would bring
  // (src/parts/import/discord-plan.ts) and, without --dry-run, brings it (discord-import.ts).
  // Run again, it resumes where it stopped, or appends what a newer export holds.
  'import discord': {
    args: ['<folder or zip>'],
    options: {
      '--owner': { takes: 'value', usage: '--owner <username>' },
      '--server': { takes: 'value', usage: '[--server <name>]' },
      '--skip-system': { takes: 'flag', usage: '[--skip-system]' },
      '--package-claims': { takes: 'flag', usage: '[--package-claims]' },
      '--dry-run': { takes: 'flag', usage: '[--dry-run]' },
    },
    run: async (db, [source], dataDir, options) => {
      if (typeof options['--owner'] !== 'string') throw new Refusal('--owner <username> is needed: the account that will own the new server', 2);
      const owner = userNamed(db, options['--owner']);
      let files: ExportFiles | undefined;
      try {
        files = await openExport(path.resolve(source));
        const scan = await scanExport(files);
        if (options['--dry-run'] === true) return formatPlan(scan.plan);
        const serverName = typeof options['--server'] === 'string' ? options['--server'] : scan.plan.guild.name;
        const system = options['--skip-system'] === true ? 'skip' : 'lines';
        // One import of a Discord server into an owner's server at a time; one interrupted resumes.
        const { importId } = takeCliImport(db, systemClock, {
          ownerId: owner.id,
          plan: scan.plan,
          serverName,
          packageClaims: options['--package-claims'] === true,
          system,
        });
        try {
          const result = await importDiscord(db, systemClock, dataDir, files, scan, {
            importId,
            ownerId: owner.id,
            serverName,
            system,
          });
          setImportStatus(db, systemClock, importId, 'done');
          return formatResult(result, owner.username);
        } catch (err) {
          setImportStatus(db, systemClock, importId, 'failed', (err as Error).message);
          throw err;
        }
      } catch (err) {
        if (err instanceof ImportError) throw new Refusal(`cannot import: ${err.message}`);
        throw err;
      } finally {
        files?.close();
      }
    },
  },
  restore: {
    args: ['<dir>'],
    offline: true,
    run: (_db, [dir], dataDir) => {
      const { keptIn, files } = restore(path.resolve(dir), dataDir);
      return `restored ${path.resolve(dir)} into ${dataDir} (the database and ${files} file(s)); what was there is kept in ${keptIn}`;
    },
  },
  // Voice on one machine, to try it (docs/voice.md): Debian's Janus with a configuration of its
  // own in DATA_DIR/janus (only the VideoRoom and WebSockets, APIs on loopback, token_auth, its
  // secrets kept there), in the foreground until Ctrl+C; the chat server's settings come first.
  voice: {
    args: [],
    options: {
      '--address': { takes: 'value', usage: '[--address <the IPv4 address media uses: not a loopback one>]' },
      '--port': { takes: 'value', usage: '[--port <Janus API port, 8188; the Admin API is the next one>]' },
    },
    offline: true,
    run: async (_db, _args, dataDir, options) => {
      const port = options['--port'] === undefined ? 8188 : Number(options['--port']);
      if (!Number.isInteger(port) || port < 1 || port > 65534) throw new Refusal('--port must be a port number', 2);
      const address = typeof options['--address'] === 'string' ? options['--address'] : mediaAddress();
      if (!address) throw new Refusal('no address other than loopback here: give --address (Janus never uses a loopback one for media)', 2);
      let local;
      try {
        local = prepareLocalJanus(path.join(dataDir, 'janus'), address, port);
      } catch (err) {
        throw new Refusal((err as Error).message, 1);
      }
      console.log(`Janus for voice on ${address}; give the chat server:\n${local.settings.join('\n')}\n`);
      const code = await local.run();
      return `janus exited (${code})`;
    },
  },
};

/** The first IPv4 address of this machine that is not a loopback one. */
function mediaAddress(): string | undefined {
  return Object.values(os.networkInterfaces())
    .flat()
    .find((a) => a && a.family === 'IPv4' && !a.internal)?.address;
}

/** How the user typed this program: `chat` from a release's launcher (bin/chat), else the script. */
const PROGRAM = process.env.CHAT_PROGRAM || 'node dist/cli.js';
// The release's launcher runs the server itself for `serve`; from a checkout that is `make run`.
const SERVE = process.env.CHAT_PROGRAM ? [`  ${PROGRAM} serve                  start the server (settings from the environment: README)`] : [];
const USAGE = `usage:\n${[
  ...SERVE,
  ...Object.entries(COMMANDS).map(
    ([name, command]) => `  ${PROGRAM} ${[name, ...command.args, ...Object.values(command.options ?? {}).map((o) => o.usage)].join(' ')}`,
  ),
  `  ${PROGRAM} --version`,
  `  ${PROGRAM} help`,
].join('\n')}`;

const version = (): string => {
  const { version } = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8')) as { version: string };
  return `chat ${version} (Node.js ${process.versions.node})`;
};

function userNamed(db: DB, username: string): { id: string; username: string; standing: number } {
  const user = db
    .prepare<[string], { id: string; username: string; standing: number }>(
      'SELECT id, username, standing FROM users WHERE username = ? COLLATE NOCASE AND deleted_at IS NULL',
    )
    .get(username);
  if (!user) throw new Refusal(`no user named ${username}`);
  return user;
}

/** The same account writes the server makes (src/parts/accounts/account-changes.ts), without its sessions or sockets. */
const changes = (db: DB) => createAccountChanges({ db, clock: systemClock, devices: createDeviceStore(db, systemClock) });

function setAdmin(db: DB, username: string, value: boolean): void {
  if (!changes(db).setAdmin(username, value)) throw new Refusal(`no user named ${username}`);
}

async function main(argv: string[]): Promise<number> {
  if (argv.length === 1 && (argv[0] === '--version' || argv[0] === 'version')) {
    console.log(version());
    return 0;
  }
  if (argv.length === 1 && (argv[0] === 'help' || argv[0] === '--help' || argv[0] === '-h')) {
    console.log(USAGE);
    return 0;
  }
  // Commands are one word (backup) or two (admin grant).
  const twoWords = argv.length >= 2 && Object.hasOwn(COMMANDS, `${argv[0]} ${argv[1]}`);
  const name = twoWords ? `${argv[0]} ${argv[1]}` : (argv[0] ?? '');
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  const parsed = command && parseWords(argv.slice(twoWords ? 2 : 1), command);
  if (!command || !parsed || parsed.args.length !== command.args.length) {
    console.error(USAGE);
    return 2;
  }
  const { args, options } = parsed;
  let dataDir: string;
  try {
    dataDir = loadConfig(process.env).dataDir;
  } catch (err) {
    console.error(err instanceof ConfigError ? err.message : String(err));
    return 2;
  }
  if (command.offline) return finish(() => command.run(undefined as never, args, dataDir, options));
  const file = path.join(dataDir, 'chat.db');
  if (!fs.existsSync(file)) {
    // Opening would create an empty database: a mistyped DATA_DIR must not look like "no users".
    console.error(`no database at ${file}; set DATA_DIR to the server's data directory`);
    return 1;
  }
  let db: DB;
  try {
    db = openDatabase(file);
  } catch (err) {
    console.error(`cannot open the database in ${dataDir}: ${(err as Error).message}`);
    return 1;
  }
  try {
    return await finish(() => command.run(db, args, dataDir, options));
  } finally {
    db.close();
  }
}

/** A command's words: its arguments and its options (null for an unknown option or one missing its value). */
function parseWords(words: string[], command: Command): { args: string[]; options: Record<string, string | true> } | null {
  const args: string[] = [];
  const options: Record<string, string | true> = {};
  for (let i = 0; i < words.length; i++) {
    const word = words[i];
    if (!word.startsWith('--')) {
      args.push(word);
      continue;
    }
    const option = command.options?.[word];
    if (!option) return null;
    if (option.takes === 'flag') options[word] = true;
    else if (i + 1 < words.length) options[word] = words[++i];
    else return null;
  }
  return { args, options };
}

/** Prints what a command says; a refusal is a message and an exit code, never a stack. */
async function finish(work: () => string | Promise<string>): Promise<number> {
  try {
    console.log(await work());
    return 0;
  } catch (err) {
    if (err instanceof BackupError) {
      console.error(err.message);
      return 1;
    }
    if (!(err instanceof Refusal)) throw err;
    console.error(err.message);
    return err.exitCode;
  }
}

void main(process.argv.slice(2)).then((code) => (process.exitCode = code));
