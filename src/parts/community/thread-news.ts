import { type Clock, iso } from '../../core/clock';
import type { ThreadRecord } from '../../core/records';
import type { Container } from '../../core/types';
import { VIEW } from '../../rules/channel-permissions';
import type { Permissions } from '../../rules/permissions';
import type { Hub } from '../delivery/hub';
import type { ThreadStore } from './threads';

/** Threads archived by one sweep at most (the rest wait for the next). */
export const ARCHIVED_PER_SWEEP = 500;

/**
 * What threads tell the user streams, after the write committed, each to who may see it: the
 * thread's viewers (src/rules/channel-access.ts: who sees its parent, and of a private thread only
 * its members and manage_threads) for `thread_created`, `thread_updated` and `thread_deleted`;
 * its members, and whoever just left it, for `thread_members`. And the archiver: inactive
 * threads archive by themselves once their auto-archive time passed (`sweep`, run every minute).
 */
export interface ThreadNews {
  created(thread: ThreadRecord): void;
  updated(thread: ThreadRecord): void;
  /** `audience`: who saw it, taken before it went (after, it has no viewers). */
  deleted(thread: ThreadRecord, audience: readonly string[]): void;
  /** Who joined and who left (their room sockets on a private thread close). */
  members(thread: ThreadRecord, added: readonly string[], removed: readonly string[]): void;
  /** Who sees a thread now (for `deleted`). */
  viewers(thread: Pick<ThreadRecord, 'id' | 'server_id'>): readonly string[];
  /** Archives the threads whose time has come; how many. */
  sweep(): number;
}

export interface ThreadNewsParts {
  threads: ThreadStore;
  hub: Pick<Hub, 'toContainer' | 'toUsers' | 'dropUser'>;
  perms: Pick<Permissions, 'channelRules'>;
  clock: Clock;
}

export const threadContainer = (thread: Pick<ThreadRecord, 'id' | 'server_id'>): Container => ({ kind: 'channel', id: thread.id, serverId: thread.server_id });

export function createThreadNews({ threads, hub, perms, clock }: ThreadNewsParts): ThreadNews {
  const updated = (thread: ThreadRecord) =>
    hub.toContainer(threadContainer(thread), { event: 'thread_updated', server_id: thread.server_id, thread_id: thread.id, thread });
  return {
    created: (thread) => hub.toContainer(threadContainer(thread), { event: 'thread_created', server_id: thread.server_id, thread_id: thread.id, thread }),
    updated,
    deleted(thread, audience) {
      hub.toUsers(audience, { event: 'thread_deleted', server_id: thread.server_id, thread_id: thread.id, parent_id: thread.parent_id });
    },
    members(thread, added, removed) {
      if (added.length === 0 && removed.length === 0) return;
      const event = { event: 'thread_members' as const, server_id: thread.server_id, thread_id: thread.id, thread, added: [...added], removed: [...removed] };
      // Its members who see it (a follower who lost the parent keeps the row, not the view), and
      // who was just removed if they saw the parent (a private thread's view went with the row).
      const rules = perms.channelRules(thread.server_id);
      const sees = (userId: string, channelId: string) => !!rules && (rules.flags(userId, channelId) & VIEW) !== 0;
      const audience = new Set(threads.members(thread.id).flatMap((m) => (sees(m.user_id, thread.id) ? [m.user_id] : [])));
      for (const userId of removed) if (sees(userId, thread.parent_id)) audience.add(userId);
      hub.toUsers(audience, event);
      // Who left a private thread no longer sees it: their room sockets on it close (4003).
      for (const userId of removed) if (!rules || !(rules.flags(userId, thread.id) & VIEW)) hub.dropUser(userId, { channelId: thread.id });
    },
    viewers: (thread) => perms.channelRules(thread.server_id)?.viewers(thread.id) ?? [],
    sweep() {
      let archived = 0;
      for (const thread of threads.due(iso(clock.now()), ARCHIVED_PER_SWEEP)) {
        threads.update(thread.id, { archived: true });
        const after = threads.get(thread.id);
        if (after) updated(after);
        archived++;
      }
      return archived;
    },
  };
}
