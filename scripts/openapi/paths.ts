/** Every route of the route table (src/api/, and the WebSocket upgrades), as OpenAPI operations. */
import { type OpSpec, arr, bool, input, int, oneOf, ref, str, uuid } from './dsl';

type Ops = [method: string, path: string, spec: OpSpec][];

const json = (status: number, schema: ReturnType<typeof ref>, description?: string) => ({ status, json: schema, description });
const empty = (description: string) => ({ status: 204, kind: 'empty' as const, description });
const redirect = (description: string) => ({ status: 303, kind: 'redirect' as const, description });
const credentials = input({ username: str, password: str });
const paging = {
  before: { ...uuid, description: 'a message id: the page before it, newest first' },
  after: { ...uuid, description: 'a message id: the messages after it, oldest first (catching up)' },
  limit: { type: 'integer', minimum: 1, maximum: 100, description: 'default 50' },
};
const adminPaging = {
  limit: { type: 'integer', minimum: 1, maximum: 100, description: 'with limit or offset: one page, X-Total-Count and Link; without both: every row' },
  offset: { type: 'integer', minimum: 0 },
};
const pageHeaders = { 'X-Total-Count': 'rows matching (paged answers only)', Link: '<...>; rel="next" while more rows exist (paged answers only)' };
const messageBody = input({ content: str, reply_to: { anyOf: [uuid, { type: 'null' }] } }, ['content', 'reply_to']);
const emojiBody = input({ emoji: str });

/** The message routes of one scope (channel, legacy server messages, conversation). */
function messageOps(base: string, tag: string, what: string, full: boolean): Ops {
  const ops: Ops = [
    ['GET', base, { tag, summary: `List ${what} messages (newest first; before/after cursors)`, auth: 'user', query: paging, ok: [json(200, arr(ref('Message')))] }],
    [
      'POST',
      base,
      {
        tag,
        summary: `Send a ${what} message (JSON, or multipart with up to 5 attachments of 25 MiB)`,
        auth: 'user',
        body: { kind: 'message', schema: messageBody },
        ok: [json(201, ref('Message'))],
        errors: [429],
      },
    ],
  ];
  if (!full) return ops;
  const item = `${base}/{message_id}`;
  return [
    ...ops,
    ['PUT', item, { tag, summary: 'Edit a message (author only)', auth: 'user', body: { kind: 'json', schema: input({ content: str }) }, ok: [json(200, ref('Message'))] }],
    ['DELETE', item, { tag, summary: 'Delete a message (author, or a moderator of the container)', auth: 'user', ok: [empty('deleted')] }],
    ['PUT', `${item}/reactions`, { tag, summary: 'Add the caller\'s reaction', auth: 'user', body: { kind: 'json', schema: emojiBody }, ok: [json(200, ref('Message'))], errors: [429] }],
    ['DELETE', `${item}/reactions`, { tag, summary: 'Remove the caller\'s reaction', auth: 'user', body: { kind: 'json', schema: emojiBody }, ok: [json(200, ref('Message'))], errors: [429] }],
  ];
}

/** Marking a channel or conversation read, and saying one is typing there. */
function liveOps(base: string, tag: string, what: string): Ops {
  return [
    ['PUT', `${base}/read`, { tag, summary: `Mark the ${what} read up to a message (forward only)`, auth: 'user', body: { kind: 'json', schema: input({ message_id: uuid }) }, ok: [json(200, ref('ReadState'))] }],
    ['POST', `${base}/typing`, { tag, summary: `Tell the ${what}'s other members you are typing`, auth: 'user', ok: [empty('sent (or a no-op within 3 s of the last)')] }],
  ];
}

export const operations: Ops = [
  ['GET', '/healthz', { tag: 'Accounts', summary: 'Health check: 200 once the database answers', auth: 'none', ok: [json(200, ref('Ok'))] }],
  ['GET', '/api/openapi.json', { tag: 'Accounts', summary: 'This document', auth: 'none', ok: [json(200, { type: 'object' })] }],

  // Accounts (src/api/accounts.ts)
  ['POST', '/api/register', { tag: 'Accounts', summary: 'Register', auth: 'none', body: { kind: 'form', schema: credentials }, ok: [json(201, ref('Registered')), redirect('a browser form: /?registered=1, or /?error=<code>')], errors: [409, 429] }],
  ['POST', '/api/login', { tag: 'Accounts', summary: 'Log in: sets the app_session cookie', auth: 'none', body: { kind: 'form', schema: credentials }, ok: [json(200, ref('LoggedIn')), redirect('a browser form: /?logged_in=1, /account/warnings, or /?error=<code>')], errors: [401, 429] }],
  ['POST', '/api/logout', { tag: 'Accounts', summary: 'Log out: ends this session', auth: 'account', body: { kind: 'form', schema: input({}), optional: true }, ok: [empty('signed out'), redirect('a browser form: /')] }],
  ['GET', '/api/users/me', { tag: 'Accounts', summary: 'Who is signed in', auth: 'user', ok: [json(200, ref('UserRef'))] }],
  ['GET', '/api/users/{user_id}', { tag: 'Accounts', summary: 'Look a user up', auth: 'user', ok: [json(200, ref('UserRef'))] }],
  ['GET', '/api/account', { tag: 'Accounts', summary: 'The account status record (suspended accounts too)', auth: 'account', ok: [json(200, ref('Account'))] }],
  ['PUT', '/api/account/presence', { tag: 'Accounts', summary: 'Choose online, idle, dnd or invisible', auth: 'user', body: { kind: 'json', schema: input({ status: oneOf('online', 'idle', 'dnd', 'invisible') }) }, ok: [json(200, ref('Presence'))] }],

  // Email (src/api/email.ts)
  ['PUT', '/api/account/email', { tag: 'Email', summary: 'Set the email address and mail a verification link', auth: 'user', body: { kind: 'json', schema: input({ email: str }) }, ok: [json(200, ref('EmailStatus'))], errors: [409, 429] }],
  ['GET', '/api/verify-email', { tag: 'Email', summary: 'Verify the address a link was sent to', auth: 'none', query: { token: { ...str, description: 'the token of the emailed link' } }, ok: [json(200, ref('EmailStatus')), redirect('a browser (Accept: text/html): /email-verified when verified, /email-verified?error=used, expired, conflict or missing when the link did not work (the page words the code)')], errors: [409] }],
  ['POST', '/api/password-reset/request', { tag: 'Email', summary: 'Mail a reset link to a verified address (always 202)', auth: 'none', body: { kind: 'json', schema: input({ email: str }) }, ok: [json(202, ref('Ok'))], errors: [429] }],
  ['POST', '/api/password-reset', { tag: 'Email', summary: 'Set a new password with an emailed token', auth: 'none', body: { kind: 'json', schema: input({ token: str, password: str }) }, ok: [empty('the password is set; every session of the account ended')] }],

  // Servers (src/api/servers.ts)
  ['POST', '/api/servers', { tag: 'Servers', summary: 'Create a server (with a "general" channel)', auth: 'user', body: { kind: 'json', schema: input({ name: str }) }, ok: [json(201, ref('Server'))], errors: [429] }],
  ['GET', '/api/servers', { tag: 'Servers', summary: 'The servers the caller belongs to, with unread and mention counts', auth: 'user', ok: [json(200, arr(ref('ServerWithUnread')))] }],
  ['GET', '/api/servers/{server_id}', { tag: 'Servers', summary: 'One server (members)', auth: 'user', ok: [json(200, ref('Server'))] }],
  ['GET', '/api/servers/{server_id}/channels', { tag: 'Servers', summary: 'The channels of a server, with the caller\'s read state', auth: 'user', ok: [json(200, arr(ref('ChannelWithState')))] }],
  ['POST', '/api/servers/{server_id}/channels', { tag: 'Servers', summary: 'Create a channel (owner or full server admin)', auth: 'user', body: { kind: 'json', schema: input({ name: str }) }, ok: [json(201, ref('Channel'))], errors: [409, 429] }],
  ['GET', '/api/servers/{server_id}/members', { tag: 'Servers', summary: 'Members with their roles', auth: 'user', ok: [json(200, arr(ref('Member')))] }],
  ['DELETE', '/api/servers/{server_id}/members/{user_id}', { tag: 'Servers', summary: 'Leave, or remove a member', auth: 'user', ok: [empty('removed')] }],
  ['GET', '/api/servers/{server_id}/roles', { tag: 'Servers', summary: 'The roles of a server', auth: 'user', ok: [json(200, arr(ref('Role')))] }],
  ['POST', '/api/servers/{server_id}/roles', { tag: 'Servers', summary: 'Create a role (owner)', auth: 'user', body: { kind: 'json', schema: input({ name: str, full_server_admin: bool }, ['full_server_admin']) }, ok: [json(201, ref('Role'))], errors: [409, 429] }],
  ['PUT', '/api/servers/{server_id}/members/{user_id}/role', { tag: 'Servers', summary: 'Assign a role by name, or null to clear (owner)', auth: 'user', body: { kind: 'json', schema: input({ role: { anyOf: [str, { type: 'null' }] } }) }, ok: [json(200, ref('Member'))] }],
  ['POST', '/api/servers/{server_id}/invites', { tag: 'Servers', summary: 'Create an invite (any member)', auth: 'user', ok: [json(201, ref('Invite'))], errors: [429] }],
  ['GET', '/api/invites/{token}', { tag: 'Servers', summary: 'What an invite leads to', auth: 'none', ok: [json(200, ref('InviteInfo'))] }],
  ['POST', '/api/invites/{token}/accept', { tag: 'Servers', summary: 'Join a server by invite', auth: 'user', ok: [json(200, ref('Joined'))] }],
  ['GET', '/invites/{token}', { tag: 'Servers', summary: 'The invite page (browser)', auth: 'none', ok: [{ status: 200, kind: 'html', description: 'the page' }] }],

  // Read state and typing (src/api/messages.ts)
  ...liveOps('/api/servers/{server_id}/channels/{channel_id}', 'Messages', 'channel'),
  ...liveOps('/api/conversations/{conversation_id}', 'Conversations', 'conversation'),

  // Messages (src/api/messages.ts)
  ...messageOps('/api/servers/{server_id}/channels/{channel_id}/messages', 'Messages', 'channel', true),
  ...messageOps('/api/servers/{server_id}/messages', 'Messages', 'legacy server (the first channel)', false),
  ...messageOps('/api/conversations/{conversation_id}/messages', 'Conversations', 'conversation', true),

  // Friends (src/api/friends.ts)
  ['POST', '/api/friends/requests', { tag: 'Friends', summary: 'Send a friend request by username', auth: 'user', body: { kind: 'json', schema: input({ username: str }) }, ok: [json(201, ref('FriendRequest'))], errors: [404, 409, 429] }],
  ['GET', '/api/friends/requests', { tag: 'Friends', summary: 'Pending requests: incoming (default) or outgoing', auth: 'user', query: { direction: oneOf('incoming', 'outgoing') }, ok: [json(200, arr(ref('FriendRequest')))] }],
  ['POST', '/api/friends/requests/{request_id}/accept', { tag: 'Friends', summary: 'Accept a request (its addressee)', auth: 'user', ok: [json(200, ref('Friend'))] }],
  ['POST', '/api/friends/requests/{request_id}/reject', { tag: 'Friends', summary: 'Reject a request (its addressee)', auth: 'user', ok: [empty('rejected and deleted')] }],
  ['GET', '/api/friends', { tag: 'Friends', summary: 'Friends, by username, with presence', auth: 'user', ok: [json(200, arr(ref('FriendWithPresence')))] }],
  ['DELETE', '/api/friends/{user_id}', { tag: 'Friends', summary: 'Remove a friend', auth: 'user', ok: [empty('no longer friends')] }],

  // Conversations (src/api/conversations.ts)
  ['GET', '/api/conversations', { tag: 'Conversations', summary: 'DMs and groups, most recent activity first, with read state', auth: 'user', ok: [json(200, arr(ref('ConversationWithState')))] }],
  ['POST', '/api/conversations/dm', { tag: 'Conversations', summary: 'Open (or reuse) the DM with a friend', auth: 'user', body: { kind: 'json', schema: input({ usernames: arr(str) }) }, ok: [json(201, ref('Conversation'), 'created'), json(200, ref('Conversation'), 'the existing DM')], errors: [404] }],
  ['POST', '/api/conversations/group', { tag: 'Conversations', summary: 'Create a group chat with 1 to 25 friends', auth: 'user', body: { kind: 'json', schema: input({ name: str, usernames: arr(str) }) }, ok: [json(201, ref('Conversation'))], errors: [404] }],
  ['GET', '/api/conversations/{conversation_id}', { tag: 'Conversations', summary: 'One conversation (members)', auth: 'user', ok: [json(200, ref('Conversation'))] }],

  // Attachments (src/api/uploads.ts)
  [
    'GET',
    '/uploads/{attachment_id}',
    {
      tag: 'Attachments',
      summary: 'Download an attachment (members of its server or conversation); single byte ranges',
      auth: 'user',
      ok: [
        { status: 200, kind: 'file', description: 'the file: inline for images, audio and video, else a download' },
        { status: 206, kind: 'file', description: 'one byte range' },
        { status: 304, kind: 'not-modified', description: 'If-None-Match matched the ETag' },
      ],
      errors: [416],
    },
  ],

  // WebSocket upgrades (src/realtime.ts)
  ['GET', '/api/ws', { tag: 'WebSocket', summary: 'The user stream: ready, then every event the user can see (WebSocket upgrade)', auth: 'user', ok: [{ status: 101, kind: 'websocket', description: 'switching to the WebSocket protocol; the first frame is `ready`, each frame is `{"event": ...}` (docs/api.md "The user stream")' }], errors: [429] }],
  ['GET', '/api/channels/{channel_id}/ws', { tag: 'WebSocket', summary: 'Live events of a channel (WebSocket upgrade)', auth: 'user', ok: [{ status: 101, kind: 'websocket', description: 'switching to the WebSocket protocol; events are JSON text frames (docs/api.md "WebSocket")' }], errors: [429] }],
  ['GET', '/api/conversations/{conversation_id}/ws', { tag: 'WebSocket', summary: 'Live events of a conversation (WebSocket upgrade)', auth: 'user', ok: [{ status: 101, kind: 'websocket', description: 'switching to the WebSocket protocol; events are JSON text frames (docs/api.md "WebSocket")' }], errors: [429] }],

  // Moderation (src/api/moderation.ts)
  ['POST', '/api/reports', { tag: 'Moderation', summary: 'Report a user, a server or a message', auth: 'user', body: { kind: 'json', schema: input({ type: oneOf('user', 'server', 'server_message', 'conversation_message'), target: uuid, reason: str }) }, ok: [json(201, ref('Report'))], errors: [404, 429] }],
  ['GET', '/api/admin/reports', { tag: 'Moderation', summary: 'Every report, pending first, newest first', auth: 'admin', query: { status: oneOf('pending', 'resolved'), ...adminPaging }, ok: [{ status: 200, json: arr(ref('Report')), headers: pageHeaders }] }],
  ['PUT', '/api/admin/reports/{report_id}', { tag: 'Moderation', summary: 'Set a report\'s status', auth: 'admin', body: { kind: 'json', schema: input({ status: oneOf('pending', 'resolved') }) }, ok: [json(200, ref('Report'))] }],
  ['GET', '/api/admin/me', { tag: 'Moderation', summary: 'Check administrator access', auth: 'admin', ok: [json(200, ref('AdminMe'))] }],
  ['GET', '/api/admin/users', { tag: 'Moderation', summary: 'Users with standing, administrator flag and warnings', auth: 'admin', query: { prefix: { ...str, description: 'username prefix, any case' }, ...adminPaging }, ok: [{ status: 200, json: arr(ref('AdminUser')), headers: pageHeaders }] }],
  ['GET', '/api/admin/warnings', { tag: 'Moderation', summary: 'Every warning, newest first', auth: 'admin', query: adminPaging, ok: [{ status: 200, json: arr(ref('AdminWarning')), headers: pageHeaders }] }],
  ['POST', '/api/admin/users/{user_id}/warnings', { tag: 'Moderation', summary: 'Warn a user (standing follows the warning count)', auth: 'admin', body: { kind: 'json', schema: input({ reason: str }) }, ok: [json(201, ref('WarningIssued'))] }],
  ['DELETE', '/api/admin/warnings/{warning_id}', { tag: 'Moderation', summary: 'Remove a warning (standing recalculated)', auth: 'admin', ok: [json(200, ref('StandingOf'))] }],
  ['PUT', '/api/admin/users/{user_id}/standing', { tag: 'Moderation', summary: 'Set a user\'s standing (0 to 4)', auth: 'admin', body: { kind: 'json', schema: input({ standing: { type: 'integer', minimum: 0, maximum: 4 } }) }, ok: [json(200, ref('AdminUserRecord'))] }],
];

// Unused helpers stay out of the vocabulary's way.
void int;
