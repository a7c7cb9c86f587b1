import t from 'tap';
import { checkEmbeds } from '../../../src/core/embed';
import { COLORS } from '../../../src/parts/integrations/formats/common';
import { fromGitHub } from '../../../src/parts/integrations/formats/github';
import { bad, expectTranslations, fixturesOf } from '../../helpers/webhook-payloads';

// GitHub's webhook events (src/parts/integrations/formats/github.ts), its fixtures in ./fixtures
// (from octokit/webhooks' payload examples).
const { fixture, changed } = fixturesOf('github');
const CODERTOCAT = { name: 'Codertocat', url: 'https://github.com/Codertocat' };

t.test('each fixture translates to the message it should', async (t) => {
  expectTranslations(t, [
    [
      'ping',
      () => fromGitHub('ping', fixture('ping')),
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
      'push',
      () => fromGitHub('push', fixture('push')),
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
      'pull_request',
      () => fromGitHub('pull_request', fixture('pull_request')),
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
      'issues',
      () => fromGitHub('issues', fixture('issues')),
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
      'issue_comment',
      () => fromGitHub('issue_comment', fixture('issue_comment')),
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
      'release',
      () => fromGitHub('release', fixture('release')),
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
      'workflow_run',
      () => fromGitHub('workflow_run', fixture('workflow_run')),
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
  ]);
});

t.test('fromGitHub posts nothing for events and actions it does not show', async (t) => {
  for (const event of ['star', 'fork', 'check_run', 'constructor', '__proto__', 'toString', 'hasOwnProperty', '']) {
    t.equal(fromGitHub(event, fixture('push')), null, `event ${JSON.stringify(event)}`);
  }
  const actions: [string, string, string[]][] = [
    ['pull_request', 'pull_request', ['labeled', 'synchronize', 'edited', 'assigned', 'converted_to_draft', 'constructor']],
    ['issues', 'issues', ['labeled', 'edited', 'deleted', 'transferred', 'pinned']],
    ['issue_comment', 'issue_comment', ['edited', 'deleted']],
    ['release', 'release', ['created', 'released', 'prereleased', 'edited', 'deleted']],
    ['workflow_run', 'workflow_run', ['requested', 'in_progress']],
  ];
  for (const [event, name, ignored] of actions) {
    for (const action of ignored) t.equal(fromGitHub(event, changed(name, ['action'], action)), null, `${event} ${action}`);
  }
});

t.test('fromGitHub: pull requests, issues and comments by action', async (t) => {
  const title = (event: string, body: Record<string, unknown>) => fromGitHub(event, body)!.embeds[0];
  const merged = changed('pull_request', ['action'], 'closed');
  (merged.pull_request as Record<string, unknown>).merged = true;
  t.match(title('pull_request', merged), {
    title: '[Codertocat/Hello-World] Pull request merged: #2 Update the README with new information.',
    color: COLORS.purple,
  });
  t.notOk(title('pull_request', merged).description, 'no body once the news is the merge');
  t.match(title('pull_request', changed('pull_request', ['action'], 'closed')), { title: /Pull request closed: #2/, color: COLORS.red });
  t.match(title('pull_request', changed('pull_request', ['action'], 'reopened')), { title: /Pull request reopened: #2/, color: COLORS.green });
  t.match(title('pull_request', changed('pull_request', ['action'], 'ready_for_review')), { title: /Pull request ready for review: #2/ });
  t.match(title('issues', changed('issues', ['action'], 'closed')), {
    title: '[Codertocat/Hello-World] Issue closed: #1 Spelling error in the README file',
    color: COLORS.red,
  });
  t.match(title('issues', changed('issues', ['action'], 'reopened')), { title: /Issue reopened: #1/, color: COLORS.green });
  const onPr = changed('issue_comment', ['issue', 'pull_request'], { url: 'https://api.github.com/repos/Codertocat/Hello-World/pulls/1' });
  t.equal(title('issue_comment', onPr).title, '[Codertocat/Hello-World] New comment on pull request #1: Spelling error in the README file');
  const long = title('issue_comment', changed('issue_comment', ['comment', 'body'], `<!-- template hint -->\r\n${'word '.repeat(300)}`));
  t.equal([...long.description!].length, 500, 'bodies are cut to 500 characters');
  t.ok(long.description!.startsWith('word word') && long.description!.endsWith('word…'), 'after the template comments are dropped');
  t.notOk(title('issues', changed('issues', ['issue', 'body'], null)).description, 'a null body is no description');
});

t.test('fromGitHub: pushes list five commits, and pushes without commits say what happened to the ref', async (t) => {
  const push = fixture('push');
  const commits = push.commits as Record<string, unknown>[];
  const seven = { ...push, commits: [...commits, ...commits, commits[0]] };
  const embed = fromGitHub('push', seven)!.embeds[0];
  t.equal(embed.title, '[Codertocat/Hello-World:master] 7 new commits');
  const lines = embed.description!.split('\n');
  t.equal(lines.length, 6);
  t.equal(lines[5], '… and 2 more');
  t.equal(fromGitHub('push', { ...push, commits: [commits[1]] })!.embeds[0].title, '[Codertocat/Hello-World:master] 1 new commit');
  const deletedTag = {
    ...push,
    ref: 'refs/tags/simple-tag',
    commits: [],
    head_commit: null,
    deleted: true,
    repository: { ...(push.repository as object), pushed_at: 1557933657 },
  };
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
    const body = fixture('workflow_run');
    (body.workflow_run as Record<string, unknown>).conclusion = conclusion;
    return fromGitHub('workflow_run', body)!.embeds[0];
  };
  t.match(run('failure'), { title: '[octo-org/octo-repo] Workflow test failure on master', color: COLORS.red });
  t.equal(run('timed_out').color, COLORS.red);
  t.equal(run('cancelled').color, COLORS.grey);
  t.equal(run('skipped').color, COLORS.grey);
  const named = changed('workflow_run', ['workflow_run', 'name'], 'CI');
  (named.workflow_run as Record<string, unknown>).head_branch = null;
  t.equal(fromGitHub('workflow_run', named)!.embeds[0].title, '[octo-org/octo-repo] Workflow CI success', 'no branch, no "on"');
});

t.test('fromGitHub: a known event without a field its message needs posts nothing, never a 400', async (t) => {
  const cases: [string, string, string[], unknown, string][] = [
    ['ping', 'ping', ['zen'], undefined, 'zen is missing'],
    ['push', 'push', ['repository', 'full_name'], undefined, 'repository.full_name is missing'],
    ['push', 'push', ['repository'], 'Hello-World', 'repository.full_name is missing'],
    ['push', 'push', ['ref'], 5, 'ref must be a string'],
    ['push', 'push', ['commits'], null, 'commits is missing'],
    ['push', 'push', ['compare'], 'javascript:alert(1)', 'compare must be an http or https URL'],
    ['pull_request', 'pull_request', ['action'], undefined, 'action is missing'],
    ['pull_request', 'pull_request', ['pull_request', 'number'], '2', 'pull_request.number must be a whole number'],
    ['pull_request', 'pull_request', ['pull_request', 'html_url'], undefined, 'pull_request.html_url is missing'],
    ['issues', 'issues', ['issue'], undefined, 'issue.number is missing'],
    ['issue_comment', 'issue_comment', ['comment', 'html_url'], '', 'comment.html_url is missing'],
    ['release', 'release', ['release', 'tag_name'], undefined, 'release.tag_name is missing'],
  ];
  for (const [event, name, keys, value, message] of cases) t.equal(fromGitHub(event, changed(name, keys, value)), null, `${event}: ${message}`);
  t.equal(
    fromGitHub('workflow_run', changed('workflow_run', ['workflow_run', 'conclusion'], null))!.embeds[0].title,
    '[octo-org/octo-repo] Workflow test completed on master',
    'a completed run without a conclusion (GitHub’s own example) says completed',
  );
  t.notOk('author' in fromGitHub('ping', changed('ping', ['sender'], undefined))!.embeds[0], 'no sender: no author line');
  t.throws(() => fromGitHub('push', []), bad('the GitHub payload must be a JSON object'), 'a body that is no object is still a 400');
  t.equal(fromGitHub('issues', { action: 'labeled' }), null, 'an action not shown needs nothing else');
});

t.test('fromGitHub cuts long GitHub text to the embed limits instead of refusing', async (t) => {
  const body = changed('pull_request', ['pull_request', 'title'], 'T'.repeat(1000));
  (body.repository as Record<string, unknown>).full_name = `owner/${'r'.repeat(500)}`;
  (body.sender as Record<string, unknown>).login = 'L'.repeat(300);
  const [embed] = fromGitHub('pull_request', body)!.embeds;
  t.equal([...embed.title!].length, 256);
  t.equal([...embed.author!.name].length, 256);
  t.strictSame(checkEmbeds([embed]), [embed]);
  const controls = fromGitHub('issues', changed('issues', ['issue', 'body'], 'bell\u0007 \ud800 lone'))!.embeds[0];
  t.equal(controls.description, 'bell \ufffd lone', 'control characters dropped, a lone surrogate made U+FFFD');
});
