import type { AccountChanges } from './accounts/account-changes';
import type { AccountDeletion } from './accounts/account-deletion';
import type { AccountRows } from './accounts/account-rows';
import type { Bots } from './accounts/bots';
import type { Webhooks } from './integrations/webhooks';
import type { Exports } from './accounts/account-export';
import type { AuditLog } from './community/audit';
import type { ChannelStore } from './community/channels';
import type { ThreadStore } from './community/threads';
import type { ThreadNews } from './community/thread-news';
import type { AccessChanges } from './community/access-changes';
import type { OverwriteStore } from './community/overwrites';
import type { Avatars } from './accounts/avatars';
import type { Emojis } from './community/emojis';
import type { Stickers } from './community/stickers';
import type { Polls } from './messages/polls';
import type { WorkQueue } from '../core/work-queue';
import type { Clock } from '../core/clock';
import type { MediaUrls } from '../core/media-url';
import type { FetchRules } from '../core/net/safe-fetch';
import type { LinkPreviews } from './messages/previews';
import type { MediaProxy } from './accounts/media-proxy';
import type { Config } from '../core/config';
import type { DB } from '../core/db';
import type { Directory } from './community/directory';
import type { Limits } from '../rules/limits';
import type { Mailer } from './accounts/mail';
import type { Members } from './community/members';
import type { JoinGate } from './community/join-rate';
import type { Onboarding } from './community/onboarding';
import type { MessageStore } from './messages/message-store';
import type { Posting } from './messages/posting';
import type { Automod } from './messages/automod';
import type { Metrics } from '../core/metrics';
import type { Permissions } from '../rules/permissions';
import type { Presence } from './live/presence';
import type { Search } from './messages/search';
import type { Hub } from './delivery/hub';
import type { SessionStore } from './accounts/sessions';
import type { StaticFiles } from '../core/http/static';
import type { TwoFactor } from './accounts/two-factor';
import type { Log } from '../core/types';
import type { ReadStates } from './messages/unread';
import type { UploadStore } from './messages/upload-store';
import type { UserStore } from './accounts/users';
import type { DeviceStore } from './accounts/devices';
import type { IdentityCheck } from './accounts/identity';
import type { Identities } from './accounts/identities';
import type { OidcClient } from './accounts/oidc';
import type { Passkeys } from './accounts/passkeys';
import type { SignInMethods } from './accounts/sign-in-methods';
import type { Sso } from './accounts/sso';
import type { Claims } from './import/claims';
import type { Imports } from './import/imports';
import type { Cluster } from './cluster/remote';
import type { NotificationSettings } from './accounts/notifications';
import type { PushSubscriptions } from './push/subscriptions';
import type { VapidKeys } from './push/sender';
import type { Voice } from './voice/voice';

/**
 * Every part of a running service, as createApp() (src/app.ts) builds them, in this order.
 * Each part takes only the parts it uses; a route table names the ones it uses with Pick<>.
 */
export interface Services {
  config: Config;
  clock: Clock;
  log: Log;
  db: DB;
  users: UserStore;
  /** The one writer of users rows (accounts of every kind, the profile columns, deletion). */
  accountRows: AccountRows;
  sessions: SessionStore;
  limits: Limits;
  staticFiles: StaticFiles;
  metrics: Metrics;
  perms: Permissions;
  directory: Directory;
  readStates: ReadStates;
  mailer: Mailer;
  hub: Hub;
  presence: Presence;
  devices: DeviceStore;
  accountChanges: AccountChanges;
  uploads: UploadStore;
  messages: MessageStore;
  /** Who may post what, where: the one way to post (members, bots, webhooks) and to edit. */
  posting: Posting;
  /** A server's AutoMod rules and their judgement of each message (posting asks it). */
  automod: Automod;
  polls: Polls;
  members: Members;
  /** Membership screening: a server's rules and questions, pending members, the gate on writing. */
  onboarding: Onboarding;
  channels: ChannelStore;
  /** The one writer of threads and thread_members rows, and their reads. */
  threads: ThreadStore;
  /** What threads tell the user streams, and the archiver of inactive ones. */
  threadNews: ThreadNews;
  overwrites: OverwriteStore;
  accessChanges: AccessChanges;
  audit: AuditLog;
  /** Raid protection at the door: paused invites and joins, the join rate. */
  joinGate: JoinGate;
  search: Search;
  twoFactor: TwoFactor;
  identity: IdentityCheck;
  /** Identities at OpenID Providers linked to accounts. */
  identities: Identities;
  /** The relying party of OpenID Connect: flows, the code exchange, the checks (openid-client). */
  oidc: OidcClient;
  /** Which account a provider's identity signs in to; sign-up, linking, admin_group, amr. */
  sso: Sso;
  /** Passkeys (WebAuthn, @simplewebauthn/server): registration, the account's list, username-less sign-in. */
  passkeys: Passkeys;
  /** The ways into an account (password, passkeys, identities): the last one stays. */
  signInMethods: SignInMethods;
  /** The one bounded pool of image decoders (src/core/images.ts): avatars, emoji, stickers. */
  decoders: WorkQueue;
  avatars: Avatars;
  emojis: Emojis;
  stickers: Stickers;
  accountExports: Exports;
  deletion: AccountDeletion;
  imports: Imports;
  claims: Claims;
  notifications: NotificationSettings;
  bots: Bots;
  webhooks: Webhooks;
  pushSubscriptions: PushSubscriptions;
  /** The server's VAPID key pair (DATA_DIR/vapid.json). */
  vapidKeys: VapidKeys;
  /** ROLE=core: the sockets open on gateways (docs/scaling.md); null in one process. */
  cluster: Cluster | null;
  /** Voice channels: who is in which, the voice sockets' signaling, Janus (off without JANUS_URL). */
  voice: Voice;
  /** The proxy URLs of remote images (src/core/media-url.ts). */
  media: MediaUrls;
  /** The rules of every fetch of a URL someone chose (src/core/net/safe-fetch.ts). */
  fetchRules: FetchRules;
  linkPreviews: LinkPreviews;
  mediaProxy: MediaProxy;
}
