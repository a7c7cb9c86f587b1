import t from 'tap';
import { fromDiscord } from '../../../src/parts/integrations/formats/discord';
import { bad, expectTranslations, fixturesOf } from '../../helpers/webhook-payloads';

// Discord's execute-webhook payload (src/parts/integrations/formats/discord.ts), its fixtures in ./fixtures.
const { fixture } = fixturesOf('discord');

t.test('each fixture translates to the message it should', async (t) => {
  expectTranslations(t, [
    [
      'full',
      () => fromDiscord(fixture('full')),
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
    ['minimal', () => fromDiscord(fixture('minimal')), { content: 'Hello from a webhook!', embeds: [] }],
  ]);
});

t.test('fromDiscord holds its own payload to Discord’s rules', async (t) => {
  t.strictSame(fromDiscord({ content: null, embeds: [{ title: 'Only an embed' }], username: null, avatar_url: null }), {
    content: '',
    embeds: [{ title: 'Only an embed' }],
  });
  t.strictSame(fromDiscord({ content: '  ', embeds: [{ title: 'x' }] }).content, '', 'blank content with an embed is no content');
  t.equal(fromDiscord({ content: 'hi', username: '  Discord Helper  ' }).username, 'Discord Helper', 'any name, trimmed');
  t.strictSame(
    fromDiscord({ content: 'hi', allowed_mentions: {} }).allowed_mentions,
    { parse: [], users: [], roles: [] },
    'an empty object lets no mention notify',
  );
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
