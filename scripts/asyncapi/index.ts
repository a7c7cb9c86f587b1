/**
 * docs/asyncapi.json (AsyncAPI 3.0), built from the event catalogue (src/parts/delivery/events.ts)
 * and the records of docs/openapi.json, and the two event tables of docs/api.md. `make openapi`
 * writes both documents; test/asyncapi.test.ts fails while a committed file differs from what
 * this builds, and lints the document.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { TSchema } from '@sinclair/typebox';
import { CLIENT_FRAMES, ROOM_EVENTS, STREAM_EVENTS, VOICE_CLIENT_FRAMES, VOICE_EVENTS } from '../../src/parts/delivery/events';
import { type Schema, arr, bool, int, obj, oneOf, ref, uuid, withText } from '../openapi/dsl';
import { API_GUIDE_FILE, OPENAPI_FILE } from '../openapi';
import { BOT_FLAG, MESSAGE_OPTIONAL, messageFields, postingGate, profile, schemas, server } from '../openapi/schemas';

export const ASYNCAPI_FILE = path.join(path.dirname(OPENAPI_FILE), 'asyncapi.json');

/** Records only the sockets send, beside those of the HTTP API. */
const SOCKET_RECORDS: Record<string, Schema> = {
  Me: obj({ ...profile(), status: withText(oneOf('online', 'idle', 'dnd', 'invisible'), "the user's own choice"), bot: BOT_FLAG }, ['bot']),
  ServerEntry: obj({
    ...server(),
    unread: bool,
    mention_count: int,
    role_ids: withText(arr(uuid), 'the roles the recipient holds in this server'),
    posting_gate: postingGate(),
    channels: arr(ref('ChannelWithState')),
    categories: arr(ref('Category')),
    threads: withText(arr(ref('ThreadState')), 'the active threads of its channels the user sees'),
  }),
  MessageEdited: obj({ event: { type: 'string', const: 'edited' }, ...messageFields() }, MESSAGE_OPTIONAL),
  MessageUpdated: obj({ event: { type: 'string', const: 'message_updated' }, ...messageFields() }, MESSAGE_OPTIONAL),
  MessageReacted: obj({ event: { type: 'string', const: 'reaction' }, ...messageFields() }, MESSAGE_OPTIONAL),
};

/** A catalogue schema as plain JSON (TypeBox keeps its own marks in symbols, which JSON drops). */
const plain = (schema: TSchema): Schema => JSON.parse(JSON.stringify(schema)) as Schema;

const messagesOf = (prefix: string, events: Record<string, TSchema>) =>
  Object.fromEntries(
    Object.entries(events).map(([name, schema]) => {
      const { description, 'x-audience': audience, title: _title, ...payload } = plain(schema) as Schema & { description?: string; 'x-audience'?: string };
      return [
        `${prefix}.${name}`,
        {
          name,
          title: name,
          summary: description,
          ...(audience ? { description: `To ${audience}.` } : {}),
          contentType: 'application/json',
          payload: { ...payload, ...(description ? { description } : {}) },
        },
      ];
    }),
  );

export function buildAsyncApi(): Record<string, unknown> {
  const stream = messagesOf('stream', STREAM_EVENTS);
  const room = messagesOf('room', ROOM_EVENTS);
  const client = messagesOf('client', CLIENT_FRAMES);
  // The voice socket: what the server sends (voice.*) and what the client sends (voiceOp.*), named
  // apart in its channel as both have a `candidate`.
  const voice = messagesOf('voice', VOICE_EVENTS);
  const voiceOps = messagesOf('voiceOp', VOICE_CLIENT_FRAMES);
  const voiceRefs = Object.fromEntries([
    ...Object.keys(voice).map((key) => [key.split('.')[1], { $ref: `#/components/messages/${key}` }]),
    ...Object.keys(voiceOps).map((key) => [`op_${key.split('.')[1]}`, { $ref: `#/components/messages/${key}` }]),
  ]);
  const refs = (names: string[]) => Object.fromEntries(names.map((key) => [key.split('.')[1], { $ref: `#/components/messages/${key}` }]));
  const roomChannel = (address: string, param: string, what: string) => ({
    address,
    title: `the ${what} socket`,
    description: `One ${what}'s live events, in the shapes of the core contract. The upgrade and its refusals are GET ${address.replace(/\{/g, '{')} in docs/openapi.json.`,
    parameters: { [param]: { description: `the ${what}'s id (a UUID)` } },
    messages: refs(Object.keys(room)),
  });
  return {
    asyncapi: '3.0.0',
    info: {
      title: 'chat live events',
      version: '1.0.0',
      description:
        'The WebSocket side of the chat service: the user stream (everything the user can see, each frame `{"event": ...}`, `ready` first) ' +
        "and the room sockets of one channel or conversation (the core contract's shapes). Every frame is one JSON text frame (but a large `ready` asked for with `?compress=gzip`). " +
        'The HTTP API, the upgrades included, is docs/openapi.json; the readable guide is docs/api.md.',
      license: { name: 'Proprietary' },
    },
    defaultContentType: 'application/json',
    servers: {
      local: { host: 'localhost:8080', protocol: 'ws', description: 'the server the document was fetched from (wss behind a TLS proxy)' },
    },
    channels: {
      userStream: {
        address: '/api/ws',
        title: 'the user stream',
        description:
          'Everything the signed-in user can see: `ready` first, then each event as it commits. Close codes: docs/api.md "Closing". ' +
          'Opened as `/api/ws?compress=gzip`, a `ready` of 16 KiB or more arrives as one binary frame: the same JSON, compressed with gzip.',
        messages: refs([...Object.keys(stream), ...Object.keys(client)]),
      },
      channelRoom: roomChannel('/api/channels/{channel_id}/ws', 'channel_id', 'channel'),
      conversationRoom: roomChannel('/api/conversations/{conversation_id}/ws', 'conversation_id', 'conversation'),
      voiceSocket: {
        address: '/api/voice/ws',
        title: 'the voice socket',
        description:
          'One tab\'s signaling for a voice call (docs/api.md "Voice", docs/voice.md): the client sends `{"op": ...}` frames, the server `{"event": ...}` ones. ' +
          'Every client frame is checked; one that does not match, or is not allowed, is answered with `error` and changes nothing. The upgrade and its refusals are GET /api/voice/ws in docs/openapi.json.',
        messages: voiceRefs,
      },
    },
    operations: {
      receiveUserStream: {
        action: 'receive',
        title: 'Receive the user stream',
        channel: { $ref: '#/channels/userStream' },
        messages: Object.keys(stream).map((key) => ({ $ref: `#/channels/userStream/messages/${key.split('.')[1]}` })),
      },
      sendVisibility: {
        action: 'send',
        title: 'Say whether the page is visible',
        description:
          'The one frame a client sends that means something: pushes go to a user only when none of their streams is visible. Every other client frame is ignored.',
        channel: { $ref: '#/channels/userStream' },
        messages: Object.keys(client).map((key) => ({ $ref: `#/channels/userStream/messages/${key.split('.')[1]}` })),
      },
      receiveChannelRoom: {
        action: 'receive',
        title: "Receive a channel's events",
        channel: { $ref: '#/channels/channelRoom' },
        messages: Object.keys(room).map((key) => ({ $ref: `#/channels/channelRoom/messages/${key.split('.')[1]}` })),
      },
      receiveConversationRoom: {
        action: 'receive',
        title: "Receive a conversation's events",
        channel: { $ref: '#/channels/conversationRoom' },
        messages: Object.keys(room).map((key) => ({ $ref: `#/channels/conversationRoom/messages/${key.split('.')[1]}` })),
      },
      receiveVoice: {
        action: 'receive',
        title: 'Receive voice signaling',
        channel: { $ref: '#/channels/voiceSocket' },
        messages: Object.keys(voice).map((key) => ({ $ref: `#/channels/voiceSocket/messages/${key.split('.')[1]}` })),
      },
      sendVoice: {
        action: 'send',
        title: 'Join, publish, answer, trickle, mute, leave',
        channel: { $ref: '#/channels/voiceSocket' },
        messages: Object.keys(voiceOps).map((key) => ({ $ref: `#/channels/voiceSocket/messages/op_${key.split('.')[1]}` })),
      },
    },
    components: {
      messages: { ...stream, ...room, ...client, ...voice, ...voiceOps },
      schemas: { ...schemas, ...SOCKET_RECORDS },
    },
  };
}

export const renderAsyncApi = (): string => `${JSON.stringify(buildAsyncApi(), null, 2)}\n`;

const STREAM_START = '<!-- user stream event table: generated from src/parts/delivery/events.ts by `make openapi`; do not edit by hand -->';
const STREAM_END = '<!-- end of user stream event table -->';
const ROOM_START = '<!-- room event table: generated from src/parts/delivery/events.ts by `make openapi`; do not edit by hand -->';
const ROOM_END = '<!-- end of room event table -->';

/** The fields of an event as the table shows them: `{"event", "message_id", <place>}`. */
function shape(schema: Schema): string {
  const variants = (schema.anyOf as Schema[] | undefined) ?? [schema];
  if (schema.$ref) return `the ${String(schema.$ref).split('/').pop()} record`;
  const names = (v: Schema) =>
    Object.keys((v.properties as Schema) ?? {}).filter((k) => !['server_id', 'channel_id', 'conversation_id'].includes(k) || variants.length === 1);
  const fields = names(variants[0]).map((k) => `"${k}"`);
  return `\`{${[...fields, ...(variants.length > 1 ? ['<place>'] : [])].join(', ')}}\``;
}

function table(events: Record<string, TSchema>, start: string, end: string): string {
  const rows = Object.entries(events).map(([name, schema]) => {
    const s = plain(schema) as Schema & { description?: string; 'x-audience'?: string };
    return `| \`${name}\` | ${s['x-audience'] ?? ''} | ${shape(s)} | ${s.description ?? ''} |`;
  });
  return [start, '', '| event | to | shape | what |', '|---|---|---|---|', ...rows, '', end].join('\n');
}

function replaceBetween(text: string, start: string, end: string, replacement: string): string {
  const a = text.indexOf(start);
  const b = text.indexOf(end);
  if (a === -1 || b === -1) throw new Error(`docs/api.md has no markers ${start}`);
  return text.slice(0, a) + replacement + text.slice(b + end.length);
}

/** docs/api.md with its two event tables replaced by the catalogue's. */
export function renderEventTables(current: string): string {
  const withStream = replaceBetween(current, STREAM_START, STREAM_END, table(STREAM_EVENTS, STREAM_START, STREAM_END));
  return replaceBetween(withStream, ROOM_START, ROOM_END, table(ROOM_EVENTS, ROOM_START, ROOM_END));
}

if (require.main === module) {
  fs.writeFileSync(ASYNCAPI_FILE, renderAsyncApi());
  fs.writeFileSync(API_GUIDE_FILE, renderEventTables(fs.readFileSync(API_GUIDE_FILE, 'utf8')));
  console.log(`wrote ${path.relative(process.cwd(), ASYNCAPI_FILE)} and the event tables of ${path.relative(process.cwd(), API_GUIDE_FILE)}`);
}
