import fs from 'node:fs';
import { Parser } from '@asyncapi/parser';
import t from 'tap';
import { ASYNCAPI_FILE, renderAsyncApi, renderEventTables } from '../scripts/asyncapi';
import { API_GUIDE_FILE } from '../scripts/openapi';
import { CLIENT_FRAMES, ROOM_EVENTS, STREAM_EVENTS, VOICE_CLIENT_FRAMES, VOICE_EVENTS } from '../src/parts/delivery/events';
import { frameViolation } from './helpers/frames';

const document = JSON.parse(fs.readFileSync(ASYNCAPI_FILE, 'utf8')) as { components: { messages: Record<string, { name: string }> } };

t.test('docs/asyncapi.json is what scripts/asyncapi builds from the event catalogue (run `make openapi` after changing it)', async (t) => {
  t.equal(fs.readFileSync(ASYNCAPI_FILE, 'utf8'), renderAsyncApi());
});

t.test("docs/api.md's two event tables are generated from the same catalogue", async (t) => {
  const guide = fs.readFileSync(API_GUIDE_FILE, 'utf8');
  t.equal(guide, renderEventTables(guide));
});

t.test('every event of the catalogue is a message of the document, and nothing else is', async (t) => {
  const names = Object.keys(document.components.messages).sort();
  t.same(
    names,
    [
      ...Object.keys(STREAM_EVENTS).map((n) => `stream.${n}`),
      ...Object.keys(ROOM_EVENTS).map((n) => `room.${n}`),
      ...Object.keys(CLIENT_FRAMES).map((n) => `client.${n}`),
      ...Object.keys(VOICE_EVENTS).map((n) => `voice.${n}`),
      ...Object.keys(VOICE_CLIENT_FRAMES).map((n) => `voiceOp.${n}`),
    ].sort(),
  );
});

t.test('the AsyncAPI parser (its own Spectral rules) finds no error in docs/asyncapi.json', async (t) => {
  const { document: parsed, diagnostics } = await new Parser().parse(fs.readFileSync(ASYNCAPI_FILE, 'utf8'));
  t.ok(parsed, 'it parses as AsyncAPI 3.0');
  t.same(
    diagnostics.filter((d) => d.severity === 0).map((d) => `${String(d.code)}: ${d.message} at ${d.path.join('.')}`),
    [],
  );
  t.comment(
    `other diagnostics: ${
      diagnostics
        .filter((d) => d.severity !== 0)
        .map((d) => String(d.code))
        .join(', ') || 'none'
    }`,
  );
});

t.test('the frame check refuses frames the document does not describe', async (t) => {
  t.equal(frameViolation('/api/ws', { event: 'friend_removed', user_id: '3f2b8c1e-7d4a-4b6e-9c0d-1a2b3c4d5e6f' }), null);
  t.match(frameViolation('/api/ws', { event: 'friend_removed' }), /does not match its message/, 'a field missing');
  t.match(
    frameViolation('/api/ws', { event: 'friend_removed', user_id: '3f2b8c1e-7d4a-4b6e-9c0d-1a2b3c4d5e6f', extra: 1 }),
    /does not match/,
    'a field too many',
  );
  t.match(frameViolation('/api/ws', { event: 'nonsense' }), /does not list/, 'an event the catalogue lacks');
  t.equal(
    frameViolation('/api/channels/x/ws', {
      event: 'deleted',
      id: '3f2b8c1e-7d4a-4b6e-9c0d-1a2b3c4d5e6f',
      conversation_id: '3f2b8c1e-7d4a-4b6e-9c0d-1a2b3c4d5e6f',
    }),
    null,
  );
  t.match(frameViolation('/api/channels/x/ws', { event: 'message_deleted' }), /matches none/, 'a stream shape on a room socket');
});
