import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import type { Page } from 'playwright-core';
import { must } from './helpers/community';
import { startServer } from './helpers/server';
import { ARGS, CHROMIUM, EXPECTED_REFUSALS, PASSWORD, SKIP as NO_CHROMIUM, closeScene, openWindow, shotsAtBothWidths, stepper, until } from './helpers/browser';
import { signUp } from './helpers/client';
import { startJanus, voiceSkipReason } from './helpers/voice/janus';

/**
 * Voice in the browser (issue 48): two Chromium users join a voice channel from the sidebar,
 * audio flows both ways (getStats: packets grow, loss under 1 %), one shares a screen and the
 * other sees its frames decode; the sidebar shows both with mute and speaking marks; desktop
 * and phone screenshots. Chromium's fake devices: a microphone playing a tone of ours (a WAV
 * file, so Janus hears someone speaking), a camera and a screen. Janus runs in a network
 * namespace of its own (test/helpers/voice/janus.ts); Chromium reaches it over the veth.
 */
const SKIP = NO_CHROMIUM || voiceSkipReason();

/** A 440 Hz tone, 16-bit mono PCM at 48 kHz, as a WAV file: Chromium loops it as the microphone. */
function toneWav(file: string): void {
  const rate = 48_000;
  const samples = rate * 2;
  const data = Buffer.alloc(samples * 2);
  for (let i = 0; i < samples; i++) data.writeInt16LE(Math.round(Math.sin((2 * Math.PI * 440 * i) / rate) * 0.3 * 32767), i * 2);
  const header = Buffer.alloc(44);
  header.write('RIFF', 0);
  header.writeUInt32LE(36 + data.length, 4);
  header.write('WAVE', 8);
  header.write('fmt ', 12);
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(rate, 24);
  header.writeUInt32LE(rate * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36);
  header.writeUInt32LE(data.length, 40);
  fs.writeFileSync(file, Buffer.concat([header, data]));
}

interface Inbound {
  kind: string;
  user_id: string | null;
  packetsReceived: number;
  packetsLost: number;
  framesDecoded: number;
}
/**
 * What the page receives now (static/js/voice.js voiceStats): the very module the page runs,
 * found beside its entry script (the pages' assets live under a versioned path, /a/<version>/).
 */
const stats = (page: Page) =>
  page.evaluate("import(document.querySelector('script[type=module]').src.replace(/home\\.js$/, 'voice.js')).then((m) => m.voiceStats())") as Promise<
    Inbound[]
  >;

t.test('two Chromium users talk in a voice channel, and one shares a screen', { skip: SKIP, timeout: 240_000 }, async (t) => {
  const janus = await startJanus();
  t.teardown(() => janus.stop());
  const server = await startServer({
    env: { JANUS_URL: janus.url, JANUS_ADMIN_URL: janus.adminUrl, JANUS_ADMIN_SECRET: janus.adminSecret, JANUS_ROOM_KEY: janus.roomKey },
  });
  t.teardown(server.close);
  const wav = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'chat-voice-wav-')), 'tone.wav');
  toneWav(wav);
  t.teardown(() => fs.rmSync(path.dirname(wav), { recursive: true, force: true }));
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      ...ARGS,
      '--use-fake-device-for-media-stream',
      '--use-fake-ui-for-media-stream',
      '--allow-loopback-in-peer-connection',
      `--use-file-for-fake-audio-capture=${wav}`,
      '--autoplay-policy=no-user-gesture-required',
    ],
    headless: true,
    timeout: 30_000,
  });
  t.teardown(() => browser.close());
  const [alice, bob] = await Promise.all(['alice', 'bob'].map((name) => openWindow(t, browser, name, EXPECTED_REFUSALS)));
  const step = stepper(t, [alice, bob], 'browser-voice');
  const started = Date.now();

  const a = await signUp(server.url, 'alice_voice', PASSWORD);
  const b = await signUp(server.url, 'bob_voice', PASSWORD);
  for (const [w, c] of [
    [alice, a],
    [bob, b],
  ] as const)
    await w.context.addCookies([{ name: 'app_session', value: c.cookie!.replace(/^app_session=/, ''), url: server.url }]);
  const serverId: string = (await must(a.post('/api/servers', { name: 'Game night' }), 201)).body.id;
  const invite: string = (await must(a.post(`/api/servers/${serverId}/invites`), 201)).body.token;
  await must(b.post(`/api/invites/${invite}/accept`), 200);
  const lounge: string = (await must(a.post(`/api/servers/${serverId}/channels`, { name: 'Lounge', type: 'voice' }), 201)).body.id;
  await until(alice.page, 'Janus to answer', async () => (await a.get('/healthz')).body.voice?.janus === 'up');

  const occupant = (page: Page, userId: string) => page.locator(`#channel-list .voice-occupant[data-user="${userId}"]`);

  await step('both join the voice channel with one click in the sidebar', async (t) => {
    for (const w of [alice, bob]) {
      await w.page.goto(`${server.url}/?server=${serverId}&channel=${lounge}`);
      await w.page.locator('#room-title', { hasText: 'Lounge' }).waitFor();
      await w.page.locator(`#channel-list .nav-item.channel[data-id="${lounge}"]`).click();
      await w.page.locator('#voice-panel .voice-where', { hasText: 'Voice connected' }).waitFor({ timeout: 20_000 });
    }
    for (const w of [alice, bob]) {
      await occupant(w.page, a.userId).waitFor();
      await occupant(w.page, b.userId).waitFor();
    }
    t.pass('the sidebar shows both, in both windows');
  });

  await step('audio flows both ways: packets grow, loss under 1 %', async (t) => {
    for (const [w, from] of [
      [alice, b.userId],
      [bob, a.userId],
    ] as const) {
      const audioFrom = async () => (await stats(w.page)).find((s) => s.kind === 'audio' && s.user_id === from);
      await until(w.page, `${w.name} to receive audio`, async () => ((await audioFrom())?.packetsReceived ?? 0) > 0).catch(async (err: Error) => {
        throw new Error(`${err.message}: ${JSON.stringify(await stats(w.page))}`);
      });
      const first = (await audioFrom())!;
      await w.page.waitForTimeout(2_000);
      const second = (await audioFrom())!;
      const got = second.packetsReceived - first.packetsReceived;
      t.ok(got > 40, `${w.name} received ${got} audio packets in 2 s`);
      const loss = second.packetsLost / Math.max(1, second.packetsReceived + second.packetsLost);
      t.ok(loss < 0.01, `${w.name} lost ${(loss * 100).toFixed(2)} % of them`);
    }
  });

  await step('the sidebar shows speaking and mute marks', async (t) => {
    // The tone is loud: Janus hears alice speaking (the media path), and bob's sidebar rings her.
    await occupant(bob.page, a.userId).and(bob.page.locator('.speaking')).waitFor({ timeout: 20_000 });
    t.pass('alice rings as speaking in bob’s sidebar');
    await alice.page.locator('#voice-panel [data-voice="mute"]').click();
    await occupant(bob.page, a.userId).locator('.voice-mark[aria-label="muted"]').waitFor();
    t.pass('alice muted herself: bob sees the mark');
    await until(bob.page, 'alice to stop ringing', async () => (await occupant(bob.page, a.userId).getAttribute('data-speaking')) === 'false');
    t.pass('and she no longer rings');
  });

  await step('alice shares her screen; bob sees its frames decode', async (t) => {
    await alice.page.locator('#voice-panel [data-voice="screen"]').click();
    await occupant(bob.page, a.userId).locator('.voice-mark[aria-label="sharing the screen"]').waitFor({ timeout: 20_000 });
    const tile = bob.page.locator(`#voice-grid .voice-tile[data-kind="screen"][data-user="${a.userId}"]`);
    await tile.waitFor({ timeout: 20_000 });
    const screenFrom = async () => (await stats(bob.page)).find((s) => s.kind === 'video' && s.user_id === a.userId);
    await until(bob.page, 'frames of the screen to decode', async () => ((await screenFrom())?.framesDecoded ?? 0) > 0);
    const first = (await screenFrom())!.framesDecoded;
    await bob.page.waitForTimeout(1_500);
    const more = (await screenFrom())!.framesDecoded - first;
    t.ok(more > 5, `bob decoded ${more} frames of alice’s screen in 1.5 s`);
    // On a phone, the sidebar (with the call's panel and who is in voice) is one step back.
    await shotsAtBothWidths(bob.page, 'voice-call', async () => {
      await bob.page.locator('#room-back').click();
      await bob.page.locator('#voice-panel').waitFor();
    });
  });

  await step('leaving empties the panel and the sidebar', async (t) => {
    await alice.page.locator('#voice-panel [data-voice="leave"]').click();
    await alice.page.locator('#voice-panel').waitFor({ state: 'hidden' });
    await occupant(bob.page, a.userId).waitFor({ state: 'detached' });
    t.pass('bob sees alice leave');
  });

  closeScene(t, { server, windows: [alice, bob], step, started });
});
