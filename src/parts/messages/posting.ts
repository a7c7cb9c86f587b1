import type { Clock } from '../../core/clock';
import type { DB } from '../../core/db';
import type { Embed } from '../../core/embed';
import { HttpError, badRequest, forbidden } from '../../core/http/errors';
import type { MessageRecord } from '../../core/message-record';
import { type Container, type User, reachedWhole } from '../../core/types';
import { type Flag, VIEW, has } from '../../rules/channel-permissions';
import type { Limits } from '../../rules/limits';
import type { Access, Permissions } from '../../rules/permissions';
import { MAX_SLOWMODE_SECONDS } from '../../rules/sizes';
import { type RestrictedAction, assertAllowed } from '../../rules/standing';
import { requirePassed } from '../../rules/verification';
import type { Directory } from '../community/directory';
import type { AllowedMentions, AuthorRights, MessageInput, MessageStore, Written } from './message-store';
import type { ThreadRecord } from '../../core/records';
import type { ThreadStore } from '../community/threads';
import type { ThreadNews } from '../community/thread-news';
import type { Onboarding } from '../community/onboarding';
import type { ReceivedFile } from './upload-store';
import type { Automod, Screened } from './automod';

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
 * Threads (issue 49): a thread is a channel with a parent; its flags are resolved as a thread's
 * (src/rules/channel-permissions.ts step 8: send_messages there is send_messages_in_threads), so
 * `sendFlag` stays send_messages. A locked thread takes words only from manage_threads; a message
 * in an archived, unlocked thread unarchives it; posting (and being mentioned, for who sees its
 * parent) joins it, in the message's own write. A forum takes no message of its own: a post is a
 * thread and its first message, written in one transaction (`admitPost`, MessageStore.insert).
 * AutoMod's rules (src/parts/messages/automod.ts) look at what is said (`screened`), after every
 * other check and before anything is written, for new messages, forum posts and edits of members,
 * bots and webhooks alike: a rule that blocks is a 403 with its reason, and nothing is written.
 */
export interface Posting {
  /** The checks before a member's or bot's message is read (403, 429); its post, or its cancel when it is not sent. */
  admit(user: User, where: Access): Admitted;
  /** The same for a forum post (`where`: the forum): send_messages there makes a post. */
  admitPost(user: User, where: Access): AdmittedPost;
  /**
   * 403 unless the user may start a thread in this text channel now: standing and a timeout as for
   * a message, and create_public_threads (create_private_threads for a private one).
   */
  requireMayStartThread(user: User, where: Access, isPrivate: boolean): void;
  /** The checks before an edit is read: an edit is writing, under the rules of a new message. */
  admitEdit(user: User, where: Access): AdmittedEdit;
  /**
   * A webhook's message. A webhook stands outside the rules of members (standing, channel
   * permissions, slow mode are a person's), as Discord's do; it may mention everyone unless its
   * payload's allowed_mentions says not.
   */
  postAsWebhook(poster: WebhookPoster, input: WebhookInput): Promise<MessageRecord>;
  /**
   * A webhook's edit of one of its own messages (Discord's PATCH …/messages/{id}): new text, new
   * cards, or both; what is not given stays. 404 for a message that is not this webhook's.
   */
  editAsWebhook(poster: WebhookPoster, messageId: string, change: { content?: string; embeds?: Embed[] }): MessageRecord;
  /** 403 unless the user may send here now (typing is for who may send). */
  requireMaySend(user: User, where: Access): void;
  /**
   * 403 when nothing may be written here by this user, whatever their flags: a timeout or the
   * verification level (src/rules/verification.ts) in a server, a block or a deleted account
   * across a DM. Reactions ask it too.
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

export interface AdmittedPost {
  /**
   * Writes the post once its body is read: `open` makes its thread (inside the transaction, the
   * thread's id), then its first message, all or nothing; both announced after the commit.
   */
  post(input: MemberInput, open: () => string, again?: () => { user: User; where: Access }): { threadId: string; message: MessageRecord };
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
  threads: ThreadStore;
  threadNews: ThreadNews;
  automod: Automod;
  /** Membership screening: a pending member reads, does not write. */
  screening: Pick<Onboarding, 'requireAccepted'>;
}

export function createPosting({ db, clock, perms, limits, directory, messages, threads, threadNews, automod, screening }: PostingParts): Posting {
  const dmPartner = db.prepare<[string, string], { user_id: string; deleted: number }>(
    `SELECT cm.user_id, u.deleted_at IS NOT NULL AS deleted
       FROM conversations c JOIN conversation_members cm ON cm.conversation_id = c.id JOIN users u ON u.id = cm.user_id
      WHERE c.id = ? AND c.kind = 'dm' AND cm.user_id <> ?`,
  );
  /** When each user last sent in each channel with slow mode (user:channel -> ms), in memory. */
  const lastSent = new Map<string, number>();

  /** The standing restriction on sending here: in a DM or a group, it is private messaging. */
  const actionIn = (container: Container): RestrictedAction => (container.kind === 'channel' ? 'send_message' : 'send_private_message');
  /** The flag that lets one send here (every flag is a conversation member's; in a thread, send_messages is send_messages_in_threads). */
  const sendFlag = (_container: Container): Flag => 'send_messages';
  /** The thread a room is, as it stands now; null for any other room (the rules kept in memory say which is one). */
  const threadAt = (container: Container): ThreadRecord | null =>
    container.kind === 'channel' && perms.channelRules(container.serverId)?.parentOf(container.id) ? (threads.get(container.id) ?? null) : null;
  const isForum = (container: Container) => container.kind === 'channel' && directory.channel(container.id)?.type === 'forum';

  /**
   * In a server, a timed-out member, or one who has not accepted its rules yet (membership
   * screening), may read but not write. Only members reach a conversation; a
   * DM between two people where one blocked the other, or with a deleted account, takes no new
   * words (its history stays readable).
   */
  function requireMayWrite(user: User, container: Container): void {
    if (container.kind === 'channel') {
      perms.requireNotTimedOut(user, container.serverId);
      requirePassed(perms.postingGate(user.id, container.serverId));
      screening.requireAccepted(user, container.serverId);
      return;
    }
    const partner = dmPartner.get(container.id, user.id);
    if (partner?.deleted) throw forbidden('this account was deleted: the conversation can be read, not written to');
    if (partner) perms.requireNotBlocked(user.id, partner.user_id, 'messages');
  }

  /** Standing, then a timeout or a block, then the flag, then a thread's lock: each 403 names what is missing. A forum: 400. */
  function requireMaySend(user: User, where: Access): void {
    if (isForum(where.container)) throw badRequest('a forum takes posts, not messages: start one with POST …/threads');
    requireMayPost(user, where);
    const thread = threadAt(where.container);
    if (thread?.locked && !has(where.flags, 'manage_threads')) throw forbidden('this thread is locked: only those who manage threads write in it');
  }

  /** What a message and a forum post both need: standing, no timeout or block, the sending flag. */
  function requireMayPost(user: User, where: Access): void {
    assertAllowed(user, actionIn(where.container));
    requireMayWrite(user, where.container);
    perms.requireFlag(where, sendFlag(where.container));
  }

  /**
   * In a thread, inside the message's write: its author and the people it mentions who see its
   * parent follow it from now; an archived thread that is not locked is active again. What it
   * changed, to announce after the commit.
   */
  function inThread(thread: ThreadRecord, written: Written, authorJoins = true): { joined: string[]; unarchived: boolean } {
    const rules = perms.channelRules(thread.server_id);
    const mentioned = written.row.mentions ? (JSON.parse(written.row.mentions) as string[]) : [];
    const joinable = mentioned.filter((id) => rules && rules.flags(id, thread.parent_id) & VIEW);
    const joined = threads.join(thread.id, thread.server_id, authorJoins ? [written.row.author_id, ...joinable] : joinable);
    const unarchived = thread.archived && !thread.locked;
    if (unarchived) {
      threads.requireRoom(thread.server_id);
      threads.update(thread.id, { archived: false });
    }
    return { joined, unarchived };
  }

  /** After the commit: who joined, and the thread if it was unarchived. */
  function announceThread(threadId: string, changes: { joined: string[]; unarchived: boolean }): void {
    if (changes.joined.length === 0 && !changes.unarchived) return;
    const thread = threads.get(threadId);
    if (!thread) return;
    if (changes.unarchived) threadNews.updated(thread);
    threadNews.members(thread, changes.joined, []);
  }

  /**
   * AutoMod's judgement of what is said in a server channel (a conversation has no rules): a 403
   * with the reason of a rule that blocks it; else what the rules do once it is written.
   */
  function screened(author: User, container: Container, content: string, how: { webhook?: boolean; edit?: boolean } = {}): Screened {
    if (container.kind !== 'channel') return { written: () => {} };
    return automod.screen({ author, container, content, webhook: how.webhook ?? false, edit: how.edit ?? false });
  }

  /** A message into a room (a thread: with what posting there changes of it). */
  async function write(user: User, where: Access, input: MemberInput): Promise<MessageRecord> {
    const judged = screened(user, where.container, input.content);
    const thread = threadAt(where.container);
    let changes = { joined: [] as string[], unarchived: false };
    const record = thread
      ? await messages.create(where.container, user, input, rightsFor(where), (written) => (changes = inThread(thread, written)))
      : await messages.create(where.container, user, input, rightsFor(where));
    if (thread) announceThread(thread.id, changes);
    judged.written(record.id);
    return record;
  }

  /** What a body carries beyond words: files need attach_files; embeds are a bot's (or a webhook's), never a person's. */
  function requireMayCarry(user: User, where: Access, input: MemberInput): void {
    if (input.files.length > 0) perms.requireFlag(where, 'attach_files');
    if (input.poll) perms.requireFlag(where, 'send_polls');
    if (input.embeds?.length && !user.bot) throw badRequest('embeds are sent by bots and webhooks: a person’s message has none');
  }

  /**
   * What the author may do in what they write: @everyone and @role, in a server channel, with
   * mention_everyone (the owner and full server administrators always); a reply, to what they
   * may read. (What they say is AutoMod's to judge: `screened`.)
   */
  const rightsFor = (where: Access): AuthorRights => ({
    mayMentionEveryone: where.container.kind === 'channel' && has(where.flags, 'mention_everyone'),
    historyFloor: where.historyFloor,
  });

  /**
   * Slow mode: a member (not one with manage_messages or manage_channels there, as on Discord: the
   * owner and full administrators hold both) sends one message per
   * slowmode_seconds in the channel; sooner is 429 with Retry-After. The slot is taken at once,
   * so a second message racing this one (an upload still streaming, a batch still committing)
   * waits too; the returned function gives it back if this message is not sent after all.
   */
  function slowMode(user: User, where: Access): () => void {
    const { container } = where;
    if (container.kind !== 'channel' || has(where.flags, 'manage_messages') || has(where.flags, 'manage_channels')) return () => {};
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
          if (!again) return write(user, where, input);
          const now = again();
          requireMaySend(now.user, now.where);
          requireMayCarry(now.user, now.where, input);
          return write(now.user, now.where, input);
        },
        cancel: giveBack,
      };
    },

    admitPost(user, where) {
      requireMayPost(user, where);
      limits.messagesPerUser.take(user.id, 'messages');
      const giveBack = slowMode(user, where);
      return {
        post(input, open, again) {
          let who = { user, where };
          if (again) {
            who = again();
            requireMayPost(who.user, who.where);
          }
          requireMayCarry(who.user, who.where, input);
          const judged = screened(who.user, who.where.container, input.content);
          const serverId = (who.where.container as Extract<Container, { kind: 'channel' }>).serverId;
          const { threadId, written, joined } = db.transaction(() => {
            const id = open();
            const message = messages.insert({ kind: 'channel', id, serverId }, who.user, input, rightsFor(who.where));
            // A post's first message is the one it starts from (what its card shows).
            threads.settle(id, message.row.id, false);
            return { threadId: id, written: message, joined: inThread(threads.get(id)!, message).joined };
          })();
          // The post first (who sees the forum hears of it), then its first message, then who follows it.
          const thread = threads.get(threadId)!;
          threadNews.created(thread);
          const message = messages.announce(written);
          threadNews.members(thread, joined, []);
          judged.written(message.id);
          return { threadId, message };
        },
        cancel: giveBack,
      };
    },

    admitEdit(user, where) {
      requireMaySend(user, where);
      return {
        edit(messageId, content) {
          // Only the author's edit is judged: someone else's is refused (by the store) without AutoMod acting on it.
          if (messages.get(where, messageId, user.id).author_id !== user.id) throw forbidden('only the author can edit a message');
          const judged = screened(user, where.container, content, { edit: true });
          const record = messages.edit(where, messageId, user, content, rightsFor(where));
          judged.written(record.id);
          return record;
        },
      };
    },

    async postAsWebhook({ webhookId, author, channel }, input) {
      const message: MessageInput = {
        content: input.content,
        replyTo: null,
        files: input.files,
        embeds: input.embeds,
        webhook: { id: webhookId, name: input.username, avatarUrl: input.avatarUrl },
        allowedMentions: input.allowedMentions,
      };
      // Into a thread of its channel (Discord's thread_id): unarchived by it, as Discord does; a
      // locked one takes no webhook's words. The webhook does not join it; who it mentions does.
      const thread = threadAt(channel);
      if (thread?.locked) throw forbidden('this thread is locked: only those who manage threads write in it');
      const judged = screened(author, channel, input.content, { webhook: true });
      let changes = { joined: [] as string[], unarchived: false };
      const record = thread
        ? await messages.create(channel, author, message, { mayMentionEveryone: true }, (written) => (changes = inThread(thread, written, false)))
        : await messages.create(channel, author, message, { mayMentionEveryone: true });
      if (thread) announceThread(thread.id, changes);
      judged.written(record.id);
      return record;
    },

    editAsWebhook({ webhookId, author, channel }, messageId, change) {
      const at = reachedWhole(channel);
      const current = messages.get(at, messageId, author.id);
      if (current.webhook_id !== webhookId) throw new HttpError(404, 'unknown message: this webhook did not post it', {}, 'unknown_message');
      const content = change.content ?? current.content;
      const judged = change.content === undefined ? null : screened(author, channel, content, { webhook: true, edit: true });
      const record = messages.edit(at, messageId, author, content, { mayMentionEveryone: true }, change.embeds);
      judged?.written(record.id);
      return record;
    },

    requireMayStartThread(user, where, isPrivate) {
      assertAllowed(user, actionIn(where.container));
      requireMayWrite(user, where.container);
      perms.requireFlag(where, isPrivate ? 'create_private_threads' : 'create_public_threads');
    },

    requireMaySend,
    requireMayWrite,
  };
}
