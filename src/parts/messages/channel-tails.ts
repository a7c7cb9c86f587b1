import type { DB } from '../../core/db';

/**
 * The newest messages of each channel, in memory: just what a channel's read state needs (seq,
 * id, author, whom it mentions). `ready` for a user in 2 000 channels then counts unread
 * messages in JS instead of making five index seeks per channel (src/parts/messages/unread.ts).
 *
 * A tail is loaded on first use (one index range) and kept in step by the message store: a new
 * message is appended after its commit, an edit or a delete drops the channel's tail (reloaded
 * when next asked for). Another process writing the file (the CLI, say) drops them all: `PRAGMA
 * data_version` moves. At most TAIL_LENGTH messages per channel and TAIL_CHANNELS channels are
 * kept (the longest kept go first): a few MiB at most.
 */
export const TAIL_LENGTH = 32;
export const TAIL_CHANNELS = 4096;

export interface TailMessage {
  seq: number;
  id: string;
  author_id: string;
  /** @everyone, from someone allowed to. */
  everyone: boolean;
  /** Users named (the author's own name excluded), or null. */
  mentions: string[] | null;
  /** Mentionable roles named, or null: their holders (but the author) count it. */
  roles: string[] | null;
}

export interface Tail {
  /** Oldest first. */
  messages: TailMessage[];
  /** True when the channel has no message older than the first one here. */
  complete: boolean;
}

/** A committed message, as the message store has it. */
export interface NewMessageRow {
  seq: number;
  id: string;
  channel_id: string | null;
  author_id: string;
  mentions: string | null;
  mention_everyone: number;
  mention_roles: string | null;
}

export interface ChannelTails {
  /** Once before a batch of `get`: drops every tail if another process wrote the file. */
  refresh(): void;
  get(channelId: string): Tail;
  /** After a message committed. */
  added(row: NewMessageRow): void;
  /** After a message of the channel was edited or deleted. */
  changed(channelId: string): void;
}

export function createChannelTails(db: DB): ChannelTails {
  const newest = db.prepare<[string, number], NewMessageRow>(
    `SELECT seq, id, channel_id, author_id, mentions, mention_everyone, mention_roles FROM messages
      WHERE channel_id = ? ORDER BY seq DESC LIMIT ?`,
  );
  const dataVersion = db.prepare<[], number>('PRAGMA data_version').pluck();
  const tails = new Map<string, Tail>();
  let seenVersion = dataVersion.get();

  function get(channelId: string): Tail {
    let tail = tails.get(channelId);
    if (tail) return tail;
    const rows = newest.all(channelId, TAIL_LENGTH);
    tail = { messages: rows.reverse().map(tailMessage), complete: rows.length < TAIL_LENGTH };
    // The longest kept goes first (a busy channel that goes is loaded again when next asked for).
    if (tails.size >= TAIL_CHANNELS) tails.delete(tails.keys().next().value!);
    tails.set(channelId, tail);
    return tail;
  }

  return {
    refresh() {
      const version = dataVersion.get();
      if (version === seenVersion) return;
      tails.clear();
      seenVersion = version;
    },
    get,
    added(row) {
      const tail = row.channel_id === null ? undefined : tails.get(row.channel_id);
      if (!tail) return;
      const last = tail.messages.at(-1);
      // Loaded after the commit already: it is there.
      if (last && last.seq >= row.seq) return;
      tail.messages.push(tailMessage(row));
      if (tail.messages.length > TAIL_LENGTH) {
        tail.messages.shift();
        tail.complete = false;
      }
    },
    changed: (channelId) => void tails.delete(channelId),
  };
}

function tailMessage(row: NewMessageRow): TailMessage {
  const named = row.mentions === null ? [] : (JSON.parse(row.mentions) as string[]).filter((id) => id !== row.author_id);
  return {
    seq: row.seq,
    id: row.id,
    author_id: row.author_id,
    everyone: row.mention_everyone === 1,
    mentions: named.length ? named : null,
    roles: row.mention_roles === null ? null : (JSON.parse(row.mention_roles) as string[]),
  };
}
