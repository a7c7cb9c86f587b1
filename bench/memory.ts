/**
 * Memory (issue 10, measurement 5), the parts not measured elsewhere: the idle server's RSS,
 * and its peak RSS while 50 logins arrive at once. Password hashing is the memory-hungry part
 * of a login: argon2id with m = HASH_OPTIONS.memoryCost KiB, at most MAX_CONCURRENT_HASHES at
 * a time (src/core/passwords.ts), so the cap on hashing memory is their product whatever the burst.
 * RSS per socket is measured by bench/fanout.ts, uploads by bench/upload-memory.ts.
 *
 * The 50 accounts are registered first, then the server is restarted, so idle RSS is that of a
 * fresh process and registration's hashing does not hide the logins' peak.
 *
 * Run alone: node dist-bench/bench/memory.js
 */
import { HASH_OPTIONS, MAX_CONCURRENT_HASHES } from '../src/core/passwords';
import { type Row, call, login, mib, printTable, register, request, rssKb, runAlone, sampleRss, sleep, startChat, tempDir } from './lib';

export const LOGINS = 50;
/** Lets the fresh process finish start-up work and collect its garbage before RSS is read. */
const SETTLE_MS = 1_500;

export interface MemoryFigures {
  idleKb: number;
  beforeLoginsKb: number;
  loginPeakKb: number;
  loginSeconds: number;
  capKb: number;
}

export async function measureMemory(): Promise<MemoryFigures> {
  const dataDir = tempDir('chat-bench-memory-');
  const names = Array.from({ length: LOGINS }, (_, i) => `memory_${i}`);
  const setup = await startChat(dataDir);
  try {
    for (let i = 0; i < names.length; i += 10) await Promise.all(names.slice(i, i + 10).map((name) => register(setup.base, name)));
  } finally {
    await setup.stop();
  }

  const chat = await startChat(dataDir);
  try {
    const health = await request(chat.base, 'GET', '/healthz');
    if (health.status !== 200) throw new Error(`/healthz answered ${health.status}`);
    await sleep(SETTLE_MS);
    const idleKb = rssKb(chat.pid);
    // One login first, so code loading and the dummy hash are not counted as the burst's.
    await login(chat.base, names[0]);
    await sleep(SETTLE_MS);
    const beforeLoginsKb = rssKb(chat.pid);
    const sampler = sampleRss(chat.pid);
    const started = performance.now();
    const cookies = await Promise.all(names.map((name) => login(chat.base, name)));
    const loginSeconds = (performance.now() - started) / 1000;
    const loginPeakKb = sampler.stop();
    // Proves the logins were real: every cookie opens a session.
    await call(chat.base, 'GET', '/api/users/me', undefined, cookies[LOGINS - 1]);
    return { idleKb, beforeLoginsKb, loginPeakKb, loginSeconds, capKb: MAX_CONCURRENT_HASHES * HASH_OPTIONS.memoryCost };
  } finally {
    await chat.stop();
  }
}

export function memoryRows(f: MemoryFigures): Row[] {
  return [
    ['idle RSS (fresh process)', mib(f.idleKb), '', ''],
    [`RSS before the burst (after one login)`, mib(f.beforeLoginsKb), '', ''],
    [
      `${LOGINS} concurrent logins: peak RSS`,
      `${mib(f.loginPeakKb)} (+${mib(f.loginPeakKb - f.beforeLoginsKb)}), all in ${f.loginSeconds.toFixed(2)} s`,
      '',
      '',
    ],
    [
      'login hashing cap (MAX_CONCURRENT_HASHES x argon2 m)',
      `${MAX_CONCURRENT_HASHES} x ${(HASH_OPTIONS.memoryCost / 1024).toFixed(0)} MiB = ${mib(f.capKb)}`,
      '',
      '',
    ],
  ];
}

runAlone(module, 'memory', async () => {
  printTable('5. Memory: idle and 50 concurrent logins', memoryRows(await measureMemory()));
});
