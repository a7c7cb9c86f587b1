/**
 * Preloaded into a chat server a benchmark starts (`node --require argon2-memo.js dist/server.js`)
 * when it needs thousands of sessions: sessions live in memory only, so each is a real
 * POST /api/login, and each login verifies an argon2id hash (m = 19 MiB: 50-70 ms of CPU
 * here), two minutes of set-up for 2 000 users on two cores.
 *
 * The seeded users all share one real hash of the bench password, so this memoizes
 * `argon2.verify` by (hash, password): the first login verifies for real, the others reuse
 * its answer, which is the answer argon2 would give. Nothing else changes (`needsRehash`,
 * hashing, every other route), and nothing a benchmark measures signs in.
 */
const argon2 = require('argon2') as { verify: (hash: string, password: string | Buffer, options?: unknown) => Promise<boolean> };

const verify = argon2.verify;
const answers = new Map<string, Promise<boolean>>();

argon2.verify = (hash, password, options) => {
  const key = `${hash}\n${typeof password === 'string' ? password : password.toString('base64')}`;
  let answer = answers.get(key);
  if (answer === undefined) {
    answer = verify(hash, password, options);
    answers.set(key, answer);
  }
  return answer;
};
