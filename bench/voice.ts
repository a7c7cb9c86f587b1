/**
 * Voice channels on Janus (issue 48; docs/performance.md "Voice"): join-to-first-audio and
 * Janus's CPU, through the chat server's real signaling.
 *
 * Set-up: Debian's Janus in a network namespace of its own (test/helpers/voice/janus.ts), the
 * chat server started as in the tests, wrtc participants in one child process
 * (test/helpers/voice/peer-host.ts), each sending a tone and receiving everyone else on one
 * multistream subscription. For each scenario (rooms × people in each), everyone joins one after
 * another; then, for 10 s once everyone hears everyone, Janus's CPU time is read from /proc.
 *
 * Measured: join-to-first-audio (from sending `join` until the first audible 10 ms frame of the
 * first person of the room, already speaking, decodes on the newcomer's side: signaling, ICE,
 * DTLS, the subscription's renegotiation, Janus forwarding), p50 and p99 over the joins; Janus's
 * CPU in % of one core, per participant and per forwarded stream (each person receives everyone
 * else: n(n-1) streams a room). The wrtc participants share the machine with Janus (they decode
 * every stream), so the figures are Janus's own CPU, not what the machine could carry.
 *
 * Run (root, Janus installed): node --import=<tap's TypeScript loader> bench/voice.ts, e.g.
 *   node --import=file://$PWD/node_modules/@tapjs/typescript/dist/esm/import.mjs bench/voice.ts
 * (the participants' process is started with the same loader). VOICE_SCENARIOS="1x2,1x4,2x3"
 * changes the scenarios. Everything stops by itself.
 */
import { percentile } from './lib';
import { type Client, signUp } from '../test/helpers/client';
import { startServer } from '../test/helpers/server';
import { Caller, eventually } from '../test/helpers/voice/caller';
import { startJanus } from '../test/helpers/voice/janus';
import { startPeerHost } from '../test/helpers/voice/peers';

const SCENARIOS = (process.env.VOICE_SCENARIOS ?? '1x2,1x4,1x6,2x3').split(',').map((s) => s.split('x').map(Number) as [number, number]);
const STEADY_MS = 10_000;

async function main(): Promise<void> {
  const janus = await startJanus();
  const host = await startPeerHost(janus.netns);
  const server = await startServer({
    env: { JANUS_URL: janus.url, JANUS_ADMIN_URL: janus.adminUrl, JANUS_ADMIN_SECRET: janus.adminSecret, JANUS_ROOM_KEY: janus.roomKey },
  });
  const problems: string[] = [];
  const rows: string[][] = [];
  try {
    const owner = await signUp(server.url);
    await eventually('Janus', async () => (await owner.get('/healthz')).body.voice?.janus === 'up');
    const serverId: string = (await owner.post('/api/servers', { name: 'bench' })).body.id;
    const invite: string = (await owner.post(`/api/servers/${serverId}/invites`)).body.token;
    const idleStart = janus.cpuMs();
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    rows.push(['idle', '', '', '', `${(((janus.cpuMs() - idleStart) / 5_000) * 100).toFixed(1)} %`, '', '']);
    let scenario = 0;
    for (const [rooms, people] of SCENARIOS) {
      scenario++;
      const callers: Caller[][] = [];
      const joinTimes: number[] = [];
      for (let r = 0; r < rooms; r++) {
        const channelId: string = (await owner.post(`/api/servers/${serverId}/channels`, { name: `room-${scenario}-${r}`, type: 'voice' })).body.id;
        const inRoom: Caller[] = [];
        for (let i = 0; i < people; i++) {
          const client: Client = await signUp(server.url);
          await client.post(`/api/invites/${invite}/accept`);
          const caller = await new Caller((p) => problems.push(p), server.url, host, client, `s${scenario}r${r}p${i}`, 300 + 60 * i).open();
          const started = Date.now();
          const joined = await caller.join(channelId);
          if (joined.event !== 'joined') throw new Error(`join refused: ${JSON.stringify(joined)}`);
          if (i > 0) {
            // The first of the room is already speaking: when does the newcomer first hear them?
            const first = inRoom[0].client.userId;
            const at = await eventually(`${caller.name} hears the first`, async () => {
              const mid = [...caller.streams].find(([, s]) => s.user_id === first && s.kind === 'audio')?.[0];
              return mid === undefined ? null : (await host.levels(caller.peer!))[mid]?.firstAudibleAt;
            });
            joinTimes.push(at - started);
          }
          inRoom.push(caller);
        }
        callers.push(inRoom);
      }
      // Everyone hears everyone, then the steady state.
      for (const inRoom of callers) for (const a of inRoom) for (const b of inRoom) if (a !== b) await a.hears(b);
      const cpuStart = janus.cpuMs();
      await new Promise((resolve) => setTimeout(resolve, STEADY_MS));
      const core = ((janus.cpuMs() - cpuStart) / STEADY_MS) * 100;
      joinTimes.sort((x, y) => x - y);
      const total = rooms * people;
      const streams = rooms * people * (people - 1);
      rows.push([
        `${rooms} room(s) × ${people}`,
        String(total),
        String(streams),
        `${percentile(joinTimes, 50).toFixed(0)} / ${percentile(joinTimes, 99).toFixed(0)} ms`,
        `${core.toFixed(1)} %`,
        `${(core / total).toFixed(2)} %`,
        `${(core / streams).toFixed(2)} %`,
      ]);
      for (const inRoom of callers) for (const c of inRoom) await c.leave();
      for (const inRoom of callers) for (const c of inRoom) c.close();
    }
  } finally {
    await server.close();
    await host.stop();
    await janus.stop();
  }
  console.log('| scenario | people | streams forwarded | join → first audio p50 / p99 | Janus CPU (one core) | per person | per stream |');
  console.log('|---|---|---|---|---|---|---|');
  for (const row of rows) console.log(`| ${row.join(' | ')} |`);
  if (problems.length) console.log(`problems: ${problems.slice(0, 5).join('; ')}`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
