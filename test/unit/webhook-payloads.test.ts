import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import t from 'tap';
import { type Embed, MAX_EMBED_CHARS, checkEmbeds, embedText } from '../../src/core/embed';
import { HttpError } from '../../src/core/http/errors';
import { type IncomingMessage, COLORS, fromDiscord, fromGitHub, fromSlack, slackMarkdown } from '../../src/parts/integrations/payloads';

const FIXTURES = path.join(__dirname, '..', 'fixtures', 'webhooks');
const fixture = (name: string): Record<string, unknown> => JSON.parse(fs.readFileSync(path.join(FIXTURES, `${name}.json`), 'utf8'));
const bad = (message: string | RegExp) => ({ status: 400, message });
const GITHUB_EVENTS = ['ping', 'push', 'pull_request', 'issues', 'issue_comment', 'release', 'workflow_run'];
const CODERTOCAT = { name: 'Codertocat', url: 'https://github.com/Codertocat' };

/** A deep copy of a fixture with one change made at a path of keys. */
function changed(name: string, keys: string[], value: unknown): Record<string, unknown> {
  const copy = fixture(name);
  let at = copy as Record<string, unknown>;
  for (const key of keys.slice(0, -1)) at = at[key] as Record<string, unknown>;
  if (value === undefined) delete at[keys[keys.length - 1]];
  else at[keys[keys.length - 1]] = value;
  return copy;
}

const embed = (overrides: Record<string, unknown>) => ({ title: 'A title', ...overrides });

t.test('each fixture translates to the message it should', async (t) => {
  const cases: [string, () => IncomingMessage | null, IncomingMessage][] = [
    [
      'discord-full',
      () => fromDiscord(fixture('discord-full')),
      {
        content: 'Deploy of **api** finished — @release-team please check the dashboard.',
        username: 'Deploy Bot',
        avatar_url: 'https://cdn.example.com/avatars/deploy-bot.png',
        allowed_mentions: { parse: ['users'], users: [], roles: ['0f8fad5b-d9cb-469f-a165-70867728950e'] },
        embeds: [
          {
            title: 'api v2.4.1 deployed to production',
            description: 'Rolled out to 12 of 12 hosts in 3 min 41 s.\nNo errors in the first five minutes.',
            url: 'https://deploy.example.com/runs/8812',
            timestamp: '2024-05-01T12:30:00.000Z',
            color: 0x58b9ff,
            footer: { text: 'deploy-bot 1.8.0' },
            author: { name: 'Release pipeline', url: 'https://deploy.example.com/pipelines/api' },
            fields: [
              { name: 'Service', value: 'api', inline: true },
              { name: 'Version', value: '2.4.0 → 2.4.1', inline: true },
              { name: 'Changes', value: '- Faster search\n- Fix for #412', inline: false },
            ],
            image: { url: 'https://deploy.example.com/runs/8812/graph.png' },
            thumbnail: { url: 'https://cdn.example.com/icons/rocket.png' },
          },
        ],
      },
    ],
    ['discord-minimal', () => fromDiscord(fixture('discord-minimal')), { content: 'Hello from a webhook!', embeds: [] }],
    [
      'slack-attachment',
      () => fromSlack(fixture('slack-attachment')),
      {
        content: '**[FIRING:1]** High latency on api dashboard (https://grafana.example.com/d/api) & @everyone',
        username: 'Grafana',
        avatar_url: 'https://grafana.example.com/public/img/grafana_icon.png',
        embeds: [
          {
            title: '[FIRING:1] High latency (api)',
            description: 'Alert rule **API latency** changed state\n\np99 latency is **2.4 s** (threshold ~~1 s~~ 2 s) <- since 14:02',
            url: 'https://grafana.example.com/alerting/grafana/abc123/view',
            timestamp: '2024-05-01T12:22:00.000Z',
            color: COLORS.red,
            footer: { text: 'Grafana v10.4.2' },
            author: { name: 'Grafana Alerting', url: 'https://grafana.example.com/alerting/list' },
            fields: [
              { name: 'Service', value: 'api', inline: true },
              { name: 'Region', value: 'eu-west-1', inline: true },
              { name: 'Runbook', value: 'Latency runbook (https://wiki.example.com/runbooks/latency)', inline: false },
            ],
            thumbnail: { url: 'https://grafana.example.com/render/d-solo/api?panelId=4' },
          },
        ],
      },
    ],
    [
      'slack-blocks',
      () => fromSlack(fixture('slack-blocks')),
      {
        content: [
          '**New request**',
          '**Type:**\nPaid Time Off\n**Created by:**\nFred Enriquez (https://example.com/users/fred)',
          '**When:**\nAug 10 - Aug 13 ~~(was Aug 9)~~',
          '---',
          'Submitted 2 hours ago via the HR portal',
        ].join('\n\n'),
        embeds: [],
      },
    ],
    [
      'github-ping',
      () => fromGitHub('ping', fixture('github-ping')),
      {
        content: '',
        embeds: [
          {
            title: '[Octocoders/Hello-World] Webhook connected',
            description: 'Anything added dilutes everything else.',
            url: 'https://github.com/Octocoders/Hello-World',
            author: CODERTOCAT,
          },
        ],
      },
    ],
    [
      'github-push',
      () => fromGitHub('push', fixture('github-push')),
      {
        content: '',
        embeds: [
          {
            title: '[Codertocat/Hello-World:master] 3 new commits',
            url: 'https://github.com/Codertocat/Hello-World/compare/6113728f27ae...2698ed23905a',
            description: [
              '[`edb71f2`](https://github.com/Codertocat/Hello-World/commit/edb71f297e031c230c24f9206e63f0b1715ac995) Fix spelling of "commit" in README – Codertocat',
              '[`20d9c3c`](https://github.com/Codertocat/Hello-World/commit/20d9c3cd455a4bb40cd23929ab91724aa462a169) Add a contributing guide – Mona Lisa Octocat',
              '[`2698ed2`](https://github.com/Codertocat/Hello-World/commit/2698ed23905a2905b5896e999c774f86ef420a72) Run the tests on every push (#2) – Codertocat',
            ].join('\n'),
            timestamp: '2019-05-15T20:27:45.000Z',
            author: CODERTOCAT,
          },
        ],
      },
    ],
    [
      'github-pull_request',
      () => fromGitHub('pull_request', fixture('github-pull_request')),
      {
        content: '',
        embeds: [
          {
            title: '[Codertocat/Hello-World] Pull request opened: #2 Update the README with new information.',
            description: 'This is a pretty simple change that we need to pull into master.',
            url: 'https://github.com/Codertocat/Hello-World/pull/2',
            timestamp: '2019-05-15T15:20:33.000Z',
            color: COLORS.green,
            author: CODERTOCAT,
          },
        ],
      },
    ],
    [
      'github-issues',
      () => fromGitHub('issues', fixture('github-issues')),
      {
        content: '',
        embeds: [
          {
            title: '[Codertocat/Hello-World] Issue opened: #1 Spelling error in the README file',
            description: "It looks like you accidently spelled 'commit' with two 't's.",
            url: 'https://github.com/Codertocat/Hello-World/issues/1',
            timestamp: '2019-05-15T15:20:18.000Z',
            color: COLORS.green,
            author: CODERTOCAT,
          },
        ],
      },
    ],
    [
      'github-issue_comment',
      () => fromGitHub('issue_comment', fixture('github-issue_comment')),
      {
        content: '',
        embeds: [
          {
            title: '[Codertocat/Hello-World] New comment on issue #1: Spelling error in the README file',
            description: "You are totally right! I'll get this fixed right away.",
            url: 'https://github.com/Codertocat/Hello-World/issues/1#issuecomment-492700400',
            timestamp: '2019-05-15T15:20:21.000Z',
            author: CODERTOCAT,
          },
        ],
      },
    ],
    [
      'github-release',
      () => fromGitHub('release', fixture('github-release')),
      {
        content: '',
        embeds: [
          {
            title: '[Codertocat/Hello-World] New release published: 0.0.1',
            description:
              "## What's Changed\n* Fix spelling in the README by @Codertocat in https://github.com/Codertocat/Hello-World/pull/2\n\n**Full Changelog**: https://github.com/Codertocat/Hello-World/commits/0.0.1",
            url: 'https://github.com/Codertocat/Hello-World/releases/tag/0.0.1',
            timestamp: '2019-05-15T15:20:53.000Z',
            author: CODERTOCAT,
          },
        ],
      },
    ],
    [
      'github-workflow_run',
      () => fromGitHub('workflow_run', fixture('github-workflow_run')),
      {
        content: '',
        embeds: [
          {
            title: '[octo-org/octo-repo] Workflow test success on master',
            description: 'ci(action): update actions/setup-node digest to 8c91899',
            url: 'https://github.com/octo-org/octo-repo/actions/runs/289782451',
            timestamp: '2020-10-05T16:33:49.000Z',
            color: COLORS.green,
            author: CODERTOCAT,
          },
        ],
      },
    ],
  ];
  for (const [name, translate, expected] of cases) {
    const got = translate();
    t.strictSame(got, expected, name);
    t.strictSame(checkEmbeds(got?.embeds), got?.embeds, `${name}: its embeds pass checkEmbeds unchanged`);
  }
});

t.test('every translator answers 400 to a body that is not a JSON object', async (t) => {
  const translators: [string, (body: unknown) => unknown][] = [
    ['fromDiscord', fromDiscord],
    ['fromSlack', fromSlack],
    ...GITHUB_EVENTS.concat('star').map((event): [string, (body: unknown) => unknown] => [`fromGitHub ${event}`, (body) => fromGitHub(event, body)]),
  ];
  for (const [name, translate] of translators) {
    for (const body of [null, undefined, [], [{}], 'x', 5, true]) {
      t.throws(() => translate(body), bad(/must be a JSON object$/), `${name} ${JSON.stringify(body)}`);
    }
  }
});

t.test('checkEmbeds keeps only known keys, reads null as absent and drops embeds with no text', async (t) => {
  const got = checkEmbeds([
    { title: 'Kept', type: 'rich', provider: { name: 'x' }, video: { url: 'https://v.example' }, description: null, footer: null },
    { title: '   ', description: '', image: { url: 'https://img.example/a.png' } },
    { fields: [{ name: '', value: ' ' }] },
    {},
  ]);
  t.strictSame(got, [{ title: 'Kept' }]);
});

t.test('checkEmbeds normalizes URLs, timestamps and line breaks', async (t) => {
  const [got] = checkEmbeds([
    {
      title: 'Line one\r\nline two\rline three',
      url: 'HTTPS://Example.COM/a/../b?q=ü',
      timestamp: '2024-05-01T14:30:00.5+02:00',
      author: { name: 'Ann', url: 'http://example.com' },
      fields: [{ name: 'n', value: 'v', inline: null }],
    },
  ]);
  t.strictSame(got, {
    title: 'Line one\nline two\nline three',
    url: 'https://example.com/b?q=%C3%BC',
    timestamp: '2024-05-01T12:30:00.500Z',
    author: { name: 'Ann', url: 'http://example.com/' },
    fields: [{ name: 'n', value: 'v', inline: false }],
  });
  t.equal(checkEmbeds([embed({ timestamp: '2024-05-01' })])[0].timestamp, '2024-05-01T00:00:00.000Z', 'a date alone is midnight UTC');
  t.equal(checkEmbeds([embed({ timestamp: '2024-05-01T10:00:00' })])[0].timestamp, '2024-05-01T10:00:00.000Z', 'no zone reads as UTC');
});

t.test('checkEmbeds refuses what breaks a limit, naming the field', async (t) => {
  const fields = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `f${i}`, value: 'v' }));
  const cases: [unknown, string | RegExp][] = [
    [{}, 'embeds must be an array of embed objects'],
    [Array.from({ length: 11 }, () => embed({})), 'embeds must hold at most 10 embeds; this holds 11'],
    [[embed({}), embed({}), embed({ title: 'x'.repeat(257) })], 'embeds[2].title must be at most 256 characters'],
    [[embed({ description: 'x'.repeat(4097) })], 'embeds[0].description must be at most 4096 characters'],
    [[embed({ fields: fields(26) })], 'embeds[0].fields must hold at most 25 fields; this holds 26'],
    [[embed({ fields: [{ name: 'n', value: 'x'.repeat(1025) }] })], 'embeds[0].fields[0].value must be at most 1024 characters'],
    [[embed({ fields: [{ name: 'n' }] })], 'embeds[0].fields[0].value is missing'],
    [[embed({ fields: [{ name: 'n', value: 'v', inline: 'yes' }] })], 'embeds[0].fields[0].inline must be true or false'],
    [[embed({ fields: {} })], 'embeds[0].fields must be an array of fields'],
    [[embed({ footer: { text: 'x'.repeat(2049) } })], 'embeds[0].footer.text must be at most 2048 characters'],
    [[embed({ footer: 'text' })], 'embeds[0].footer must be an object'],
    [[embed({ author: { name: 'x'.repeat(257) } })], 'embeds[0].author.name must be at most 256 characters'],
    [[embed({ title: 5 })], 'embeds[0].title must be a string'],
    [['a title'], 'embeds[0] must be an object'],
    [[embed({ title: 'a\u0000b' })], /^embeds\[0\]\.title contains control characters/],
    [[embed({ description: 'a\u001bb' })], /^embeds\[0\]\.description contains control characters/],
    [[embed({ title: 'half \ud83d' })], 'embeds[0].title is not valid Unicode text'],
    [[embed({ timestamp: 'yesterday' })], /^embeds\[0\]\.timestamp must be an ISO 8601 date and time/],
    [[embed({ timestamp: '2024-02-30T00:00:00Z' })], /^embeds\[0\]\.timestamp must be an ISO 8601/],
    [[embed({ timestamp: '2024-05-01T24:00:00Z' })], /^embeds\[0\]\.timestamp must be an ISO 8601/],
    [[embed({ timestamp: 1714566120 })], /^embeds\[0\]\.timestamp must be an ISO 8601/],
  ];
  for (const [raw, message] of cases) t.throws(() => checkEmbeds(raw), bad(message), typeof message === 'string' ? message : message.source);
});

t.test('checkEmbeds refuses links that are not http or https, wherever they are', async (t) => {
  for (const url of ['javascript:alert(1)', 'data:text/html,<b>x</b>', 'ftp://example.com/f', '//example.com', 'https://exa mple.com', 'not a url', 5]) {
    for (const [where, at] of [
      [{ url }, 'embeds[0].url'],
      [{ author: { name: 'a', url } }, 'embeds[0].author.url'],
      [{ image: { url } }, 'embeds[0].image.url'],
      [{ thumbnail: { url } }, 'embeds[0].thumbnail.url'],
    ] as const) {
      t.throws(() => checkEmbeds([embed(where)]), bad(new RegExp(`^${at.replace(/[.[\]]/g, '\\$&')} must be`)), `${at} ${String(url)}`);
    }
  }
  t.throws(() => checkEmbeds([embed({ url: `https://example.com/${'a'.repeat(2048)}` })]), bad(/at most 2048 characters/));
});

t.test('checkEmbeds takes colours as integers from 0 to 0xFFFFFF only', async (t) => {
  t.equal(checkEmbeds([embed({ color: 0 })])[0].color, 0);
  t.equal(checkEmbeds([embed({ color: 0xffffff })])[0].color, 0xffffff);
  for (const color of [-1, 0x1000000, 1.5, '#ff0000', Number.NaN, true]) {
    t.throws(() => checkEmbeds([embed({ color })]), bad('embeds[0].color must be an integer from 0 to 16777215 (0xFFFFFF)'), String(color));
  }
});

t.test('checkEmbeds counts text across all embeds in characters, up to 6000', async (t) => {
  // 10 embeds of 600 characters each is exactly the limit; one character more is refused.
  const full = Array.from({ length: 10 }, () => ({ title: 'x'.repeat(100), description: 'y'.repeat(500) }));
  t.equal(checkEmbeds(full).length, 10);
  const over = [...full.slice(0, 9), { title: 'x'.repeat(100), description: 'y'.repeat(400), footer: { text: 'z'.repeat(101) } }];
  t.throws(() => checkEmbeds(over), bad(/^embeds must hold at most 6000 characters of text in all .*; these hold 6001$/));
  const emoji = '😀'.repeat(256);
  t.equal(checkEmbeds([{ title: emoji }])[0].title, emoji, 'an emoji is one character, not two');
});

t.test('embedText joins every visible text for the search index', async (t) => {
  const embeds: Embed[] = [
    { title: 'T', description: 'D', url: 'https://x.example/', author: { name: 'A' }, fields: [{ name: 'N', value: 'V', inline: true }], footer: { text: 'F' } },
    { title: 'T2', image: { url: 'https://x.example/i.png' } },
  ];
  t.equal(embedText(embeds), 'T\nD\nA\nN\nV\nF\nT2');
  t.equal(embedText([]), '');
});

t.test('fromDiscord holds its own payload to Discord’s rules', async (t) => {
  t.strictSame(fromDiscord({ content: null, embeds: [{ title: 'Only an embed' }], username: null, avatar_url: null }), {
    content: '',
    embeds: [{ title: 'Only an embed' }],
  });
  t.strictSame(fromDiscord({ content: '  ', embeds: [{ title: 'x' }] }).content, '', 'blank content with an embed is no content');
  t.equal(fromDiscord({ content: 'hi', username: '  Discord Helper  ' }).username, 'Discord Helper', 'any name, trimmed');
  t.strictSame(fromDiscord({ content: 'hi', allowed_mentions: {} }).allowed_mentions, { parse: [], users: [], roles: [] }, 'an empty object lets no mention notify');
  t.strictSame(
    fromDiscord({ content: 'hi', allowed_mentions: { parse: ['everyone', 'everyone'], users: ['A', 'a'] } }).allowed_mentions,
    { parse: ['everyone'], users: ['a'], roles: [] },
    'duplicates are dropped',
  );
  t.equal(fromDiscord({ content: 'x'.repeat(2000) }).content.length, 2000);
  const cases: [unknown, string | RegExp][] = [
    [{}, 'a webhook message needs content or an embed'],
    [{ content: '' }, 'a webhook message needs content or an embed'],
    [{ content: '   ', embeds: [] }, 'a webhook message needs content or an embed'],
    [{ embeds: [{ title: ' ' }] }, 'a webhook message needs content or an embed'],
    [{ content: 'x'.repeat(2001) }, 'content must be at most 2000 characters'],
    [{ content: 5 }, 'content must be a string'],
    [{ content: 'a\u0007b' }, /^content contains control characters/],
    [{ content: 'hi', username: '' }, 'username must not be empty'],
    [{ content: 'hi', username: 'x'.repeat(81) }, 'username must be at most 80 characters'],
    [{ content: 'hi', username: 'two\nlines' }, /^username contains control characters/],
    [{ content: 'hi', avatar_url: 'javascript:alert(1)' }, /^avatar_url must be an http or https URL/],
    [{ content: 'hi', avatar_url: 7 }, 'avatar_url must be a string'],
    [{ content: 'hi', embeds: {} }, 'embeds must be an array of embed objects'],
    [{ content: 'hi', embeds: Array.from({ length: 11 }, () => ({ title: 't' })) }, /^embeds must hold at most 10 embeds/],
    [{ content: 'hi', allowed_mentions: [] }, 'allowed_mentions must be an object'],
    [{ content: 'hi', allowed_mentions: { parse: 'users' } }, /^allowed_mentions\.parse must be an array of: users, roles, everyone$/],
    [{ content: 'hi', allowed_mentions: { parse: ['here'] } }, /^allowed_mentions\.parse may hold only users, roles, everyone$/],
    [{ content: 'hi', allowed_mentions: { users: [123] } }, 'allowed_mentions.users must be an array of ids (strings)'],
    [{ content: 'hi', allowed_mentions: { roles: ['has space'] } }, 'allowed_mentions.roles must be an array of ids (strings)'],
    [{ content: 'hi', allowed_mentions: { users: Array.from({ length: 101 }, (_, i) => `u${i}`) } }, 'allowed_mentions.users must hold at most 100 ids'],
    [{ content: 'hi', allowed_mentions: { parse: ['users'], users: ['u1'] } }, /^allowed_mentions: give "users" in parse or a list of users, not both$/],
  ];
  for (const [body, message] of cases) t.throws(() => fromDiscord(body), bad(message), JSON.stringify(body).slice(0, 80));
});

t.test('Slack mrkdwn becomes our markdown', async (t) => {
  const cases: [string, string][] = [
    ['<https://example.com|Example>', 'Example (https://example.com)'],
    ['<https://example.com>', 'https://example.com'],
    ['<https://example.com|https://example.com>', 'https://example.com'],
    ['<https://example.com/?a=1&amp;b=2|a &amp; b>', 'a & b (https://example.com/?a=1&b=2)'],
    ['<mailto:bob@example.com|Bob>', 'Bob (mailto:bob@example.com)'],
    ['<!channel> <!here> <!everyone> <!here|here>', '@everyone @everyone @everyone @everyone'],
    ['<@U024BE7LH|bob> and <@U024BE7LH>', '@bob and @U024BE7LH'],
    ['<#C024BE7LR|general>', '#general'],
    ['<!date^1392734382^{date_short}|Feb 18, 2014> <!subteam^SAZ94GDB8|@ops>', 'Feb 18, 2014 @ops'],
    ['*bold* and *two words*', '**bold** and **two words**'],
    ['~gone~ and _same_', '~~gone~~ and _same_'],
    ['a*b*c, 2 * 3 * 4, **already**', 'a*b*c, 2 * 3 * 4, **already**'],
    ['*see <https://example.com|this>*', '**see this (https://example.com)**'],
    ['<https://example.com/*a*/~b~|link>', 'link (https://example.com/*a*/~b~)'],
    ['`*not bold*` and ```\n*nor this*\n```', '`*not bold*` and ```\n*nor this*\n```'],
    ['&lt;b&gt; &amp;lt; &amp;', '<b> &lt; &'],
    ['&lt;https://example.com|x&gt;', '<https://example.com|x>'],
    ['line\r\nnext\u0000', 'line\nnext'],
  ];
  for (const [mrkdwn, markdown] of cases) t.equal(slackMarkdown(mrkdwn), markdown, mrkdwn);
  t.equal(slackMarkdown('*kept* <https://a.example|a>', false), '*kept* a (https://a.example)', 'mrkdwn: false keeps emphasis as typed');
  t.equal(fromSlack({ text: '*kept*', mrkdwn: false }).content, '*kept*');
});

t.test('fromSlack: text wins over blocks, and an empty or over-long message is refused', async (t) => {
  t.equal(fromSlack({ ...fixture('slack-blocks'), text: 'Fallback *text*' }).content, 'Fallback **text**');
  t.equal(fromSlack({ ...fixture('slack-blocks'), text: '' }).content.split('\n')[0], '**New request**', 'empty text is no text');
  t.equal(fromSlack({ text: 'x'.repeat(4000) }).content.length, 4000);
  t.throws(() => fromSlack({ text: 'x'.repeat(4001) }), bad("a Slack message's text must be at most 4000 characters once converted; this one has 4001"));
  for (const body of [{}, { text: '   ' }, { text: 5 }, { blocks: [{ type: 'actions', elements: [] }] }, { attachments: [{ image_url: 'https://x.example/i.png' }] }, { attachments: 'x' }]) {
    t.throws(() => fromSlack(body), bad('a Slack message needs text, blocks or attachments'), JSON.stringify(body));
  }
});

t.test('fromSlack reads attachments leniently, cutting text to fit instead of refusing', async (t) => {
  const one = (attachment: Record<string, unknown>) => fromSlack({ attachments: [attachment] }).embeds[0];
  t.equal(one({ text: 't', color: 'good' }).color, COLORS.green);
  t.equal(one({ text: 't', color: 'warning' }).color, COLORS.yellow);
  t.equal(one({ text: 't', color: '36a64f' }).color, 0x36a64f);
  t.equal(one({ text: 't', color: 'blue' }).color, undefined, 'an unknown colour is left out');
  t.equal(one({ text: 't', ts: '1503435956.000247' }).timestamp, '2017-08-22T21:05:56.000Z', 'ts as a string with microseconds');
  t.equal(one({ text: 't', ts: -5 }).timestamp, undefined);
  t.equal(one({ fallback: 'Plain summary' }).description, 'Plain summary', 'fallback stands in when there is no text');
  t.equal(one({ fallback: 'Plain summary', text: 'Rich' }).description, 'Rich', 'and only then');
  t.strictSame(one({ text: 't', title_link: 'javascript:alert(1)', image_url: 'ftp://x', author_link: 'nope', author_name: 'Ann' }), {
    description: 't',
    author: { name: 'Ann' },
  });
  const long = one({ title: 'T'.repeat(300), text: 'D'.repeat(5000), fields: Array.from({ length: 30 }, (_, i) => ({ title: `f${i}`, value: 'v'.repeat(2000) })) });
  t.equal(long.title, `${'T'.repeat(255)}…`);
  t.ok(long.description!.endsWith('…'));
  t.ok(long.fields!.every((f) => f.value.length === 1024 && f.value.endsWith('…')));
  t.strictSame(checkEmbeds([long]), [long], 'what is cut to fit passes checkEmbeds');
  const many = fromSlack({ attachments: Array.from({ length: 12 }, (_, i) => ({ text: `a${i} ${'x'.repeat(900)}` })) }).embeds;
  // Six of 903 characters fit whole; the seventh is cut to the 582 left, and the rest are left out.
  t.equal(many.length, 7, 'no more than 6000 characters of text in all');
  t.equal(many[6].description, `a6 ${'x'.repeat(578)}…`);
  t.equal(many.reduce((sum, e) => sum + [...(e.description ?? '')].length, 0), MAX_EMBED_CHARS);
  t.equal(fromSlack({ attachments: Array.from({ length: 12 }, (_, i) => ({ text: `a${i}` })) }).embeds.length, 10);
});

t.test('fromGitHub posts nothing for events and actions it does not show', async (t) => {
  for (const event of ['star', 'fork', 'check_run', 'constructor', '__proto__', 'toString', 'hasOwnProperty', '']) {
    t.equal(fromGitHub(event, fixture('github-push')), null, `event ${JSON.stringify(event)}`);
  }
  const actions: [string, string, string[]][] = [
    ['pull_request', 'github-pull_request', ['labeled', 'synchronize', 'edited', 'assigned', 'converted_to_draft', 'constructor']],
    ['issues', 'github-issues', ['labeled', 'edited', 'deleted', 'transferred', 'pinned']],
    ['issue_comment', 'github-issue_comment', ['edited', 'deleted']],
    ['release', 'github-release', ['created', 'released', 'prereleased', 'edited', 'deleted']],
    ['workflow_run', 'github-workflow_run', ['requested', 'in_progress']],
  ];
  for (const [event, name, ignored] of actions) {
    for (const action of ignored) t.equal(fromGitHub(event, changed(name, ['action'], action)), null, `${event} ${action}`);
  }
});

t.test('fromGitHub: pull requests, issues and comments by action', async (t) => {
  const title = (event: string, body: Record<string, unknown>) => fromGitHub(event, body)!.embeds[0];
  const merged = changed('github-pull_request', ['action'], 'closed');
  (merged.pull_request as Record<string, unknown>).merged = true;
  t.match(title('pull_request', merged), { title: '[Codertocat/Hello-World] Pull request merged: #2 Update the README with new information.', color: COLORS.purple });
  t.notOk(title('pull_request', merged).description, 'no body once the news is the merge');
  t.match(title('pull_request', changed('github-pull_request', ['action'], 'closed')), { title: /Pull request closed: #2/, color: COLORS.red });
  t.match(title('pull_request', changed('github-pull_request', ['action'], 'reopened')), { title: /Pull request reopened: #2/, color: COLORS.green });
  t.match(title('pull_request', changed('github-pull_request', ['action'], 'ready_for_review')), { title: /Pull request ready for review: #2/ });
  t.match(title('issues', changed('github-issues', ['action'], 'closed')), { title: '[Codertocat/Hello-World] Issue closed: #1 Spelling error in the README file', color: COLORS.red });
  t.match(title('issues', changed('github-issues', ['action'], 'reopened')), { title: /Issue reopened: #1/, color: COLORS.green });
  const onPr = changed('github-issue_comment', ['issue', 'pull_request'], { url: 'https://api.github.com/repos/Codertocat/Hello-World/pulls/1' });
  t.equal(title('issue_comment', onPr).title, '[Codertocat/Hello-World] New comment on pull request #1: Spelling error in the README file');
  const long = title('issue_comment', changed('github-issue_comment', ['comment', 'body'], `<!-- template hint -->\r\n${'word '.repeat(300)}`));
  t.equal([...long.description!].length, 500, 'bodies are cut to 500 characters');
  t.ok(long.description!.startsWith('word word') && long.description!.endsWith('word…'), 'after the template comments are dropped');
  t.notOk(title('issues', changed('github-issues', ['issue', 'body'], null)).description, 'a null body is no description');
});

t.test('fromGitHub: pushes list five commits, and pushes without commits say what happened to the ref', async (t) => {
  const push = fixture('github-push');
  const commits = push.commits as Record<string, unknown>[];
  const seven = { ...push, commits: [...commits, ...commits, commits[0]] };
  const embed = fromGitHub('push', seven)!.embeds[0];
  t.equal(embed.title, '[Codertocat/Hello-World:master] 7 new commits');
  const lines = embed.description!.split('\n');
  t.equal(lines.length, 6);
  t.equal(lines[5], '… and 2 more');
  t.equal(fromGitHub('push', { ...push, commits: [commits[1]] })!.embeds[0].title, '[Codertocat/Hello-World:master] 1 new commit');
  const deletedTag = { ...push, ref: 'refs/tags/simple-tag', commits: [], head_commit: null, deleted: true, repository: { ...(push.repository as object), pushed_at: 1557933657 } };
  t.strictSame(fromGitHub('push', deletedTag)!.embeds[0], {
    title: '[Codertocat/Hello-World] tag simple-tag deleted',
    url: 'https://github.com/Codertocat/Hello-World/compare/6113728f27ae...2698ed23905a',
    timestamp: '2019-05-15T15:20:57.000Z',
    author: CODERTOCAT,
  });
  t.equal(fromGitHub('push', { ...push, commits: [], created: true })!.embeds[0].title, '[Codertocat/Hello-World] branch master created');
  t.equal(fromGitHub('push', { ...push, commits: [], forced: true })!.embeds[0].title, '[Codertocat/Hello-World] branch master force-pushed');
  const odd = fromGitHub('push', { ...push, commits: [{ id: 'not-a-sha', message: 'Odd\nsecond line', url: 'javascript:x' }, 7] })!.embeds[0];
  t.equal(odd.description, 'Odd\n…', 'a malformed commit is shown as well as it can be');
});

t.test('fromGitHub: workflow runs are coloured by conclusion', async (t) => {
  const run = (conclusion: string) => {
    const body = fixture('github-workflow_run');
    (body.workflow_run as Record<string, unknown>).conclusion = conclusion;
    return fromGitHub('workflow_run', body)!.embeds[0];
  };
  t.match(run('failure'), { title: '[octo-org/octo-repo] Workflow test failure on master', color: COLORS.red });
  t.equal(run('timed_out').color, COLORS.red);
  t.equal(run('cancelled').color, COLORS.grey);
  t.equal(run('skipped').color, COLORS.grey);
  const named = changed('github-workflow_run', ['workflow_run', 'name'], 'CI');
  (named.workflow_run as Record<string, unknown>).head_branch = null;
  t.equal(fromGitHub('workflow_run', named)!.embeds[0].title, '[octo-org/octo-repo] Workflow CI success', 'no branch, no "on"');
});

t.test('fromGitHub: a known event without a field its message needs is a 400 naming it', async (t) => {
  const cases: [string, string, string[], unknown, string][] = [
    ['ping', 'github-ping', ['zen'], undefined, 'zen is missing'],
    ['ping', 'github-ping', ['sender'], undefined, 'sender.login is missing'],
    ['push', 'github-push', ['repository', 'full_name'], undefined, 'repository.full_name is missing'],
    ['push', 'github-push', ['repository'], 'Hello-World', 'repository.full_name is missing'],
    ['push', 'github-push', ['ref'], 5, 'ref must be a string'],
    ['push', 'github-push', ['commits'], null, 'commits is missing'],
    ['push', 'github-push', ['compare'], 'javascript:alert(1)', 'compare must be an http or https URL'],
    ['pull_request', 'github-pull_request', ['action'], undefined, 'action is missing'],
    ['pull_request', 'github-pull_request', ['pull_request', 'number'], '2', 'pull_request.number must be a whole number'],
    ['pull_request', 'github-pull_request', ['pull_request', 'html_url'], undefined, 'pull_request.html_url is missing'],
    ['issues', 'github-issues', ['issue'], undefined, 'issue.number is missing'],
    ['issue_comment', 'github-issue_comment', ['comment', 'html_url'], '', 'comment.html_url is missing'],
    ['release', 'github-release', ['release', 'tag_name'], undefined, 'release.tag_name is missing'],
    ['workflow_run', 'github-workflow_run', ['workflow_run', 'conclusion'], null, 'workflow_run.conclusion is missing'],
    ['workflow_run', 'github-workflow_run', ['sender', 'login'], 42, 'sender.login must be a string'],
  ];
  for (const [event, name, keys, value, message] of cases) {
    t.throws(() => fromGitHub(event, changed(name, keys, value)), bad(message), `${event}: ${message}`);
  }
  t.equal(fromGitHub('issues', { action: 'labeled' }), null, 'an action not shown needs nothing else');
});

t.test('fromGitHub cuts long GitHub text to the embed limits instead of refusing', async (t) => {
  const body = changed('github-pull_request', ['pull_request', 'title'], 'T'.repeat(1000));
  (body.repository as Record<string, unknown>).full_name = `owner/${'r'.repeat(500)}`;
  (body.sender as Record<string, unknown>).login = 'L'.repeat(300);
  const [embed] = fromGitHub('pull_request', body)!.embeds;
  t.equal([...embed.title!].length, 256);
  t.equal([...embed.author!.name].length, 256);
  t.strictSame(checkEmbeds([embed]), [embed]);
  const controls = fromGitHub('issues', changed('github-issues', ['issue', 'body'], 'bell\u0007 \ud800 lone'))!.embeds[0];
  t.equal(controls.description, 'bell \ufffd lone', 'control characters dropped, a lone surrogate made U+FFFD');
});

// --- Property: total on arbitrary input ---------------------------------------------------------

/** Keys the translators read, so that arbitrary objects reach past the first check now and then. */
const KNOWN_KEYS = [
  'content', 'embeds', 'username', 'avatar_url', 'allowed_mentions', 'parse', 'users', 'roles', 'title', 'description', 'url', 'timestamp',
  'color', 'footer', 'text', 'author', 'name', 'fields', 'value', 'inline', 'image', 'thumbnail', 'blocks', 'attachments', 'type',
  'elements', 'pretext', 'fallback', 'title_link', 'short', 'ts', 'icon_url', 'mrkdwn', 'action', 'repository', 'full_name', 'sender',
  'login', 'html_url', 'zen', 'ref', 'compare', 'commits', 'id', 'message', 'pull_request', 'number', 'issue', 'comment', 'body',
  'release', 'tag_name', 'workflow_run', 'conclusion', 'head_branch', 'merged', 'deleted', 'created', '__proto__', 'constructor',
];
const key = fc.oneof(fc.constantFrom(...KNOWN_KEYS), fc.string());
const anything = fc.anything({
  key,
  maxDepth: 4,
  withNullPrototype: true,
  withBoxedValues: true,
  withSparseArray: true,
  withObjectString: true,
  withDate: true,
  withMap: true,
  withBigInt: true,
  stringUnit: 'binary',
});
const json = fc.json({ maxDepth: 4 }).map((text) => JSON.parse(text) as unknown);

/** Every path into a fixture, so a property can break a real payload in one place at a time. */
function paths(value: unknown, prefix: string[] = []): string[][] {
  if (value === null || typeof value !== 'object') return [prefix];
  return [prefix, ...Object.entries(value).flatMap(([k, v]) => paths(v, [...prefix, k]))].filter((p) => p.length > 0);
}
const FIXTURE_NAMES = fs.readdirSync(FIXTURES).map((file) => file.replace(/\.json$/, ''));
const brokenFixture = fc
  .constantFrom(...FIXTURE_NAMES)
  .chain((name) => fc.tuple(fc.constant(name), fc.constantFrom(...paths(fixture(name))), fc.oneof(anything, json)))
  .map(([name, keys, value]) => changed(name, keys, value) as unknown);

const TRANSLATORS: [string, (body: unknown) => IncomingMessage | null][] = [
  ['fromDiscord', fromDiscord],
  ['fromSlack', fromSlack],
  ...[...GITHUB_EVENTS, 'star'].map((event): [string, (body: unknown) => IncomingMessage | null] => [`fromGitHub ${event}`, (body) => fromGitHub(event, body)]),
];

/** A result is a message we can post, or null (GitHub only); anything thrown is a 400 HttpError. */
function totalOn(translate: (body: unknown) => IncomingMessage | null, body: unknown): boolean {
  let result: IncomingMessage | null;
  try {
    result = translate(body);
  } catch (err) {
    if (err instanceof HttpError && err.status === 400 && err.message.length > 0) return true;
    throw err;
  }
  if (result === null) return true;
  const embeds = checkEmbeds(result.embeds);
  if (JSON.stringify(embeds) !== JSON.stringify(result.embeds)) throw new Error('embeds changed by checkEmbeds');
  if (typeof result.content !== 'string' || [...result.content].length > 4000) throw new Error('content out of bounds');
  return result.content.trim() !== '' || result.embeds.length > 0;
}

t.test('every translator returns a valid message or throws a 400, on any input', async (t) => {
  for (const [name, translate] of TRANSLATORS) {
    for (const [label, arbitrary] of [
      ['fc.json()', json],
      ['fc.anything()', anything],
      ['a fixture broken in one place', brokenFixture],
    ] as const) {
      fc.assert(
        fc.property(arbitrary, (body) => totalOn(translate, body)),
        { numRuns: 300, seed: 42 },
      );
      t.pass(`${name} on ${label}`);
    }
  }
});
