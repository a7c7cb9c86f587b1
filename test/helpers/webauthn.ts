import crypto from 'node:crypto';

/**
 * A software authenticator for API tests of passkeys (WebAuthn Level 3): it answers the options
 * of POST /api/account/passkeys/options with a "none" attestation and those of POST
 * /api/login/passkey/options with an assertion, as a browser passes them on (the JSON encoding,
 * base64url). Its keys are P-256 (COSE ES256). What it signs can be bent to test refusals.
 * The browser test uses Chromium's own virtual authenticator instead.
 */

const b64url = (bytes: Uint8Array | Buffer) => Buffer.from(bytes).toString('base64url');
const sha256 = (data: Uint8Array | string) => crypto.createHash('sha256').update(data).digest();

/** The small part of CBOR (RFC 8949) a COSE key and an attestation object need. */
function cbor(value: unknown): Buffer {
  const head = (major: number, n: number) => {
    if (n < 24) return Buffer.from([(major << 5) | n]);
    if (n < 256) return Buffer.from([(major << 5) | 24, n]);
    if (n < 65536) return Buffer.from([(major << 5) | 25, n >> 8, n & 255]);
    const b = Buffer.alloc(5);
    b[0] = (major << 5) | 26;
    b.writeUInt32BE(n, 1);
    return b;
  };
  if (typeof value === 'number') return value >= 0 ? head(0, value) : head(1, -1 - value);
  if (typeof value === 'string') return Buffer.concat([head(3, Buffer.byteLength(value)), Buffer.from(value)]);
  if (value instanceof Uint8Array) return Buffer.concat([head(2, value.length), Buffer.from(value)]);
  if (value instanceof Map) return Buffer.concat([head(5, value.size), ...[...value].flatMap(([k, v]) => [cbor(k), cbor(v)])]);
  throw new Error(`cbor: cannot encode ${typeof value}`);
}

interface Stored {
  id: Buffer;
  key: crypto.KeyObject;
  rpId: string;
  userHandle: string;
  counter: number;
}

/** How an answer may be bent: another origin or RP, no user verification, a counter that went back. */
export interface Bend {
  origin?: string;
  rpId?: string;
  userVerified?: boolean;
  counter?: number;
  challenge?: string;
  type?: string;
  userHandle?: string;
}

const UP = 0x01;
const UV = 0x04;
const AT = 0x40;

export class SoftAuthenticator {
  readonly credentials: Stored[] = [];

  constructor(readonly origin: string) {}

  private authData(rpId: string, flags: number, counter: number, attested?: Buffer) {
    const count = Buffer.alloc(4);
    count.writeUInt32BE(counter);
    return Buffer.concat([sha256(rpId), Buffer.from([flags]), count, ...(attested ? [attested] : [])]);
  }

  private clientData(type: string, challenge: string, origin: string) {
    return Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }));
  }

  /** navigator.credentials.create(): a new discoverable credential for the options' RP and user. */
  create(options: { challenge: string; rp: { id: string }; user: { id: string } }, bend: Bend = {}) {
    const { privateKey, publicKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = publicKey.export({ format: 'jwk' });
    const cose = new Map<number, unknown>([
      [1, 2],
      [3, -7],
      [-1, 1],
      [-2, Buffer.from(jwk.x!, 'base64url')],
      [-3, Buffer.from(jwk.y!, 'base64url')],
    ]);
    const id = crypto.randomBytes(16);
    const idLength = Buffer.from([id.length >> 8, id.length & 255]);
    const attested = Buffer.concat([Buffer.alloc(16), idLength, id, cbor(cose)]);
    const rpId = bend.rpId ?? options.rp.id;
    const flags = UP | AT | (bend.userVerified === false ? 0 : UV);
    const authData = this.authData(rpId, flags, 0, attested);
    const attestationObject = cbor(
      new Map<string, unknown>([
        ['fmt', 'none'],
        ['attStmt', new Map()],
        ['authData', authData],
      ]),
    );
    const clientDataJSON = this.clientData(bend.type ?? 'webauthn.create', bend.challenge ?? options.challenge, bend.origin ?? this.origin);
    this.credentials.push({ id, key: privateKey, rpId: options.rp.id, userHandle: options.user.id, counter: 0 });
    return {
      id: b64url(id),
      rawId: b64url(id),
      type: 'public-key',
      response: { clientDataJSON: b64url(clientDataJSON), attestationObject: b64url(attestationObject), transports: ['internal'] },
      clientExtensionResults: {},
    };
  }

  /** navigator.credentials.get() with no account named: the credential picked (the last made unless `which`) signs. */
  get(options: { challenge: string; rpId?: string }, bend: Bend = {}, which = this.credentials.length - 1) {
    const credential = this.credentials[which];
    if (!credential) throw new Error('the authenticator holds no credential');
    credential.counter = bend.counter ?? credential.counter + 1;
    const flags = UP | (bend.userVerified === false ? 0 : UV);
    const authData = this.authData(bend.rpId ?? credential.rpId, flags, credential.counter);
    const clientDataJSON = this.clientData(bend.type ?? 'webauthn.get', bend.challenge ?? options.challenge, bend.origin ?? this.origin);
    const signature = crypto.sign('sha256', Buffer.concat([authData, sha256(clientDataJSON)]), credential.key);
    return {
      id: b64url(credential.id),
      rawId: b64url(credential.id),
      type: 'public-key',
      response: {
        clientDataJSON: b64url(clientDataJSON),
        authenticatorData: b64url(authData),
        signature: b64url(signature),
        userHandle: bend.userHandle ?? credential.userHandle,
      },
      clientExtensionResults: {},
    };
  }
}
