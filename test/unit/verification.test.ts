import t from 'tap';
import { postingGate } from '../../src/rules/verification';

/** The verification level as one pure rule (src/rules/verification.ts): a table of members at each level. */
const NOW = Date.parse('2026-12-01T12:00:00Z');
const ago = (minutes: number) => new Date(NOW - minutes * 60_000).toISOString();
const at = (minutes: number) => new Date(NOW + minutes * 60_000).toISOString();
const member = { now: NOW, emailVerified: true, accountCreatedAt: ago(60), joinedAt: ago(60), exempt: false };

t.test('each level asks what it names and everything below it; the later time is the one given', async (t) => {
  const cases: [string, Parameters<typeof postingGate>[0], { until: string | null; says: RegExp } | null][] = [
    ['level 0 asks nothing', { ...member, level: 0, emailVerified: false, accountCreatedAt: ago(0), joinedAt: ago(0) }, null],
    ['level 1, no verified email', { ...member, level: 1, emailVerified: false }, { until: null, says: /verify your email/ }],
    ['level 1, verified', { ...member, level: 1 }, null],
    ['level 2, a 2-minute-old account', { ...member, level: 2, accountCreatedAt: ago(2) }, { until: at(3), says: /older than 5 minutes/ }],
    ['level 2 still asks the email', { ...member, level: 2, emailVerified: false }, { until: null, says: /verify your email/ }],
    ['level 3, joined a minute ago', { ...member, level: 3, joinedAt: ago(1) }, { until: at(9), says: /member of this server for 10 minutes/ }],
    [
      'level 3, both times ahead: the later',
      { ...member, level: 3, accountCreatedAt: ago(1), joinedAt: ago(1) },
      { until: at(9), says: /5 minutes, and you be a member/ },
    ],
    ['level 3, an unverified email wins over times', { ...member, level: 3, emailVerified: false, joinedAt: ago(1) }, { until: null, says: /verify/ }],
    ['at exactly 10 minutes the wait is over', { ...member, level: 3, joinedAt: ago(10) }, null],
    ['exempt members pass any level', { ...member, level: 3, emailVerified: false, joinedAt: ago(0), exempt: true }, null],
  ];
  for (const [name, facts, expected] of cases) {
    const gate = postingGate(facts);
    if (expected === null) t.equal(gate, null, name);
    else {
      t.equal(gate?.until, expected.until, `${name}: until`);
      t.match(gate?.reason, expected.says, `${name}: reason`);
    }
  }
});
