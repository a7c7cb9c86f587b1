// Threads and forums in Chromium (issue 49): a thread made from a message's menu opens in a pane
// beside the channel, takes a reply there, and its starter message counts it; a forum lists its
// posts with their first lines and first image, New post makes one with a tag, and the list is
// filtered by tag. Desktop and phone shots.
import t from 'tap';
import { must } from './helpers/community';
import { SKIP, bookClub, gradientPng, message, openChannel, openScene, post, shotsAtBothWidths, signIn } from './helpers/browser';

t.test('a thread from a message, a reply in its pane, a forum post with a tag and the list filtered by it', { skip: SKIP }, async (t) => {
  const scene = await openScene(t, 'threads', [{ name: 'owner' }]);
  const [w] = scene.windows;
  const { page } = w;
  const url = scene.server.url;
  const owner = await signIn(scene, w, 'thread_owner');
  const { serverId, generalId } = await bookClub(owner, []);
  await post(owner, serverId, generalId, 'shall we read Dune?');
  const base = `/api/servers/${serverId}/channels`;

  await scene.step('Create thread in a message menu opens the thread in a pane; a reply there is counted on the starter', async (t) => {
    await openChannel(w, url, serverId, generalId, 'general');
    const starter = message(page, 'shall we read Dune?');
    await starter.hover();
    await starter.locator('.more-button').click();
    await page.getByRole('menuitem', { name: 'Create thread' }).click();
    await page.fill('#form-name', 'Dune club');
    await page.click('#form-submit');
    await page.locator('#thread-pane:not([hidden])').waitFor();
    t.equal(await page.textContent('#thread-title'), 'Dune club', 'the pane names the thread');
    await starter.locator('.thread-summary', { hasText: '0 replies' }).waitFor();
    const field = page.locator('#thread-pane [data-part="composer-text"]');
    await field.fill('chapter one by Friday');
    await field.press('Enter');
    await page.locator('#thread-pane li.msg .content', { hasText: 'chapter one by Friday' }).waitFor();
    await starter.locator('.thread-summary', { hasText: '1 reply' }).waitFor();
    t.pass('the starter message shows 1 reply');
    t.equal(await message(page, 'chapter one by Friday').count(), 0, "the reply is in the pane, not in the channel's list");
    const threads = (await must(owner.get(`${base}/${generalId}/threads`), 200)).body;
    t.match(threads, [{ name: 'Dune club', message_count: 1 }], 'and on the server');
    await shotsAtBothWidths(page, 'thread-pane');
    // Closed, then opened again from the starter's "1 reply".
    await page.click('#thread-close');
    await page.locator('#thread-pane[hidden]').waitFor({ state: 'attached' });
    await starter.locator('.thread-summary').click();
    await page.locator('#thread-pane li.msg .content', { hasText: 'chapter one by Friday' }).waitFor();
    t.pass('the starter opens it');
    // The channel's header lists its threads; the one the user follows is under the channel in the sidebar.
    await page.click('#threads-button');
    await page.getByRole('menuitem', { name: /Dune club/ }).waitFor();
    await page.keyboard.press('Escape');
    await page.locator('.thread-entries .thread-entry', { hasText: 'Dune club' }).waitFor();
    t.pass('listed in the header and, followed, in the sidebar');
  });

  await scene.step('a forum: its posts with their first lines and image, New post with a tag, and the list filtered by tag', async (t) => {
    const forum = (
      await must(owner.post(base, { name: 'help', type: 'forum', topic: 'One question per post.', available_tags: [{ name: 'bug' }, { name: 'idea' }] }), 201)
    ).body;
    const tag = (name: string) => forum.available_tags.find((x: { name: string }) => x.name === name).id as string;
    await must(
      owner.post(`${base}/${forum.id}/threads`, { name: 'Dark mode', content: 'please\nit hurts my eyes at night', applied_tags: [tag('idea')] }),
      201,
    );
    const form = new FormData();
    form.append('name', 'New cover');
    form.append('content', 'what do you think of this one?');
    form.append('attachments', new Blob([gradientPng(160, 120)], { type: 'image/png' }), 'cover.png');
    await must(owner.post(`${base}/${forum.id}/threads`, form), 201);
    await openChannel(w, url, serverId, forum.id, 'help');
    await page.locator('#forum-view:not([hidden])').waitFor();
    await page.locator('.forum-post-title', { hasText: 'Dark mode' }).waitFor();
    const card = (title: string) => page.locator('.forum-post', { has: page.locator('.forum-post-title', { hasText: title }) });
    t.equal(await card('Dark mode').locator('.forum-post-lines').textContent(), 'please\nit hurts my eyes at night', "a card shows its post's first lines");
    t.equal(await card('Dark mode').locator('img').count(), 0, 'and no image when the post has none');
    const thumb = card('New cover').locator('img.forum-post-image');
    t.equal(await thumb.getAttribute('alt'), 'Image from New cover');
    t.equal(await thumb.getAttribute('loading'), 'lazy');
    await thumb.scrollIntoViewIfNeeded();
    await page.waitForFunction((img) => (img as { complete: boolean; naturalWidth: number } | null)?.naturalWidth === 160, await thumb.elementHandle());
    t.pass("the post's first image shows as a thumbnail, loaded");
    await page.click('#new-post');
    await page.fill('#form-name', 'It crashes');
    await page.fill('#form-content', 'on start, every time');
    await page.locator(`[id="form-tag:${tag('bug')}"]`).check();
    await page.click('#form-submit');
    await page.locator('#thread-pane:not([hidden])').waitFor();
    await page.locator('#thread-pane li.msg .content', { hasText: 'on start, every time' }).waitFor();
    t.equal(await page.textContent('#thread-title'), 'It crashes', 'the new post opens in the pane with its first message');
    const titles = page.locator('.forum-post-title');
    await page.locator('.forum-post-title', { hasText: 'It crashes' }).waitFor();
    t.same((await titles.allTextContents()).sort(), ['Dark mode', 'It crashes', 'New cover'], 'every post is listed');
    t.match(await page.locator('.forum-post', { hasText: 'It crashes' }).textContent(), 'bug', 'with its tag');
    await page.selectOption('#forum-tag', tag('bug'));
    t.same(await titles.allTextContents(), ['It crashes'], 'filtered by its tag');
    await page.click('#thread-close');
    await page.selectOption('#forum-tag', '');
    t.same((await titles.allTextContents()).sort(), ['Dark mode', 'It crashes', 'New cover'], 'and every post again');
    await page.waitForFunction((img) => (img as { naturalWidth: number } | null)?.naturalWidth === 160, await thumb.elementHandle());
    await shotsAtBothWidths(page, 'forum-list');
  });
});
