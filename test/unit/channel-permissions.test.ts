import fc from 'fast-check';
import t from 'tap';
import {
  ALL,
  EVERYONE_DEFAULT,
  FLAGS,
  type Flag,
  MODERATION,
  MODERATOR_FLAGS,
  NONE,
  type Overwrite,
  type Subject,
  VIEW,
  flagsOf,
  has,
  namesOf,
  resolve,
  serverFlags,
} from '../../src/rules/channel-permissions';

const subject = (roleIds: string[] = [], moderator = false): Subject => ({ userId: 'me', moderator, roleIds: new Set(roleIds) });
const ow = (kind: Overwrite['kind'], targetId: string, allow: Flag[], deny: Flag[]): Overwrite => ({
  kind,
  targetId,
  allow: flagsOf(allow),
  deny: flagsOf(deny),
});

t.test('the cases the issue names', async (t) => {
  const roles = new Map([['mods', NONE]]);
  // Private channel: @everyone denied view_channel, a role allowed it.
  const privateChannel = [ow('everyone', 'server', [], ['view_channel']), ow('role', 'mods', ['view_channel'], [])];
  t.equal(resolve(EVERYONE_DEFAULT, roles, subject(), privateChannel), NONE, 'a plain member does not see a private channel');
  t.ok(has(resolve(EVERYONE_DEFAULT, roles, subject(['mods']), privateChannel), 'view_channel'), 'a holder of the allowed role does');
  t.equal(resolve(EVERYONE_DEFAULT, roles, subject([], true), privateChannel), ALL, 'the owner and full server admins see and do everything');
  // Read-only: @everyone denied send_messages.
  const readOnly = [ow('everyone', 'server', [], ['send_messages'])];
  const member = resolve(EVERYONE_DEFAULT, roles, subject(), readOnly);
  t.ok(has(member, 'view_channel') && has(member, 'read_history'), 'a read-only channel is read');
  t.notOk(has(member, 'send_messages'), 'but not written');
  t.ok(has(member, 'add_reactions'), 'reactions stay unless denied too');
  // The member's own overwrite is the most specific: it beats a role's allow.
  const muted = [ow('role', 'mods', ['send_messages'], []), ow('member', 'me', [], ['send_messages'])];
  t.notOk(has(resolve(EVERYONE_DEFAULT, roles, subject(['mods']), muted), 'send_messages'), 'a member deny beats a role allow');
  // Another member's overwrite does not apply.
  t.ok(has(resolve(EVERYONE_DEFAULT, roles, subject(), [ow('member', 'someone-else', [], ['send_messages'])]), 'send_messages'));
  // By default nothing changes for members, and @everyone stays with moderators; threads are
  // everyone's to start and talk in, managing them the moderators' (issue 49); voice is everyone's
  // to join, speak and show video in, its moderation the moderators' (issue 48).
  t.same(namesOf(resolve(EVERYONE_DEFAULT, roles, subject(), [])), [
    'view_channel',
    'send_messages',
    'attach_files',
    'add_reactions',
    'read_history',
    'create_public_threads',
    'create_private_threads',
    'send_messages_in_threads',
    'connect',
    'speak',
    'video',
    'send_polls',
  ]);
  // A role's server-wide flags add to everyone's.
  t.ok(has(resolve(EVERYONE_DEFAULT, new Map([['heralds', flagsOf(['mention_everyone'])]]), subject(['heralds']), []), 'mention_everyone'));
});

// A direct model of the rule, written as the documentation says it, for the properties below.
function model(everyone: Flags, roleFlags: Map<string, number>, s: Subject, overwrites: Overwrite[]): number {
  if (s.moderator) return ALL;
  const held = [...s.roleIds];
  let f = held.reduce((acc, r) => acc | (roleFlags.get(r) ?? 0), everyone);
  for (const o of overwrites.filter((o) => o.kind === 'everyone').slice(0, 1)) f = (f & ~o.deny) | o.allow;
  const mine = overwrites.filter((o) => o.kind === 'role' && s.roleIds.has(o.targetId));
  f = (f & ~mine.reduce((a, o) => a | o.deny, 0)) | mine.reduce((a, o) => a | o.allow, 0);
  for (const o of overwrites.filter((o) => o.kind === 'member' && o.targetId === s.userId).slice(0, 1)) f = (f & ~o.deny) | o.allow;
  // Discord's implicit rule (issue 46): without send_messages, no attach_files, no mention_everyone (and no send_polls, issue 50).
  if (!has(f, 'send_messages')) f &= ~flagsOf(['attach_files', 'mention_everyone', 'send_polls']);
  // And its voice twin (issue 48): without connect, no speak and no video.
  if (!has(f, 'connect')) f &= ~flagsOf(['speak', 'video']);
  return f & VIEW ? f : 0;
}
type Flags = number;

// Masks of real flags only (bits 6 to 9 are the thread flags', not in ALL here).
const flags = fc.integer({ min: 0, max: ALL }).map((f) => f & ALL);
const roleId = fc.constantFrom('a', 'b', 'c', 'd');
const overwrite = fc.record({
  kind: fc.constantFrom<Overwrite['kind']>('everyone', 'role', 'member'),
  targetId: fc.constantFrom('a', 'b', 'c', 'd', 'me', 'other', 'server'),
  allow: flags,
  deny: flags,
});
const world = fc.record({
  everyone: flags,
  roleFlags: fc.array(fc.tuple(roleId, flags), { maxLength: 4 }).map((pairs) => new Map(pairs)),
  held: fc.uniqueArray(roleId, { maxLength: 4 }),
  moderator: fc.boolean(),
  overwrites: fc.array(overwrite, { maxLength: 6 }),
});

t.test('properties, against the model', async (t) => {
  fc.assert(
    fc.property(world, (w) => {
      const s = subject(w.held, w.moderator);
      const got = resolve(w.everyone, w.roleFlags, s, w.overwrites);
      return got === model(w.everyone, w.roleFlags, s, w.overwrites) && (got & ~ALL) === 0;
    }),
  );
  t.pass('resolve agrees with the written rule on every generated world, and never leaves the known flags');
  fc.assert(
    fc.property(world, (w) => {
      const got = resolve(w.everyone, w.roleFlags, subject(w.held, false), w.overwrites);
      return got === NONE || has(got, 'view_channel');
    }),
  );
  t.pass('without view_channel a member has nothing at all');
  fc.assert(
    fc.property(world, fc.constantFrom(...FLAGS), (w, flag) => {
      // A member overwrite that denies a flag takes it, whatever else says.
      const denied = [...w.overwrites.filter((o) => !(o.kind === 'member' && o.targetId === 'me')), ow('member', 'me', [], [flag])];
      return !has(resolve(w.everyone, w.roleFlags, subject(w.held, false), denied), flag);
    }),
  );
  t.pass("a member's own deny always wins");
  fc.assert(fc.property(world, (w) => resolve(w.everyone, w.roleFlags, subject(w.held, true), w.overwrites) === ALL));
  t.pass('moderators have everything, whatever the overwrites');
});

t.test("Discord's implicit rule: without send_messages, nothing done in a message one sends (attach_files, mention_everyone)", async (t) => {
  const roles = new Map([['heralds', flagsOf(['mention_everyone'])]]);
  const readOnly = [ow('everyone', 'server', [], ['send_messages'])];
  t.same(
    namesOf(resolve(EVERYONE_DEFAULT, roles, subject(['heralds']), readOnly)),
    [
      'view_channel',
      'add_reactions',
      'read_history',
      'create_public_threads',
      'create_private_threads',
      'send_messages_in_threads',
      'connect',
      'speak',
      'video',
    ],
    'a read-only channel: no files, no @everyone (its threads stay open, as in Discord)',
  );
  t.same(
    namesOf(resolve(EVERYONE_DEFAULT, roles, subject(['heralds']), [])),
    [
      'view_channel',
      'send_messages',
      'attach_files',
      'add_reactions',
      'mention_everyone',
      'read_history',
      'create_public_threads',
      'create_private_threads',
      'send_messages_in_threads',
      'connect',
      'speak',
      'video',
      'send_polls',
    ],
    'with send_messages they stand',
  );
  t.same(
    namesOf(resolve(NONE, new Map(), subject(), [ow('everyone', 'server', ['view_channel', 'attach_files', 'mention_everyone', 'send_polls'], [])])),
    ['view_channel'],
    'an allow of them alone gives nothing',
  );
  t.equal(resolve(EVERYONE_DEFAULT, roles, subject([], true), readOnly), ALL, 'moderators keep everything');
  fc.assert(
    fc.property(world, (w) => {
      const got = resolve(w.everyone, w.roleFlags, subject(w.held, w.moderator), w.overwrites);
      return has(got, 'send_messages') || (!has(got, 'attach_files') && !has(got, 'mention_everyone') && !has(got, 'send_polls'));
    }),
  );
  t.pass('on every generated world, attach_files and mention_everyone come only with send_messages');
});

t.test('its voice twin: without connect, nothing done in a voice channel (speak, video)', async (t) => {
  const noConnect = [ow('everyone', 'server', [], ['connect'])];
  t.same(
    namesOf(resolve(EVERYONE_DEFAULT, new Map(), subject(), noConnect)),
    [
      'view_channel',
      'send_messages',
      'attach_files',
      'add_reactions',
      'read_history',
      'create_public_threads',
      'create_private_threads',
      'send_messages_in_threads',
      'send_polls',
    ],
    'denied connect, a member may neither speak nor use video, though neither was denied',
  );
  t.same(
    namesOf(resolve(NONE, new Map(), subject(), [ow('everyone', 'server', ['view_channel', 'speak', 'video', 'mute_members'], [])])),
    ['view_channel', 'mute_members'],
    'an allow of speak and video alone gives nothing; the moderators’ flags do not need connect',
  );
  const listenOnly = [ow('everyone', 'server', [], ['speak', 'video'])];
  t.same(
    namesOf(resolve(EVERYONE_DEFAULT, new Map(), subject(), listenOnly)).slice(-2),
    ['connect', 'send_polls'],
    'a listen-only channel: connect without speak or video',
  );
  t.notOk(
    has(EVERYONE_DEFAULT, 'mute_members') || has(EVERYONE_DEFAULT, 'deafen_members') || has(EVERYONE_DEFAULT, 'move_members'),
    'voice moderation is not everyone’s',
  );
  fc.assert(
    fc.property(world, (w) => {
      const got = resolve(w.everyone, w.roleFlags, subject(w.held, w.moderator), w.overwrites);
      return has(got, 'connect') || (!has(got, 'speak') && !has(got, 'video'));
    }),
  );
  t.pass('on every generated world, speak and video come only with connect');
});

t.test(
  'stored bits: the thread flags take 6 to 9 (issue 49), the voice flags 10 to 15 (issue 48), manage_emojis 16 and send_polls 17 (issue 50)',
  async (t) => {
    const threads = ['create_public_threads', 'create_private_threads', 'send_messages_in_threads', 'manage_threads'] as const;
    threads.forEach((name, i) => t.equal(flagsOf([name]), 1 << (6 + i), `${name} is bit ${6 + i}`));
    const voice = ['connect', 'speak', 'video', 'mute_members', 'deafen_members', 'move_members'] as const;
    voice.forEach((name, i) => t.equal(flagsOf([name]), 1 << (10 + i), `${name} is bit ${10 + i}`));
    t.equal(flagsOf(['manage_emojis']), 1 << 16, 'manage_emojis is bit 16');
    t.equal(flagsOf(['send_polls']), 1 << 17, 'send_polls is bit 17');
    MODERATOR_FLAGS.forEach((name, i) => t.equal(flagsOf([name]), 1 << (18 + i), `${name} is bit ${18 + i}`));
    t.equal(ALL, 0x7ffffff, 'twenty-seven flags, bits 0 to 26');
    t.equal(EVERYONE_DEFAULT & MODERATION, NONE, "none of the moderators' flags is everyone's by default");
    t.equal(
      EVERYONE_DEFAULT,
      138735,
      "everyone's default: schema.sql's (47, the thread flags 64 | 128 | 256, the voice ones 1024 | 2048 | 4096, send_polls 131072)",
    );
  },
);

t.test('server-wide flags (manage_emojis): everyone and the roles held, never a channel overwrite; the owner and full administrators hold them', async (t) => {
  const roles = new Map([
    ['keepers', flagsOf(['manage_emojis'])],
    ['plain', NONE],
  ]);
  t.notOk(has(serverFlags(EVERYONE_DEFAULT, roles, subject()), 'manage_emojis'), "not everyone's by default");
  t.ok(has(serverFlags(EVERYONE_DEFAULT, roles, subject(['keepers'])), 'manage_emojis'), 'a role gives it');
  t.notOk(has(serverFlags(EVERYONE_DEFAULT, roles, subject(['plain'])), 'manage_emojis'), 'another role does not');
  t.equal(serverFlags(NONE, roles, subject([], true)), ALL, 'a moderator holds every flag');
  t.ok(has(serverFlags(flagsOf(['manage_emojis']), roles, subject()), 'manage_emojis'), "given to everyone, it is everyone's");
  t.ok(has(EVERYONE_DEFAULT, 'send_polls'), "send_polls is everyone's by default, in every channel");
  t.notOk(
    has(resolve(EVERYONE_DEFAULT, roles, subject(), [ow('everyone', 'server', [], ['send_polls'])]), 'send_polls'),
    'and a channel overwrite takes it away there',
  );
});

t.test('in a thread (step 8): send_messages is send_messages_in_threads, and no thread is made inside one', async (t) => {
  const roles = new Map<string, number>();
  const inThread = (overwrites: Overwrite[], moderator = false) => namesOf(resolve(EVERYONE_DEFAULT, roles, subject([], moderator), overwrites, true));
  t.same(
    inThread([]),
    ['view_channel', 'send_messages', 'attach_files', 'add_reactions', 'read_history', 'send_messages_in_threads', 'connect', 'speak', 'video', 'send_polls'],
    'by default',
  );
  t.ok(inThread([ow('everyone', 'server', [], ['send_messages'])]).includes('send_messages'), "a read-only channel's threads are written");
  t.same(
    inThread([ow('everyone', 'server', [], ['send_messages_in_threads'])]),
    ['view_channel', 'add_reactions', 'read_history', 'connect', 'speak', 'video'],
    'without send_messages_in_threads: no sending, so no files either (step 7)',
  );
  t.same(inThread([ow('everyone', 'server', [], ['view_channel'])]), [], 'the parent hidden: the thread too');
  t.notOk(inThread([], true).includes('create_public_threads'), 'not even a moderator starts a thread in a thread');
  t.ok(inThread([], true).includes('manage_threads'), 'a moderator manages it');
  fc.assert(
    fc.property(world, (w) => {
      const got = resolve(w.everyone, w.roleFlags, subject(w.held, w.moderator), w.overwrites, true);
      const parent = resolve(w.everyone, w.roleFlags, subject(w.held, w.moderator), w.overwrites);
      return (
        !has(got, 'create_public_threads') &&
        !has(got, 'create_private_threads') &&
        (w.moderator || has(got, 'send_messages') === (has(parent, 'view_channel') && has(parent, 'send_messages_in_threads'))) &&
        has(got, 'view_channel') === has(parent, 'view_channel')
      );
    }),
  );
  t.pass('on every generated world, a thread is seen as its parent is, written as send_messages_in_threads says, and holds no thread');
});
