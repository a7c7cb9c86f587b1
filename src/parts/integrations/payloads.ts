import { EMBED_LIMITS, type Embed, MAX_COLOR, MAX_EMBEDS, MAX_EMBED_CHARS, charCount, checkEmbeds, embedChars, httpUrl, isObject, isoTimestamp, own } from '../../core/embed';
import { badRequest } from '../../core/http/errors';
import { MAX_CONTENT_CHARS } from '../../core/message-record';
import { text as textField } from '../../core/validate';

/**
 * Incoming webhook payloads in Discord's, Slack's and GitHub's formats, translated into one
 * message shape. Pure functions: the only exception they throw is the 400 HttpError, whatever
 * JSON they are given. Discord's payload is ours to hold to its documented limits, so it is
 * checked strictly; Slack's and GitHub's are written by programs we cannot change, so their text
 * is cut to fit (with "…") and what we do not understand is ignored.
 */
export interface IncomingMessage {
  /** May be '' when there are embeds. */
  content: string;
  /** This message's name in place of the webhook's. */
  username?: string;
  /** An http(s) URL, shown as a link only. */
  avatar_url?: string;
  embeds: Embed[];
  /** Discord's allowed_mentions, reduced: which mention kinds may notify. Absent: all parsed mentions notify (Discord's default). */
  allowed_mentions?: AllowedMentions;
}

export interface AllowedMentions {
  parse: MentionKind[];
  users: string[];
  roles: string[];
}

type MentionKind = 'users' | 'roles' | 'everyone';
type Obj = Record<string, unknown>;

/** Discord's limits for execute-webhook (https://discord.com/developers/docs/resources/webhook#execute-webhook). */
export const DISCORD_CONTENT_MAX = 2000;
export const MAX_ALLOWED_MENTION_IDS = 100;
/** Discord's limit on the name a message gives itself; the same as a webhook's own name (WEBHOOK_NAME_MAX). */
export const WEBHOOK_USERNAME_MAX = 80;
const MENTION_KINDS: readonly MentionKind[] = ['users', 'roles', 'everyone'];

/** GitHub bodies (issues, pull requests, comments, releases) are previews: the link has the rest. */
export const GITHUB_BODY_PREVIEW_CHARS = 500;
export const GITHUB_COMMITS_LISTED = 5;
const COMMIT_SUBJECT_MAX = 100;

/** Slack's named attachment colours; GitHub states borrow the same green and red. */
export const COLORS = { green: 0x2eb67d, yellow: 0xecb22e, red: 0xe01e5a, purple: 0x8957e5, grey: 0x6e7681 } as const;

const LONE_SURROGATES = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
const CONTROLS = /[^\P{Cc}\n\t]/gu;

// --- Discord -----------------------------------------------------------------------------------

/**
 * Discord's execute-webhook body: content, username, avatar_url, embeds and allowed_mentions;
 * tts, flags, thread_name, components, attachments and poll are ignored. null reads as absent.
 */
export function fromDiscord(body: unknown): IncomingMessage {
  const payload = payloadObject(body, 'the webhook body');
  const content = given(payload, 'content') ? textField(payload, 'content', { min: 0, max: DISCORD_CONTENT_MAX, trim: false, multiline: true }) : '';
  const embeds = given(payload, 'embeds') ? checkEmbeds(own(payload, 'embeds')) : [];
  if (content.trim() === '' && embeds.length === 0) throw badRequest('a webhook message needs content or an embed');
  const message: IncomingMessage = { content: content.trim() === '' ? '' : content, embeds };
  if (given(payload, 'username')) message.username = textField(payload, 'username', { max: WEBHOOK_USERNAME_MAX });
  const avatar = discordAvatar(own(payload, 'avatar_url'));
  if (avatar !== undefined) message.avatar_url = avatar;
  if (given(payload, 'allowed_mentions')) message.allowed_mentions = discordAllowedMentions(own(payload, 'allowed_mentions'));
  return message;
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
  for (const [kind, ids] of [['users', users], ['roles', roles]] as const) {
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

// --- Slack -------------------------------------------------------------------------------------

/**
 * Slack's incoming-webhook body (https://api.slack.com/messaging/webhooks): `text` in mrkdwn, and
 * the text of its `blocks` only when there is no `text`. In Slack, `text` is the fallback shown
 * where blocks cannot be (notifications, plain clients): written for a reader of plain text, it
 * makes a better message than blocks reduced to text. Each legacy attachment is an embed.
 * `username` and `icon_url` override the webhook's; `icon_emoji`, `channel` and the rest are ignored.
 */
export function fromSlack(body: unknown): IncomingMessage {
  const payload = payloadObject(body, 'the Slack payload');
  const formatted = own(payload, 'mrkdwn') !== false;
  const mrkdwn = stringAt(payload, 'text');
  const content = mrkdwn !== undefined && mrkdwn.trim() !== '' ? slackMarkdown(mrkdwn, formatted) : slackBlocksText(own(payload, 'blocks'));
  const length = charCount(content);
  if (length > MAX_CONTENT_CHARS) throw badRequest(`a Slack message's text must be at most ${MAX_CONTENT_CHARS} characters once converted; this one has ${length}`);
  const embeds = fitEmbeds(listAt(payload, 'attachments').map(slackAttachment));
  if (content.trim() === '' && embeds.length === 0) throw badRequest('a Slack message needs text, blocks or attachments');
  const message: IncomingMessage = { content: content.trim() === '' ? '' : content.trim(), embeds };
  const username = oneLine(stringAt(payload, 'username'), WEBHOOK_USERNAME_MAX);
  if (username !== undefined) message.username = username;
  const avatar = linkOf(own(payload, 'icon_url'));
  if (avatar !== undefined) message.avatar_url = avatar;
  return message;
}

/** A legacy attachment (https://api.slack.com/reference/messaging/attachments) as an embed. */
function slackAttachment(value: unknown): Embed | null {
  if (!isObject(value)) return null;
  const mrkdwn = (key: string) => {
    const text = stringAt(value, key);
    return text === undefined ? undefined : slackMarkdown(text, true);
  };
  // Pretext sits above the attachment in Slack; fallback is the plain summary for clients that show neither.
  const body = mrkdwn('text') ?? slackBlocksText(own(value, 'blocks'));
  const description = [mrkdwn('pretext'), body].filter((part) => part && part.trim() !== '').join('\n\n') || stringAt(value, 'fallback');
  return buildEmbed({
    title: stringAt(value, 'title'),
    url: own(value, 'title_link'),
    description,
    color: slackColor(own(value, 'color')),
    author: { name: stringAt(value, 'author_name'), url: own(value, 'author_link') },
    fields: listAt(value, 'fields').map(slackField),
    footer: stringAt(value, 'footer'),
    timestamp: own(value, 'ts'),
    image: own(value, 'image_url'),
    thumbnail: own(value, 'thumb_url'),
  });
}

function slackField(value: unknown): DraftField | null {
  if (!isObject(value)) return null;
  const title = stringAt(value, 'title') ?? '';
  const text = stringAt(value, 'value');
  return { name: title, value: text === undefined ? '' : slackMarkdown(text, true), inline: own(value, 'short') === true };
}

const SLACK_COLORS = new Map<string, number>([
  ['good', COLORS.green],
  ['warning', COLORS.yellow],
  ['danger', COLORS.red],
]);

/** `good`, `warning`, `danger` or a hex colour; anything else leaves the embed uncoloured. */
function slackColor(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  if (SLACK_COLORS.has(value)) return SLACK_COLORS.get(value);
  const hex = /^#?([0-9a-f]{6})$/i.exec(value);
  return hex ? Number.parseInt(hex[1], 16) : undefined;
}

/**
 * Block Kit (https://api.slack.com/reference/block-kit/blocks) reduced to text: sections (text
 * and fields), headers as a bold line, context elements, dividers; other blocks carry no text we
 * can show. Blocks are separated by blank lines, so that a divider's `---` is a rule and never
 * turns the line above it into a heading.
 */
function slackBlocksText(value: unknown): string {
  return asList(value)
    .map(slackBlockText)
    .filter((part) => part.trim() !== '')
    .join('\n\n');
}

function slackBlockText(block: unknown): string {
  if (!isObject(block)) return '';
  switch (own(block, 'type')) {
    case 'section':
      return [slackTextObject(own(block, 'text')), ...listAt(block, 'fields').map(slackTextObject)].filter((part) => part.trim() !== '').join('\n');
    case 'header': {
      const title = slackTextObject(own(block, 'text')).replace(/\s+/g, ' ').trim();
      return title === '' ? '' : `**${title}**`;
    }
    case 'context':
      return listAt(block, 'elements').map(slackTextObject).filter((part) => part.trim() !== '').join(' ');
    case 'divider':
      return '---';
    default:
      return '';
  }
}

/** A text object: `plain_text` as written, `mrkdwn` converted. */
function slackTextObject(value: unknown): string {
  if (!isObject(value)) return '';
  const text = stringAt(value, 'text');
  if (text === undefined) return '';
  return own(value, 'type') === 'plain_text' ? clean(text) : slackMarkdown(text, true);
}

const SLACK_ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>' };
const unescapeSlack = (text: string) => text.replace(/&(amp|lt|gt);/g, (_, name: string) => SLACK_ENTITIES[name]);
// Slack's emphasis: the marker hugs the text and is not inside a word (https://api.slack.com/reference/surfaces/formatting).
const SLACK_BOLD = /(^|[^\w*])\*([^*\s](?:[^*\n]*[^*\s])?)\*(?![\w*])/g;
const SLACK_STRIKE = /(^|[^\w~])~([^~\s](?:[^~\n]*[^~\s])?)~(?![\w~])/g;

/**
 * Slack mrkdwn as our markdown: `<url|label>` as `label (url)`, `<url>` as the URL, `<!channel>`,
 * `<!here>` and `<!everyone>` as @everyone, `*bold*` as `**bold**`, `~strike~` as `~~strike~~`,
 * and `&amp; &lt; &gt;` unescaped. Code and `<…>` sequences are set aside before the emphasis
 * rules run, so those never reach inside a URL or a code span; `formatted: false` (the payload's
 * `mrkdwn: false`) keeps the emphasis markers as typed.
 */
export function slackMarkdown(raw: string, formatted = true): string {
  const held: string[] = [];
  // clean() removed every NUL, so a NUL-delimited index cannot be confused with the sender's text.
  const hold = (text: string) => `\u0000${held.push(text) - 1}\u0000`;
  let text = clean(raw).replace(/```[\s\S]*?```|`[^`\n]+`|<([^<>\n]*)>/g, (whole: string, inner: string | undefined) =>
    hold(inner === undefined ? unescapeSlack(whole) : slackAngle(inner)),
  );
  text = unescapeSlack(text);
  if (formatted) text = text.replace(SLACK_BOLD, '$1**$2**').replace(SLACK_STRIKE, '$1~~$2~~');
  return text.replace(/\u0000(\d+)\u0000/g, (_, index: string) => held[Number(index)]);
}

/** The inside of a `<…>`: a link, a user or channel reference, or a special command. */
function slackAngle(inner: string): string {
  const bar = inner.indexOf('|');
  const target = unescapeSlack(bar < 0 ? inner : inner.slice(0, bar)).trim();
  const label = unescapeSlack(bar < 0 ? '' : inner.slice(bar + 1)).trim();
  if (target.startsWith('!')) {
    const command = target.slice(1).split('^')[0];
    // Slack's <!channel> and <!here> notify the room: @everyone is ours.
    if (command === 'channel' || command === 'here' || command === 'everyone') return '@everyone';
    // <!date^…|fallback>, <!subteam^…|@team>: the fallback text Slack shows where it cannot do better.
    return label;
  }
  if (target.startsWith('@')) return `@${label.replace(/^@/, '') || target.slice(1)}`;
  if (target.startsWith('#')) return `#${label.replace(/^#/, '') || target.slice(1)}`;
  return label !== '' && label !== target ? `${label} (${target})` : target;
}

// --- GitHub ------------------------------------------------------------------------------------

/**
 * A GitHub webhook delivery (https://docs.github.com/en/webhooks/webhook-events-and-payloads),
 * named by its X-GitHub-Event header, as one embed; null for an event or action we accept but
 * do not post. A known event missing a field its message needs is a 400 naming the field.
 */
export function fromGitHub(event: string, body: unknown): IncomingMessage | null {
  const payload = payloadObject(body, 'the GitHub payload');
  const translate = GITHUB_EVENTS.get(event);
  if (!translate) return null;
  const embeds = fitEmbeds([translate(payload)]);
  return embeds.length > 0 ? { content: '', embeds } : null;
}

/** The events posted; a Map, so that an event named `constructor` finds nothing. */
const GITHUB_EVENTS = new Map<string, (payload: Obj) => Embed | null>([
  ['ping', githubPing],
  ['push', githubPush],
  ['pull_request', githubPullRequest],
  ['issues', githubIssues],
  ['issue_comment', githubIssueComment],
  ['release', githubRelease],
  ['workflow_run', githubWorkflowRun],
]);

interface Shown {
  says: string;
  color: number;
  /** Whether the item's body is worth a preview (it is news only when the item is). */
  body: boolean;
}

const PULL_REQUEST_ACTIONS = new Map<string, Shown>([
  ['opened', { says: 'opened', color: COLORS.green, body: true }],
  ['ready_for_review', { says: 'ready for review', color: COLORS.green, body: true }],
  ['reopened', { says: 'reopened', color: COLORS.green, body: false }],
  ['closed', { says: 'closed', color: COLORS.red, body: false }],
]);
const MERGED: Shown = { says: 'merged', color: COLORS.purple, body: false };

const ISSUE_ACTIONS = new Map<string, Shown>([
  ['opened', { says: 'opened', color: COLORS.green, body: true }],
  ['reopened', { says: 'reopened', color: COLORS.green, body: false }],
  ['closed', { says: 'closed', color: COLORS.red, body: false }],
]);

/** A run's conclusion as a colour: red for every way of failing, grey for the rest (cancelled, skipped, neutral…). */
const WORKFLOW_COLORS = new Map<string, number>([
  ['success', COLORS.green],
  ['failure', COLORS.red],
  ['timed_out', COLORS.red],
  ['startup_failure', COLORS.red],
]);

/** Sent once when a hook is made: the hook works. */
function githubPing(p: Obj): Embed | null {
  const zen = need(p, 'zen');
  const scope = stringAt(p, 'repository', 'full_name') ?? stringAt(p, 'organization', 'login');
  return githubEmbed(p, {
    title: scope ? `[${scope}] Webhook connected` : 'Webhook connected',
    description: zen,
    url: at(p, 'repository', 'html_url'),
  });
}

/** Commits pushed; or, with none, a branch or tag created, deleted or moved. */
function githubPush(p: Obj): Embed | null {
  const repo = need(p, 'repository', 'full_name');
  const ref = need(p, 'ref');
  const url = needUrl(p, 'compare');
  if (!Array.isArray(at(p, 'commits'))) throw badRequest('commits is missing');
  const commits = asList(at(p, 'commits'));
  const { kind, name } = refName(ref);
  const timestamp = at(p, 'head_commit', 'timestamp') ?? at(p, 'repository', 'pushed_at');
  if (commits.length === 0) {
    const what = at(p, 'deleted') === true ? 'deleted' : at(p, 'created') === true ? 'created' : at(p, 'forced') === true ? 'force-pushed' : 'updated';
    return githubEmbed(p, { title: `[${repo}] ${kind} ${name} ${what}`, url, timestamp });
  }
  const lines = commits.slice(0, GITHUB_COMMITS_LISTED).map(commitLine);
  if (commits.length > GITHUB_COMMITS_LISTED) lines.push(`… and ${commits.length - GITHUB_COMMITS_LISTED} more`);
  const count = commits.length === 1 ? '1 new commit' : `${commits.length} new commits`;
  return githubEmbed(p, { title: `[${repo}:${name}] ${count}`, url, description: lines.join('\n'), timestamp });
}

function githubPullRequest(p: Obj): Embed | null {
  const action = need(p, 'action');
  const shown = action === 'closed' && at(p, 'pull_request', 'merged') === true ? MERGED : PULL_REQUEST_ACTIONS.get(action);
  return shown ? itemEmbed(p, 'pull_request', 'Pull request', shown) : null;
}

function githubIssues(p: Obj): Embed | null {
  const shown = ISSUE_ACTIONS.get(need(p, 'action'));
  return shown ? itemEmbed(p, 'issue', 'Issue', shown) : null;
}

/** A pull request or an issue: `[repo] Pull request opened: #2 Title`. */
function itemEmbed(p: Obj, key: 'pull_request' | 'issue', noun: string, shown: Shown): Embed | null {
  const repo = need(p, 'repository', 'full_name');
  const number = needNumber(p, key, 'number');
  const title = need(p, key, 'title');
  return githubEmbed(p, {
    title: `[${repo}] ${noun} ${shown.says}: #${number} ${title}`,
    url: needUrl(p, key, 'html_url'),
    description: shown.body ? bodyPreview(at(p, key, 'body')) : undefined,
    color: shown.color,
    timestamp: at(p, key, 'updated_at'),
  });
}

/** Comments on issues and pull requests alike (GitHub sends both as issue_comment); new ones only. */
function githubIssueComment(p: Obj): Embed | null {
  if (need(p, 'action') !== 'created') return null;
  const repo = need(p, 'repository', 'full_name');
  const number = needNumber(p, 'issue', 'number');
  const title = need(p, 'issue', 'title');
  const noun = isObject(at(p, 'issue', 'pull_request')) ? 'pull request' : 'issue';
  return githubEmbed(p, {
    title: `[${repo}] New comment on ${noun} #${number}: ${title}`,
    url: needUrl(p, 'comment', 'html_url'),
    description: bodyPreview(at(p, 'comment', 'body')),
    timestamp: at(p, 'comment', 'created_at'),
  });
}

/** Published only: GitHub also sends `created` (for drafts too, which nobody can see yet) and `released` for the same release. */
function githubRelease(p: Obj): Embed | null {
  if (need(p, 'action') !== 'published') return null;
  const repo = need(p, 'repository', 'full_name');
  const tag = need(p, 'release', 'tag_name');
  const name = stringAt(p, 'release', 'name')?.trim() || tag;
  return githubEmbed(p, {
    title: `[${repo}] New release published: ${name}`,
    url: needUrl(p, 'release', 'html_url'),
    description: bodyPreview(at(p, 'release', 'body')),
    timestamp: at(p, 'release', 'published_at'),
  });
}

/** Finished runs only: `requested` and `in_progress` would double every run. */
function githubWorkflowRun(p: Obj): Embed | null {
  if (need(p, 'action') !== 'completed') return null;
  const repo = need(p, 'repository', 'full_name');
  // Runs of some triggers arrive with an empty name: the workflow's own name is the same thing.
  const name = stringAt(p, 'workflow_run', 'name')?.trim() || stringAt(p, 'workflow', 'name')?.trim() || need(p, 'workflow_run', 'name');
  const conclusion = need(p, 'workflow_run', 'conclusion');
  const branch = stringAt(p, 'workflow_run', 'head_branch');
  return githubEmbed(p, {
    title: `[${repo}] Workflow ${name} ${conclusion}${branch ? ` on ${branch}` : ''}`,
    url: needUrl(p, 'workflow_run', 'html_url'),
    description: stringAt(p, 'workflow_run', 'display_title'),
    color: WORKFLOW_COLORS.get(conclusion) ?? COLORS.grey,
    timestamp: at(p, 'workflow_run', 'updated_at'),
  });
}

/** Every GitHub embed is signed by whoever caused the event. */
function githubEmbed(p: Obj, draft: Omit<Draft, 'author'>): Embed | null {
  return buildEmbed({ ...draft, author: { name: need(p, 'sender', 'login'), url: at(p, 'sender', 'html_url') } });
}

function refName(ref: string): { kind: 'branch' | 'tag' | 'ref'; name: string } {
  if (ref.startsWith('refs/heads/')) return { kind: 'branch', name: ref.slice('refs/heads/'.length) };
  if (ref.startsWith('refs/tags/')) return { kind: 'tag', name: ref.slice('refs/tags/'.length) };
  return { kind: 'ref', name: ref };
}

/** "[`abc1234`](url) First line of the message – Author". */
function commitLine(commit: unknown): string {
  if (!isObject(commit)) return '…';
  const id = own(commit, 'id');
  const sha = typeof id === 'string' && /^[0-9a-f]{7,64}$/i.test(id) ? id.slice(0, 7) : undefined;
  const url = linkOf(own(commit, 'url'));
  const message = stringAt(commit, 'message');
  const subject = oneLine(message?.split(/\r?\n/)[0], COMMIT_SUBJECT_MAX);
  const author = oneLine(stringAt(commit, 'author', 'name'), EMBED_LIMITS.authorName);
  const ref = sha === undefined ? undefined : url === undefined ? `\`${sha}\`` : `[\`${sha}\`](${markdownUrl(url)})`;
  const line = [ref, subject].filter((part) => part !== undefined).join(' ') || '…';
  return author === undefined ? line : `${line} – ${author}`;
}

/**
 * An issue, pull request, comment or release body, cut to a preview. The HTML comments of
 * issue and pull request templates are guidance for the writer, never shown on GitHub either.
 */
function bodyPreview(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  return fitText(value.replace(/<!--[\s\S]*?(?:-->|$)/g, ''), GITHUB_BODY_PREVIEW_CHARS);
}

// --- Reading payloads --------------------------------------------------------------------------

function payloadObject(body: unknown, what: string): Obj {
  if (!isObject(body)) throw badRequest(`${what} must be a JSON object`);
  return body;
}

/** Present and not null: JSON clients write null for "not given". */
const given = (obj: Obj, key: string) => own(obj, key) !== undefined && own(obj, key) !== null;

/** The value at a path of own properties, or undefined where the path breaks. */
function at(obj: Obj, ...path: string[]): unknown {
  let value: unknown = obj;
  for (const key of path) {
    if (!isObject(value)) return undefined;
    value = own(value, key);
  }
  return value;
}

function stringAt(obj: Obj, ...path: string[]): string | undefined {
  const value = at(obj, ...path);
  return typeof value === 'string' ? value : undefined;
}

// Array.from: a hole in a sparse array (not JSON, but a caller's object) reads as undefined, never skipped.
const asList = (value: unknown): unknown[] => (Array.isArray(value) ? Array.from(value) : []);
const listAt = (obj: Obj, key: string): unknown[] => asList(own(obj, key));

/** A field the message cannot be made without: a non-empty string, or a 400 naming it. */
function need(obj: Obj, ...path: string[]): string {
  const value = at(obj, ...path);
  const name = path.join('.');
  if (value === undefined || value === null || value === '') throw badRequest(`${name} is missing`);
  if (typeof value !== 'string') throw badRequest(`${name} must be a string`);
  return value;
}

function needNumber(obj: Obj, ...path: string[]): number {
  const value = at(obj, ...path);
  const name = path.join('.');
  if (value === undefined || value === null) throw badRequest(`${name} is missing`);
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) throw badRequest(`${name} must be a whole number`);
  return value;
}

function needUrl(obj: Obj, ...path: string[]): string {
  const url = linkOf(need(obj, ...path));
  if (url === undefined) throw badRequest(`${path.join('.')} must be an http or https URL`);
  return url;
}

// --- Building embeds that fit ------------------------------------------------------------------

interface DraftField {
  name: string;
  value: string;
  inline: boolean;
}

/** An embed as read from a foreign payload: text of any length, links and times not yet checked. */
interface Draft {
  title?: string;
  description?: string;
  url?: unknown;
  /** ISO 8601, or Unix seconds (Slack's `ts`, GitHub's `pushed_at`). */
  timestamp?: unknown;
  color?: number;
  footer?: string;
  author?: { name?: string; url?: unknown };
  fields?: (DraftField | null)[];
  image?: unknown;
  thumbnail?: unknown;
}

/** The draft as an embed checkEmbeds accepts: text cleaned and cut to each part's limit, bad links and times left out. Null when no text is left. */
function buildEmbed(draft: Draft): Embed | null {
  const embed: Embed = {};
  const title = oneLine(draft.title, EMBED_LIMITS.title);
  if (title !== undefined) embed.title = title;
  const description = fitText(draft.description, EMBED_LIMITS.description);
  if (description !== undefined) embed.description = description;
  const url = linkOf(draft.url);
  if (url !== undefined) embed.url = url;
  const timestamp = timestampOf(draft.timestamp);
  if (timestamp !== undefined) embed.timestamp = timestamp;
  if (draft.color !== undefined && Number.isInteger(draft.color) && draft.color >= 0 && draft.color <= MAX_COLOR) embed.color = draft.color;
  const footer = fitText(draft.footer, EMBED_LIMITS.footerText);
  if (footer !== undefined) embed.footer = { text: footer };
  const authorName = oneLine(draft.author?.name, EMBED_LIMITS.authorName);
  const authorUrl = linkOf(draft.author?.url);
  if (authorName !== undefined) embed.author = authorUrl === undefined ? { name: authorName } : { name: authorName, url: authorUrl };
  const fields = (draft.fields ?? []).flatMap((field) => fitField(field)).slice(0, EMBED_LIMITS.fields);
  if (fields.length > 0) embed.fields = fields;
  const image = linkOf(draft.image);
  if (image !== undefined) embed.image = { url: image };
  const thumbnail = linkOf(draft.thumbnail);
  if (thumbnail !== undefined) embed.thumbnail = { url: thumbnail };
  return embedChars(embed) > 0 ? embed : null;
}

function fitField(field: DraftField | null | undefined): DraftField[] {
  if (!field) return [];
  const name = oneLine(field.name, EMBED_LIMITS.fieldName) ?? '';
  const value = fitText(field.value, EMBED_LIMITS.fieldValue) ?? '';
  return name === '' && value === '' ? [] : [{ name, value, inline: field.inline }];
}

/**
 * At most MAX_EMBEDS embeds with MAX_EMBED_CHARS of text between them, in order: the embed that
 * would overflow loses fields from the end, then the end of its description, and when even its
 * title and author do not fit, it and those after it are left out.
 */
function fitEmbeds(candidates: (Embed | null | undefined)[]): Embed[] {
  const fitted: Embed[] = [];
  let room = MAX_EMBED_CHARS;
  for (const candidate of candidates) {
    if (!candidate) continue;
    if (fitted.length === MAX_EMBEDS) break;
    const embed = shrinkTo(candidate, room);
    if (!embed) break;
    fitted.push(embed);
    room -= embedChars(embed);
  }
  return fitted;
}

function shrinkTo(embed: Embed, room: number): Embed | null {
  if (embedChars(embed) <= room) return embed;
  const smaller: Embed = { ...embed };
  const fields = [...(embed.fields ?? [])];
  while (fields.length > 0 && embedChars({ ...smaller, fields }) > room) fields.pop();
  if (fields.length > 0) smaller.fields = fields;
  else delete smaller.fields;
  const over = embedChars(smaller) - room;
  if (over > 0 && smaller.description !== undefined) {
    const keep = charCount(smaller.description) - over;
    const description = keep >= 1 ? fitText(smaller.description, keep) : undefined;
    if (description !== undefined) smaller.description = description;
    else delete smaller.description;
  }
  const size = embedChars(smaller);
  return size > 0 && size <= room ? smaller : null;
}

/**
 * Foreign text made storable and cut to `max` characters: line breaks as \n, other control
 * characters dropped, broken surrogate halves as U+FFFD, the ends trimmed; undefined when empty.
 */
function fitText(value: string | undefined, max: number): string | undefined {
  if (value === undefined) return undefined;
  const text = clean(value).trim();
  if (text === '') return undefined;
  if (charCount(text) <= max) return text;
  return `${[...text].slice(0, max - 1).join('').trimEnd()}…`;
}

/** As fitText, on one line: names and titles. */
function oneLine(value: string | undefined, max: number): string | undefined {
  return fitText(value?.replace(/\s+/g, ' '), max);
}

function clean(text: string): string {
  return text.replace(LONE_SURROGATES, '\ufffd').replace(/\r\n?/g, '\n').replace(CONTROLS, '');
}

const linkOf = (value: unknown): string | undefined => (typeof value === 'string' ? (httpUrl(value) ?? undefined) : undefined);

/** A URL inside markdown's `(…)`: a parenthesis in it would end the link early. */
const markdownUrl = (url: string) => url.replace(/\(/g, '%28').replace(/\)/g, '%29');

/** Seconds since 1970 up to the end of year 9999: the range an ISO 8601 timestamp of four-digit years can write. */
const MAX_UNIX_SECONDS = 253402300799;

function timestampOf(value: unknown): string | undefined {
  const seconds = typeof value === 'number' ? value : typeof value === 'string' && /^\d{1,12}(\.\d+)?$/.test(value) ? Number(value) : undefined;
  if (seconds !== undefined) return Number.isFinite(seconds) && seconds >= 0 && seconds <= MAX_UNIX_SECONDS ? new Date(Math.floor(seconds * 1000)).toISOString() : undefined;
  return typeof value === 'string' ? (isoTimestamp(value) ?? undefined) : undefined;
}
