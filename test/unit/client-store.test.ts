import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';

/**
 * The browser client has one store (static/js/store.js): views read `state` and change it only
 * through the store's functions (applyChannel, addConversation, setMembers, …), so a change has
 * one place to go and every view hears of it. This holds it: no other module that imports the
 * store's `state` assigns to it or calls a mutating method on one of its lists or maps.
 */
const JS = path.join(__dirname, '..', '..', 'static', 'js');

/** A write to the store's state: `state.x = …`, `state.x.y += …`, `state.x.set(…)`, `state.x.push(…)`. */
const STATE_WRITE =
  /\bstate(?:\.[A-Za-z_$][\w$]*)+\s*(?:[-+*/]?=(?!=)|\+\+|--)|\bstate\.[A-Za-z_$][\w$]*\.(?:set|delete|clear|add|push|pop|shift|unshift|splice|sort|reverse|fill)\s*\(/g;

/** Imports the store's `state` (markdown-it's rules have a `state` of their own). */
const importsState = (text: string) => /import\s*\{[^}]*\bstate\b[^}]*\}\s*from\s*'\.\/store\.js'/.test(text);

function writes(text: string): string[] {
  return [...text.matchAll(STATE_WRITE)].map((m) => `line ${text.slice(0, m.index).split('\n').length}: ${m[0]}`);
}

t.test('the rule recognises a write to the state, and lets a read pass', async (t) => {
  const caught = [
    'state.current = place;',
    'state.standing += 1;',
    'state.friends.push(friend);',
    'state.members.set(id, list);',
    'state.blocked.delete(id);',
    'state.me.username = name;',
    'state.incomingRequests++;',
  ];
  const passed = [
    'const x = state.current;',
    "if (state.connection === 'live') go();",
    'state.members.get(id)',
    'state.friends.some((f) => f.id === id)',
    'state.users.has(id)',
    'f(state.servers.filter(Boolean))',
  ];
  for (const line of caught) t.equal(writes(line).length, 1, `caught: ${line}`);
  for (const line of passed) t.same(writes(line), [], `passed: ${line}`);
});

t.test('no view writes the store state itself: it calls a store function', async (t) => {
  const files = fs.readdirSync(JS).filter((name) => name.endsWith('.js') && name !== 'store.js');
  let checked = 0;
  for (const name of files) {
    const text = fs.readFileSync(path.join(JS, name), 'utf8');
    if (!importsState(text)) continue;
    checked += 1;
    t.same(writes(text), [], `${name} changes state only through store.js`);
  }
  t.ok(checked > 20, `${checked} modules read the state`);
});
