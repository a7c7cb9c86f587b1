import crypto from 'node:crypto';
import {
  type AuthenticationResponseJSON,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from '@simplewebauthn/server';
import { type Clock, MINUTE, iso } from '../../core/clock';
import type { Config } from '../../core/config';
import type { DB } from '../../core/db';
import { HttpError, badRequest, conflict } from '../../core/http/errors';

/**
 * Passkeys (WebAuthn, docs/security.md "Passkeys"): discoverable credentials made by the person's
 * authenticator (a phone, a laptop's fingerprint reader, a security key, a password manager),
 * checked by @simplewebauthn/server, never by hand. The relying party is BASE_URL's host; its
 * origin is BASE_URL's. User verification is required both ways, so a passkey is two factors:
 * something one has that only unlocks for who one is (or what one knows). The server keeps the
 * public key and the signature counter only.
 *
 * Challenges are random, good once and for CHALLENGE_TTL_MS. A registration's is kept in memory
 * for its account (the latest one asked). A sign-in's is asked by anyone, unsigned in, at every
 * visit of the sign-in page (the conditional UI): so the server keeps nothing for it until it is
 * answered. It carries its own expiry and a MAC by a key of this process (a restart voids those
 * outstanding), and only a challenge answered is remembered, until it expires, so that it is good
 * once; answers are failed logins when wrong, so that memory is bounded by the login limits.
 */
export const CHALLENGE_TTL_MS = 5 * MINUTE;
/** A sign-in challenge: 16 random bytes, its expiry (ms, 8 bytes), a MAC of both (16 bytes). */
const NONCE_BYTES = 16;
const MAC_BYTES = 16;
export const MAX_PASSKEYS_PER_USER = 20;
export const MAX_PASSKEY_NAME_CHARS = 64;
/**
 * The signature algorithms a passkey may use (COSE ids): Ed25519, ES256 and RS256, which every
 * authenticator offers one of. Not the library's default, which puts ML-DSA-44 first and probes
 * for it through Node's experimental SubtleCrypto.supports() (a warning on stderr at each start).
 */
const ALGORITHMS = [-8, -7, -257];
/** How long a browser may wait on the person (the authenticator's own prompt). */
const CEREMONY_TIMEOUT_MS = 2 * MINUTE;

export interface Passkey {
  id: string;
  name: string;
  createdAt: string;
  lastUsedAt: string | null;
  /** Synced to the owner's other devices by a passkey manager. */
  backedUp: boolean;
}

/** A stored credential, as a sign-in looks it up. */
interface Credential {
  id: string;
  userId: string;
  credentialId: string;
  publicKey: Uint8Array<ArrayBuffer>;
  counter: number;
  transports: string[];
}

export interface Passkeys {
  /** What the browser passes to navigator.credentials.create(), with a new challenge for this account. */
  registrationOptions(user: { id: string; username: string; displayName: string | null }): Promise<PublicKeyCredentialCreationOptionsJSON>;
  /** The browser's answer checked against the account's challenge (used up) and stored; 400 when it does not check out. */
  register(userId: string, response: unknown, name: string): Promise<Passkey>;
  list(userId: string): Passkey[];
  rename(userId: string, id: string, name: string): Passkey | null;
  remove(userId: string, id: string): boolean;
  /** What navigator.credentials.get() takes for a username-less sign-in (and the conditional UI), with a new challenge (kept nowhere). */
  signInOptions(): Promise<PublicKeyCredentialRequestOptionsJSON>;
  /** The account whose passkey this answer names (its owner), or null: looked up before the check, so a failure is counted against it. */
  ownerOf(response: unknown): string | null;
  /** The answer checked (challenge used up, origin, RP, signature, user verification, counter): its account; 401 otherwise. */
  signIn(response: unknown): Promise<string>;
}

interface Row {
  id: string;
  user_id: string;
  credential_id: string;
  public_key: Buffer;
  counter: number;
  transports: string;
  name: string;
  backed_up: number;
  created_at: string;
  last_used_at: string | null;
}
const toPasskey = (r: Pick<Row, 'id' | 'name' | 'created_at' | 'last_used_at' | 'backed_up'>): Passkey => ({
  id: r.id,
  name: r.name,
  createdAt: r.created_at,
  lastUsedAt: r.last_used_at,
  backedUp: r.backed_up === 1,
});

/** The parts of a response the checks read, as strings: anything else is not a response (400). */
function readResponse(value: unknown, fields: string[]): { id: string; response: Record<string, unknown> } {
  const v = value as { id?: unknown; rawId?: unknown; type?: unknown; response?: Record<string, unknown> } | null;
  const ok =
    typeof v === 'object' &&
    v !== null &&
    typeof v.id === 'string' &&
    v.id.length <= 1024 &&
    v.rawId === v.id &&
    v.type === 'public-key' &&
    typeof v.response === 'object' &&
    v.response !== null &&
    fields.every((f) => typeof v.response![f] === 'string' && (v.response![f] as string).length <= 65_536);
  if (!ok) throw badRequest(`response must be the credential the browser gave (id, rawId, type "public-key", response.${fields.join(', response.')})`);
  return v as { id: string; response: Record<string, unknown> };
}

/** The user handle an authenticator keeps for the account: its id's 16 bytes (it names no one outside this server). */
const userHandleOf = (userId: string) => Buffer.from(userId.replace(/-/g, ''), 'hex');

export function createPasskeys({ db, clock, config }: { db: DB; clock: Clock; config: Pick<Config, 'baseUrl' | 'instanceName'> }): Passkeys {
  const insert = db.prepare(
    `INSERT INTO passkeys (id, user_id, credential_id, public_key, counter, transports, name, backed_up, created_at, last_used_at)
     VALUES (@id, @user_id, @credential_id, @public_key, @counter, @transports, @name, @backed_up, @created_at, NULL)`,
  );
  const byUser = db.prepare<[string], Row>('SELECT * FROM passkeys WHERE user_id = ? ORDER BY created_at, id');
  const byCredential = db.prepare<[string], Row>('SELECT * FROM passkeys WHERE credential_id = ?');
  const countOf = db.prepare<[string], number>('SELECT COUNT(*) FROM passkeys WHERE user_id = ?').pluck();
  const setName = db.prepare<[string, string, string], Row>('UPDATE passkeys SET name = ? WHERE user_id = ? AND id = ? RETURNING *');
  const used = db.prepare('UPDATE passkeys SET counter = ?, backed_up = ?, last_used_at = ? WHERE id = ?');
  const remove = db.prepare('DELETE FROM passkeys WHERE user_id = ? AND id = ?');

  const registrations = new Map<string, { challenge: string; expires: number }>();
  /** Sign-in challenges answered, until they expire (good once). */
  const spent = new Map<string, number>();
  const macKey = crypto.randomBytes(32);
  const macOf = (payload: Buffer) => crypto.createHmac('sha256', macKey).update('passkey sign-in\0').update(payload).digest().subarray(0, MAC_BYTES);
  const newSignInChallenge = () => {
    const payload = Buffer.alloc(NONCE_BYTES + 8);
    crypto.randomFillSync(payload, 0, NONCE_BYTES);
    payload.writeBigUInt64BE(BigInt(clock.now() + CHALLENGE_TTL_MS), NONCE_BYTES);
    return Buffer.concat([payload, macOf(payload)]);
  };
  /** Whether a sign-in challenge is one of ours, unexpired, not answered before (it is spent now). */
  const spendSignInChallenge = (challenge: string) => {
    const bytes = Buffer.from(challenge, 'base64url');
    if (bytes.length !== NONCE_BYTES + 8 + MAC_BYTES || bytes.toString('base64url') !== challenge) return false;
    const payload = bytes.subarray(0, NONCE_BYTES + 8);
    if (!crypto.timingSafeEqual(macOf(payload), bytes.subarray(NONCE_BYTES + 8))) return false;
    const expires = Number(payload.readBigUInt64BE(NONCE_BYTES));
    sweep(spent, (until) => until);
    if (expires <= clock.now() || spent.has(challenge)) return false;
    spent.set(challenge, expires);
    return true;
  };
  const relyingParty = () => {
    const url = new URL(config.baseUrl);
    return { rpID: url.hostname, origin: url.origin };
  };
  const sweep = <V>(map: Map<string, V>, expires: (v: V) => number) => {
    const now = clock.now();
    for (const [key, value] of map) {
      if (expires(value) > now) break;
      map.delete(key);
    }
  };

  const credentialOf = (row: Row): Credential => ({
    id: row.id,
    userId: row.user_id,
    credentialId: row.credential_id,
    publicKey: new Uint8Array(row.public_key.buffer.slice(row.public_key.byteOffset, row.public_key.byteOffset + row.public_key.byteLength) as ArrayBuffer),
    counter: row.counter,
    transports: JSON.parse(row.transports) as string[],
  });

  return {
    async registrationOptions(user) {
      if (countOf.get(user.id)! >= MAX_PASSKEYS_PER_USER) throw conflict(`an account may have ${MAX_PASSKEYS_PER_USER} passkeys at most: remove one first`);
      const { rpID } = relyingParty();
      const options = await generateRegistrationOptions({
        rpName: config.instanceName,
        rpID,
        userName: user.username,
        userDisplayName: user.displayName ?? user.username,
        // The user handle: the account's id, which names no one outside this server.
        userID: new Uint8Array(userHandleOf(user.id)),
        timeout: CEREMONY_TIMEOUT_MS,
        attestationType: 'none',
        supportedAlgorithmIDs: ALGORITHMS,
        excludeCredentials: byUser.all(user.id).map((r) => ({ id: r.credential_id, transports: JSON.parse(r.transports) as string[] })),
        // Discoverable (the sign-in names no account) and verified (a fingerprint or a PIN): two factors.
        authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
      });
      sweep(registrations, (r) => r.expires);
      registrations.delete(user.id);
      registrations.set(user.id, { challenge: options.challenge, expires: clock.now() + CHALLENGE_TTL_MS });
      return options;
    },

    async register(userId, value, name) {
      const response = readResponse(value, ['clientDataJSON', 'attestationObject']) as unknown as RegistrationResponseJSON;
      const pending = registrations.get(userId);
      registrations.delete(userId);
      if (!pending || pending.expires <= clock.now()) {
        throw badRequest('no passkey registration is waiting: ask for new options (POST /api/account/passkeys/options)', 'passkey_unknown');
      }
      const { rpID, origin } = relyingParty();
      let info;
      try {
        const verified = await verifyRegistrationResponse({
          response,
          expectedChallenge: pending.challenge,
          expectedOrigin: origin,
          expectedRPID: rpID,
          requireUserVerification: true,
          supportedAlgorithmIDs: ALGORITHMS,
        });
        if (!verified.verified) throw new Error('the attestation does not verify');
        info = verified.registrationInfo;
      } catch (err) {
        throw badRequest(`the passkey does not check out: ${(err as Error).message}`, 'passkey_refused');
      }
      if (countOf.get(userId)! >= MAX_PASSKEYS_PER_USER) throw conflict(`an account may have ${MAX_PASSKEYS_PER_USER} passkeys at most: remove one first`);
      const row = {
        id: crypto.randomUUID(),
        user_id: userId,
        credential_id: info.credential.id,
        public_key: Buffer.from(info.credential.publicKey),
        counter: info.credential.counter,
        transports: JSON.stringify(info.credential.transports ?? []),
        name,
        backed_up: info.credentialBackedUp ? 1 : 0,
        created_at: iso(clock.now()),
      };
      try {
        insert.run(row);
      } catch (err) {
        if ((err as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE') throw conflict('this passkey is registered already', 'passkey_taken');
        throw err;
      }
      return toPasskey({ ...row, last_used_at: null });
    },

    list: (userId) => byUser.all(userId).map(toPasskey),

    rename(userId, id, name) {
      const row = setName.get(name, userId, id);
      return row ? toPasskey(row) : null;
    },

    remove: (userId, id) => remove.run(userId, id).changes > 0,

    async signInOptions() {
      return generateAuthenticationOptions({
        rpID: relyingParty().rpID,
        challenge: new Uint8Array(newSignInChallenge()),
        userVerification: 'required',
        timeout: CEREMONY_TIMEOUT_MS,
      });
    },

    ownerOf(value) {
      const { id } = readResponse(value, ['clientDataJSON', 'authenticatorData', 'signature']);
      return byCredential.get(id)?.user_id ?? null;
    },

    async signIn(value) {
      const response = readResponse(value, ['clientDataJSON', 'authenticatorData', 'signature']) as unknown as AuthenticationResponseJSON;
      const row = byCredential.get(response.id);
      if (!row) throw new HttpError(401, 'this passkey is not registered here (removed, or made for another account)', {}, 'passkey_refused');
      const credential = credentialOf(row);
      // WebAuthn 7.2 step 6: a user handle, when the authenticator gives one, is the credential's account's.
      const handle = (response.response as { userHandle?: unknown }).userHandle;
      if (handle !== undefined && handle !== null && handle !== userHandleOf(credential.userId).toString('base64url')) {
        throw new HttpError(401, 'the passkey sign-in does not check out: its user handle is not its account', {}, 'passkey_refused');
      }
      const { rpID, origin } = relyingParty();
      let info;
      try {
        const verified = await verifyAuthenticationResponse({
          response,
          // Good once, and only while fresh: a challenge is spent by its first answer, right or wrong.
          expectedChallenge: spendSignInChallenge,
          expectedOrigin: origin,
          expectedRPID: rpID,
          credential: { id: credential.credentialId, publicKey: credential.publicKey, counter: credential.counter, transports: credential.transports },
          requireUserVerification: true,
        });
        if (!verified.verified) throw new Error('the signature does not verify');
        info = verified.authenticationInfo;
      } catch (err) {
        throw new HttpError(401, `the passkey sign-in does not check out: ${(err as Error).message}`, {}, 'passkey_refused');
      }
      // The counter moves forward: a copy of the authenticator that signs with an older count is refused above.
      used.run(info.newCounter, info.credentialBackedUp ? 1 : 0, iso(clock.now()), credential.id);
      return credential.userId;
    },
  };
}
