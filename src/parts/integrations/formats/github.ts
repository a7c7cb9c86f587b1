import { EMBED_LIMITS, type Embed, isObject, own } from '../../../core/embed';
import {
  COLORS,
  type Draft,
  type IncomingMessage,
  type Obj,
  asList,
  at,
  buildEmbed,
  fitEmbeds,
  fitText,
  linkOf,
  oneLine,
  payloadObject,
  stringAt,
} from './common';

/** GitHub bodies (issues, pull requests, comments, releases) are previews: the link has the rest. */
export const GITHUB_BODY_PREVIEW_CHARS = 500;
export const GITHUB_COMMITS_LISTED = 5;
const COMMIT_SUBJECT_MAX = 100;

/**
 * A GitHub webhook delivery (https://docs.github.com/en/webhooks/webhook-events-and-payloads),
 * named by its X-GitHub-Event header, as one embed; null for an event or action we accept but
 * do not post. Any field may be null or missing: a delivery that lacks what its message needs
 * posts nothing (null), never a 400, which GitHub would show as a failed delivery.
 */
export function fromGitHub(event: string, body: unknown): IncomingMessage | null {
  const payload = payloadObject(body, 'the GitHub payload');
  const translate = GITHUB_EVENTS.get(event);
  if (!translate) return null;
  let embed: Embed | null;
  try {
    embed = translate(payload);
  } catch (err) {
    if (err instanceof Lacking) return null;
    throw err;
  }
  const embeds = fitEmbeds([embed]);
  return embeds.length > 0 ? { content: '', embeds } : null;
}

/** A delivery without a field its message needs (named, for the tests): it posts nothing. */
export class Lacking extends Error {}

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
  if (!Array.isArray(at(p, 'commits'))) throw new Lacking('commits is missing');
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
  // GitHub's own example of a completed run has conclusion null: "completed" is all it says.
  const conclusion = stringAt(p, 'workflow_run', 'conclusion')?.trim() || 'completed';
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
  return buildEmbed({ ...draft, author: { name: stringAt(p, 'sender', 'login'), url: at(p, 'sender', 'html_url') } });
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

/** A field the message cannot be made without: a non-empty string; else the delivery posts nothing (Lacking names it). */
function need(obj: Obj, ...path: string[]): string {
  const value = at(obj, ...path);
  const name = path.join('.');
  if (value === undefined || value === null || value === '') throw new Lacking(`${name} is missing`);
  if (typeof value !== 'string') throw new Lacking(`${name} must be a string`);
  return value;
}

function needNumber(obj: Obj, ...path: string[]): number {
  const value = at(obj, ...path);
  const name = path.join('.');
  if (value === undefined || value === null) throw new Lacking(`${name} is missing`);
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) throw new Lacking(`${name} must be a whole number`);
  return value;
}

function needUrl(obj: Obj, ...path: string[]): string {
  const url = linkOf(need(obj, ...path));
  if (url === undefined) throw new Lacking(`${path.join('.')} must be an http or https URL`);
  return url;
}

/** A URL inside markdown's `(…)`: a parenthesis in it would end the link early. */
const markdownUrl = (url: string) => url.replace(/\(/g, '%28').replace(/\)/g, '%29');
