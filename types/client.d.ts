// The names the browser code (static/js) gives the API's records and the user stream's frames,
// from the types scripts/client-types.mjs makes out of docs/openapi.json and docs/asyncapi.json
// (types/generated/, made by `make typecheck`). A JS module reads one with JSDoc:
//   /** @typedef {import('../../types/client').Message} Message */
import type { components } from './generated/api';
import type { StreamEvents, ClientFrames, VoiceEvents, VoiceOps } from './generated/events';
import type { components as frames } from './generated/events';

type Schemas = components['schemas'];

export type UserRef = Schemas['UserRef'];
export type Account = Schemas['Account'];
export type Server = Schemas['Server'];
export type Channel = Schemas['Channel'];
export type ChannelWithState = Schemas['ChannelWithState'];
export type Category = Schemas['Category'];
export type Permission = Schemas['ChannelWithState']['permissions'][number];
export type Conversation = Schemas['Conversation'];
export type ConversationWithState = Schemas['ConversationWithState'];
export type Member = Schemas['Member'];
export type Role = Schemas['Role'];
export type Friend = Schemas['Friend'];
export type FriendWithPresence = Schemas['FriendWithPresence'];
export type FriendRequest = Schemas['FriendRequest'];
export type Block = Schemas['Block'];
export type Presence = Schemas['Shown'];
export type NotificationSetting = Schemas['NotificationSetting'];
export type ReadState = Schemas['ReadState'];
export type Message = Schemas['Message'];
export type Attachment = Schemas['Attachment'];
export type Reaction = Schemas['Reaction'];
export type Embed = Schemas['Embed'];
export type Thread = Schemas['Thread'];
export type ThreadState = Schemas['ThreadState'];
/** A thread as a channel lists it: a forum post's with its first lines and first image. */
export type ListedThread = Schemas['ListedThread'];
export type ForumTag = Schemas['ForumTag'];
/** A server's custom emoji and stickers, a message's poll (issue 50). */
export type Emoji = Schemas['Emoji'];
export type Onboarding = Schemas['Onboarding'];
export type Sticker = Schemas['Sticker'];
export type Poll = Schemas['Poll'];
/** A server's AutoMod rule (issue 53). */
export type AutomodRule = Schemas['AutomodRule'];

/** The user as the stream's ready frame says: who they are and their own status. */
export type Me = frames['schemas']['Me'];
/** A server as the ready frame lists it: with its channels (and their read state) and categories. */
export type ServerEntry = frames['schemas']['ServerEntry'];

export type { StreamEvents, ClientFrames, VoiceEvents, VoiceOps };
/** Who is in a voice channel, and how (ready's voice_states, the voice_state event). */
export type VoiceState = Schemas['VoiceState'];
export type ReadyFrame = StreamEvents['ready'];

/**
 * The stream's events as the views' handlers see them (store.js onEvent): as the server sends
 * them, but `server_left`, to which the store adds the server that was left (it is gone from the
 * lists by the time the views hear of it).
 */
export interface Events extends Omit<StreamEvents, 'ready' | 'server_left'> {
  server_left: StreamEvents['server_left'] & { server?: ServerEntry | null };
}
export type EventName = keyof Events;
export type StreamEvent = Events[EventName];

/**
 * What the page can open (app.js select()): a channel (without channelId, the server's last or
 * first one), a conversation, or the friends view. `around`: open at that message; `link`: the
 * place came from a message link; `named`: the address named it.
 */
export type Place =
  | { kind: 'channel'; serverId: string; channelId?: string; around?: string; link?: boolean; named?: boolean }
  | { kind: 'conversation'; id: string; around?: string; link?: boolean; named?: boolean }
  | { kind: 'friends'; named?: boolean };
