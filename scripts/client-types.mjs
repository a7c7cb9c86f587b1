// @ts-check
// The types the browser code is checked against (`make typecheck`, tsconfig.client.json), made
// with openapi-typescript from the two documents the server's own sources build:
//   types/generated/api.d.ts     docs/openapi.json: every route and record of the HTTP API
//   types/generated/events.d.ts  docs/asyncapi.json (from the event catalogue): every frame of
//                                the user stream by its `event`, and what the client sends
// types/client.d.ts names the records and frames the client uses. The files are made, not kept
// (types/generated/ is git-ignored), so they always match the documents; a test
// (test/unit/client-types.test.ts) makes them again and type-checks static/js with them.
//
// node scripts/client-types.mjs [out-dir]
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
export const OUT_DIR = path.join(ROOT, 'types', 'generated');

const HEADER = '// Made by scripts/client-types.mjs from docs/%s: do not edit (make typecheck makes it again).\n\n';

/**
 * The AsyncAPI document's frames as one OpenAPI document openapi-typescript reads: its records
 * as they are, and each frame's payload as a schema named after the frame ("stream.message").
 * @param {any} asyncapi
 */
function eventsAsOpenApi(asyncapi) {
  const frames = Object.fromEntries(Object.entries(asyncapi.components.messages).map(([key, message]) => [key, message.payload]));
  return {
    openapi: '3.1.0',
    info: { title: 'chat live events', version: asyncapi.info.version },
    paths: {},
    components: { schemas: { ...asyncapi.components.schemas, ...frames } },
  };
}

/** @param {string} [outDir] */
export async function writeClientTypes(outDir = OUT_DIR) {
  fs.mkdirSync(outDir, { recursive: true });
  const api = await openapiTS(pathToFileURL(path.join(ROOT, 'docs', 'openapi.json')));
  fs.writeFileSync(path.join(outDir, 'api.d.ts'), HEADER.replace('%s', 'openapi.json') + astToString(api));
  const asyncapi = JSON.parse(fs.readFileSync(path.join(ROOT, 'docs', 'asyncapi.json'), 'utf8'));
  const events = await openapiTS(/** @type {any} */ (eventsAsOpenApi(asyncapi)));
  const frames = (/** @type {string} */ prefix) => Object.keys(asyncapi.components.messages).filter((key) => key.startsWith(`${prefix}.`));
  /** @type {Record<string, string>} */
  const about = {
    StreamEvents: "The user stream's frames by their `event`",
    ClientFrames: 'What the client sends on the user stream, by its `op`',
    VoiceEvents: "The voice socket's frames by their `event`",
    VoiceOps: 'What the client sends on the voice socket, by its `op`',
  };
  const map = (/** @type {string} */ name, /** @type {string[]} */ keys) =>
    `/** ${about[name]}. */\nexport interface ${name} {\n${keys.map((key) => `  ${JSON.stringify(key.split('.')[1])}: components['schemas'][${JSON.stringify(key)}];`).join('\n')}\n}\n`;
  fs.writeFileSync(
    path.join(outDir, 'events.d.ts'),
    `${HEADER.replace('%s', 'asyncapi.json') + astToString(events)}\n${map('StreamEvents', frames('stream'))}\n${map('ClientFrames', frames('client'))}\n${map('VoiceEvents', frames('voice'))}\n${map('VoiceOps', frames('voiceOp'))}`,
  );
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await writeClientTypes(process.argv[2] ? path.resolve(process.argv[2]) : OUT_DIR);
}
