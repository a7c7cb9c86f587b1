// A room of the browser client (static/js/room.js) and the record of what it shows. Plain
// JavaScript objects; these interfaces say their shape to the type checker.
import type { Message } from './client';

/** A room: one channel or conversation shown at a time in the elements under its root. */
export interface Room {
  root: HTMLElement;
  parts: {
    scroller: HTMLElement;
    messages: HTMLElement;
    loadingOlder: HTMLElement;
    historyStart: HTMLElement;
    loading: HTMLElement;
    empty: HTMLElement;
    emptyText: HTMLElement;
    jump: HTMLElement;
    typing: HTMLElement;
  };
  /** What the room shows, or null. */
  current: Opened | null;
  /** Live messages that arrived while the reader was scrolled up. */
  unseen: number;
  readTimer: number;
  typingTimer: number;
  /** What a message's buttons do beyond the list (room-list.js). */
  actions: {
    toggleReaction(r: Opened, id: string, emoji: Message['reactions'][number]['emoji'], add: boolean): Promise<void>;
    /** Polls (room-reactions.js): vote or take a vote back, end one's own, the user's votes as remembered. */
    vote(r: Opened, id: string, answerId: string, add: boolean): Promise<void>;
    endPoll(r: Opened, id: string): Promise<void>;
    myVotes(messageId: string): Set<string>;
    openMenu(r: Opened, m: Message, anchor: HTMLElement, options: { mine: boolean; canDelete: boolean }): void;
  };
  /** Listens to a topic of the room ('reply': the message replied to, or null); returns the function that stops it. */
  on(topic: 'reply', fn: (message: Message | null) => void): () => void;
  emit(topic: 'reply', detail: Message | null): void;
  open(place: OpenPlace): Opened;
  close(): void;
  showMessage(id: string): void;
  addOwnMessage(m: Message): void;
  catchUp(): Promise<void>;
  editLastOwn(): boolean;
  setReply(message: Message | null): void;
  destroy(): void;
}

/** What room.open() opens: a channel or a conversation, at its newest messages or around one. */
export interface OpenPlace {
  kind: 'channel' | 'conversation';
  serverId?: string;
  channelId?: string;
  /** The conversation's id. */
  id?: string;
  /** A message id: open around it. */
  around?: string;
  /** Opened from a message link: what to say when its message cannot be shown. */
  link?: string | false;
}

/** What a room shows, from one open to the next. */
export interface Opened {
  room: Room;
  /** 'c:<channel id>' or 'd:<conversation id>': the key of drafts and typing. */
  key: string;
  kind: 'channel' | 'conversation';
  serverId: string | null;
  channelId: string | null;
  conversationId: string | null;
  /** The API path of its messages, pins, read marker and typing. */
  base: string;
  /** The messages loaded, oldest first. */
  list: Message[];
  byId: Map<string, Message>;
  hasOlder: boolean;
  loadingOlder: boolean;
  /** Opened around a message, the present not reached yet. */
  hasNewer: boolean;
  loadingNewer: boolean;
  /** The "new messages" divider goes after this message (null: before the first; undefined: none). */
  dividerAfter: string | null | undefined;
  /** The message being edited in place. */
  editing: string | null;
  replyTo: Message | null;
  /** Blocked authors' messages the reader chose to show. */
  revealed: Set<string>;
  /** The message the list's tab stop is on. */
  focused?: string;
  closed: boolean;
  /** The page being loaded when the room opened (catchUp waits for it). */
  loading?: Promise<void>;
  link?: string | false;
}
