import { type Reaction, reactionKey } from '../../core/message-record';

/**
 * How an event becomes the bytes each socket gets. Serialized once for everyone, unless a
 * message record carries `reactions[].reacted`, which is the recipient's own: then the record
 * is serialized once without its reactions and each distinct set of "my reactions" adds only
 * its short reactions array (which therefore comes last), so one more event costs the same
 * however many recipients or reactions there are (a message holds at most 20 emoji).
 */
export interface LiveEvent {
  /** The event, or with `within` the message record it carries. */
  payload: Record<string, unknown>;
  /** emoji -> ids of users who reacted: `reactions[].reacted` is set per recipient. Read only if someone receives the event. */
  reactors?: () => Map<string, Set<string>>;
  /** The record goes inside `{"event": <event>, <key>: record}` (the user stream's shapes). */
  within?: { event: string; key: string };
}

/** Returns the frame for a recipient; frames are built once per distinct content. */
export function framesOf({ payload, reactors: readReactors, within }: LiveEvent): (userId: string) => Buffer {
  const wrap = within ? (json: string) => `{"event":${JSON.stringify(within.event)},"${within.key}":${json}}` : (json: string) => json;
  if (!readReactors) {
    const frame = Buffer.from(wrap(JSON.stringify(payload)));
    return () => frame;
  }
  const reactors = readReactors();
  const reactions = (payload.reactions ?? []) as Reaction[];
  const rest = JSON.stringify({ ...payload, reactions: undefined });
  const head = `${rest.slice(0, -1)}${rest === '{}' ? '' : ','}"reactions":[`;
  const pieces = reactions.map((r) => `{"emoji":${JSON.stringify(r.emoji)},"count":${r.count},"reacted":`);
  const frames = new Map<string, Buffer>();
  return (userId) => {
    let key = '';
    for (const r of reactions) key += reactors.get(reactionKey(r.emoji))?.has(userId) ? '1' : '0';
    let frame = frames.get(key);
    if (frame === undefined) {
      frame = Buffer.from(wrap(`${head}${pieces.map((piece, i) => `${piece}${key[i] === '1'}}`).join(',')}]}`));
      frames.set(key, frame);
    }
    return frame;
  };
}
