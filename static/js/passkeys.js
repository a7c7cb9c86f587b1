// @ts-check
// Passkeys (WebAuthn) in the browser: the server's options (JSON, base64url) turned into what
// navigator.credentials takes, and the browser's answer back into JSON. The sign-in page uses
// signInWithPasskey() (a button, and the conditional UI: the passkeys offered in the username
// field's autofill), the account page registerPasskey(). The checks are the server's
// (@simplewebauthn/server): this only carries bytes.
import { api, markRemembered } from './api.js';

// Whether this browser can make and use passkeys at all: in signin.js, which the app page loads
// at start (this module it loads only when a passkey is used).
import { passkeysSupported } from './signin.js';
export { passkeysSupported };

/** Whether it offers passkeys in a field's autofill (the conditional UI). */
export async function conditionalSupported() {
  if (!passkeysSupported()) return false;
  const check = /** @type {{isConditionalMediationAvailable?: () => Promise<boolean>}} */ (/** @type {unknown} */ (PublicKeyCredential));
  return Boolean(await check.isConditionalMediationAvailable?.().catch(() => false));
}

/** @param {string} text base64url */
function bytes(text) {
  const binary = atob(text.replace(/-/g, '+').replace(/_/g, '/'));
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

/** @param {ArrayBuffer | null | undefined} buffer */
function text(buffer) {
  if (!buffer) return undefined;
  let binary = '';
  for (const b of new Uint8Array(buffer)) binary += String.fromCharCode(b);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** @param {{id: string, type?: string, transports?: string[]}[] | undefined} list */
const descriptors = (list) =>
  (list || []).map((d) => ({
    id: bytes(d.id),
    type: /** @type {'public-key'} */ ('public-key'),
    ...(d.transports ? { transports: /** @type {any} */ (d.transports) } : {}),
  }));

/** The JSON the server reads (PublicKeyCredential.toJSON(), done by hand for browsers without it). */
function credentialJson(credential) {
  const r = credential.response;
  const response = {
    clientDataJSON: text(r.clientDataJSON),
    ...(r.attestationObject ? { attestationObject: text(r.attestationObject), transports: r.getTransports?.() || [] } : {}),
    ...(r.authenticatorData ? { authenticatorData: text(r.authenticatorData), signature: text(r.signature), userHandle: text(r.userHandle) } : {}),
  };
  return {
    id: credential.id,
    rawId: text(credential.rawId),
    type: credential.type,
    response,
    authenticatorAttachment: credential.authenticatorAttachment ?? undefined,
    clientExtensionResults: credential.getClientExtensionResults?.() || {},
  };
}

/**
 * Signs in with a passkey, whichever account it belongs to: {user_id, suspended}. `conditional`
 * waits for the person to pick one in the username field's autofill (and may wait for ever;
 * `signal` ends it). Rejects with a DOMException when the person cancels.
 * @param {{conditional?: boolean, signal?: AbortSignal, remember?: boolean}} [how]
 */
export async function signInWithPasskey({ conditional = false, signal, remember = true } = {}) {
  const options = await api('POST', '/api/login/passkey/options');
  const credential = await navigator.credentials.get({
    publicKey: {
      challenge: bytes(options.challenge),
      rpId: options.rpId,
      timeout: options.timeout,
      userVerification: options.userVerification,
      allowCredentials: descriptors(options.allowCredentials),
    },
    ...(conditional ? { mediation: /** @type {CredentialMediationRequirement} */ ('conditional') } : {}),
    ...(signal ? { signal } : {}),
  });
  if (!credential) throw new Error('No passkey was chosen.');
  const result = await api('POST', '/api/login/passkey', { response: credentialJson(credential), remember });
  markRemembered(remember);
  return result;
}

/**
 * Makes a passkey on this device for the signed-in account and registers it: the passkey's
 * record. The current password is asked by the server (empty for an account without one).
 * @param {string} currentPassword
 * @param {string} name
 */
export async function registerPasskey(currentPassword, name) {
  const options = await api('POST', '/api/account/passkeys/options', { current_password: currentPassword });
  const credential = await navigator.credentials.create({
    publicKey: {
      challenge: bytes(options.challenge),
      rp: options.rp,
      user: { id: bytes(options.user.id), name: options.user.name, displayName: options.user.displayName },
      pubKeyCredParams: options.pubKeyCredParams,
      timeout: options.timeout,
      excludeCredentials: descriptors(options.excludeCredentials),
      authenticatorSelection: options.authenticatorSelection,
      attestation: options.attestation,
    },
  });
  if (!credential) throw new Error('No passkey was made.');
  return api('POST', '/api/account/passkeys', { response: credentialJson(credential), ...(name ? { name } : {}) });
}
