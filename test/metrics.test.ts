import t from 'tap';
import { crowd } from './helpers/community';
import { startServer } from './helpers/server';
import { openSocket } from './helpers/ws';

t.test('GET /metrics is off by default', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  t.equal((await fetch(`${server.url}/metrics`)).status, 404);
});

t.test('with METRICS=on, /metrics answers on loopback in the Prometheus text format', async (t) => {
  const server = await startServer({ env: { METRICS: 'on' } });
  t.teardown(server.close);
  const c = await crowd(server, 1);
  await c.owner.post(`/api/servers/${c.serverId}/channels/${c.general}/messages`, { content: 'counted' });
  const socket = await openSocket(server.url, `/api/channels/${c.general}/ws`, { client: c.members[0] });
  t.teardown(() => socket.close());
  await c.owner.post(`/api/servers/${c.serverId}/channels/${c.general}/messages`, { content: 'fanned out' });
  await socket.next();

  const res = await fetch(`${server.url}/metrics`);
  t.equal(res.status, 200);
  t.match(res.headers.get('content-type'), /^text\/plain; version=0\.0\.4/);
  const text = await res.text();
  t.match(
    text,
    /chat_http_requests_total\{method="POST",route="\/api\/servers\/:server_id\/channels\/:channel_id\/messages",status="201"\} 2/,
    'requests by route pattern and status',
  );
  t.match(text, /chat_http_request_duration_seconds_bucket\{le="0.005",method="POST",route="\/api\/servers"\}/, 'latency histograms');
  t.match(text, /chat_messages_sent_total 2/);
  t.match(text, /chat_websocket_frames_sent_total 1/);
  t.match(text, /chat_websockets_open\{kind="channel"\} 1/);
  t.match(text, /nodejs_eventloop_lag_seconds/, 'event-loop delay');
  // The delay histogram holds the intervals of a sampling timer: sampled every 10 ms, prom-client's
  // default, an idle loop never reads under 10 ms; every 1 ms, its shortest interval is about 1 ms.
  const shortest = Number(/^nodejs_eventloop_lag_min_seconds ([0-9.e+-]+)$/m.exec(text)?.[1]);
  t.ok(shortest > 0 && shortest < 0.005, `event-loop delay sampled every millisecond (shortest ${shortest} s)`);
  t.match(text, /chat_database_bytes \d{4,}/);
  t.notMatch(text, /[0-9a-f]{8}-[0-9a-f]{4}-/, 'no id ever becomes a label');

  const relayed = await fetch(`${server.url}/metrics`, { headers: { 'x-forwarded-for': '203.0.113.9' } });
  t.equal(relayed.status, 404, 'a request a reverse proxy relays is not let in');
});

t.test('METRICS_HOST names where /metrics answers; elsewhere it is 404', async (t) => {
  const server = await startServer({ env: { METRICS: 'on', METRICS_HOST: '192.0.2.1' } });
  t.teardown(server.close);
  t.equal((await fetch(`${server.url}/metrics`)).status, 404, 'arriving on loopback, not on 192.0.2.1');
  const anywhere = await startServer({ env: { METRICS: 'on', METRICS_HOST: '*' } });
  t.teardown(anywhere.close);
  t.equal((await fetch(`${anywhere.url}/metrics`)).status, 200, '* allows any');
});
