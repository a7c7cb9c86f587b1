import type { Directory } from '../community/directory';
import type { Presence } from './presence';
import { type User, refOf } from '../../core/types';
import type { ReadStates } from '../messages/unread';
import type { ConversationEntry, ServerEntry, StreamEvent } from './events';
import type { CategoryRecord, ChannelRecord, ChannelState, ConversationRecord, ConversationState, ServerRecord } from '../../core/records';
import { type Flags, namesOf } from '../../rules/channel-permissions';

/**
 * The sidebar as the user stream sends it: the `ready` snapshot, and the server and
 * conversation entries of `server_joined` and `conversation_created`. Every channel and
 * conversation carries its read state. A fixed number of queries however much there is.
 */
export interface SidebarParts {
  directory: Directory;
  readStates: ReadStates;
  presence: Presence;
}

export function buildReady(parts: SidebarParts, user: User): Extract<StreamEvent, { event: 'ready' }> {
  const { directory, readStates, presence } = parts;
  // One query gives every channel with its read state, each server's in position order.
  const channelsByServer = new Map<string, ChannelState[]>();
  for (const state of readStates.channels(user.id).values()) {
    const list = channelsByServer.get(state.server_id) ?? [];
    list.push(state);
    channelsByServer.set(state.server_id, list);
  }
  const conversationStates = readStates.conversations(user.id);
  const servers = directory.serversOf(user.id);
  const categories = directory.categoriesOfMany(servers.map((s) => s.id));
  return {
    event: 'ready',
    user: { ...refOf(user), status: presence.chosen(user.id) },
    servers: servers.map((server) => serverWithChannels(server, channelsByServer.get(server.id) ?? [], categories.get(server.id) ?? [])),
    conversations: directory.conversationsOf(user.id).map((c) => conversationWithState(c, conversationStates)),
    friends: directory.friendsOf(user.id).map((friend) => ({ ...friend, presence: presence.of(friend.user_id) })),
    incoming_friend_requests: directory.incomingRequestCount(user.id),
  };
}

/** One server as the sidebar shows it to `userId`. */
export function serverEntry(parts: SidebarParts, userId: string, server: ServerRecord): ServerEntry {
  return serverWithChannels(server, [...parts.readStates.channels(userId, server.id).values()], parts.directory.categoriesOf(server.id));
}

/** One conversation as the sidebar shows it to `userId`. */
export function conversationEntry(parts: SidebarParts, userId: string, conversation: ConversationRecord): ConversationEntry {
  return conversationWithState(conversation, parts.readStates.conversations(userId, conversation.id));
}

/** A channel just shown to someone (new, or newly visible to them), with nothing read and what they may do there. */
export function newChannelEntry(channel: ChannelRecord, flags: Flags, isPrivate: boolean): ChannelState {
  return { ...channel, ...NOTHING_READ, permissions: namesOf(flags), private: isPrivate };
}

/** A container without messages, or one the caller has just been shown. */
const NOTHING_READ = { last_message_id: null, last_read_id: null, unread_count: 0, mention_count: 0 };

function serverWithChannels(server: ServerRecord, entries: ChannelState[], categories: CategoryRecord[]): ServerEntry {
  return {
    ...server,
    unread: entries.some((c) => c.unread_count > 0),
    mention_count: entries.reduce((sum, c) => sum + c.mention_count, 0),
    channels: entries,
    categories,
  };
}

function conversationWithState(conversation: ConversationRecord, states: Map<string, ConversationState>): ConversationEntry {
  const found = states.get(conversation.id);
  if (!found) return { ...conversation, ...NOTHING_READ };
  const { conversation_id: _id, ...state } = found;
  return { ...conversation, ...state };
}
