import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { debianJanusLibDir, installedModules, writeJanusConfig } from '../../../src/parts/voice/janus-config';

/**
 * Debian's Janus for the voice tests, in a network namespace of its own.
 *
 * Janus never gathers ICE candidates on a loopback interface (hard-coded in its ice.c), so on
 * 127.0.0.1 it offers no way in. Each Janus here gets a namespace (`ip netns add`, root) joined
 * to ours by a veth pair on a /30 of 198.18.0.0/15 (RFC 2544's benchmarking range, unused by
 * real networks): Janus's end carries `address`, ours `hostAddress`. Janus's APIs listen on
 * `address` and take only `hostAddress` (ws_acl); its media uses `address` only
 * (ice_enforce_list). The test process (our client of Janus) reaches the APIs over the veth
 * like a machine on a LAN; the wrtc participants run in the namespace itself
 * (test/helpers/voice/peers.ts says why) and reach Janus's media on `address`, as coturn
 * does. Nothing in the namespace reaches anything else (no route out). Ports are the
 * namespace's own, so fixed ones are free.
 *
 * Cleanup, even when a test fails: the test's teardown kills the processes and deletes the
 * namespace (the veth pair goes with it); an exit hook does the same if the test process ends
 * first; the processes get SIGKILL from the kernel when the test process dies (setpriv
 * --pdeathsig); and each start removes the namespaces and folders of test processes that no
 * longer exist.
 */

const JANUS = '/usr/bin/janus';
const TURNSERVER = '/usr/bin/turnserver';
const PREFIX = 'chatvoice-';
const DIR_PREFIX = 'chat-janus-';
export const API_PORT = 8188;
export const ADMIN_PORT = 7188;
export const RTP_PORTS = { min: 20_000, max: 20_199 };
const READY_MS = 15_000;

/** Why the voice tests cannot run here (false when they can; REQUIRE_JANUS=1 makes them run and fail instead). */
export function voiceSkipReason(): string | false {
  if (process.env.REQUIRE_JANUS === '1') return false;
  if (!fs.existsSync(JANUS) || debianJanusLibDir() === null) return `${JANUS} is not installed (apt-get install janus); the voice tests need it`;
  if (process.platform !== 'linux' || process.getuid?.() !== 0) return 'the voice tests run Janus in a network namespace, which needs root on Linux';
  try {
    execFileSync('ip', ['netns', 'list'], { stdio: 'ignore' });
  } catch {
    return 'the voice tests need iproute2 (`ip netns`)';
  }
  return false;
}

export const turnAvailable = () => fs.existsSync(TURNSERVER);

export interface JanusUnderTest {
  url: string;
  adminUrl: string;
  adminSecret: string;
  roomKey: string;
  /** Janus's address (the namespace's end of the veth), where media and coturn live. */
  address: string;
  hostAddress: string;
  netns: string;
  pid(): number;
  /** Everything Janus printed since its last start. */
  output(): string;
  /** User and system CPU Janus has used so far, milliseconds. */
  cpuMs(): number;
  /** Kills Janus (SIGKILL, as a crash) and starts it again with the same configuration. */
  restart(): Promise<void>;
  /** Kills Janus (SIGKILL, as a crash); the namespace and configuration stay, for `start`. */
  crash(): Promise<void>;
  /** Starts Janus again after `crash`, with the same configuration. */
  start(): Promise<void>;
  /** coturn in the same namespace with `use-auth-secret`; its `turn:` URL. */
  startTurn(secret: string): Promise<string>;
  /** Kills everything, deletes the namespace and the files. Idempotent. */
  stop(): Promise<void>;
}

let started = 0;
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
};

const ip = (...args: string[]) => execFileSync('ip', args, { stdio: ['ignore', 'pipe', 'pipe'] }).toString();

/**
 * Deletes a namespace after killing whatever still runs in it. The kernel frees the namespace,
 * and the veth pair with it, a moment later, once the last process in it is gone.
 */
function removeNamespace(name: string): void {
  try {
    for (const pid of ip('netns', 'pids', name).split(/\s+/).filter(Boolean)) {
      try {
        process.kill(Number(pid), 'SIGKILL');
      } catch {
        // gone already
      }
    }
    ip('netns', 'del', name);
  } catch {
    // no such namespace
  }
}

/** The test process a namespace or folder named `<prefix><pid>-...` belongs to. */
const ownerOf = (name: string, prefix: string) => (name.startsWith(prefix) ? Number(name.slice(prefix.length).split('-')[0]) : NaN);

/** Namespaces and folders left by test processes that died before their cleanup ran. */
function sweepStale(): void {
  for (const line of ip('netns', 'list').split('\n')) {
    const name = line.split(' ')[0];
    const owner = ownerOf(name, PREFIX);
    if (Number.isInteger(owner) && !alive(owner)) removeNamespace(name);
  }
  for (const name of fs.readdirSync(os.tmpdir())) {
    const owner = ownerOf(name, DIR_PREFIX);
    if (Number.isInteger(owner) && !alive(owner)) fs.rmSync(path.join(os.tmpdir(), name), { recursive: true, force: true });
  }
}

/** A /30 of 198.18.0.0/15 that no interface here uses yet: [ours, Janus's]. */
function freeSubnet(): [string, string] {
  const used = ip('-4', '-o', 'addr', 'show');
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = `198.${18 + randomInt(2)}.${randomInt(256)}.`;
    const last = randomInt(64) * 4;
    const host = `${base}${last + 1}`;
    const janus = `${base}${last + 2}`;
    if (!used.includes(` ${host}/`) && !used.includes(` ${janus}/`)) return [host, janus];
  }
  throw new Error('no free /30 in 198.18.0.0/15');
}

/** Resolves once a TCP port accepts a connection; rejects past the deadline or when `gone()` says the process ended. */
async function waitForPort(host: string, port: number, gone: () => string | null): Promise<void> {
  const deadline = Date.now() + READY_MS;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = net.connect({ host, port });
      socket.once('connect', () => (socket.destroy(), resolve(true)));
      socket.once('error', () => resolve(false));
    });
    if (ok) return;
    const why = gone();
    if (why !== null) throw new Error(why);
    if (Date.now() > deadline) throw new Error(`nothing listens on ${host}:${port} after ${READY_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Runs `argv` in the namespace; the kernel kills it if the test process dies. */
function spawnInNamespace(netns: string, argv: string[]): ChildProcess {
  const guard = fs.existsSync('/usr/bin/setpriv') ? ['setpriv', '--pdeathsig', 'KILL', '--'] : [];
  return spawn('ip', ['netns', 'exec', netns, ...guard, ...argv], { stdio: ['ignore', 'pipe', 'pipe'] });
}

function collect(child: ChildProcess): () => string {
  let out = '';
  const keep = (chunk: Buffer) => {
    out += chunk.toString();
    if (out.length > 200_000) out = out.slice(-100_000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  return () => out;
}

const killed = (child: ChildProcess | null) =>
  new Promise<void>((resolve) => {
    if (!child || child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });

export async function startJanus(): Promise<JanusUnderTest> {
  sweepStale();
  const netns = `${PREFIX}${process.pid}-${++started}`;
  const hostIf = `cv${process.pid}x${started}`.slice(0, 15);
  const [hostAddress, address] = freeSubnet();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `${DIR_PREFIX}${process.pid}-`));
  const adminSecret = randomBytes(16).toString('hex');
  const roomKey = randomBytes(16).toString('hex');
  const children = new Set<ChildProcess>();
  let janus: ChildProcess | null = null;
  let output = () => '';
  let stopped = false;

  const cleanupSync = () => {
    for (const child of children) child.kill('SIGKILL');
    removeNamespace(netns);
    fs.rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', cleanupSync);

  try {
    ip('netns', 'add', netns);
    ip('link', 'add', hostIf, 'type', 'veth', 'peer', 'name', 'veth0', 'netns', netns);
    ip('addr', 'add', `${hostAddress}/30`, 'dev', hostIf);
    ip('link', 'set', hostIf, 'up');
    ip('-n', netns, 'addr', 'add', `${address}/30`, 'dev', 'veth0');
    ip('-n', netns, 'link', 'set', 'veth0', 'up');
    ip('-n', netns, 'link', 'set', 'lo', 'up');
    const libDir = debianJanusLibDir();
    if (libDir === null) throw new Error('Janus is not installed (apt-get install janus)');
    writeJanusConfig({
      configDir: dir,
      libDir,
      installed: installedModules(libDir),
      adminSecret,
      roomKey,
      mediaAddress: address,
      rtpPorts: RTP_PORTS,
      api: { ip: address, port: API_PORT, acl: hostAddress },
      adminApi: { ip: address, port: ADMIN_PORT, acl: hostAddress },
      debugLevel: 3,
    });
  } catch (err) {
    cleanupSync();
    process.removeListener('exit', cleanupSync);
    throw err;
  }

  async function launch(): Promise<void> {
    const child = spawnInNamespace(netns, [JANUS, '-F', dir, '-C', path.join(dir, 'janus.jcfg'), '-o']);
    children.add(child);
    child.once('exit', () => children.delete(child));
    janus = child;
    output = collect(child);
    const gone = () => (child.exitCode !== null || child.signalCode !== null ? `Janus exited (${child.exitCode ?? child.signalCode}):\n${output()}` : null);
    await waitForPort(address, API_PORT, gone);
    await waitForPort(address, ADMIN_PORT, gone);
  }

  const under: JanusUnderTest = {
    url: `ws://${address}:${API_PORT}`,
    adminUrl: `ws://${address}:${ADMIN_PORT}`,
    adminSecret,
    roomKey,
    address,
    hostAddress,
    netns,
    pid: () => janus?.pid ?? 0,
    output: () => output(),
    cpuMs() {
      // /proc/<pid>/stat: utime and stime are fields 14 and 15, in clock ticks (100 a second on Linux).
      const stat = fs.readFileSync(`/proc/${under.pid()}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return (Number(fields[11]) + Number(fields[12])) * 10;
    },
    async restart() {
      await under.crash();
      await under.start();
    },
    crash: () => killed(janus),
    start: () => launch(),
    async startTurn(secret) {
      const child = spawnInNamespace(netns, [
        TURNSERVER,
        '-n',
        '--listening-ip',
        address,
        '--relay-ip',
        address,
        '--listening-port',
        '3478',
        '--min-port',
        '49160',
        '--max-port',
        '49259',
        '--use-auth-secret',
        `--static-auth-secret=${secret}`,
        '--realm',
        'voice.test',
        '--fingerprint',
        '--no-cli',
        '--no-tls',
        '--no-dtls',
        '--no-multicast-peers',
        '--pidfile',
        path.join(dir, 'turnserver.pid'),
        '--userdb',
        path.join(dir, 'turndb'),
        '--log-file',
        'stdout',
        '--simple-log',
      ]);
      children.add(child);
      child.once('exit', () => children.delete(child));
      const turnOutput = collect(child);
      await waitForPort(address, 3478, () => (child.exitCode !== null ? `turnserver exited (${child.exitCode}):\n${turnOutput()}` : null));
      return `turn:${address}:3478?transport=udp`;
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      await Promise.all([...children].map(killed));
      cleanupSync();
      process.removeListener('exit', cleanupSync);
    },
  };

  try {
    await launch();
  } catch (err) {
    await under.stop();
    throw err;
  }
  return under;
}
