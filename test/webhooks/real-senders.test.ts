import crypto from 'node:crypto';
import examples from '@octokit/webhooks-examples';
import { IncomingWebhook } from '@slack/webhook';
import t from 'tap';
import { community, must } from '../helpers/community';
import { startServer } from '../helpers/server';

/** GitHub's signing, from its own library (published as ES modules only: loaded with import()). */
type Methods = { sign(secret: string, payload: string): Promise<string> };
const sign = async (secret: string, payload: string) => (await (import('@octokit/webhooks-methods' as string) as Promise<Methods>)).sign(secret, payload);

/**
 * Slack's and GitHub's own senders, unchanged, against a real server (issue 52): @slack/webhook's
 * IncomingWebhook (text, blocks, attachments), and every example delivery GitHub publishes
 * (@octokit/webhooks-examples), signed as GitHub signs (@octokit/webhooks-methods). Each checks
 * what members then see.
 */
t.test('real senders', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const c = await community(server);
  const { owner, member } = c.clients;
  const channel: string = (await must(owner.get(`${c.base}/channels`), 200)).body[0].id;
  const newHook = async (name: string) => (await must(owner.post(`${c.base}/channels/${channel}/webhooks`, { name }), 201)).body;
  const seen = async () => (await must(member.get(`${c.base}/channels/${channel}/messages?limit=100`), 200)).body as any[];

  await t.test('@slack/webhook: text, blocks and attachments', async (t) => {
    const hook = await newHook('Slack');
    const slack = new IncomingWebhook(`${hook.url}/slack`, { username: 'Alerts' });
    t.match(await slack.send('plain *text*'), { text: 'ok' });
    await slack.send({
      text: 'Deploy finished',
      blocks: [
        { type: 'header', text: { type: 'plain_text', text: 'Deploy #42' } },
        { type: 'section', text: { type: 'mrkdwn', text: '*api* is live' }, fields: [{ type: 'mrkdwn', text: '*Region:*\neu' }] },
        { type: 'divider' },
        { type: 'image', image_url: 'https://ci.example.com/graph.png', alt_text: 'latency graph' },
        { type: 'context', elements: [{ type: 'mrkdwn', text: 'by <https://ci.example.com|CI>' }] },
      ],
    });
    await slack.send({ attachments: [{ color: 'danger', title: 'Disk full', text: 'on db-1', fields: [{ title: 'Host', value: 'db-1', short: true }] }] });
    const [attached, blocks, plain] = (await seen()).slice(0, 3);
    t.match(plain, { content: 'plain **text**', author: { display_name: 'Alerts', bot: true } });
    t.match(blocks, {
      content: 'Deploy finished',
      embeds: [
        {
          title: 'Deploy #42',
          description: '**api** is live\n**Region:**\neu\n\n---\n\nlatency graph (https://ci.example.com/graph.png)\n\nby CI (https://ci.example.com)',
        },
      ],
    });
    t.match(attached, { content: '', embeds: [{ title: 'Disk full', description: 'on db-1', fields: [{ name: 'Host', value: 'db-1', inline: true }] }] });
  });

  await t.test('every example delivery of @octokit/webhooks-examples, signed, is taken (2xx)', async (t) => {
    const hook = await newHook('GitHub');
    const secret = 'It’s a Secret to Everybody';
    await must(owner.request('PATCH', `/api/webhooks/${hook.id}`, { github_secret: secret }), 200);
    const before = (await seen()).length;
    const refused: string[] = [];
    let posted = 0;
    let deliveries = 0;
    for (const event of examples) {
      for (const example of event.examples) {
        deliveries++;
        const body = JSON.stringify(example);
        const res = await fetch(`${hook.url}/github`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'x-github-event': event.name,
            'x-github-delivery': crypto.randomUUID(),
            'x-hub-signature-256': await sign(secret, body),
            'user-agent': 'GitHub-Hookshot/test',
          },
          body,
        });
        const text = await res.text();
        if (res.status >= 300) refused.push(`${event.name}.${(example as { action?: string }).action ?? ''}: ${res.status} ${text}`);
        if (res.status === 204 && SHOWN.has(shownKey(event.name, example))) posted++;
      }
    }
    t.ok(deliveries > 300, `${deliveries} example deliveries`);
    t.strictSame(refused, [], 'none refused');
    const messages = (await seen()).length - before;
    t.ok(posted > 0 && before + posted < 100, `${posted} of them post`);
    t.equal(messages, posted, 'the supported events and actions post, the others do not');
    const run = (await seen()).find((m) => /Workflow .* completed/.test(m.embeds?.[0]?.title ?? ''));
    t.ok(run, 'a completed workflow run without a conclusion (GitHub’s own example) posts “completed”');
  });
});

/** The events and actions docs/integrations.md says post a message. */
const SHOWN = new Set([
  'ping',
  'push',
  'pull_request.opened',
  'pull_request.closed',
  'pull_request.reopened',
  'pull_request.ready_for_review',
  'issues.opened',
  'issues.closed',
  'issues.reopened',
  'issue_comment.created',
  'release.published',
  'workflow_run.completed',
]);
const shownKey = (event: string, example: unknown) => {
  const action = (example as { action?: unknown }).action;
  return event === 'ping' || event === 'push' ? event : `${event}.${String(action)}`;
};
