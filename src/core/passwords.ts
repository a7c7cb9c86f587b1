import argon2 from 'argon2';
import { createWorkQueue } from './work-queue';

/**
 * argon2id with OWASP's minimum (m = 19 MiB, t = 2, p = 1) rather than the library default
 * of 64 MiB per hash. At most MAX_CONCURRENT_HASHES run at once, so a burst of 50 logins
 * costs at most 4 x 19 MiB of hashing memory; the rest wait their turn.
 */
export const HASH_OPTIONS = { type: argon2.argon2id, memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;
export const MAX_CONCURRENT_HASHES = 4;

const hashing = createWorkQueue(MAX_CONCURRENT_HASHES);
const limited = <T>(work: () => Promise<T>): Promise<T> => hashing.run(work);

export const hashPassword = (password: string): Promise<string> => limited(() => argon2.hash(password, HASH_OPTIONS));

let dummyHash: Promise<string> | undefined;

/**
 * Verifies a password. With no stored hash (unknown user) it still verifies against a dummy
 * hash, so a wrong username and a wrong password take about the same time.
 */
export async function verifyPassword(hash: string | undefined, password: string): Promise<{ ok: boolean; rehash: boolean }> {
  dummyHash ??= hashPassword('not a real password, only for timing');
  const target = hash ?? (await dummyHash);
  let ok = false;
  try {
    ok = await limited(() => argon2.verify(target, password));
  } catch {
    ok = false;
  }
  ok = ok && hash !== undefined;
  return { ok, rehash: ok && argon2.needsRehash(target, HASH_OPTIONS) };
}
