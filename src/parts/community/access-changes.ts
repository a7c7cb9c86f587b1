import type { Directory } from './directory';
import type { Hub } from '../delivery/hub';
import type { StreamEvent } from '../delivery/events';
import { type ChannelRecord, type ChannelState, NOTHING_READ } from '../../core/records';
import { type Flags, VIEW, namesOf } from '../../rules/channel-permissions';
import type { Permissions } from '../../rules/permissions';

/**
 * Writes that change what members see of a server's channels, told to the people they change it
 * for, each as they see it: a channel they no longer see (or that is gone) is `channel_deleted`
 * (their room sockets there close), one they now see (or that is new) arrives as
 * `channel_created` with their read state, a change of what they may do in one they still see,
 * or of whether it is private, is `channel_access`, and a channel whose record changed or whose
 * place among the channels they see moved is `channel_updated`.
 *
 * Positions are the member's own: 0..k-1 over the k channels they see, in the server's order
 * (src/parts/messages/unread.ts gives the same to lists and `ready`). A channel hidden from a
 * member takes no place in their list, so moving it, renaming it or deleting it tells them
 * nothing.
 */
export interface AccessChanges {
  /**
   * Runs `write` (the caller's transaction, committed when it returns) and then tells each
   * connected member (or only `userIds`) of the server what it changed for them; `changed`: the
   * channels whose record the write changed (a name, a topic...), told to whoever sees them.
   */
  around<T>(serverId: string, write: () => T, userIds?: readonly string[], changed?: readonly string[]): T;
}

/** The read states of a server's channels a user sees, by channel id: src/parts/messages/unread.ts answers. */
export interface ChannelStates {
  channels(userId: string, serverId: string): Map<string, ChannelState>;
}

export interface AccessChangeParts {
  perms: Pick<Permissions, 'channelRules'>;
  hub: Pick<Hub, 'toUsers' | 'dropUser' | 'connected'>;
  directory: Pick<Directory, 'channelsOf' | 'serverMemberIds'>;
  readStates: ChannelStates;
}

/** What one kind of member sees of each channel: what they may do, whether it is private, and its place in their list (-1: not seen). */
type Seen = Map<string, { flags: Flags; private: boolean; position: number }>;

/** What a kind of member is shown of the channels: each channel's place among those they see. */
export function positionsSeen(channels: readonly ChannelRecord[], sees: (channelId: string) => boolean): Map<string, number> {
  const positions = new Map<string, number>();
  for (const c of channels) if (sees(c.id)) positions.set(c.id, positions.size);
  return positions;
}

/** A channel just shown to someone (new, or newly visible to them), with nothing read and what they may do there. */
function newChannelEntry(channel: ChannelRecord, flags: Flags, isPrivate: boolean): ChannelState {
  return { ...channel, ...NOTHING_READ, permissions: namesOf(flags), private: isPrivate };
}

export function createAccessChanges({ perms, hub, directory, readStates }: AccessChangeParts): AccessChanges {
  /**
   * What each user sees and may do, judged once per kind of member (the same roles, no overwrite
   * of their own): a change in a server of thousands costs a few kinds times its channels.
   * Users of one kind share one Seen.
   */
  function snapshot(serverId: string, userIds: readonly string[]): { seen: Map<string, Seen>; channels: Map<string, ChannelRecord> } {
    const rules = perms.channelRules(serverId);
    const channels = directory.channelsOf(serverId);
    const byKey = new Map<string, Seen>();
    const seen = new Map<string, Seen>();
    const nothing: Seen = new Map();
    for (const userId of userIds) {
      const key = rules?.subjectKey(userId) ?? null;
      if (!rules || key === null) {
        seen.set(userId, nothing);
        continue;
      }
      let own = byKey.get(key);
      if (!own) {
        own = new Map();
        const flags = new Map(channels.map((c) => [c.id, rules.flags(userId, c.id)]));
        const positions = positionsSeen(channels, (id) => (flags.get(id)! & VIEW) !== 0);
        for (const c of channels) own.set(c.id, { flags: flags.get(c.id)!, private: rules.isPrivate(c.id), position: positions.get(c.id) ?? -1 });
        byKey.set(key, own);
      }
      seen.set(userId, own);
    }
    return { seen, channels: new Map(channels.map((c) => [c.id, c])) };
  }

  return {
    around(serverId, write, userIds, changed = []) {
      // Only people with a socket open are told anything; the rest see the change when they look.
      const audience = (userIds ?? directory.serverMemberIds(serverId)).filter((id) => hub.connected(id));
      const before = snapshot(serverId, audience);
      const result = write();
      const after = snapshot(serverId, audience);
      // Members of the same kind before and after hear the same: judged once per pair of kinds.
      const groups = new Map<Seen, Map<Seen, string[]>>();
      for (const userId of audience) {
        const was = before.seen.get(userId)!;
        const now = after.seen.get(userId)!;
        const byNow = groups.get(was) ?? new Map<Seen, string[]>();
        groups.set(was, byNow);
        const users = byNow.get(now) ?? [];
        byNow.set(now, users);
        users.push(userId);
      }
      const statesOf = new Map<string, Map<string, ChannelState>>();
      const stateOf = (userId: string) => statesOf.get(userId) ?? statesOf.set(userId, readStates.channels(userId, serverId)).get(userId)!;
      const told = (userIds: string[], event: StreamEvent) => hub.toUsers(userIds, event);
      for (const [was, byNow] of groups) {
        for (const [now, users] of byNow) {
          for (const [channelId, then] of was) {
            if (then.position >= 0 && (now.get(channelId)?.position ?? -1) < 0) {
              for (const userId of users) hub.dropUser(userId, { channelId });
              told(users, { event: 'channel_deleted', server_id: serverId, channel_id: channelId });
            }
          }
          for (const [channelId, seen] of now) {
            if (seen.position < 0) continue;
            const then = was.get(channelId);
            const record = after.channels.get(channelId)!;
            if (!then || then.position < 0) {
              // A new channel has nothing to read; one newly shown comes with each user's read state.
              if (!before.channels.has(channelId)) {
                const channel = newChannelEntry({ ...record, position: seen.position }, seen.flags, seen.private);
                told(users, { event: 'channel_created', server_id: serverId, channel_id: channelId, channel });
              } else {
                for (const userId of users) {
                  const channel = stateOf(userId).get(channelId) ?? newChannelEntry({ ...record, position: seen.position }, seen.flags, seen.private);
                  told([userId], { event: 'channel_created', server_id: serverId, channel_id: channelId, channel });
                }
              }
              continue;
            }
            if (then.flags !== seen.flags || then.private !== seen.private) {
              told(users, { event: 'channel_access', server_id: serverId, channel_id: channelId, permissions: namesOf(seen.flags), private: seen.private });
            }
            if (then.position !== seen.position || changed.includes(channelId)) {
              told(users, { event: 'channel_updated', server_id: serverId, channel_id: channelId, channel: { ...record, position: seen.position } });
            }
          }
        }
      }
      return result;
    },
  };
}
