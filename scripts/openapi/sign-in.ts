/** Signing in with an OpenID Provider (src/api/sso.ts) or a passkey (src/api/passkeys.ts), as OpenAPI operations. */
import { type OpSpec, type Schema, input, ref, rule, str, text, username } from './dsl';

type Ops = [method: string, path: string, spec: OpSpec][];

const tag = 'Sign-in';
const json = (status: number, schema: Schema, description?: string) => ({ status, json: schema, description });
const empty = (description: string) => ({ status: 204, kind: 'empty' as const, description });
const redirect = (description: string, headers?: Record<string, string>) => ({ status: 303, kind: 'redirect' as const, description, headers });
const currentPassword = {
  ...str,
  description: 'the current password (an account without one: ignored, and a sign-in within the last 10 minutes is needed instead)',
};
const sessionCookies =
  'app_session=<token>; HttpOnly; SameSite=Lax; Path=/ (and Secure with an https BASE_URL): the session; with remember, also app_device (as POST /api/login sets it)';
const flowCookie = 'always: app_oidc=<random>; HttpOnly; SameSite=Lax; Path=/api/auth/oidc; Max-Age=600: binds the sign-in to this browser';

/** A provider's id as OIDC_PROVIDERS names it. */
export const providerId: Schema = { type: 'string', pattern: '^[a-z0-9][a-z0-9_-]{0,31}$', description: 'a provider of GET /api/auth/providers' };
/** A path on this site, as a browser's location gives it (src/api/sso.ts readReturnTo). */
const returnTo: Schema = {
  type: 'string',
  maxLength: 1024,
  pattern: '^(?:/(?![/\\\\])[\\u0021-\\u005b\\u005d-\\u007e]*)?$(?!\\u000a)',
  description: 'where to land after signing in: a path on this site (empty or absent: /); anything else (//host, https://…) is 400',
};
const rememberQuery: Schema = {
  type: 'string',
  enum: ['on', 'off', 'true', 'false', '1', '0', ''],
  description: '"remember this device": the callback also sets the app_device cookie',
};
const UNKNOWN_FLOW = rule(
  'state names a sign-in this browser started (its app_oidc cookie) within 10 minutes, not used before',
  'this sign-in is unknown, used, expired or was started in another browser',
);

export const signInOperations: Ops = [
  [
    'GET',
    '/api/auth/providers',
    {
      tag,
      summary: 'What the sign-in page offers: the OpenID Providers (OIDC_PROVIDERS) and whether a password may register',
      auth: 'none',
      ok: [json(200, ref('SignInOptions'))],
    },
  ],
  [
    'GET',
    '/api/auth/oidc/{provider}/start',
    {
      tag,
      summary:
        'Sign in with an OpenID Provider: 303 to its sign-in page (authorization code flow, PKCE S256, state, nonce). 502: the provider cannot be reached',
      auth: 'none',
      path: { provider: providerId },
      query: { return_to: returnTo, remember: rememberQuery },
      ok: [redirect("the provider's authorization endpoint", { 'Set-Cookie': flowCookie })],
      errors: [429, 502],
    },
  ],
  [
    'GET',
    '/api/auth/oidc/{provider}/callback',
    {
      tag,
      summary:
        "The provider's answer (its redirect_uri): the code exchanged and the ID token checked by openid-client. A sign-in lands on its return_to with a session (/account/warnings when suspended; /?sso=code when the two-factor code is still needed); a link lands on /account. 400: unknown, used, expired or foreign state; 401: an answer that does not check out; 403: sign-up closed, or a domain not allowed; 409: the identity's verified email is an existing account's, or the identity is another account's; 502: the provider did not answer. No refusal opens a session",
      auth: 'none',
      path: { provider: providerId },
      query: {
        code: { ...str, description: 'the authorization code' },
        state: { ...str, description: 'the state of the sign-in' },
        iss: { ...str, description: 'the issuer (RFC 9207), checked when sent' },
        error: { ...str, description: 'the provider refused (access_denied, …): 401' },
        error_description: str,
      },
      prose: [UNKNOWN_FLOW],
      ok: [redirect('signed in (to return_to), linked (to /account), or waiting for the two-factor code (to /?sso=code)', { 'Set-Cookie': sessionCookies })],
      errors: [401, 403, 409, 429, 502],
    },
  ],
  [
    'POST',
    '/api/auth/oidc/two-factor',
    {
      tag,
      summary:
        "The two-factor code of a sign-in through a provider that waits for it (this browser's, 5 minutes): the session. 401: a wrong code (a failed login of the account)",
      auth: 'none',
      body: { kind: 'json', schema: input({ code: { ...str, description: 'a current TOTP code or an unused recovery code' } }) },
      prose: [rule('a sign-in through a provider waits for its code in this browser', 'no sign-in is waiting for a code here')],
      ok: [{ ...json(200, ref('SsoSignedIn')), headers: { 'Set-Cookie': `always: ${sessionCookies}` } }],
      errors: [401, 429],
    },
  ],
  [
    'GET',
    '/api/account/identities',
    { tag, summary: "The account's identities at OpenID Providers, oldest first", auth: 'account', ok: [json(200, { type: 'array', items: ref('Identity') })] },
  ],
  [
    'POST',
    '/api/account/identities',
    {
      tag,
      summary:
        "Link an identity at a provider to this account: with the current password, the URL of the provider's sign-in page; its callback links the identity (409 there when it is another account's)",
      auth: 'account',
      body: { kind: 'json', schema: input({ provider_id: providerId, current_password: currentPassword }) },
      ok: [{ ...json(200, ref('LinkStarted')), headers: { 'Set-Cookie': flowCookie } }],
      errors: [404, 429, 502],
    },
  ],
  [
    'DELETE',
    '/api/account/identities/{identity_id}',
    {
      tag,
      summary: 'Unlink an identity: it no longer signs in to this account. 409 when it is the last way in (no password, passkey or other identity)',
      auth: 'account',
      ok: [empty('unlinked')],
      errors: [409],
    },
  ],
  [
    'PUT',
    '/api/account/username',
    {
      tag,
      summary:
        "The one change of a username made from a provider's claim (an account made through a provider). 409: taken in any letter case, or the name was chosen or changed already",
      auth: 'user',
      body: { kind: 'json', schema: input({ username }) },
      ok: [json(200, ref('UserRef'))],
      errors: [409],
    },
  ],
  ...passkeyOperations(),
];

/** Passkeys (WebAuthn, src/api/passkeys.ts): the account's, and the username-less sign-in. */
function passkeyOperations(): Ops {
  const credential: Schema = {
    type: 'object',
    description:
      'the PublicKeyCredential the browser gave, in its JSON encoding (PublicKeyCredential.toJSON(); base64url fields): id, rawId, type "public-key", response',
    required: ['id', 'rawId', 'type', 'response'],
    properties: {
      id: { type: 'string', maxLength: 1024 },
      rawId: { type: 'string', maxLength: 1024 },
      type: { type: 'string', enum: ['public-key'] },
      response: { type: 'object' },
    },
  };
  const name = text(64);
  const WAITING = rule(
    'a registration asked for by POST /api/account/passkeys/options waits (5 minutes, the latest one)',
    'no passkey registration is waiting',
  );
  const CHECKS = rule(
    'the credential checks out (@simplewebauthn/server: challenge, origin and RP id of BASE_URL, user verification, signature)',
    'the passkey does not check out',
  );
  const SHAPE = rule(
    'response is the credential as the browser gave it (rawId equal to id, the response fields as strings)',
    'response must be the credential',
  );
  return [
    [
      'POST',
      '/api/account/passkeys/options',
      {
        tag,
        summary:
          "Start registering a passkey: with the current password, the options for navigator.credentials.create() (a discoverable credential, user verification required, the relying party BASE_URL's host); the challenge waits 5 minutes. 409: 20 passkeys already",
        auth: 'account',
        body: { kind: 'json', schema: input({ current_password: currentPassword }) },
        ok: [json(200, ref('PasskeyCreationOptions'))],
        errors: [409, 429],
      },
    ],
    [
      'POST',
      '/api/account/passkeys',
      {
        tag,
        summary: "Finish registering a passkey: the browser's answer to the options, checked; the passkey. 409: registered already, or 20 passkeys",
        auth: 'account',
        body: { kind: 'json', schema: input({ response: credential, name }, ['name']) },
        prose: [WAITING, CHECKS, SHAPE],
        ok: [json(201, ref('Passkey'))],
        errors: [409],
      },
    ],
    [
      'GET',
      '/api/account/passkeys',
      { tag, summary: "The account's passkeys, oldest first", auth: 'account', ok: [json(200, { type: 'array', items: ref('Passkey') })] },
    ],
    [
      'PATCH',
      '/api/account/passkeys/{passkey_id}',
      { tag, summary: 'Rename a passkey', auth: 'account', body: { kind: 'json', schema: input({ name }) }, ok: [json(200, ref('Passkey'))] },
    ],
    [
      'DELETE',
      '/api/account/passkeys/{passkey_id}',
      {
        tag,
        summary: 'Remove a passkey: it no longer signs in. 409 when it is the last way in (no password, other passkey or identity)',
        auth: 'account',
        ok: [empty('removed')],
        errors: [409],
      },
    ],
    [
      'DELETE',
      '/api/account/password',
      {
        tag,
        summary:
          'Remove the password (a passkey or a provider replaces it): with the current password and, with two-factor sign-in on, a code. Every other session and remembered device ends; the recovery codes still sign in (POST /api/login with an empty password). 409: no password, or it is the last way in',
        auth: 'account',
        body: {
          kind: 'json',
          schema: input(
            { current_password: currentPassword, code: { ...str, description: 'with two-factor sign-in on: a current code or an unused recovery code' } },
            ['code'],
          ),
        },
        ok: [empty('removed')],
        errors: [409, 429],
      },
    ],
    [
      'POST',
      '/api/login/passkey/options',
      {
        tag,
        summary:
          'Start a username-less sign-in with a passkey: the options for navigator.credentials.get() (no account named; also the conditional UI of the sign-in field)',
        auth: 'none',
        ok: [json(200, ref('PasskeyRequestOptions'))],
        errors: [429],
      },
    ],
    [
      'POST',
      '/api/login/passkey',
      {
        tag,
        summary:
          "Sign in with a passkey: the browser's answer, checked (a challenge of POST /api/login/passkey/options, good once, 5 minutes; origin and RP id of BASE_URL; user verification; signature; counter). Counts as two factors: no code is asked. 401: it does not check out (a failed login of its account and the address)",
        auth: 'none',
        body: {
          kind: 'json',
          schema: input({ response: credential, remember: { type: 'boolean', description: '"remember this device": also sets app_device' } }, ['remember']),
        },
        prose: [SHAPE],
        ok: [{ ...json(200, ref('LoggedIn')), headers: { 'Set-Cookie': `always: ${sessionCookies}` } }],
        errors: [401, 429],
      },
    ],
  ];
}
