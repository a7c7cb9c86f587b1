import type { Clock } from '../../core/clock';
import type { DB } from '../../core/db';
import type { MessageRecord } from '../../core/message-record';
import type { Container, Log } from '../../core/types';
import type { Permissions } from '../../rules/permissions';
import { type NotificationSettings, levelAt } from '../accounts/notifications';
import type { Directory } from '../community/directory';
import type { Hub } from '../delivery/hub';
import type { Presence } from '../live/presence';
import type { PushSender } from './sender';
import type { PushSubscriptions, Target } from './subscriptions';

/**
 * Who gets a push for a new message (docs/api.md "Push notifications"): everyone who can see it
 * but its author, with a subscription, no user stream open and visible, not on do-not-disturb,
 * and whose notification settings say it notifies: `all`, or `mentions` and it mentions them
 * (by name, `@everyone` or a role they hold, unless their server suppresses those) or replies to
 * them; nothing while the channel, its server or the conversation is muted. Worked out after the
 * post was answered and its sockets served, for the few with a subscription only.
 */
export interface Push {
  /** A new message: the pushes it calls for go to the sender's queue. */
  messageCreated(container: Container, message: MessageRecord): void;
}

export interface PushParts {
  db: DB;
  clock: Clock;
  log: Log;
  hub: Pick<Hub, 'hasVisibleStream'>;
  perms: Pick<Permissions, 'channelRules'>;
  directory: Pick<Directory, 'conversationMemberIds' | 'server' | 'channel' | 'conversation'>;
  notifications: Pick<NotificationSettings, 'settingsOf'>;
  presence: Pick<Presence, 'chosen'>;
  subscriptions: PushSubscriptions;
  sender: PushSender;
}

/** How much of a message's text a push carries (when the device chose to show it). */
const PUSH_TEXT_CHARS = 140;

export function createPush(parts: PushParts): Push {
  const { db, clock, hub, perms, directory, presence, notifications, subscriptions, sender } = parts;
  const roleHolders = db.prepare<[string, string], { user_id: string; role_id: string }>(
    'SELECT user_id, role_id FROM member_roles WHERE server_id = ? AND role_id IN (SELECT value FROM json_each(?))',
  );

  const threadMembers = db.prepare<[string], string>('SELECT user_id FROM thread_members WHERE thread_id = ?').pluck();

  function considered(container: Container, message: MessageRecord): void {
    const rules = container.kind === 'channel' ? perms.channelRules(container.serverId) : null;
    // A thread's messages reach those who follow it (posting or a mention joined them), not every viewer of its channel.
    const parentId = rules?.parentOf(container.id) ?? null;
    const followers = parentId ? new Set(threadMembers.all(container.id)) : null;
    const audience = container.kind === 'channel' ? (rules?.viewers(container.id) ?? []) : directory.conversationMemberIds(container.id);
    const candidates = [...audience].filter((id) => id !== message.author_id && (!followers || followers.has(id)));
    const targets = subscriptions.targetsOf(candidates);
    if (targets.length === 0) return;
    const byUser = new Map<string, Target[]>();
    for (const target of targets) {
      const own = byUser.get(target.user_id);
      if (own) own.push(target);
      else byUser.set(target.user_id, [target]);
    }
    const users = [...byUser.keys()].filter((userId) => !hub.hasVisibleStream(userId) && presence.chosen(userId) !== 'dnd');
    if (users.length === 0) return;

    const serverId = container.kind === 'channel' ? container.serverId : '';
    const settings = notifications.settingsOf(users, [container.id, ...(serverId ? [serverId] : []), ...(parentId ? [parentId] : [])]);
    const holders = new Set(
      container.kind === 'channel' && message.mention_roles.length > 0
        ? roleHolders.all(serverId, JSON.stringify(message.mention_roles)).map((r) => r.user_id)
        : [],
    );
    const now = clock.now();
    const room = roomTitle(container);
    for (const userId of users) {
      const own = settings.get(`${userId} ${container.id}`);
      const server = container.kind === 'channel' ? settings.get(`${userId} ${serverId}`) : undefined;
      const level = levelAt(own, server, now, parentId ? settings.get(`${userId} ${parentId}`) : undefined);
      if (level === 'nothing') continue;
      const mentioned =
        message.mentions.includes(userId) ||
        (message.mention_everyone && !server?.suppress_everyone) ||
        (holders.has(userId) && !server?.suppress_roles) ||
        message.reply_preview?.author.user_id === userId;
      if (level === 'mentions' && !mentioned) continue;
      for (const target of byUser.get(userId)!) {
        sender.send(target, container.id, (count) => payloadOf(container, message, room, count, target.show_text === 1));
      }
    }
  }

  /** What the lock screen shows: the room and the sender; the text only where the device chose it. */
  function payloadOf(container: Container, message: MessageRecord, room: string, count: number, withText: boolean): object {
    const sender = message.author.display_name ?? message.author.username;
    const place = container.kind === 'channel' ? `${container.serverId}/${container.id}` : `@me/${container.id}`;
    const text = (message.content || cardTitle(message) || `${message.attachments.length} attachment(s)`).slice(0, PUSH_TEXT_CHARS);
    return {
      room,
      sender,
      count,
      ...(withText ? { text } : {}),
      tag: container.id,
      url: `/channels/${place}/${message.id}`,
    };
  }

  /** A message without text is named by its first card with a title or description (as static/js/alerts.js does). */
  function cardTitle(message: MessageRecord): string | undefined {
    const card = message.embeds?.find((embed) => embed.title || embed.description);
    return card?.title || card?.description;
  }

  function roomTitle(container: Container): string {
    if (container.kind === 'channel') return `#${directory.channel(container.id)?.name ?? ''} · ${directory.server(container.serverId)?.name ?? ''}`;
    const conversation = directory.conversation(container.id);
    return conversation?.kind === 'group' ? (conversation.name ?? 'Group') : 'Direct message';
  }

  return {
    messageCreated(container, message) {
      if (!subscriptions.any()) return;
      // After this turn: the post is answered and its sockets served first.
      setImmediate(() => {
        try {
          considered(container, message);
        } catch (err) {
          parts.log(`push: ${(err as Error).stack ?? err}`);
        }
      });
    },
  };
}
