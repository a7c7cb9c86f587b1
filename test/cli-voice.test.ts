import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { startCli } from './helpers/cli';
import { debianJanusLibDir } from '../src/parts/voice/janus-config';

/**
 * `chat voice` (docs/voice.md "Turning voice on"): a local Janus with a generated configuration
 * in DATA_DIR/janus, started in the foreground, the chat server's settings printed first, and
 * gone when the command is stopped.
 */
const SKIP = fs.existsSync('/usr/bin/janus') && debianJanusLibDir() !== null ? false : 'Janus is not installed (apt-get install janus)';

const listening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });

t.test('chat voice starts a private Janus and prints the settings for it', { skip: SKIP, timeout: 60_000 }, async (t) => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'chat-cli-voice-'));
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const port = 30_000 + Math.floor(Math.random() * 5_000) * 2;
  const run = startCli(['voice', '--address', '127.0.0.1', '--port', String(port)], dataDir);
  t.teardown(() => void run.child.kill('SIGKILL'));
  let out = '';
  run.child.stdout!.on('data', (chunk) => (out += chunk));
  const deadline = Date.now() + 20_000;
  while (!(out.includes(`JANUS_URL=ws://127.0.0.1:${port}`) && (await listening(port)))) {
    if (Date.now() > deadline || run.child.exitCode !== null) t.fail(`not started: ${out.slice(-2000)}`);
    if (Date.now() > deadline || run.child.exitCode !== null) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  t.match(out, new RegExp(`JANUS_ADMIN_URL=ws://127.0.0.1:${port + 1}\\nJANUS_ADMIN_SECRET=[0-9a-f]{48}\\nJANUS_ROOM_KEY=[0-9a-f]{48}`), 'the settings');
  const config = fs.readFileSync(path.join(dataDir, 'janus', 'janus.jcfg'), 'utf8');
  t.match(config, /token_auth = true/, 'token authentication');
  t.equal(fs.statSync(path.join(dataDir, 'janus', 'secrets.json')).mode & 0o777, 0o600, 'the secrets are its owner’s only');
  run.child.kill('SIGTERM');
  const done = await run.done;
  t.match(done.stdout, /janus exited/, 'stopped, it says so');
  t.notOk(await listening(port), 'and Janus is gone');
});
