/**
 * Incoming webhook payloads in Discord's, Slack's and GitHub's formats, translated into one
 * message shape (common.ts): one module per format, its fixtures and tests beside each other
 * under test/webhooks/<format>/ (as Zulip keeps zerver/webhooks/<name>/). Pure functions: the only
 * exception they throw is the 400 HttpError, whatever JSON they are given. Discord's payload is
 * ours to hold to its documented limits, so it is checked strictly; Slack's and GitHub's are
 * written by programs we cannot change, so their text is cut to fit (with "…") and what we do not
 * understand is ignored.
 */
export type { IncomingMessage } from './common';
export { discordEdit, fromDiscord } from './discord';
export { fromGitHub } from './github';
export { fromSlack } from './slack';
