import t from 'tap';
import { Client, signUp } from './helpers/client';
import { befriend, crowd, must, setStanding, users } from './helpers/community';
import { type TestServer, startServer } from './helpers/server';

// Tiny but real files: each starts with the magic numbers of its format (as in uploads.test.ts).
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');
const MP3 = Buffer.concat([Buffer.from('ID3\x04\x00\x00\x00\x00\x00\x00', 'latin1'), Buffer.from([0xff, 0xfb, 0x90, 0x64]), Buffer.alloc(200)]);
const MP4 = Buffer.concat([Buffer.from([0, 0, 0, 0x18]), Buffer.from('ftypisom\x00\x00\x02\x00isommp41', 'latin1'), Buffer.alloc(64)]);

interface Found {
  results: { id: string; content: string; highlight: [number, number][]; server_id?: string; channel_id?: string; conversation_id?: string }[];
  next_before: string | null;
}

const search = async (client: Client, query: Record<string, string>) => (await must<Found>(client.get(`/api/search?${new URLSearchParams(query)}`), 200)).body;
const contents = async (client: Client, query: Record<string, string>) => (await search(client, query)).results.map((r) => r.content);

async function post(client: Client, path: string, content: string): Promise<string> {
  return (await must(client.post(path, { content }), 201)).body.id;
}

async function postFile(client: Client, path: string, content: string, name: string, data: Buffer, type: string) {
  const form = new FormData();
  form.append('content', content);
  form.append('attachments', new Blob([data], { type }), name);
  return (await must(client.post(path, form), 201)).body.id as string;
}

t.test('search', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const { owner, members, serverId, general, random } = await crowd(server, 2);
  const [member, leaver] = members;
  const G = `/api/servers/${serverId}/channels/${general}/messages`;
  const R = `/api/servers/${serverId}/channels/${random}/messages`;

  t.test('words in any order, every one required; case and diacritics ignored', async (t) => {
    await post(owner, G, 'The Crème Brûlée recipe is ready');
    await post(owner, G, 'brulee without cream');
    t.same(await contents(member, { q: 'recipe creme' }), ['The Crème Brûlée recipe is ready']);
    t.same(await contents(member, { q: 'BRULEE' }), ['brulee without cream', 'The Crème Brûlée recipe is ready'], 'newest first');
    t.same(await contents(member, { q: 'brûlée cream' }), ['brulee without cream']);
    t.same(await contents(member, { q: 'brulee pudding' }), [], 'a missing word: no match');
  });

  t.test('"exact phrase", prefix* and -exclude', async (t) => {
    await post(owner, G, 'the quick brown fox');
    await post(owner, G, 'brown and quick');
    await post(owner, G, 'quickly now');
    t.same(await contents(member, { q: '"quick brown"' }), ['the quick brown fox']);
    t.same(await contents(member, { q: '"brown quick"' }), [], 'a phrase keeps its order');
    t.same(await contents(member, { q: 'quick*' }), ['quickly now', 'brown and quick', 'the quick brown fox']);
    t.same(await contents(member, { q: 'quick' }), ['brown and quick', 'the quick brown fox'], 'without * a word is whole');
    t.same(await contents(member, { q: 'quick -fox' }), ['brown and quick']);
    t.same(await contents(member, { q: 'quick* -"brown fox"' }), ['quickly now', 'brown and quick']);
    t.same(await contents(member, { q: '"quick bro"*' }), ['the quick brown fox'], 'a phrase may end in a prefix');
  });

  t.test('AND, OR, NEAR and punctuation are ordinary text', async (t) => {
    await post(owner, R, 'cats OR dogs');
    await post(owner, R, 'cats only');
    await post(owner, R, 'NEAR the sea: AND more');
    t.same(await contents(member, { q: 'cats OR dogs' }), ['cats OR dogs'], 'OR is a word every match must hold');
    t.same(await contents(member, { q: 'near' }), ['NEAR the sea: AND more']);
    t.same(await contents(member, { q: 'NEAR( sea' }), ['NEAR the sea: AND more']);
    t.same(await contents(member, { q: 'near(the' }), ['NEAR the sea: AND more'], 'punctuation inside a word joins its parts as a phrase');
    t.same(await contents(member, { q: 'near(sea' }), [], 'so they must be adjacent');
    t.same(await contents(member, { q: 'sea: AND' }), ['NEAR the sea: AND more']);
  });

  t.test('highlight: offsets of the matched terms in UTF-16 units of content, no markup', async (t) => {
    const content = '😀 Café au lait, CAFÉ noir, cafeteria';
    await post(owner, R, content);
    const [hit] = (await search(member, { q: 'cafe' })).results;
    t.equal(hit.content, content, 'content is untouched');
    t.same(hit.highlight, [
      [3, 7],
      [17, 21],
    ]);
    t.same(
      hit.highlight.map(([s, e]) => content.slice(s, e)),
      ['Café', 'CAFÉ'],
    );
    const [prefixed] = (await search(member, { q: 'caf*' })).results;
    t.same(
      prefixed.highlight.map(([s, e]) => content.slice(s, e)),
      ['Café', 'CAFÉ', 'cafeteria'],
    );
    const [phrase] = (await search(member, { q: '"au lait"' })).results;
    t.same(
      phrase.highlight.map(([s, e]) => content.slice(s, e)),
      ['au lait'],
    );
  });

  t.test('a result is the message record of the history endpoint plus highlight', async (t) => {
    const id = await post(owner, R, 'record shape check');
    const [hit] = (await search(member, { q: 'shape' })).results;
    const [fromHistory] = (await must(member.get(`${R}?around=${id}&limit=1`), 200)).body;
    const { highlight, ...record } = hit;
    t.same(record, fromHistory);
    t.equal(hit.server_id, serverId);
    t.equal(hit.channel_id, random);
  });

  t.test('scope: server, channel, conversation; outsiders and strangers see nothing', async (t) => {
    const outsider = await signUp(server.url);
    await befriend(owner, member);
    const dm = (await must(owner.post('/api/conversations/dm', { usernames: [member.username] }), 201)).body.id;
    await post(owner, G, 'scopeword in general');
    await post(owner, R, 'scopeword in random');
    await post(owner, `/api/conversations/${dm}/messages`, 'scopeword in private');
    const other = await crowd(server, 0);
    await post(other.owner, `/api/servers/${other.serverId}/channels/${other.general}/messages`, 'scopeword elsewhere');

    t.same(await contents(member, { q: 'scopeword' }), ['scopeword in private', 'scopeword in random', 'scopeword in general']);
    t.same(await contents(member, { q: 'scopeword', server_id: serverId }), ['scopeword in random', 'scopeword in general']);
    t.same(await contents(member, { q: 'scopeword', channel_id: general }), ['scopeword in general']);
    t.same(await contents(member, { q: 'scopeword', server_id: serverId, channel_id: random }), ['scopeword in random']);
    t.same(await contents(member, { q: 'scopeword', conversation_id: dm }), ['scopeword in private']);
    t.same(await contents(outsider, { q: 'scopeword' }), []);
    t.same(await contents(other.owner, { q: 'scopeword' }), ['scopeword elsewhere']);

    t.equal((await outsider.get(`/api/search?q=scopeword&server_id=${serverId}`)).status, 404);
    t.equal((await outsider.get(`/api/search?q=scopeword&channel_id=${general}`)).status, 404);
    t.equal((await outsider.get(`/api/search?q=scopeword&conversation_id=${dm}`)).status, 404);
    t.equal((await member.get(`/api/search?q=scopeword&server_id=${other.serverId}&channel_id=${other.general}`)).status, 404);
    t.equal((await owner.get(`/api/search?q=scopeword&server_id=${other.serverId}&channel_id=${general}`)).status, 404, 'a channel of another server');
    const both = await member.get(`/api/search?q=scopeword&server_id=${serverId}&conversation_id=${dm}`);
    t.equal(both.status, 400);
    t.match(both.text, /not both/);
  });

  t.test('visibility is now: leaving a server hides it, a removed group member loses the group', async (t) => {
    await post(owner, G, 'farewell party');
    t.same(await contents(leaver, { q: 'farewell' }), ['farewell party']);
    await must(leaver.delete(`/api/servers/${serverId}/members/${leaver.userId}`), 204);
    t.same(await contents(leaver, { q: 'farewell' }), [], 'gone with the membership');

    const [a, b, c] = await users(server, 3);
    await befriend(a, b);
    await befriend(a, c);
    const group = (await must(a.post('/api/conversations/group', { name: 'trio', usernames: [b.username, c.username] }), 201)).body.id;
    await post(a, `/api/conversations/${group}/messages`, 'groupword secret');
    t.same(await contents(c, { q: 'groupword' }), ['groupword secret']);
    await must(a.delete(`/api/conversations/${group}/members/${c.userId}`), 204);
    t.same(await contents(c, { q: 'groupword' }), []);
    t.same(await contents(b, { q: 'groupword' }), ['groupword secret']);
  });

  t.test('deleted messages are never found; edited ones by their current text only', async (t) => {
    const gone = await post(owner, G, 'ephemeral words');
    await must(owner.delete(`${G}/${gone}`), 204);
    t.same(await contents(member, { q: 'ephemeral' }), []);
    const edited = await post(owner, G, 'original wording');
    await must(owner.put(`${G}/${edited}`, { content: 'replacement wording' }), 200);
    t.same(await contents(member, { q: 'original' }), []);
    t.same(await contents(member, { q: 'replacement' }), ['replacement wording']);
    t.same(await contents(member, { q: 'wording' }), ['replacement wording']);
  });

  t.test('a prefix of four letters or more (past the prefix index): whole words only, current text only', async (t) => {
    await post(owner, R, 'deploy tonight');
    const edited = await post(owner, R, 'deployment notes');
    await post(owner, R, 'we redeploy often');
    await post(owner, R, 'Déploiement prévu');
    const gone = await post(owner, R, 'deployed then deleted');
    await must(owner.delete(`${R}/${gone}`), 204);
    await must(owner.put(`${R}/${edited}`, { content: 'plain notes' }), 200);
    t.same(
      await contents(member, { q: 'deplo*' }),
      ['Déploiement prévu', 'deploy tonight'],
      'words that start so, folded; not inside a word, not deleted or edited away',
    );
    t.same(await contents(member, { q: 'deploy*' }), ['deploy tonight']);
    t.same(await contents(member, { q: 'deplo* -tonight' }), ['Déploiement prévu']);
    t.same(await contents(member, { q: 'often -deplo*' }), ['we redeploy often'], 'excluded as a prefix too');
    t.same(await contents(member, { q: 'deplx*' }), [], 'no word starts so');
    const [hit] = (await search(member, { q: 'déplo*' })).results;
    t.same(hit.highlight, [[0, 11]], 'highlighted as a prefix');

    // 600 words of one prefix, and prefixes of 100 of them, alone, together and excluded.
    const words = (from: number) => Array.from({ length: 300 }, (_, i) => `zqaa${String(from + i).padStart(3, '0')}`).join(' ');
    const first = await post(owner, R, words(0));
    const second = await post(owner, R, words(300));
    const ids = async (q: string) => (await search(member, { q })).results.map((r) => r.id);
    t.same(await ids('zqaa*'), [second, first]);
    t.same(await ids('zqaa5*'), [second]);
    t.same(await ids('zqaa1*'), [first]);
    t.same(await ids('zqaa1* zqaa5*'), [], 'every term still required');
    t.same(await ids('zqaa* zqaa5*'), [second]);
    t.same(await ids('zqaa0* -zqaa29*'), [], 'excluded');
  });

  t.test('blocked users are still found', async (t) => {
    await must(member.put(`/api/users/${owner.userId}/block`), 204);
    await post(owner, G, 'blockedword here');
    t.same(await contents(member, { q: 'blockedword' }), ['blockedword here']);
    await must(member.delete(`/api/users/${owner.userId}/block`), 204);
  });

  t.test('author_id and has= filters', async (t) => {
    await post(member, R, 'filterword by member');
    await post(owner, R, 'filterword by owner https://example.com/page');
    await post(owner, R, 'filterword ftp://not.a.web.link');
    await postFile(owner, R, 'filterword picture', 'pixel.png', PNG, 'image/png');
    await postFile(owner, R, 'filterword song', 'song.mp3', MP3, 'audio/mpeg');
    await postFile(owner, R, 'filterword movie', 'clip.mp4', MP4, 'video/mp4');
    await postFile(owner, R, 'filterword notes', 'notes.txt', Buffer.from('plain notes\n'), 'text/plain');
    const q = 'filterword';
    t.same(await contents(owner, { q, author_id: member.userId }), ['filterword by member']);
    t.same(await contents(owner, { q, has: 'link' }), ['filterword by owner https://example.com/page']);
    t.same(await contents(owner, { q, has: 'image' }), ['filterword picture']);
    t.same(await contents(owner, { q, has: 'audio' }), ['filterword song']);
    t.same(await contents(owner, { q, has: 'video' }), ['filterword movie']);
    t.same(await contents(owner, { q, has: 'file' }), ['filterword notes']);
    t.same(await contents(owner, { q, has: 'attachment' }), ['filterword notes', 'filterword movie', 'filterword song', 'filterword picture']);
    t.same(await contents(owner, { q, has: 'image,link' }), [], 'several has= values must all hold');
    const bad = await owner.get('/api/search?q=x&has=gif');
    t.equal(bad.status, 400);
    t.match(bad.text, /has must be one of attachment, image, video, audio, file, link/);
    t.equal((await owner.get('/api/search?q=x&author_id=nope')).status, 400);
  });

  t.test('cursors: newest first, limit, next_before, before and after', async (t) => {
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) ids.push(await post(owner, G, `pageword number ${i}`));
    const first = await search(member, { q: 'pageword', limit: '3' });
    t.same(
      first.results.map((r) => r.id),
      [ids[6], ids[5], ids[4]],
    );
    t.equal(first.next_before, ids[4]);
    const second = await search(member, { q: 'pageword', limit: '3', before: first.next_before! });
    t.same(
      second.results.map((r) => r.id),
      [ids[3], ids[2], ids[1]],
    );
    const third = await search(member, { q: 'pageword', limit: '3', before: second.next_before! });
    t.same(
      third.results.map((r) => r.id),
      [ids[0]],
    );
    t.equal(third.next_before, null, 'a short page is the last');
    const after = await search(member, { q: 'pageword', after: ids[4] });
    t.same(
      after.results.map((r) => r.id),
      [ids[6], ids[5]],
    );
    const between = await search(member, { q: 'pageword', after: ids[1], before: ids[4] });
    t.same(
      between.results.map((r) => r.id),
      [ids[3], ids[2]],
    );
    t.equal((await search(member, { q: 'pageword' })).results.length, 7, 'default limit 25');
    for (const limit of ['0', '51', 'x', '-1', '2.5']) {
      const res = await member.get(`/api/search?q=pageword&limit=${limit}`);
      t.equal(res.status, 400, `limit=${limit}`);
    }
    t.equal((await search(member, { q: 'pageword', limit: '50' })).results.length, 7);
    const unknown = await member.get('/api/search?q=pageword&before=00000000-0000-4000-8000-000000000000');
    t.equal(unknown.status, 404, 'a cursor that names no message');
    t.match(unknown.text, /before: no such message/);
  });

  t.test('a cursor is resolved only among the messages the caller sees: no existence oracle', async (t) => {
    const outsider = await signUp(server.url);
    const hidden = await post(owner, G, 'oracleword in a server the outsider is not in');
    for (const key of ['before', 'after']) {
      const seen = await outsider.get(`/api/search?q=oracleword&${key}=${hidden}`);
      const random = await outsider.get(`/api/search?q=oracleword&${key}=00000000-0000-4000-8000-000000000000`);
      t.equal(seen.status, 404, `${key}= an invisible message: 404`);
      t.equal(random.status, 404, `${key}= a random id: 404`);
      t.equal(seen.text.replace(hidden, ''), random.text.replace('00000000-0000-4000-8000-000000000000', ''), 'the same answer');
    }
    t.equal((await member.get(`/api/search?q=oracleword&before=${hidden}`)).status, 200, 'a member may page from it');
  });

  t.test('results from several servers and conversations merge newest first, page by page', async (t) => {
    const other = (await must(member.post('/api/servers', { name: 'elsewhere' }), 201)).body.id as string;
    const otherChannel = (await must(member.get(`/api/servers/${other}/channels`), 200)).body[0].id as string;
    const O = `/api/servers/${other}/channels/${otherChannel}/messages`;
    // The DM of the scope test above: asking again answers the same conversation.
    const dm = (await member.post('/api/conversations/dm', { usernames: [owner.username] })).body.id as string;
    const D = `/api/conversations/${dm}/messages`;
    const ids: string[] = [];
    for (const [i, path] of [G, O, D, O, G, D, R, O].entries()) ids.push(await post(member, path, `mergeword ${i}`));
    const newestFirst = [...ids].reverse();
    const pages: string[][] = [];
    let before: string | null = null;
    do {
      const page: Found = await search(member, { q: 'mergeword', limit: '3', ...(before ? { before } : {}) });
      pages.push(page.results.map((r) => r.id));
      before = page.next_before;
    } while (before);
    t.same(pages.flat(), newestFirst, 'every match once, newest first, across two servers and a conversation');
    t.same(
      pages.map((p) => p.length),
      [3, 3, 2],
    );
    t.same(
      (await search(member, { q: 'mergeword', server_id: other })).results.map((r) => r.id),
      [ids[7], ids[3], ids[1]],
      'one server',
    );
    t.same(
      (await search(owner, { q: 'mergeword' })).results.map((r) => r.id),
      [ids[6], ids[5], ids[4], ids[2], ids[0]],
      'the owner is not in the other server',
    );
  });

  t.test('deleting a channel, a server or a message keeps the index in step', async (t) => {
    const doomed = (await must(owner.post('/api/servers', { name: 'doomed' }), 201)).body.id as string;
    const first = (await must(owner.get(`/api/servers/${doomed}/channels`), 200)).body[0].id as string;
    const second = (await must(owner.post(`/api/servers/${doomed}/channels`, { name: 'second' }), 201)).body.id as string;
    await post(owner, `/api/servers/${doomed}/channels/${first}/messages`, 'doomedword one');
    const gone = await post(owner, `/api/servers/${doomed}/channels/${second}/messages`, 'doomedword two');
    await post(owner, `/api/servers/${doomed}/channels/${second}/messages`, 'doomedword three');
    await must(owner.delete(`/api/servers/${doomed}/channels/${second}/messages/${gone}`), 204);
    t.same(await contents(owner, { q: 'doomedword' }), ['doomedword three', 'doomedword one']);
    await must(owner.delete(`/api/servers/${doomed}/channels/${second}`), 204);
    t.same(await contents(owner, { q: 'doomedword' }), ['doomedword one']);
    await must(owner.delete(`/api/servers/${doomed}`), 204);
    t.same(await contents(owner, { q: 'doomedword' }), []);
    const db = server.app.db;
    t.equal(db.prepare("SELECT COUNT(*) FROM messages_fts WHERE messages_fts MATCH 'doomedword'").pluck().get(), 0, 'nothing left in the index');
    // FTS5's own check: throws (SQLITE_CORRUPT_VTAB) when the index is not consistent.
    t.doesNotThrow(() => db.prepare("INSERT INTO messages_fts (messages_fts, rank) VALUES ('integrity-check', 1)").run());
  });

  t.test('bad queries are 400 with a plain reason; FTS5 syntax is never a 500', async (t) => {
    const reasons: [string, RegExp][] = [
      ['', /q must not be empty/],
      ['   ', /q must not be empty/],
      ['x'.repeat(257), /at most 256 characters/],
      ['"unbalanced', /unbalanced "/],
      ['a "b" "c', /unbalanced "/],
      ['*', /nothing to search for/],
      ['-word', /nothing to search for/],
      ['-"a phrase" -b', /nothing to search for/],
      [':', /nothing to search for/],
      ['^', /nothing to search for/],
      ['( )', /nothing to search for/],
      [Array.from({ length: 33 }, (_, i) => `w${i}`).join(' '), /at most 32 words/],
    ];
    for (const [q, reason] of reasons) {
      const res = await member.get(`/api/search?q=${encodeURIComponent(q)}`);
      t.equal(res.status, 400, `q=${JSON.stringify(q.slice(0, 20))}`);
      t.match(res.text, reason);
      t.match(res.headers.get('content-type'), /^text\/plain/);
    }
    t.equal((await member.get('/api/search')).status, 400, 'no q at all');
    // Everything FTS5 would read as syntax: each is text here, answered 200 (or 400 when it holds no word).
    const corpus = [
      '"',
      '""',
      '"""',
      'AND',
      'OR',
      'NOT',
      'NEAR(',
      'NEAR(a b, 2)',
      'a AND',
      'OR b',
      'NOT c',
      '*',
      '**',
      'a**',
      '*a',
      ':',
      'content:word',
      '^word',
      'a ^b',
      '(',
      ')',
      '(a',
      'a)',
      '((a)',
      'a OR (b',
      '{a b}',
      '{content}: x',
      '+',
      'a + b',
      'a - b',
      '-',
      '--',
      '-a -b c',
      '\\',
      "'",
      "a'b",
      'a"b"c',
      'ü*',
      '🙂',
      '😀 smile',
      'NEAR',
      'near/3',
      '%',
      '_',
      'a%b',
      'x\u0000y',
      '\u200b',
      'ﬁle',
      'İstanbul',
      'ß',
      '日本語',
      '日本*',
      'a'.repeat(256),
    ];
    for (const q of corpus) {
      const res = await member.get(`/api/search?q=${encodeURIComponent(q)}`);
      t.ok(res.status === 200 || res.status === 400, `q=${JSON.stringify(q.slice(0, 20))} answers ${res.status}`);
    }
  });

  t.test('callers: anonymous 401, suspended 403', async (t) => {
    t.equal((await new Client(server.url).get('/api/search?q=x')).status, 401);
    const suspended = await signUp(server.url);
    setStanding(server, suspended.userId, 4);
    t.equal((await suspended.get('/api/search?q=x')).status, 403);
  });
});

t.test('searches are rate limited per user', async (t) => {
  const server = await startServer({ env: { RATE_LIMIT: 'on' } });
  t.teardown(server.close);
  const [a, b] = await users(server, 2);
  for (let i = 0; i < 20; i++) await must(a.get('/api/search?q=anything'), 200);
  const refused = await a.get('/api/search?q=anything');
  t.equal(refused.status, 429);
  t.ok(Number(refused.headers.get('retry-after')) >= 1);
  t.match(refused.text, /too many searches/);
  for (let i = 0; i < 25; i++) t.equal((await b.get('/api/search?q=')).status, 400);
  await must(b.get('/api/search?q=anything'), 200);
  t.pass('a bad query is refused before it spends any of the budget');
});

t.test('around=: the page centred on a message, in channels and conversations', async (t) => {
  const server: TestServer = await startServer();
  t.teardown(server.close);
  const { owner, members, serverId, general } = await crowd(server, 1);
  const G = `/api/servers/${serverId}/channels/${general}/messages`;
  const ids: string[] = [];
  for (let i = 0; i < 11; i++) ids.push(await post(owner, G, `m${i}`));
  const page = async (path: string, around: string, limit: number) =>
    (await must(members[0].get(`${path}?around=${around}&limit=${limit}`), 200)).body.map((m: { content: string }) => m.content);
  t.same(await page(G, ids[5], 5), ['m7', 'm6', 'm5', 'm4', 'm3'], 'newest first, the message in the middle');
  t.same(await page(G, ids[5], 4), ['m6', 'm5', 'm4', 'm3'], 'an even limit: one more older than newer');
  t.same(await page(G, ids[5], 1), ['m5']);
  t.same(await page(G, ids[9], 7), ['m10', 'm9', 'm8', 'm7', 'm6'], 'near the newest end the page is shorter');
  t.same(await page(G, ids[0], 5), ['m2', 'm1', 'm0']);
  t.same((await page(G, ids[5], 50)).length, 11);
  const both = await members[0].get(`${G}?around=${ids[5]}&before=${ids[6]}`);
  t.equal(both.status, 400);
  t.match(both.text, /use one of before, after and around/);
  const foreign = await members[0].get(`${G}?around=00000000-0000-4000-8000-000000000000`);
  t.equal(foreign.status, 404);
  t.match(foreign.text, /around: no such message in this channel/);
  t.equal((await members[0].get(`${G}?around=nope`)).status, 400);

  await befriend(owner, members[0]);
  const dm = (await must(owner.post('/api/conversations/dm', { usernames: [members[0].username] }), 201)).body.id;
  const D = `/api/conversations/${dm}/messages`;
  const dmIds: string[] = [];
  for (let i = 0; i < 5; i++) dmIds.push(await post(owner, D, `d${i}`));
  t.same(await page(D, dmIds[2], 3), ['d3', 'd2', 'd1']);
  t.equal((await members[0].get(`${D}?around=${ids[5]}`)).status, 404, 'a channel message is not in the conversation');
});
