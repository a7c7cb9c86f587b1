import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { ConfigError, loadConfig, prepareDataDir } from '../../src/core/config';

t.test('defaults', async (t) => {
  const config = loadConfig({});
  t.equal(config.port, 8080);
  t.equal(config.host, '0.0.0.0');
  t.equal(config.dataDir, path.resolve('./data'));
  t.equal(config.baseUrl, 'http://localhost:8080');
  t.equal(config.smtpUrl, null);
  t.equal(config.mailFrom, 'chat <no-reply@localhost>');
  t.same(config.adminUsers, []);
  t.equal(config.trustProxy, false);
  t.equal(config.rateLimit, true);
  t.equal(config.instanceName, 'chat', "the installed app is called by the product's name");
});

t.test('values are read from the environment', async (t) => {
  const config = loadConfig({
    PORT: '3000',
    HOST: '127.0.0.1',
    DATA_DIR: '/var/lib/chat',
    BASE_URL: 'https://chat.example/',
    SMTP_URL: 'smtps://u:p@mail.example',
    ADMIN_USERS: ' alice, ,bob ,',
    TRUST_PROXY: 'on',
    RATE_LIMIT: 'OFF',
  });
  t.equal(config.port, 3000);
  t.equal(config.host, '127.0.0.1');
  t.equal(config.dataDir, '/var/lib/chat');
  t.equal(config.baseUrl, 'https://chat.example', 'a trailing slash is dropped');
  t.equal(config.mailFrom, 'chat <no-reply@chat.example>');
  t.same(config.adminUsers, ['alice', 'bob']);
  t.equal(config.trustProxy, true);
  t.equal(config.rateLimit, false);
  t.equal(loadConfig({ PORT: '0' }).port, 0, 'port 0 picks a free port');
  t.equal(loadConfig({ PORT: '65535' }).port, 65535);
  t.equal(loadConfig({ INSTANCE_NAME: '  Club Écrit 📚 ' }).instanceName, 'Club Écrit 📚', 'INSTANCE_NAME, trimmed, in any script');
  t.equal(loadConfig({ INSTANCE_NAME: '   ' }).instanceName, 'chat', 'blank is the default');
});

t.test('bad values are a ConfigError with a one-line reason', async (t) => {
  const cases: [Record<string, string>, RegExp][] = [
    [{ PORT: '70000' }, /PORT must be an integer from 0 to 65535, got "70000"/],
    [{ PORT: '65536' }, /PORT/],
    [{ PORT: '-1' }, /PORT/],
    [{ PORT: 'abc' }, /PORT/],
    [{ PORT: '80.5' }, /PORT/],
    [{ PORT: ' ' }, /PORT/],
    [{ PORT: '0x50' }, /PORT/],
    [{ PORT: '1e3' }, /PORT/],
    [{ BASE_URL: 'not a url' }, /BASE_URL must be an absolute http\(s\) URL/],
    [{ BASE_URL: 'chat.example' }, /BASE_URL/],
    [{ BASE_URL: 'ftp://chat.example' }, /BASE_URL must start with http:\/\/ or https:\/\//],
    [{ SMTP_URL: 'mail.example' }, /SMTP_URL/],
    [{ RATE_LIMIT: 'sometimes' }, /RATE_LIMIT must be on or off/],
    [{ TRUST_PROXY: '2' }, /TRUST_PROXY/],
    [{ ROLE: 'worker' }, /ROLE must be one of all, core, gateway/],
    [{ INSTANCE_NAME: 'x'.repeat(41) }, /INSTANCE_NAME must be at most 40 characters, got 41/],
    [{ INSTANCE_NAME: 'two\nlines' }, /INSTANCE_NAME must be printable text/],
    [{ INSTANCE_NAME: 'hidden\u202Ename' }, /INSTANCE_NAME must be printable text/],
    [{ ROLE: 'core' }, /ROLE=core needs BUS_URL/],
    [{ ROLE: 'gateway', BUS_URL: 'redis://r:6379' }, /ROLE=gateway needs CORE_URL/],
    [{ BUS_URL: 'redis://r:6379' }, /BUS_URL needs ROLE=core/],
    [{ ROLE: 'core', BUS_URL: 'http://r:6379' }, /BUS_URL must be a redis/],
    [{ ROLE: 'core', BUS_URL: 'redis://r', CORE_URL: 'http://c' }, /CORE_URL is for ROLE=gateway/],
    [{ ROLE: 'gateway', BUS_URL: 'redis://r', CORE_URL: 'core:8080' }, /CORE_URL must be an absolute http/],
  ];
  for (const [env, message] of cases) {
    t.throws(() => loadConfig(env), message, JSON.stringify(env));
    try {
      loadConfig(env);
    } catch (err) {
      t.ok(err instanceof ConfigError, 'a ConfigError');
      t.notMatch((err as Error).message, /\n/, 'one line');
    }
  }
});

t.test('ROLE, BUS_URL and CORE_URL: one process by default; a core and its gateways share a bus', async (t) => {
  t.match(loadConfig({}), { role: 'all', busUrl: null, coreUrl: null }, 'unset: one process, no bus');
  t.match(loadConfig({ ROLE: 'CORE', BUS_URL: 'redis://:secret@redis:6379/0' }), { role: 'core', busUrl: 'redis://:secret@redis:6379/0', coreUrl: null });
  t.match(
    loadConfig({ ROLE: 'gateway', BUS_URL: 'rediss://redis', CORE_URL: 'http://core:8080/' }),
    { role: 'gateway', coreUrl: 'http://core:8080' },
    'a trailing slash is dropped',
  );
});

t.test('prepareDataDir creates the directory tree and refuses one it cannot write', async (t) => {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'chat-config-'));
  t.teardown(() => fs.rmSync(scratch, { recursive: true, force: true }));
  const dir = path.join(scratch, 'new', 'data');
  prepareDataDir(dir);
  t.ok(fs.statSync(path.join(dir, 'uploads')).isDirectory());
  t.same(fs.readdirSync(dir), ['uploads'], 'the write probe is removed');

  const file = path.join(scratch, 'file');
  fs.writeFileSync(file, '');
  t.throws(() => prepareDataDir(file), { message: /DATA_DIR .* is not writable \(ENOTDIR\)/ });
  try {
    prepareDataDir(file);
  } catch (err) {
    t.ok(err instanceof ConfigError, 'a ConfigError, so start-up prints only its message');
  }
});

t.test('voice: off without JANUS_URL; with it, its Admin API, secret and room key are required, and TURN servers are checked', async (t) => {
  t.equal(loadConfig({}).voice, null, 'no JANUS_URL: no voice');
  const janus = { JANUS_URL: 'ws://127.0.0.1:8188', JANUS_ADMIN_URL: 'ws://127.0.0.1:7188', JANUS_ADMIN_SECRET: 's3cret', JANUS_ROOM_KEY: 'k3y' };
  t.same(loadConfig(janus).voice, {
    janusUrl: 'ws://127.0.0.1:8188',
    janusAdminUrl: 'ws://127.0.0.1:7188',
    janusAdminSecret: 's3cret',
    janusRoomKey: 'k3y',
    turnUrls: [],
    turnSecret: null,
  });
  t.same(
    loadConfig({ ...janus, TURN_URLS: 'stun:turn.example:3478, turn:turn.example:3478?transport=udp,turns:turn.example:5349', TURN_SECRET: 'shared' }).voice,
    {
      ...loadConfig(janus).voice,
      turnUrls: ['stun:turn.example:3478', 'turn:turn.example:3478?transport=udp', 'turns:turn.example:5349'],
      turnSecret: 'shared',
    },
  );
  const refused: [Record<string, string>, RegExp][] = [
    [{ JANUS_ADMIN_SECRET: 'x' }, /JANUS_ADMIN_SECRET needs JANUS_URL/],
    [{ TURN_URLS: 'stun:x' }, /TURN_URLS needs JANUS_URL/],
    [{ ...janus, JANUS_URL: 'http://127.0.0.1:8188' }, /JANUS_URL must be a ws:\/\/ or wss:\/\/ URL/],
    [{ ...janus, JANUS_ADMIN_URL: '' }, /needs JANUS_ADMIN_URL/],
    [{ ...janus, JANUS_ADMIN_SECRET: '' }, /needs JANUS_ADMIN_SECRET/],
    [{ ...janus, JANUS_ROOM_KEY: '' }, /needs JANUS_ROOM_KEY/],
    [{ ...janus, TURN_URLS: 'turn:x:3478' }, /needs TURN_SECRET/],
    [{ ...janus, TURN_URLS: 'stun:x', TURN_SECRET: 'y' }, /TURN_SECRET needs a turn: or turns: URL/],
    [{ ...janus, TURN_URLS: 'http://x' }, /TURN_URLS must be stun:, turn: or turns: URLs/],
  ];
  for (const [env, message] of refused) t.throws(() => loadConfig(env), { name: 'Error', message }, JSON.stringify(env));
  t.ok(
    (() => {
      try {
        loadConfig({ JANUS_ROOM_KEY: 'x' });
      } catch (err) {
        return err instanceof ConfigError;
      }
      return false;
    })(),
    'a ConfigError',
  );
});

t.test('OIDC_PROVIDERS and OIDC_CONFIG: the providers, their defaults, and every bad value a ConfigError', async (t) => {
  const entry = { id: 'org', name: 'Our Org', issuer: 'https://id.example/realms/club', client_id: 'chat', client_secret: 's3cret' };
  t.same(loadConfig({}).oidcProviders, [], 'none by default');
  t.equal(loadConfig({}).passwordSignup, true, 'password sign-up is open by default');
  t.same(loadConfig({ OIDC_PROVIDERS: JSON.stringify([entry]) }).oidcProviders, [
    {
      id: 'org',
      name: 'Our Org',
      issuer: 'https://id.example/realms/club',
      clientId: 'chat',
      clientSecret: 's3cret',
      scopes: ['openid', 'profile', 'email'],
      usernameClaim: 'preferred_username',
      groupsClaim: 'groups',
      allowedDomains: [],
      adminGroup: null,
      allowSignup: false,
    },
  ]);
  const full = loadConfig({
    OIDC_PROVIDERS: JSON.stringify([
      {
        ...entry,
        scopes: ['profile', 'groups'],
        username_claim: 'nickname',
        groups_claim: 'roles',
        allowed_domains: ['club.example'],
        admin_group: 'admins',
        allow_signup: true,
      },
    ]),
    PASSWORD_SIGNUP: 'off',
  });
  t.match(full.oidcProviders[0], {
    scopes: ['openid', 'profile', 'groups'],
    usernameClaim: 'nickname',
    groupsClaim: 'roles',
    allowedDomains: ['club.example'],
    adminGroup: 'admins',
    allowSignup: true,
  });
  t.equal(full.passwordSignup, false);
  t.equal(
    loadConfig({ OIDC_PROVIDERS: JSON.stringify([{ ...entry, issuer: 'http://localhost:9000/' }]) }).oidcProviders[0].issuer,
    'http://localhost:9000/',
    'http on loopback',
  );

  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'chat-config-'));
  t.teardown(() => fs.rmSync(scratch, { recursive: true, force: true }));
  const file = path.join(scratch, 'oidc.json');
  fs.writeFileSync(file, JSON.stringify([entry]));
  t.equal(loadConfig({ OIDC_CONFIG: file }).oidcProviders[0].clientSecret, 's3cret', 'from a file');

  const bad = (change: Record<string, unknown>) => JSON.stringify([{ ...entry, ...change }]);
  const cases: [Record<string, string>, RegExp][] = [
    [{ OIDC_PROVIDERS: '{' }, /OIDC_PROVIDERS is not valid JSON/],
    [{ OIDC_PROVIDERS: '{}' }, /must be a JSON array of providers/],
    [{ OIDC_PROVIDERS: '[1]' }, /OIDC_PROVIDERS\[0\] must be an object/],
    [{ OIDC_PROVIDERS: JSON.stringify([entry, entry]) }, /two providers have the id "org"/],
    [{ OIDC_PROVIDERS: bad({ id: 'Org' }) }, /\.id must be lower-case letters/],
    [{ OIDC_PROVIDERS: bad({ name: '' }) }, /\.name must be the name on the sign-in button/],
    [{ OIDC_PROVIDERS: bad({ name: 'x'.repeat(41) }) }, /\.name/],
    [{ OIDC_PROVIDERS: bad({ issuer: 'http://id.example' }) }, /\.issuer must be an https URL \(http only on localhost\)/],
    [{ OIDC_PROVIDERS: bad({ issuer: 'https://id.example/?x=1' }) }, /\.issuer/],
    [{ OIDC_PROVIDERS: bad({ client_secret: '' }) }, /\.client_secret must be the client secret/],
    [{ OIDC_PROVIDERS: bad({ client_id: 5 }) }, /\.client_id/],
    [{ OIDC_PROVIDERS: bad({ scopes: 'openid' }) }, /\.scopes must be an array of scope names/],
    [{ OIDC_PROVIDERS: bad({ allowed_domains: ['Club.Example'] }) }, /\.allowed_domains must be an array of lower-case domain names/],
    [{ OIDC_PROVIDERS: bad({ allow_signup: 'yes' }) }, /\.allow_signup must be true or false/],
    [{ OIDC_PROVIDERS: bad({ admin_group: '' }) }, /\.admin_group must be a group name/],
    [{ OIDC_PROVIDERS: bad({ allowed_domain: ['x.example'] }) }, /unknown key "allowed_domain"/],
    [{ OIDC_PROVIDERS: JSON.stringify([entry]), OIDC_CONFIG: file }, /set OIDC_PROVIDERS or OIDC_CONFIG, not both/],
    [{ OIDC_CONFIG: path.join(scratch, 'missing.json') }, /OIDC_CONFIG \(.*missing\.json\) cannot be read \(ENOENT\)/],
    [{ PASSWORD_SIGNUP: 'off' }, /PASSWORD_SIGNUP=off needs an OpenID Provider with allow_signup/],
    [{ PASSWORD_SIGNUP: 'off', OIDC_PROVIDERS: JSON.stringify([entry]) }, /PASSWORD_SIGNUP=off needs/],
    [{ PASSWORD_SIGNUP: 'maybe' }, /PASSWORD_SIGNUP must be on or off/],
  ];
  for (const [env, message] of cases) {
    t.throws(() => loadConfig(env), message, JSON.stringify(env).slice(0, 120));
    try {
      loadConfig(env);
    } catch (err) {
      t.ok(err instanceof ConfigError, 'a ConfigError');
      t.notMatch((err as Error).message, /\n/, 'one line');
    }
  }
});
