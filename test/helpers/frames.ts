import fs from 'node:fs';
import path from 'node:path';
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

/**
 * Every frame the tests receive is held against docs/asyncapi.json, the way every HTTP answer is
 * held against docs/openapi.json (helpers/contract.ts): a user-stream frame must be the message of
 * its `event`, exactly; a room frame one of the room messages. Wired into the socket helper
 * (helpers/ws.ts) once.
 */
interface Message {
  name: string;
  payload: unknown;
}
const document = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'docs', 'asyncapi.json'), 'utf8')) as {
  components: { messages: Record<string, Message>; schemas: Record<string, unknown> };
};

const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addSchema({ $id: 'async', components: { schemas: document.components.schemas } }, 'async');
const compile = (schema: unknown): ValidateFunction => ajv.compile(JSON.parse(JSON.stringify(schema).replace(/"#\/components\//g, '"async#/components/')));

const streamMessages = new Map<string, ValidateFunction>();
const roomMessages: [string, ValidateFunction][] = [];
const voiceMessages = new Map<string, ValidateFunction>();
for (const [key, message] of Object.entries(document.components.messages)) {
  if (key.startsWith('stream.')) streamMessages.set(message.name, compile(message.payload));
  else if (key.startsWith('room.')) roomMessages.push([message.name, compile(message.payload)]);
  else if (key.startsWith('voice.')) voiceMessages.set(message.name, compile(message.payload));
  // client.*: what clients send, never a frame the server may send.
}

/** A reason when the frame contradicts the document; null when it matches. */
export function frameViolation(socketPath: string, frame: unknown): string | null {
  const socket = socketPath.split('?')[0];
  if (socket === '/api/ws' || socket === '/api/voice/ws') {
    const name = (frame as { event?: unknown })?.event;
    const validate = typeof name === 'string' ? (socket === '/api/ws' ? streamMessages : voiceMessages).get(name) : undefined;
    if (!validate) return `asyncapi: a ${socket} frame with event ${JSON.stringify(name)}, which docs/asyncapi.json does not list`;
    if (!validate(frame))
      return `asyncapi: the ${name} frame does not match its message: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(frame).slice(0, 400)}`;
    return null;
  }
  if (roomMessages.some(([, validate]) => validate(frame))) return null;
  return `asyncapi: a room frame that matches none of ${roomMessages.map(([name]) => name).join(', ')}\n${JSON.stringify(frame).slice(0, 400)}`;
}
