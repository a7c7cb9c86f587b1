/**
 * The types every layer shares. This module imports nothing of ours, so anything may import it
 * without making a cycle: the request context, the route shape, the signed-in user, the session
 * and the container a message lives in.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

/** The signed-in user as every handler sees it, current at each request (src/parts/accounts/users.ts). */
export interface User {
  id: string;
  username: string;
  isAdmin: boolean;
  standing: number;
  displayName: string | null;
  avatarUrl: string | null;
  /** A bot account (docs/api.md "Bots"): signed in by its token, never by a session cookie. */
  bot: boolean;
}

/** How a user is shown to others (messages, members, friends): the `profiles` view of schema.sql. */
export interface UserRef {
  user_id: string;
  username: string;
  display_name: string | null;
  avatar_url: string | null;
  /** Present (true) on bots and webhooks only. */
  bot?: true;
}

/** A UserRef from the profiles view's columns; `bot` is its users.bot (0 for a person). */
export const userRef = (row: { user_id: string; username: string; display_name: string | null; avatar_url: string | null; bot: number }): UserRef => ({
  user_id: row.user_id,
  username: row.username,
  display_name: row.display_name,
  avatar_url: row.avatar_url,
  ...(row.bot !== 0 ? { bot: true as const } : {}),
});

/** The UserRef of a signed-in user. */
export const refOf = (user: User): UserRef => ({
  user_id: user.id,
  username: user.username,
  display_name: user.displayName,
  avatar_url: user.avatarUrl,
  ...(user.bot ? { bot: true as const } : {}),
});

export interface Session {
  token: string;
  /** The public id of the session (GET /api/account/sessions): never the token. */
  id: string;
  userId: string;
  createdAt: number;
  lastSeenAt: number;
  userAgent: string;
  address: string;
  /** The remembered device that opened it or was issued with it (docs/security.md). */
  deviceId?: string;
  /** What opened it (a bot's stand-in session has none). */
  method?: SignInMethod;
}

/**
 * What a session was opened with: a password (and code), a passkey, an OpenID Provider, a
 * recovery code (an account without a password), or a remembered device.
 */
export type SignInMethod = 'password' | 'passkey' | 'oidc' | 'recovery' | 'device';

/**
 * Who may call a route:
 * - none: anyone; a valid session is still read if present.
 * - user: a session and an account that is not suspended.
 * - account: a session, suspended accounts included (GET /api/account, logout, account pages).
 * - admin: a session, not suspended, and is_admin.
 */
export type AuthLevel = 'none' | 'user' | 'account' | 'admin';

/** A parsed request body: a plain object with no prototype, so no key can reach Object.prototype. */
export type Body = Record<string, unknown>;

/** What a handler returns; `send` (http/respond.ts) is the one place that turns it into bytes. */
export type Reply =
  | { kind: 'json'; status: number; body: unknown }
  | { kind: 'empty'; status: number }
  | { kind: 'redirect'; location: string }
  /** The handler streamed the response itself (downloads, static files). */
  | { kind: 'handled' };

/**
 * How a route takes its body:
 * - none: the body is not read.
 * - json: application/json only (415 otherwise), parsed into ctx.body.
 * - json-optional: as json when a body is sent; none at all is an empty body.
 * - auth-form: JSON, or a browser form (x-www-form-urlencoded) answered with redirects.
 * - message: JSON or multipart; the handler reads it (uploads stream to disk).
 * - multipart: multipart only; the handler reads it (an avatar streams to disk).
 */
export type BodyKind = 'none' | 'json' | 'json-optional' | 'auth-form' | 'message' | 'multipart';

export interface Ctx<U extends User | null = User> {
  req: IncomingMessage;
  res: ServerResponse;
  params: Record<string, string>;
  query: URLSearchParams;
  user: U;
  session: U extends User ? Session : Session | undefined;
  body: Body;
  /** The request came from a browser form: answer with redirects, not JSON. */
  form: boolean;
  /** The client as the per-address limits count it (src/parts/accounts/auth.ts clientAddress). */
  client: string;
}

/** The context of a route open to anyone (auth 'none'): the user, if any, is whoever's session came along. */
export type PublicCtx = Ctx<User | null>;

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
export type Handler<U extends User | null = User> = (ctx: Ctx<U>) => Reply | Promise<Reply>;

interface RouteBase {
  method: Method;
  path: string;
  body: BodyKind;
  /** How its errors are written: plain text (the spec's), or Discord's JSON on Discord's own paths (src/core/http/respond.ts). */
  errors?: ErrorShape;
}
export type ErrorShape = 'text' | 'discord';
export type Route = (RouteBase & { auth: 'none'; handler: Handler<User | null> }) | (RouteBase & { auth: Exclude<AuthLevel, 'none'>; handler: Handler<User> });

/** Where a message lives: a channel or a conversation. They share one model and one serializer. */
export type Container = { kind: 'channel'; id: string; serverId: string } | { kind: 'conversation'; id: string };

/**
 * A container as one user reached it (src/rules/permissions.ts Access): in a channel where they
 * lack read_history, the messages up to `historyFloor` (those sent before they joined) do not
 * exist for them, and the message store treats them so. 0 where nothing is hidden (read_history,
 * conversations, a site administrator acting on a report).
 */
export interface Reached {
  container: Container;
  historyFloor: number;
}

/** A container reached whole: nothing hidden below a floor. */
export const reachedWhole = (container: Container): Reached => ({ container, historyFloor: 0 });

export type Log = (line: string) => void;
