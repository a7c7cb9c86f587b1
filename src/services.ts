import type { AccountChanges } from './account-changes';
import type { AccountDeletion } from './account-deletion';
import type { Exports } from './account-export';
import type { AuditLog } from './audit';
import type { ChannelStore } from './channels';
import type { Avatars } from './avatars';
import type { Clock } from './clock';
import type { Config } from './config';
import type { DB } from './db';
import type { Directory } from './directory';
import type { Limits } from './limits';
import type { Mailer } from './mail';
import type { Members } from './members';
import type { MessageStore } from './message-store';
import type { Metrics } from './metrics';
import type { Permissions } from './permissions';
import type { Presence } from './presence';
import type { Search } from './search';
import type { Hub } from './realtime';
import type { SessionStore } from './sessions';
import type { StaticFiles } from './static';
import type { TwoFactor } from './two-factor';
import type { Log } from './types';
import type { ReadStates } from './unread';
import type { UploadStore } from './upload-store';
import type { UserStore } from './users';

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
  accountChanges: AccountChanges;
  uploads: UploadStore;
  messages: MessageStore;
  members: Members;
  channels: ChannelStore;
  audit: AuditLog;
  search: Search;
  twoFactor: TwoFactor;
  avatars: Avatars;
  accountExports: Exports;
  deletion: AccountDeletion;
}
