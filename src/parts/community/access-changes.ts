import type { Directory } from './directory';
import type { Hub } from '../live/hub';
import { newChannelEntry } from '../live/ready';
import type { ReadStates } from '../messages/unread';
import { type Flags, VIEW, namesOf } from '../../rules/channel-permissions';
import type { Permissions } from '../../rules/permissions';

/**
 * Writes that change who sees or may do what in a server's channels (overwrites, role flags,
 * roles held, everyone's flags, a channel's category or syncing), told to the people they change
 * it for: a channel they no longer see is gone (`channel_deleted`, and their room sockets there
 * close), one they now see arrives (`channel_created` with their read state), and a change of what
 * they may do, or of whether it is private, in one they still see is `channel_access`.
 */
export interface AccessChanges {
  /**
   * Runs `write` (the caller's transaction, committed when it returns) and then tells each
   * connected member (or only `userIds`) of the server what it changed for them.
   */
  around<T>(serverId: string, write: () => T, userIds?: readonly string[]): T;
}

export interface AccessChangeParts {
  perms: Pick<Permissions, 'channelRules'>;
  hub: Pick<Hub, 'toUsers' | 'dropUser' | 'connected'>;
  directory: Pick<Directory, 'channelsOf' | 'serverMemberIds'>;
  readStates: Pick<ReadStates, 'channels'>;
}

/** What one user may do in each channel, and whether it is private, as a key that compares. */
type Seen = Map<string, { flags: Flags; private: boolean }>;

export function createAccessChanges({ perms, hub, directory, readStates }: AccessChangeParts): AccessChanges {
  /**
   * What each user sees and may do, judged once per kind of member (the same roles, no overwrite
   * of their own): a change in a server of thousands costs a few kinds times its channels.
   */
  function snapshot(serverId: string, userIds: readonly string[]): Map<string, Seen> {
    const rules = perms.channelRules(serverId);
    const byKey = new Map<string, Seen>();
    const seen = new Map<string, Seen>();
    for (const userId of userIds) {
      const key = rules?.subjectKey(userId) ?? null;
      let own = key === null ? undefined : byKey.get(key);
      if (!own) {
        own = new Map();
        if (rules && key !== null) for (const c of directory.channelsOf(serverId)) own.set(c.id, { flags: rules.flags(userId, c.id), private: rules.isPrivate(c.id) });
        if (key !== null) byKey.set(key, own);
      }
      seen.set(userId, own);
    }
    return seen;
  }

  return {
    around(serverId, write, userIds) {
      // Only people with a socket open are told anything; the rest see the change when they look.
      const audience = (userIds ?? directory.serverMemberIds(serverId)).filter((id) => hub.connected(id));
      const before = snapshot(serverId, audience);
      const result = write();
      const after = snapshot(serverId, audience);
      for (const userId of audience) {
        const was = before.get(userId)!;
        let states: ReturnType<ReadStates['channels']> | undefined;
        for (const [channelId, now] of after.get(userId)!) {
          const then = was.get(channelId) ?? { flags: 0, private: false };
          const sawIt = (then.flags & VIEW) !== 0;
          const seesIt = (now.flags & VIEW) !== 0;
          if (sawIt && !seesIt) {
            hub.dropUser(userId, { channelId });
            hub.toUsers([userId], { event: 'channel_deleted', server_id: serverId, channel_id: channelId });
          } else if (!sawIt && seesIt) {
            states ??= readStates.channels(userId, serverId);
            const channel = states.get(channelId) ?? newChannelEntry(directory.channelsOf(serverId).find((c) => c.id === channelId)!, now.flags, now.private);
            hub.toUsers([userId], { event: 'channel_created', server_id: serverId, channel_id: channelId, channel });
          } else if (seesIt && (then.flags !== now.flags || then.private !== now.private)) {
            hub.toUsers([userId], { event: 'channel_access', server_id: serverId, channel_id: channelId, permissions: namesOf(now.flags), private: now.private });
          }
        }
      }
      return result;
    },
  };
}
