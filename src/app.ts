import type http from 'node:http';
import path from 'node:path';
import { buildRoutes } from './api';
import { armFailpoints, every, logFailure } from './core/callbacks';
import { type Clock, MINUTE, systemClock } from './core/clock';
import { type Config, PRODUCT_NAME, prepareDataDir } from './core/config';
import { openDatabase } from './core/db';
import { DEFAULT_TIMEOUTS, type Timeouts, createPipeline } from './core/http/pipeline';
import { indexStaticFiles } from './core/http/static';
import { createMetrics } from './core/metrics';
import { createSecretBox, loadSecretKey } from './core/secret-box';
import { createMediaUrls } from './core/media-url';
import { type FetchRules, fetchUserAgent, ownListener } from './core/net/safe-fetch';
import { createLinkPreviews } from './parts/messages/previews';
import { createMediaProxy } from './parts/accounts/media-proxy';
import { stdoutLog } from './core/log';
import type { Log, User } from './core/types';
import { createAccountChanges } from './parts/accounts/account-changes';
import { createAccountDeletion } from './parts/accounts/account-deletion';
import { createAccountRows } from './parts/accounts/account-rows';
import { createBots } from './parts/accounts/bots';
import { createWebhooks } from './parts/integrations/webhooks';
import { createExports } from './parts/accounts/account-export';
import { authenticate } from './parts/accounts/auth';
import { createAvatars } from './parts/accounts/avatars';
import { createImageDecoders } from './core/images';
import { DEVICE_REUSE_GRACE_MS, createDeviceStore } from './parts/accounts/devices';
import { createIdentityCheck } from './parts/accounts/identity';
import { createIdentities } from './parts/accounts/identities';
import { createOidcClient } from './parts/accounts/oidc';
import { createPasskeys } from './parts/accounts/passkeys';
import { createSignInMethods } from './parts/accounts/sign-in-methods';
import { createSso } from './parts/accounts/sso';
import { type Mailer, type MailerOptions, createMailer } from './parts/accounts/mail';
import { SessionStore } from './parts/accounts/sessions';
import { createTwoFactor } from './parts/accounts/two-factor';
import { createNotificationSettings } from './parts/accounts/notifications';
import { createPush } from './parts/push/push';
import { createPushSender, loadVapidKeys, vapidSubject } from './parts/push/sender';
import { createPushSubscriptions } from './parts/push/subscriptions';
import { createUserStore } from './parts/accounts/users';
import { claimDataDir } from './parts/backup';
import { createAuditLog } from './parts/community/audit';
import { DEFAULT_EMOJI_SLOTS, createEmojis } from './parts/community/emojis';
import { MAX_STICKERS, createStickers } from './parts/community/stickers';
import { createChannelStore } from './parts/community/channels';
import { createThreadStore } from './parts/community/threads';
import { createThreadNews } from './parts/community/thread-news';
import { createDirectory } from './parts/community/directory';
import { createAccessChanges } from './parts/community/access-changes';
import { createOverwriteStore } from './parts/community/overwrites';
import { createMembers } from './parts/community/members';
import { createJoinGate } from './parts/community/join-rate';
import { createOnboarding } from './parts/community/onboarding';
import { SENDS_PER_TURN, createHub } from './parts/delivery/hub';
import { LARGE_SERVER_MEMBERS, PRESENCE_GRACE_MS, createPresence } from './parts/live/presence';
import { readyFrame, serverEntry } from './parts/live/ready';
import { HEARTBEAT_MS, createSockets } from './parts/live/sockets';
import { createChannelTails } from './parts/messages/channel-tails';
import { createMessageStore } from './parts/messages/message-store';
import { createPosting } from './parts/messages/posting';
import { createAutomod } from './parts/messages/automod';
import { createPolls } from './parts/messages/polls';
import { createSearch } from './parts/messages/search';
import { createReadStates } from './parts/messages/unread';
import { createUploadStore } from './parts/messages/upload-store';
import type { Services } from './parts/services';
import { createClaims } from './parts/import/claims';
import { createImports } from './parts/import/imports';
import { createVoice } from './parts/voice/voice';
import { createLimits } from './rules/limits';
import { createPermissions } from './rules/permissions';

export { DEFAULT_TIMEOUTS, type Timeouts } from './core/http/pipeline';

/** Timings a test (or a benchmark) tunes; the defaults are production's. */
export interface Settings {
  /** Ping every socket this often; one that did not answer the last ping is cut. */
  heartbeatMs: number;
  /** Socket writes per turn of the event loop. */
  sendsPerTurn: number;
  /** A user turns offline this long after their last socket closed. */
  presenceGraceMs: number;
  /** Servers with more members than this tell nobody of presence changes. */
  largeServerMembers: number;
  /** A remembered device's secret rotated away less than this long ago is refused but not taken for a copy. */
  deviceReuseGraceMs: number;
  /** How often inactive threads are looked for, to archive them (their time is the clock's). */
  threadSweepMs: number;
  /** How often polls whose time is up are looked for, to end them (their time is the clock's). */
  pollSweepMs: number;
  /** Custom emoji a server may hold, static and animated (read at each upload). */
  emojiSlots: { static: number; animated: number };
}

export const DEFAULT_SETTINGS: Settings = {
  heartbeatMs: HEARTBEAT_MS,
  sendsPerTurn: SENDS_PER_TURN,
  presenceGraceMs: PRESENCE_GRACE_MS,
  largeServerMembers: LARGE_SERVER_MEMBERS,
  deviceReuseGraceMs: DEVICE_REUSE_GRACE_MS,
  threadSweepMs: MINUTE,
  pollSweepMs: MINUTE,
  emojiSlots: DEFAULT_EMOJI_SLOTS,
};

export interface AppOptions {
  config: Config;
  clock?: Clock;
  /** A mailer of the caller's; otherwise one is built (SMTP or the outbox) with `mailerOptions`. */
  mailer?: Mailer;
  mailerOptions?: MailerOptions;
  log?: Log;
  timeouts?: Partial<Timeouts>;
  settings?: Partial<Settings>;
  /** The pages' directory (static/ of this checkout by default): a test upgrades to another build with it. */
  staticDir?: string;
}

export interface RunningApp {
  app: Services;
  server: http.Server;
  /** The settings it runs with (a test may change those read at each use, such as largeServerMembers). */
  settings: Settings;
  /** Stops accepting, lets in-flight requests finish (bounded), closes sockets and the database. */
  close(): Promise<void>;
}

export const SHUTDOWN_GRACE_MS = 10_000;

/**
 * The list of parts, in order: each is built from the ones before it, and nothing is patched in
 * afterwards. Returns an unstarted server: the caller listens (src/server.ts on PORT, tests on
 * port 0).
 */
export function createApp(options: AppOptions): RunningApp {
  const { config } = options;
  const settings = { ...DEFAULT_SETTINGS, ...options.settings };
  armFailpoints(config.failpoints);
  prepareDataDir(config.dataDir);
  const releaseDataDir = claimDataDir(config.dataDir);
  const clock = options.clock ?? systemClock;
  const log = options.log ?? stdoutLog;
  const db = openDatabase(path.join(config.dataDir, 'chat.db'), config.durability);
  const users = createUserStore(db);
  const accountRows = createAccountRows({ db, clock });
  const perms = createPermissions(db, clock);
  const directory = createDirectory(db);
  const threads = createThreadStore({ db, clock });
  const tails = createChannelTails(db);
  const readStates = createReadStates(db, tails, directory, perms, threads);
  const hub = createHub({ log, directory, perms, sendsPerTurn: settings.sendsPerTurn });
  const threadNews = createThreadNews({ threads, hub, perms, clock });
  const pushSubscriptions = createPushSubscriptions(db, clock);
  // Voice channels: Janus's one client, and the signaling of voice sockets (off without JANUS_URL).
  // Taking part in a call is under the rules of writing in its server (a timeout, the verification
  // level, screening): the posting rules' check, made later in this function, asked at each join.
  const voice = createVoice({
    config,
    clock,
    log,
    db,
    hub,
    perms,
    directory,
    requireMayTakePart: (user, channel) => posting.requireMayWrite(user, channel),
  });
  // A session that ends, however it ends, closes the sockets opened with it (its voice calls end),
  // and ends the push subscription its browser made.
  const sessions = new SessionStore(clock, (session) => {
    hub.endSession(session.token);
    voice.endSession(session.token);
    pushSubscriptions.endSession(session);
  });
  const limits = createLimits(clock, config.rateLimit);
  const staticFiles = indexStaticFiles(options.staticDir ?? path.join(__dirname, '..', 'static'));
  const mailer = options.mailer ?? createMailer({ config, clock, log }, options.mailerOptions);
  const metrics = createMetrics({
    enabled: config.metrics,
    hosts: config.metricsHosts,
    db,
    databaseFile: path.join(config.dataDir, 'chat.db'),
    sockets: hub,
    voice,
  });
  const presence = createPresence({ db, hub, log, settings });
  const notifications = createNotificationSettings(db, perms);
  const sidebar = { directory, readStates, presence, notifications, clock, voice, perms };
  const sockets = createSockets({
    config,
    clock,
    log,
    sessions,
    users,
    perms,
    hub,
    presence,
    ready: (user) => readyFrame(sidebar, user),
    heartbeatMs: settings.heartbeatMs,
    voice,
  });
  const devices = createDeviceStore(db, clock, settings.deviceReuseGraceMs);
  const accountChanges = createAccountChanges({ db, clock, sessions, hub, devices, suspended: (userId) => voice.endUser(userId) });
  // ADMIN_USERS are administrators: granted at start-up (and at registration, src/api/accounts.ts).
  for (const name of config.adminUsers) accountChanges.setAdmin(name, true);
  const uploads = createUploadStore({ db, dataDir: config.dataDir, durability: config.durability, log });
  const secretKey = loadSecretKey(config.dataDir, config.secretKey);
  // The proxy URLs of remote images (link previews, webhook embeds and avatars): docs/api.md "Media proxy".
  const media = createMediaUrls(secretKey);
  // Every fetch of a URL someone chose (previews, the media proxy): src/core/net/safe-fetch.ts.
  let listening: http.Server | undefined;
  const fetchRules: FetchRules = {
    allow: new Set(config.previewInsecureHosts),
    isSelf: ownListener(() => {
      const address = listening?.address();
      return address && typeof address === 'object' ? address.port : null;
    }),
    userAgent: fetchUserAgent(PRODUCT_NAME, config.baseUrl),
  };
  const messages = createMessageStore({ db, clock, hub, uploads, metrics, readStates, tails, media });
  const polls = createPolls({ db, clock, messages, userById: (id) => users.byId(id), log });
  const members = createMembers({ db, clock, presence });
  const audit = createAuditLog(db, clock);
  // AutoMod's alerts have an author of their own in each server (users.bot = 2, as a webhook's: never signs in).
  const alertAuthor = (serverId: string): User => {
    const name = `automod.${serverId}`;
    return users.byUsername(name) ?? users.byId(accountRows.createAccount({ kind: 'webhook', username: name, displayName: 'AutoMod' }))!;
  };
  const automod = createAutomod({ db, clock, log, perms, directory, members, audit, hub, messages, alertAuthor });
  const channels = createChannelStore({ db, clock });
  const overwrites = createOverwriteStore(db);
  const accessChanges = createAccessChanges({ perms, hub, directory, readStates });
  const joinGate = createJoinGate({ db, clock, perms, directory, hub, audit });
  const onboarding = createOnboarding({ db, clock, perms, members, directory, audit });
  const posting = createPosting({ db, clock, perms, limits, directory, messages, threads, threadNews, automod, screening: onboarding });
  const search = createSearch(db, messages, perms);
  const box = createSecretBox(secretKey);
  const twoFactor = createTwoFactor({ db, clock, box, log });
  const identity = createIdentityCheck({ db, clock, limits, twoFactor });
  // Signing in with an OpenID Provider (docs/sso.md): the protocol, the linked identities, the decisions.
  const identities = createIdentities(db, clock);
  const oidc = createOidcClient({ baseUrl: () => config.baseUrl, clock, log });
  const sso = createSso({ db, clock, config, limits, identities, accountRows, accountChanges, twoFactor });
  const passkeys = createPasskeys({ db, clock, config });
  const signInMethods = createSignInMethods({ db, config });
  const decoders = createImageDecoders();
  const avatars = createAvatars({ db, accountRows, dataDir: config.dataDir, decoders, log });
  const emojis = createEmojis({ db, clock, audit, dataDir: config.dataDir, decoders, slots: () => settings.emojiSlots, log });
  const stickers = createStickers({ db, clock, audit, dataDir: config.dataDir, decoders, log });
  const accountExports = createExports({ db, clock, directory, perms, dataDir: config.dataDir, log });
  const deletion = createAccountDeletion({
    db,
    accountRows,
    directory,
    members,
    hub,
    sessions,
    removeFiles: (userId) => {
      avatars.remove(userId);
      accountExports.remove(userId);
    },
  });
  const mediaProxy = createMediaProxy({ dataDir: config.dataDir, log, clock, media, rules: fetchRules, avatars, cacheBytes: config.mediaCacheBytes });
  const bots = createBots({ db, accountRows, hub, deletion });
  const webhooks = createWebhooks({ db, clock, accountRows, audit, box });
  const imports = createImports({
    db,
    clock,
    log,
    dataDir: config.dataDir,
    databaseFile: path.join(config.dataDir, 'chat.db'),
    durability: config.durability,
    maxBytes: config.importMaxBytes,
    mediaSlots: () => ({ emoji: settings.emojiSlots, stickers: MAX_STICKERS }),
    // The owner sees their new server at once, and again (its channels filled) when it is done.
    onServer: (ownerId, serverId) => {
      const server = directory.server(serverId);
      if (server) hub.toUsers([ownerId], { event: 'server_joined', server: serverEntry(sidebar, ownerId, server) });
      // The emoji an import brought (issue 50): members see them without a reload (a re-import into a live server).
      if (server) hub.toServer(serverId, { event: 'emojis_updated', server_id: serverId, emojis: emojis.list(serverId) });
    },
  });
  const claims = createClaims({ db, clock, dataDir: config.dataDir, members, joinGate, screening: onboarding, accountRows, tails });
  const vapidKeys = loadVapidKeys(config.dataDir);
  const pushSender = createPushSender({
    keys: vapidKeys,
    subject: vapidSubject(config.baseUrl),
    insecureHosts: new Set(config.pushInsecureHosts),
    log,
    onGone: (id) => pushSubscriptions.gone(id),
    onOutcome: (outcome) => metrics.push(outcome),
  });
  const push = createPush({ db, clock, log, hub, perms, directory, presence, notifications, subscriptions: pushSubscriptions, sender: pushSender });
  hub.onMessage((container, change) => {
    if (change.kind === 'created') push.messageCreated(container, change.message);
  });
  const linkPreviews = createLinkPreviews({
    clock,
    log,
    hub,
    messages,
    limits,
    enabled: config.linkPreviews,
    serverAllows: (serverId) => directory.server(serverId)?.link_previews ?? false,
    rules: fetchRules,
  });
  // ROLE=core: sockets open on gateways join the hub through the bus (docs/scaling.md).
  // (Loaded only then: the Redis client is no part of a start without a bus.)
  const cluster =
    config.role === 'core' && config.busUrl
      ? (require('./parts/cluster/remote') as typeof import('./parts/cluster/remote')).createCluster({ busUrl: config.busUrl, clock, log, sockets })
      : null;
  const app: Services = {
    config,
    clock,
    log,
    db,
    users,
    accountRows,
    sessions,
    limits,
    staticFiles,
    metrics,
    perms,
    directory,
    readStates,
    mailer,
    hub,
    presence,
    devices,
    accountChanges,
    uploads,
    messages,
    posting,
    automod,
    polls,
    members,
    onboarding,
    channels,
    threads,
    threadNews,
    overwrites,
    accessChanges,
    audit,
    joinGate,
    search,
    twoFactor,
    identity,
    identities,
    oidc,
    sso,
    passkeys,
    signInMethods,
    decoders,
    avatars,
    emojis,
    stickers,
    accountExports,
    deletion,
    imports,
    claims,
    notifications,
    bots,
    webhooks,
    pushSubscriptions,
    vapidKeys,
    cluster,
    voice,
    media,
    fetchRules,
    linkPreviews,
    mediaProxy,
  };

  const pipeline = createPipeline({
    config,
    log,
    metrics,
    routes: buildRoutes(app),
    staticFiles,
    authenticate: (req, level, route) => authenticate({ sessions, users }, req, level, route),
    sockets,
    timeouts: { ...DEFAULT_TIMEOUTS, ...options.timeouts },
  });
  const { server } = pipeline;
  listening = server;
  const sweeper = every(
    10 * MINUTE,
    'session-sweep',
    () => {
      sessions.sweep();
      devices.sweep();
    },
    log,
  );

  // Inactive threads archive by themselves after their auto_archive_minutes (told as thread_updated).
  const archiver = every(settings.threadSweepMs, 'thread-archive', () => void threadNews.sweep(), log);
  const pollEnder = every(settings.pollSweepMs, 'poll-expiry', () => void polls.sweep(), log);

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= new Promise<void>((resolve) => {
      pipeline.drain();
      clearInterval(sweeper);
      clearInterval(archiver);
      clearInterval(pollEnder);
      polls.close();
      presence.close();
      sockets.close();
      // Uploads still streaming would hold the drain for minutes: they end now, files removed.
      const uploadsStopped = uploads.abortAll();
      const exportsStopped = accountExports.close();
      // A running import stops after its batch and resumes at the next start.
      const importStopped = imports.stop();
      pushSender.close();
      linkPreviews.close();
      // The closes of gateways' sockets reach the bus before it closes.
      const busClosed = cluster?.close();
      // Every call leaves its room; the rooms go; the Janus session ends.
      const voiceClosed = voice.close().catch(logFailure(log, 'voice shutdown'));
      const force = setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS);
      force.unref();
      server.close(() => {
        clearTimeout(force);
        void Promise.all([uploadsStopped, exportsStopped, importStopped, busClosed, voiceClosed])
          .then(() => {
            mailer.close?.();
            metrics.close();
            db.close();
            releaseDataDir();
          })
          .catch(logFailure(log, 'shutdown'))
          .finally(resolve);
      });
      server.closeIdleConnections();
    }));

  return { app, server, settings, close };
}
