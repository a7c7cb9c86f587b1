import type { Directory } from '../community/directory';
import type { Presence } from './presence';
import type { Voice } from '../voice/voice';
import type { Permissions } from '../../rules/permissions';
import type { Clock } from '../../core/clock';
import { type NotificationSettings, mutedAt } from '../accounts/notifications';
import { type User, refOf } from '../../core/types';
import type { ReadStates } from '../messages/unread';
import type { ConversationEntry, ServerEntry, StreamEvent } from '../delivery/events';
import {
  type CategoryRecord,
  type ChannelRecord,
  type ChannelState,
  type ConversationRecord,
  type ConversationState,
  NOTHING_READ,
  type PostingGate,
  type NotificationSetting,
  type ServerRecord,
  type ThreadState,
} from '../../core/records';

/**
 * The sidebar as the user stream sends it: the `ready` snapshot, and the server and
 * conversation entries of `server_joined` and `conversation_created`. Every channel and
 * conversation carries its read state. A fixed number of queries however much there is.
 */
export interface SidebarParts {
  directory: Directory;
  readStates: ReadStates;
  presence: Presence;
  notifications: Pick<NotificationSettings, 'list'>;
  clock: Clock;
  /** What keeps the user from posting in each server now (its verification level: posting_gate). */
  perms: Pick<Permissions, 'postingGate'>;
  /** Who is in the voice channels a user sees. */
  voice: Pick<Voice, 'statesSeenBy'>;
}

type Ready = Extract<StreamEvent, { event: 'ready' }>;

/**
 * The `ready` frame, as JSON text. A big account's is thousands of channels (100 servers x 20:
 * 900 KiB), so its channels are written from pieces kept between frames: each channel record's
 * JSON (the shared record kept by the directory, until the channels generation moves) and each
 * set of permissions' JSON; only the read state is written for each frame. The rest is the
 * catalogue's `ready` (src/parts/delivery/events.ts) serialized as usual, and the tests check every
 * frame against its schema.
 */
export function readyFrame(parts: SidebarParts, user: User): string {
  const { directory, readStates, presence } = parts;
  // One pass gives every channel the user sees with its read state, each server's in position order.
  const channelsByServer = new Map<string, ChannelState[]>();
  for (const state of readStates.channels(user.id).values()) {
    const list = channelsByServer.get(state.server_id) ?? [];
    list.push(state);
    channelsByServer.set(state.server_id, list);
  }
  // Active threads the user sees, each server's together.
  const threadsByServer = new Map<string, ThreadState[]>();
  for (const state of readStates.threads(user.id).values()) {
    const list = threadsByServer.get(state.server_id) ?? [];
    list.push(state);
    threadsByServer.set(state.server_id, list);
  }
  const conversationStates = readStates.conversations(user.id);
  const servers = directory.serversOf(user.id);
  const serverIds = servers.map((s) => s.id);
  const categories = directory.categoriesOfMany(serverIds);
  const records = directory.channelsOfMany(serverIds);
  const settings = parts.notifications.list(user.id);
  const quiet = mutedNow(settings, parts.clock.now());
  const roleIds = directory.roleIdsOf(user.id);
  const rest: Omit<Ready, 'servers'> = {
    event: 'ready',
    user: { ...refOf(user), status: presence.chosen(user.id) },
    conversations: directory.conversationsOf(user.id).map((c) => conversationWithState(c, conversationStates)),
    friends: directory.friendsOf(user.id).map((friend) => ({ ...friend, presence: presence.of(friend.user_id) })),
    incoming_friend_requests: directory.incomingRequestCount(user.id),
    notification_settings: settings,
    voice_states: parts.voice.statesSeenBy(user.id, serverIds),
  };
  const serverTexts = servers.map((server) => {
    const entries = channelsByServer.get(server.id) ?? [];
    const threads = threadsByServer.get(server.id) ?? [];
    const gate = gateOf(parts, user.id, server);
    const { channels: _, categories: __, threads: ___, ...head } = serverWithChannels(server, entries, [], threads, quiet, roleIds.get(server.id) ?? [], gate);
    const byId = new Map((records.get(server.id) ?? []).map((r) => [r.id, r]));
    const channels = entries.map((state) => channelText(byId.get(state.id), state));
    return `${JSON.stringify(head).slice(0, -1)},"channels":[${channels.join(',')}],"categories":${JSON.stringify(categories.get(server.id) ?? [])},"threads":${JSON.stringify(threads)}}`;
  });
  return `${JSON.stringify(rest).slice(0, -1)},"servers":[${serverTexts.join(',')}]}`;
}

/** A record's JSON without its position and closing brace, kept while the record object is (the directory's list). */
const recordTexts = new WeakMap<ChannelRecord, string>();
/** Each set of permission names (namesOf's shared arrays) as JSON. */
const permissionTexts = new WeakMap<string[], string>();

/** A channel entry of `ready`: the record's kept JSON, then the caller's position, read state and permissions. */
function channelText(record: ChannelRecord | undefined, state: ChannelState): string {
  // A channel the directory does not list (none in practice) is written whole.
  if (!record) return JSON.stringify(state);
  let head = recordTexts.get(record);
  if (head === undefined) {
    const { position: _, ...rest } = record;
    head = JSON.stringify(rest).slice(0, -1);
    recordTexts.set(record, head);
  }
  let permissions = permissionTexts.get(state.permissions);
  if (permissions === undefined) {
    permissions = JSON.stringify(state.permissions);
    permissionTexts.set(state.permissions, permissions);
  }
  return `${head},"position":${state.position},"last_message_id":${JSON.stringify(state.last_message_id)},"last_read_id":${JSON.stringify(state.last_read_id)},"unread_count":${state.unread_count},"mention_count":${state.mention_count},"permissions":${permissions},"private":${state.private}}`;
}

/** The user's posting gate in a server: asked only where a verification level is set, so `ready` stays a fixed number of queries for most servers. */
const gateOf = (parts: Pick<SidebarParts, 'perms'>, userId: string, server: ServerRecord): PostingGate | null =>
  server.verification_level === 0 ? null : parts.perms.postingGate(userId, server.id);

/** One server as the sidebar shows it to `userId`. */
export function serverEntry(parts: Omit<SidebarParts, 'voice' | 'presence'>, userId: string, server: ServerRecord): ServerEntry {
  const quiet = mutedNow(parts.notifications.list(userId), parts.clock.now());
  return serverWithChannels(
    server,
    [...parts.readStates.channels(userId, server.id).values()],
    parts.directory.categoriesOf(server.id),
    [...parts.readStates.threads(userId, server.id).values()],
    quiet,
    parts.directory.roleIdsOf(userId, server.id).get(server.id) ?? [],
    gateOf(parts, userId, server),
  );
}

/** The servers, channels and conversations muted now. */
export function mutedNow(settings: NotificationSetting[], now: number): Set<string> {
  return new Set(settings.filter((s) => mutedAt(s, now)).map((s) => s.target_id));
}

/** One conversation as the sidebar shows it to `userId`. */
export function conversationEntry(parts: Pick<SidebarParts, 'readStates'>, userId: string, conversation: ConversationRecord): ConversationEntry {
  return conversationWithState(conversation, parts.readStates.conversations(userId, conversation.id));
}

/**
 * Whether a server looks unread, and its mentions, from its channels' states and those of the
 * threads the user follows (which count toward their parent; an unfollowed one does not). A muted
 * channel (or thread, or a thread's muted parent) does not make its server look unread, nor does
 * anything in a muted server; their mentions still count (docs/api.md "Notifications").
 */
export function serverSummary(
  serverId: string,
  entries: ChannelState[],
  muted: Set<string>,
  threads: readonly ThreadState[] = [],
): { unread: boolean; mention_count: number } {
  const followed = threads.filter((t) => t.following);
  return {
    unread:
      !muted.has(serverId) &&
      (entries.some((c) => c.unread_count > 0 && !muted.has(c.id)) ||
        followed.some((t) => (t.unread_count ?? 0) > 0 && !muted.has(t.id) && !muted.has(t.parent_id))),
    mention_count: entries.reduce((sum, c) => sum + c.mention_count, 0) + followed.reduce((sum, t) => sum + (t.mention_count ?? 0), 0),
  };
}

function serverWithChannels(
  server: ServerRecord,
  entries: ChannelState[],
  categories: CategoryRecord[],
  threads: ThreadState[],
  muted: Set<string>,
  roleIds: string[],
  gate: PostingGate | null,
): ServerEntry {
  return { ...server, ...serverSummary(server.id, entries, muted, threads), role_ids: roleIds, posting_gate: gate, channels: entries, categories, threads };
}

function conversationWithState(conversation: ConversationRecord, states: Map<string, ConversationState>): ConversationEntry {
  const found = states.get(conversation.id);
  if (!found) return { ...conversation, ...NOTHING_READ };
  const { conversation_id: _id, ...state } = found;
  return { ...conversation, ...state };
}
