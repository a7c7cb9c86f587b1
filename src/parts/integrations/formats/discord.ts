import { EMBED_LIMITS, type Embed, checkEmbeds, httpUrl, isObject, own } from '../../../core/embed';
import { badRequest } from '../../../core/http/errors';
import { text as textField } from '../../../core/validate';
import { type AllowedMentions, type IncomingMessage, type MentionKind, type Obj, WEBHOOK_USERNAME_MAX, asList, payloadObject } from './common';

/** Discord's limits for execute-webhook (https://discord.com/developers/docs/resources/webhook#execute-webhook). */
export const DISCORD_CONTENT_MAX = 2000;
export const MAX_ALLOWED_MENTION_IDS = 100;
const MENTION_KINDS: readonly MentionKind[] = ['users', 'roles', 'everyone'];

/**
 * Discord's execute-webhook body: content, username, avatar_url, embeds and allowed_mentions;
 * tts, flags, thread_name, components, attachments and poll are ignored. null reads as absent.
 * `withFiles`: the call carries files (multipart), which are a message with no text or embed.
 */
export function fromDiscord(body: unknown, withFiles = false): IncomingMessage {
  const payload = payloadObject(body, 'the webhook body');
  const content = given(payload, 'content') ? textField(payload, 'content', { min: 0, max: DISCORD_CONTENT_MAX, trim: false, multiline: true }) : '';
  const embeds = given(payload, 'embeds') ? checkEmbeds(own(payload, 'embeds')) : [];
  if (content.trim() === '' && embeds.length === 0 && !withFiles) throw badRequest('a webhook message needs content or an embed (or a file)');
  const message: IncomingMessage = { content: content.trim() === '' ? '' : content, embeds };
  if (given(payload, 'username')) message.username = textField(payload, 'username', { max: WEBHOOK_USERNAME_MAX });
  const avatar = discordAvatar(own(payload, 'avatar_url'));
  if (avatar !== undefined) message.avatar_url = avatar;
  if (given(payload, 'allowed_mentions')) message.allowed_mentions = discordAllowedMentions(own(payload, 'allowed_mentions'));
  return message;
}

/**
 * The body of Discord's edit-webhook-message: `content` and `embeds`, each left as it is when
 * absent and cleared by null; the other fields are ignored, as in fromDiscord.
 */
export function discordEdit(body: unknown): { content?: string; embeds?: Embed[] } {
  const payload = payloadObject(body, 'the webhook body');
  const change: { content?: string; embeds?: Embed[] } = {};
  const content = own(payload, 'content');
  if (content === null) change.content = '';
  else if (content !== undefined) change.content = textField(payload, 'content', { min: 0, max: DISCORD_CONTENT_MAX, trim: false, multiline: true });
  const embeds = own(payload, 'embeds');
  if (embeds === null) change.embeds = [];
  else if (embeds !== undefined) change.embeds = checkEmbeds(embeds);
  if (change.content === undefined && change.embeds === undefined) throw badRequest('give content or embeds');
  return change;
}

function discordAvatar(value: unknown): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') throw badRequest('avatar_url must be a string');
  const url = httpUrl(value);
  if (url === null) throw badRequest(`avatar_url must be an http or https URL of at most ${EMBED_LIMITS.url} characters`);
  return url;
}

/**
 * Which mentions may notify. As on Discord, an object without `parse` lets none through but the
 * ids it lists, and a kind may be given by `parse` or by a list of ids, not both.
 */
function discordAllowedMentions(value: unknown): AllowedMentions {
  if (!isObject(value)) throw badRequest('allowed_mentions must be an object');
  const parse = mentionKinds(own(value, 'parse'));
  const users = mentionIds(own(value, 'users'), 'users');
  const roles = mentionIds(own(value, 'roles'), 'roles');
  for (const [kind, ids] of [
    ['users', users],
    ['roles', roles],
  ] as const) {
    if (parse.includes(kind) && ids.length > 0) throw badRequest(`allowed_mentions: give "${kind}" in parse or a list of ${kind}, not both`);
  }
  return { parse, users, roles };
}

function mentionKinds(value: unknown): MentionKind[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw badRequest(`allowed_mentions.parse must be an array of: ${MENTION_KINDS.join(', ')}`);
  for (const kind of value) {
    if (!(MENTION_KINDS as readonly unknown[]).includes(kind)) throw badRequest(`allowed_mentions.parse may hold only ${MENTION_KINDS.join(', ')}`);
  }
  return [...new Set(value as MentionKind[])];
}

function mentionIds(value: unknown, key: 'users' | 'roles'): string[] {
  if (value === undefined || value === null) return [];
  const isId = (id: unknown) => typeof id === 'string' && /^[\x21-\x7e]{1,64}$/.test(id);
  const ids = asList(value);
  if (!Array.isArray(value) || !ids.every(isId)) throw badRequest(`allowed_mentions.${key} must be an array of ids (strings)`);
  if (ids.length > MAX_ALLOWED_MENTION_IDS) throw badRequest(`allowed_mentions.${key} must hold at most ${MAX_ALLOWED_MENTION_IDS} ids`);
  // Our ids are lower-case UUIDs: an upper-case copy must still match.
  return [...new Set((ids as string[]).map((id) => id.toLowerCase()))];
}

/** Present and not null: JSON clients write null for "not given". */
const given = (obj: Obj, key: string) => own(obj, key) !== undefined && own(obj, key) !== null;
