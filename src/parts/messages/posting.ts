import type { Clock } from '../../core/clock';
import type { DB } from '../../core/db';
import type { Embed } from '../../core/embed';
import { HttpError, badRequest, forbidden } from '../../core/http/errors';
import type { MessageRecord } from '../../core/message-record';
import type { Container, User } from '../../core/types';
import { type Flag, has } from '../../rules/channel-permissions';
import type { Limits } from '../../rules/limits';
import { type Access, type Permissions, moderates } from '../../rules/permissions';
import { MAX_SLOWMODE_SECONDS } from '../../rules/sizes';
import { type RestrictedAction, assertAllowed } from '../../rules/standing';
import type { Directory } from '../community/directory';
import type { AllowedMentions, AuthorRights, MessageInput, MessageStore } from './message-store';
import type { ReceivedFile } from './upload-store';

/** What a member's or a bot's message says, as its route read it. */
export type MemberInput = Omit<MessageInput, 'webhook' | 'allowedMentions'>;

/** A webhook posting into its channel (src/parts/integrations/webhooks.ts). */
export interface WebhookPoster {
  webhookId: string;
  /** The webhook's own author row (users.bot = 2). */
  author: User;
  channel: Extract<Container, { kind: 'channel' }>;
}

/** What a webhook's payload says (src/parts/integrations/payloads.ts), in any of its formats. */
export interface WebhookInput {
  content: string;
  files: ReceivedFile[];
  embeds: Embed[];
  /** The name and avatar link shown for this message; null: the webhook's name, no avatar. */
  username: string | null;
  avatarUrl: string | null;
  allowedMentions?: AllowedMentions;
}

/**
 * The one way to post (issue 46): who may write what, where, for a member, a bot and a webhook,
 * and for an edit. The routes read the request and answer; every rule is here, and the message
 * store writes what this lets through.
 *
 * A member or a bot (the member routes) posts in two steps around reading the body, so that a
 * refusal never waits for an upload: `admit` checks standing, a timeout or a block, the flag that
 * lets one send here, the rate limit and slow mode (whose slot it holds from then on); its
 * `post` checks what the body carries (files need attach_files, embeds a bot) and writes.
 *
 * What comes next slots in here: a thread is a channel with a parent, whose sending flag is its
 * own (`sendFlag`); a forum post writes the thread and its first message in one transaction
 * (MessageStore.insert); AutoMod's rules look at what is said in `rightsFor`, before anything is
 * written, for new messages and edits alike.
 */
export interface Posting {
  /** The checks before a member's or bot's message is read (403, 429); its post, or its cancel when it is not sent. */
  admit(user: User, where: Access): Admitted;
  /** The checks before an edit is read: an edit is writing, under the rules of a new message. */
  admitEdit(user: User, where: Access): AdmittedEdit;
  /**
   * A webhook's message. A webhook stands outside the rules of members (standing, channel
   * permissions, slow mode are a person's), as Discord's do; it may mention everyone unless its
   * payload's allowed_mentions says not.
   */
  postAsWebhook(poster: WebhookPoster, input: WebhookInput): Promise<MessageRecord>;
  /** 403 unless the user may send here now (typing is for who may send). */
  requireMaySend(user: User, where: Access): void;
  /**
   * 403 when nothing may be written here by this user, whatever their flags: a timeout in a
   * server, a block or a deleted account across a DM. Reactions ask it too.
   */
  requireMayWrite(user: User, container: Container): void;
}

export interface Admitted {
  /**
   * Writes the message once its body is read, after checking what it carries. `again`: who and
   * where are now, for a body that took long to arrive (an upload): every rule is checked once
   * more for them, as for a new request.
   */
  post(input: MemberInput, again?: () => { user: User; where: Access }): Promise<MessageRecord>;
  /** The message is not sent after all (a refused body, a cut upload): its slow-mode slot is given back. */
  cancel(): void;
}

export interface AdmittedEdit {
  /** The author's new text (the message store checks that it is theirs). */
  edit(messageId: string, content: string): MessageRecord;
}

export interface PostingParts {
  db: DB;
  clock: Clock;
  perms: Permissions;
  limits: Limits;
  directory: Directory;
  messages: MessageStore;
}

export function createPosting({ db, clock, perms, limits, directory, messages }: PostingParts): Posting {
  const dmPartner = db.prepare<[string, string], { user_id: string; deleted: number }>(
    `SELECT cm.user_id, u.deleted_at IS NOT NULL AS deleted
       FROM conversations c JOIN conversation_members cm ON cm.conversation_id = c.id JOIN users u ON u.id = cm.user_id
      WHERE c.id = ? AND c.kind = 'dm' AND cm.user_id <> ?`,
  );
  /** When each user last sent in each channel with slow mode (user:channel -> ms), in memory. */
  const lastSent = new Map<string, number>();

  /** The standing restriction on sending here: in a DM or a group, it is private messaging. */
  const actionIn = (container: Container): RestrictedAction => (container.kind === 'channel' ? 'send_message' : 'send_private_message');
  /** The flag that lets one send here (every flag is a conversation member's). A thread's is its own flag: it goes here. */
  const sendFlag = (_container: Container): Flag => 'send_messages';

  /**
   * In a server, a timed-out member may read but not write. Only members reach a conversation; a
   * DM between two people where one blocked the other, or with a deleted account, takes no new
   * words (its history stays readable).
   */
  function requireMayWrite(user: User, container: Container): void {
    if (container.kind === 'channel') {
      perms.requireNotTimedOut(user, container.serverId);
      return;
    }
    const partner = dmPartner.get(container.id, user.id);
    if (partner?.deleted) throw forbidden('this account was deleted: the conversation can be read, not written to');
    if (partner) perms.requireNotBlocked(user.id, partner.user_id, 'messages');
  }

  /** Standing, then a timeout or a block, then the flag: each 403 names what is missing. */
  function requireMaySend(user: User, where: Access): void {
    assertAllowed(user, actionIn(where.container));
    requireMayWrite(user, where.container);
    perms.requireFlag(where, sendFlag(where.container));
  }

  /** What a body carries beyond words: files need attach_files; embeds are a bot's (or a webhook's), never a person's. */
  function requireMayCarry(user: User, where: Access, input: MemberInput): void {
    if (input.files.length > 0) perms.requireFlag(where, 'attach_files');
    if (input.embeds?.length && !user.bot) throw badRequest('embeds are sent by bots and webhooks: a person’s message has none');
  }

  /**
   * What the author may do in what they write: @everyone and @role, in a server channel, with
   * mention_everyone (the owner and full server administrators always); a reply, to what they
   * may read. AutoMod's rules belong here, before the write, for a new message and an edit alike.
   */
  const rightsFor = (where: Access): AuthorRights => ({
    mayMentionEveryone: where.container.kind === 'channel' && has(where.flags, 'mention_everyone'),
    historyFloor: where.historyFloor,
  });

  /**
   * Slow mode: a member (not the owner or an administrator) sends one message per
   * slowmode_seconds in the channel; sooner is 429 with Retry-After. The slot is taken at once,
   * so a second message racing this one (an upload still streaming, a batch still committing)
   * waits too; the returned function gives it back if this message is not sent after all.
   */
  function slowMode(user: User, where: Access): () => void {
    const { container } = where;
    if (container.kind !== 'channel' || moderates(where.rank)) return () => {};
    const seconds = directory.channel(container.id)?.slowmode_seconds ?? 0;
    if (seconds === 0) return () => {};
    const key = `${user.id}:${container.id}`;
    const previous = lastSent.get(key);
    const now = clock.now();
    const wait = (previous ?? -Infinity) + seconds * 1000 - now;
    if (wait > 0) {
      const retry = Math.ceil(wait / 1000);
      throw new HttpError(429, `slow mode: one message every ${seconds} s here; try again in ${retry} s`, { 'Retry-After': String(retry) });
    }
    lastSent.set(key, now);
    if (lastSent.size > 100_000) for (const [k, at] of lastSent) if (now - at > MAX_SLOWMODE_SECONDS * 1000) lastSent.delete(k);
    return () => {
      if (previous === undefined) lastSent.delete(key);
      else lastSent.set(key, previous);
    };
  }

  return {
    admit(user, where) {
      requireMaySend(user, where);
      limits.messagesPerUser.take(user.id, 'messages');
      const giveBack = slowMode(user, where);
      return {
        async post(input, again) {
          requireMayCarry(user, where, input);
          if (!again) return messages.create(where.container, user, input, rightsFor(where));
          const now = again();
          requireMaySend(now.user, now.where);
          requireMayCarry(now.user, now.where, input);
          return messages.create(now.where.container, now.user, input, rightsFor(now.where));
        },
        cancel: giveBack,
      };
    },

    admitEdit(user, where) {
      requireMaySend(user, where);
      return { edit: (messageId, content) => messages.edit(where, messageId, user, content, rightsFor(where)) };
    },

    postAsWebhook({ webhookId, author, channel }, input) {
      return messages.create(
        channel,
        author,
        {
          content: input.content,
          replyTo: null,
          files: input.files,
          embeds: input.embeds,
          webhook: { id: webhookId, name: input.username, avatarUrl: input.avatarUrl },
          allowedMentions: input.allowedMentions,
        },
        { mayMentionEveryone: true },
      );
    },

    requireMaySend,
    requireMayWrite,
  };
}
