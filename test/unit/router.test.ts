import t from 'tap';
import { compile, isUuid, match } from '../../src/core/http/router';
import { HttpError } from '../../src/core/http/errors';

const ID = '3f2b8c1e-7d4a-4b6e-9c0d-1a2b3c4d5e6f';

const table = compile([
  { method: 'GET', path: '/api/users/me', name: 'me' },
  { method: 'GET', path: '/api/users/:user_id', name: 'user' },
  { method: 'GET', path: '/api/servers/:server_id/channels', name: 'channels' },
  { method: 'POST', path: '/api/servers/:server_id/channels', name: 'createChannel' },
  { method: 'PUT', path: '/api/servers/:server_id/channels/:channel_id/messages/:message_id', name: 'edit' },
  { method: 'DELETE', path: '/api/servers/:server_id/channels/:channel_id/messages/:message_id', name: 'delete' },
  { method: 'POST', path: '/api/invites/:token/accept', name: 'accept' },
  { method: 'GET', path: '/files/a.b', name: 'dotted' },
  { method: 'POST', path: '/api/conversations/dm', name: 'openDm' },
  { method: 'PATCH', path: '/api/conversations/:conversation_id', name: 'renameConversation' },
  { method: 'GET', path: '/api/friends/requests', name: 'requests' },
  { method: 'DELETE', path: '/api/friends/:user_id', name: 'unfriend' },
]);

const routeName = (method: string, path: string) => {
  const found = match(table, method, path);
  return found && 'route' in found ? found.route.name : found;
};

t.test('literal routes win when listed before a parameter route', async (t) => {
  t.equal(routeName('GET', '/api/users/me'), 'me');
  t.equal(routeName('GET', `/api/users/${ID}`), 'user');
});

t.test('parameters are captured and decoded', async (t) => {
  const found = match(table, 'PUT', `/api/servers/${ID}/channels/${ID}/messages/${ID}`);
  t.same(found && 'params' in found && found.params, { server_id: ID, channel_id: ID, message_id: ID });
  const token = match(table, 'POST', '/api/invites/abc%20def/accept');
  t.same(token && 'params' in token && token.params, { token: 'abc def' });
});

t.test('an unknown path is null and a known path with another method lists what is allowed', async (t) => {
  const cases: [string, string, unknown][] = [
    ['GET', '/api/nothing', null],
    ['GET', '/api/users', null],
    ['GET', '/api/users/me/more', null],
    ['GET', '/files/aXb', null],
    ['DELETE', '/api/users/me', { allow: ['GET'] }],
    ['DELETE', `/api/servers/${ID}/channels`, { allow: ['GET', 'POST'] }],
    ['GET', `/api/servers/${ID}/channels/${ID}/messages/${ID}`, { allow: ['PUT', 'DELETE'] }],
    ['GET', '/api/invites/x/accept', { allow: ['POST'] }],
  ];
  for (const [method, path, expected] of cases) t.same(match(table, method, path), expected, `${method} ${path}`);
});

t.test('a literal segment is never taken for an id: its path answers with its own methods', async (t) => {
  t.same(match(table, 'PATCH', '/api/conversations/dm'), { allow: ['POST'] }, 'PATCH /api/conversations/dm is 405, not a 400 about conversation_id');
  t.same(match(table, 'DELETE', '/api/friends/requests'), { allow: ['GET'] }, 'and DELETE is not advertised for /api/friends/requests');
  t.equal(routeName('PATCH', `/api/conversations/${ID}`), 'renameConversation');
  t.equal(routeName('DELETE', `/api/friends/${ID}`), 'unfriend');
  t.throws(() => match(table, 'DELETE', '/api/friends/bob'), { status: 400, message: /user_id must be a UUID/ }, 'a malformed id is still named');
});

t.test('HEAD matches GET routes', async (t) => {
  t.equal(routeName('HEAD', '/api/users/me'), 'me');
});

t.test('a parameter named *_id must be a UUID and is lower-cased', async (t) => {
  for (const bad of ['me2', '123', `${ID}0`, ID.replace(/-/g, ''), `{${ID}}`, ' ' + ID]) {
    t.throws(() => match(table, 'GET', `/api/users/${encodeURIComponent(bad)}`), { status: 400, message: /user_id must be a UUID/ }, JSON.stringify(bad));
  }
  const upper = match(table, 'GET', `/api/users/${ID.toUpperCase()}`);
  t.same(upper && 'params' in upper && upper.params, { user_id: ID });
});

t.test('other parameters are not judged by the router', async (t) => {
  t.equal(routeName('POST', '/api/invites/not-a-uuid/accept'), 'accept');
});

t.test('a malformed percent-encoding is 400, not a crash', async (t) => {
  t.throws(() => match(table, 'POST', '/api/invites/%E0%A4%A/accept'), { status: 400, message: /malformed path parameter token/ });
  try {
    match(table, 'GET', '/api/users/%ZZ');
    t.fail('should throw');
  } catch (err) {
    t.ok(err instanceof HttpError, 'the one error type, so it maps to a 400 response');
  }
});

t.test('isUuid accepts UUIDs of any version and case only', async (t) => {
  t.ok(isUuid(ID));
  t.ok(isUuid(ID.toUpperCase()));
  t.ok(isUuid('00000000-0000-0000-0000-000000000000'));
  for (const value of ['', 'abc', 42, null, undefined, `${ID}\n`]) t.notOk(isUuid(value), JSON.stringify(value));
});
