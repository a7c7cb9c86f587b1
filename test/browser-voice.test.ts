import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import type { Page } from 'playwright-core';
import { must } from './helpers/community';
import { startServer } from './helpers/server';
import {
  ARGS,
  CHROMIUM,
  EXPECTED_REFUSALS,
  PASSWORD,
  SKIP as NO_CHROMIUM,
  closeScene,
  openWindow,
  shot,
  shotsAtBothWidths,
  stepper,
  until,
} from './helpers/browser';
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

/** What the page sends now (static/js/voice.js voiceSending): its audio track on or off, boosted or not. */
const sending = (page: Page) =>
  page.evaluate("import(document.querySelector('script[type=module]').src.replace(/home\\.js$/, 'voice.js')).then((m) => m.voiceSending())") as Promise<{
    track: { enabled: boolean; boosted: boolean } | null;
    inputVolume: number;
  }>;

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
    // The room at phone width first: the grid under its header (voice-grid-phone.png).
    await shotsAtBothWidths(bob.page, 'voice-call', async () => {
      await tile.waitFor();
      await shot(bob.page, 'voice-grid-phone');
      await bob.page.locator('#room-back').click();
      await bob.page.locator('#voice-panel').waitFor();
      // The phone layout: the channel list is whole, no grid over its top (the grid is the room's).
      t.notOk(await bob.page.locator('#voice-grid').isVisible(), 'on a phone, the grid stays with the room: the sidebar is not covered');
      t.ok(await bob.page.locator(`#channel-list .nav-item.channel[data-id="${lounge}"]`).isVisible(), 'the voice channel and who is in it show');
    });
  });

  await step('voice settings: the devices, per-person and input volume, push-to-talk with a key of her own', async (t) => {
    const panel = alice.page.locator('#voice-panel');
    await panel.locator('[data-voice="mute"]').click();
    await until(alice.page, 'alice to be unmuted', async () => (await sending(alice.page)).track?.enabled === true);
    await panel.locator('[data-voice="settings"]').click();
    const dialog = alice.page.locator('#voice-settings');
    await dialog.waitFor();
    const inputs = await dialog.locator('#voice-audioinput option').allTextContents();
    t.ok(
      inputs.some((label) => /fake/i.test(label)),
      `the microphones are listed: ${inputs.join(', ')}`,
    );
    const outputs = await dialog.locator('#voice-audiooutput option').allTextContents();
    t.ok(outputs.length >= 1 && !(await dialog.locator('#voice-audiooutput').isDisabled()), `the speakers may be chosen (setSinkId): ${outputs.join(', ')}`);
    // Bob, quieter: his audio element plays at 30 %, and the setting is kept.
    await dialog.locator(`input[data-volume-user="${b.userId}"]`).fill('30');
    t.equal(await alice.page.evaluate("document.querySelector('#voice-audio audio').volume"), 0.3, 'bob plays at 30 %');
    t.equal(await alice.page.evaluate(`localStorage.getItem('chat:voice-volume:${b.userId}')`), '0.3', 'kept in this browser');
    // The input at 150 %: what is sent goes through a gain node.
    await dialog.locator('#voice-input-volume').fill('150');
    await until(alice.page, 'the boosted track to be sent', async () => (await sending(alice.page)).track?.boosted === true);
    t.equal((await sending(alice.page)).inputVolume, 1.5, 'input volume 150 %');
    // Push-to-talk on, with B as its key.
    await dialog.locator('#voice-ptt').check();
    await dialog.locator('#voice-ptt-key').click();
    await alice.page.keyboard.press('KeyB');
    await dialog.locator('#voice-ptt-key', { hasText: 'B' }).waitFor();
    await dialog.locator('button[aria-label="Close"]').click();
    await dialog.waitFor({ state: 'detached' });
    await panel.locator('[data-voice="ptt"]', { hasText: 'hold B' }).waitFor();
    t.equal((await sending(alice.page)).track?.enabled, false, 'push-to-talk: nothing is sent until the key is held');
    await alice.page.keyboard.down('KeyB');
    t.equal((await sending(alice.page)).track?.enabled, true, 'held: sent');
    await panel.locator('[data-voice="ptt"]', { hasText: 'Talking' }).waitFor();
    // Through the gain node, her voice reaches the media server: bob's sidebar rings her.
    await occupant(bob.page, a.userId).and(bob.page.locator('.speaking')).waitFor({ timeout: 20_000 });
    t.pass('bob hears her speak while the key is held');
    await alice.page.keyboard.up('KeyB');
    t.equal((await sending(alice.page)).track?.enabled, false, 'released: off again');
    await until(bob.page, 'alice to stop ringing once released', async () => (await occupant(bob.page, a.userId).getAttribute('data-speaking')) === 'false');
    await alice.page.keyboard.down('KeyV');
    t.equal((await sending(alice.page)).track?.enabled, false, 'another key sends nothing');
    await alice.page.keyboard.up('KeyV');
  });

  await step('leaving empties the panel and the sidebar', async (t) => {
    await alice.page.locator('#voice-panel [data-voice="leave"]').click();
    await alice.page.locator('#voice-panel').waitFor({ state: 'hidden' });
    await occupant(bob.page, a.userId).waitFor({ state: 'detached' });
    t.pass('bob sees alice leave');
  });

  await step('a voice channel made from the + of the sidebar, and its user limit and bitrate set in its Edit form', async (t) => {
    await alice.page.click('#new-channel');
    await alice.page.fill('#ask-input', 'Stage');
    await alice.page.selectOption('#new-channel-type', 'voice');
    await alice.page.click('#ask-submit');
    await alice.page.locator('#room-title', { hasText: 'Stage' }).waitFor();
    const made = (await a.get(`/api/servers/${serverId}/channels`)).body.find((c: { name: string }) => c.name === 'Stage');
    t.match(made, { type: 'voice', user_limit: 0, bitrate: 64_000 }, 'a voice channel');
    await alice.page.click(`#channel-list button[aria-label="Edit #Stage"]`);
    await alice.page.fill('#form-user_limit', '5');
    await alice.page.selectOption('#form-bitrate', '32000');
    await alice.page.click('#form-submit');
    await until(alice.page, 'the settings to be saved', async () => {
      const now = (await a.get(`/api/servers/${serverId}/channels`)).body.find((c: { id: string }) => c.id === made.id);
      return now.user_limit === 5 && now.bitrate === 32_000;
    });
    t.pass('user limit 5, 32 kbit/s');
  });

  closeScene(t, { server, windows: [alice, bob], step, started });
});
