// The account export as a test reads it: waiting for it, and its zip's entries.
import yauzl from 'yauzl';
import type { Client } from './client';
import { must } from './community';

/** Every entry of a zip, by name. */
export function unzip(data: Buffer): Promise<Map<string, Buffer>> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(data, { lazyEntries: true }, (err, zip) => {
      if (err || !zip) return reject(err);
      const entries = new Map<string, Buffer>();
      zip.on('entry', (entry: yauzl.Entry) => {
        zip.openReadStream(entry, (openErr, stream) => {
          if (openErr || !stream) return reject(openErr);
          const chunks: Buffer[] = [];
          stream.on('data', (c: Buffer) => chunks.push(c));
          stream.on('end', () => {
            entries.set(entry.fileName, Buffer.concat(chunks));
            zip.readEntry();
          });
        });
      });
      zip.on('end', () => resolve(entries));
      zip.on('error', reject);
      zip.readEntry();
    });
  });
}

export async function waitForExport(client: Client): Promise<{ status: string; url?: string }> {
  for (let i = 0; i < 200; i++) {
    const res = await must(client.get('/api/account/export'), 200);
    if (res.body.status !== 'running') return res.body;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error('the export did not finish');
}

/** The caller's export, made and downloaded: its entries by name. */
export async function exportOf(url: string, client: Client): Promise<Map<string, Buffer>> {
  await must(client.post('/api/account/export'), 202);
  const ready = await waitForExport(client);
  const download = await fetch(url + ready.url!, { headers: { cookie: client.cookie! } });
  return unzip(Buffer.from(await download.arrayBuffer()));
}
