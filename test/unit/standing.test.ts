import t from 'tap';
import { type RestrictedAction, SUSPENDED, allows, assertAllowed, botStanding, standingForWarnings } from '../../src/rules/standing';

// Spec section 3: each level includes the restrictions of the levels below it.
const TABLE: Record<RestrictedAction, boolean[]> = {
  //                      standing:  0     1      2      3      4
  join_server: /*               */ [true, false, false, false, false],
  create_group: /*              */ [true, true, false, false, false],
  send_private_message: /*      */ [true, true, false, false, false],
  send_message: /*              */ [true, true, true, false, false],
};

t.test('allows follows the standing table', async (t) => {
  for (const [action, row] of Object.entries(TABLE) as [RestrictedAction, boolean[]][]) {
    row.forEach((allowed, standing) => t.equal(allows(standing, action), allowed, `standing ${standing}, ${action}`));
  }
});

t.test('assertAllowed throws 403 naming the restriction', async (t) => {
  t.doesNotThrow(() => assertAllowed({ standing: 0 }, 'join_server'));
  t.throws(() => assertAllowed({ standing: 1 }, 'join_server'), { status: 403, message: /limited.*joining servers/ });
  t.throws(() => assertAllowed({ standing: 2 }, 'create_group'), { status: 403, message: /group chats/ });
  t.throws(() => assertAllowed({ standing: 3 }, 'send_message'), { status: 403, message: /at risk/ });
});

t.test('a private message is also a message', async (t) => {
  for (const standing of [2, 3, 4]) {
    t.throws(() => assertAllowed({ standing }, 'send_private_message'), { status: 403, message: /standing/ }, `standing ${standing}`);
  }
  t.doesNotThrow(() => assertAllowed({ standing: 1 }, 'send_private_message'));
});

t.test('warnings map to standing one for one, capped at suspension', async (t) => {
  t.same([0, 1, 2, 3, 4, 5, 40].map(standingForWarnings), [0, 1, 2, 3, 4, 4, 4]);
  t.equal(SUSPENDED, 4);
});

t.test('a bot stands as its owner: the higher of the two standings', async (t) => {
  t.equal(botStanding(0, null), 0, 'a person (no owner): their own');
  t.equal(botStanding(0, 3), 3, 'an owner at risk: the bot too');
  t.equal(botStanding(0, SUSPENDED), SUSPENDED, 'a suspended owner: a suspended bot');
  t.equal(botStanding(2, 0), 2, "a bot's own restriction stays when its owner is clear");
});
