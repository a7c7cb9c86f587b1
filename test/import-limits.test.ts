// Issue 45, item 1: the workers that read an upload are bounded. A check past its heap or its time
// is ended, and its upload refused with the reason; the process that ran it goes on. The limits are
// small here (the real ones, CHECK_LIMITS in src/parts/import/imports.ts, are in docs/security.md "Import memory").
import t from 'tap';
import { checkJob, runWorker } from '../src/parts/import/imports';
import { ALICE, channelFile, message, person, writeZip } from './helpers/discord-export';

const noLog = () => {};

t.test('a check past its heap is ended and refused with the reason', async (t) => {
  // Valid, and all of it kept: authors with long role names, each message within its own bound.
  const authors = Array.from({ length: 12 }, (_, i) =>
    person(
      String(700000000000000100n + BigInt(i)),
      `p${i}`,
      Array.from({ length: 100 }, (_, r) => ({ id: String(600000000000000100n + BigInt(r)), name: `${r}`.padEnd(100_000, 'x'), color: null, position: r })),
    ),
  );
  const messages = authors.map((author) => message({ author }));
  const zip = await writeZip({ 'general.json': channelFile({ id: '810000000000000001', type: 'GuildTextChat', name: 'general', messages }) });
  const { ended } = runWorker(checkJob(zip), { heapMb: 96, maxMs: null }, () => {}, noLog);
  const last = await ended;
  t.same(last, { kind: 'failed', refused: true, error: 'checking the export needs more memory than a check may use (96 MiB)' });
  const fine = await runWorker(
    checkJob(
      await writeZip({
        'general.json': channelFile({ id: '810000000000000001', type: 'GuildTextChat', name: 'general', messages: [message({ author: ALICE })] }),
      }),
    ),
    { heapMb: 96, maxMs: null },
    () => {},
    noLog,
  ).ended;
  t.equal(fine.kind, 'plan', 'a small export within the same bound: its plan');
});

t.test('a check past its time is ended and refused with the reason', async (t) => {
  const messages = Array.from({ length: 30_000 }, (_, i) => message({ id: String(970000000000000000n + BigInt(i)) }));
  const zip = await writeZip({ 'general.json': channelFile({ id: '810000000000000001', type: 'GuildTextChat', name: 'general', messages }) });
  const last = await runWorker(checkJob(zip), { heapMb: 256, maxMs: 200 }, () => {}, noLog).ended;
  t.same(last, { kind: 'failed', refused: true, error: 'the export could not be checked within 0.2 seconds' });
});
