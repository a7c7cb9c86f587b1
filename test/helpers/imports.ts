// Imports through the API, for the tests of the Discord import.
import fs from 'node:fs';
import type { Client } from './client';
import { must } from './community';
import { standardExport, writeZip } from './discord-export';
import type { TestServer } from './server';

/** A multipart form with the zip of `files` under `field`. */
export const zipForm = async (field: string, files: Record<string, unknown>) => {
  const form = new FormData();
  form.append(field, new Blob([fs.readFileSync(await writeZip(files))], { type: 'application/zip' }), 'export.zip');
  return form;
};

/** Uploads the standard export, imports it and waits for the end: the import record. */
export async function imported(server: TestServer, owner: Client, start: Record<string, unknown> = {}) {
  const upload = await must(owner.post('/api/imports?server_name=Club%20Archive', await zipForm('export', standardExport())), 201);
  await must(owner.post(`/api/imports/${upload.body.id}/start`, start), 202);
  for (let i = 0; i < 400; i++) {
    const now = await must(owner.get(`/api/imports/${upload.body.id}`), 200);
    if (now.body.status !== 'running') return now.body;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error('the import did not end');
}
