import t from 'tap';
import { startServer } from './helpers/server';
import { Client, signUp, uniqueName } from './helpers/client';

t.test('registration and login', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const anon = new Client(server.url);

  t.test('registers a user and answers 201 with a user_id', async (t) => {
    const res = await anon.post('/api/register', { username: uniqueName(), password: 'password1' });
    t.equal(res.status, 201);
    t.match(res.body.user_id, /^[0-9a-f-]{36}$/);
  });
});
