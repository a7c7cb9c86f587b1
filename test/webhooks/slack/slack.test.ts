import t from 'tap';
import { MAX_EMBED_CHARS, checkEmbeds } from '../../../src/core/embed';
import { COLORS } from '../../../src/parts/integrations/formats/common';
import { fromSlack, slackMarkdown } from '../../../src/parts/integrations/formats/slack';
import { bad, expectTranslations, fixturesOf } from '../../helpers/webhook-payloads';

// Slack's incoming-webhook payload (src/parts/integrations/formats/slack.ts), its fixtures in ./fixtures.
const { fixture } = fixturesOf('slack');

t.test('each fixture translates to the message it should', async (t) => {
  expectTranslations(t, [
    [
      'attachment',
      () => fromSlack(fixture('attachment')),
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
      'blocks',
      () => fromSlack(fixture('blocks')),
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
  ]);
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

t.test('fromSlack: text is the content, blocks a card under it; an empty or over-long message is refused', async (t) => {
  const both = fromSlack({ ...fixture('blocks'), text: 'Fallback *text*' });
  t.equal(both.content, 'Fallback **text**', 'text is what notifies and what a plain reader gets');
  t.strictSame(both.embeds, [
    {
      title: 'New request',
      description: [
        '**Type:**\nPaid Time Off\n**Created by:**\nFred Enriquez (https://example.com/users/fred)',
        '**When:**\nAug 10 - Aug 13 ~~(was Aug 9)~~',
        '---',
        'Submitted 2 hours ago via the HR portal',
      ].join('\n\n'),
      thumbnail: { url: 'https://api.slack.com/img/blocks/bkb_template_images/approvalsNewDevice.png' },
    },
  ]);
  t.equal(fromSlack({ ...fixture('blocks'), text: '' }).content.split('\n')[0], '**New request**', 'empty text is no text: the blocks are the content');
  t.strictSame(
    fromSlack({
      text: 'chart',
      blocks: [
        { type: 'image', image_url: 'https://x.example/c.png', alt_text: 'a chart' },
        { type: 'image', image_url: 'javascript:1' },
      ],
    }).embeds,
    [{ description: 'a chart (https://x.example/c.png)' }],
    'an image block is a link (never loaded); one that is not http(s) is nothing',
  );
  t.equal(
    fromSlack({ blocks: [{ type: 'image', image_url: 'https://x.example/c.png', title: { type: 'plain_text', text: 'Weekly' } }] }).content,
    'Weekly (https://x.example/c.png)',
  );
  t.equal(fromSlack({ text: 'x'.repeat(4000) }).content.length, 4000);
  t.throws(() => fromSlack({ text: 'x'.repeat(4001) }), bad("a Slack message's text must be at most 4000 characters once converted; this one has 4001"));
  for (const body of [
    {},
    { text: '   ' },
    { text: 5 },
    { blocks: [{ type: 'actions', elements: [] }] },
    { attachments: [{ image_url: 'https://x.example/i.png' }] },
    { attachments: 'x' },
  ]) {
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
  const long = one({
    title: 'T'.repeat(300),
    text: 'D'.repeat(5000),
    fields: Array.from({ length: 30 }, (_, i) => ({ title: `f${i}`, value: 'v'.repeat(2000) })),
  });
  t.equal(long.title, `${'T'.repeat(255)}…`);
  t.ok(long.description!.endsWith('…'));
  t.ok(long.fields!.every((f) => f.value.length === 1024 && f.value.endsWith('…')));
  t.strictSame(checkEmbeds([long]), [long], 'what is cut to fit passes checkEmbeds');
  const many = fromSlack({ attachments: Array.from({ length: 12 }, (_, i) => ({ text: `a${i} ${'x'.repeat(900)}` })) }).embeds;
  // Six of 903 characters fit whole; the seventh is cut to the 582 left, and the rest are left out.
  t.equal(many.length, 7, 'no more than 6000 characters of text in all');
  t.equal(many[6].description, `a6 ${'x'.repeat(578)}…`);
  t.equal(
    many.reduce((sum, e) => sum + [...(e.description ?? '')].length, 0),
    MAX_EMBED_CHARS,
  );
  t.equal(fromSlack({ attachments: Array.from({ length: 12 }, (_, i) => ({ text: `a${i}` })) }).embeds.length, 10);
});
