/**
 * How large a server's parts may grow, and names in it: the API refuses past these, and an
 * import from Discord (src/parts/import/) checks an export against them before writing.
 */
export const MAX_NAME_CHARS = 100;
export const MAX_CHANNELS_PER_SERVER = 500;
export const MAX_CATEGORIES_PER_SERVER = 50;
export const MAX_ROLES_PER_SERVER = 250;
export const MAX_DISPLAY_NAME_CHARS = 32;
export const MAX_TOPIC_CHARS = 1024;
/** Slow mode, as Discord allows it: up to six hours between a member's messages. */
export const MAX_SLOWMODE_SECONDS = 21_600;
/** Active threads a server holds at once (Discord's cap): archived ones are not counted. */
export const MAX_ACTIVE_THREADS_PER_SERVER = 1000;
/** Tags a forum offers, and a post carries (Discord's). */
export const MAX_FORUM_TAGS = 20;
export const MAX_APPLIED_TAGS = 5;
/** A tag's name, in characters (Discord's). */
export const MAX_TAG_NAME_CHARS = 20;
/** A voice channel's user_limit, as Discord allows it: 0 (no limit) to 99 people. */
export const MAX_VOICE_USER_LIMIT = 99;
/** How many people a voice channel with no user_limit holds at most (one VideoRoom: docs/voice.md "Limits"). */
export const MAX_VOICE_PARTICIPANTS = 99;
/** A voice channel's audio bitrate, bits per second: Opus speech is clear from 8 kbit/s; Discord's ordinary ceiling is 96. */
export const MIN_VOICE_BITRATE = 8_000;
export const MAX_VOICE_BITRATE = 96_000;
export const DEFAULT_VOICE_BITRATE = 64_000;
/** A message carries at most 3 stickers, as Discord's. */
export const MAX_MESSAGE_STICKERS = 3;
/** Discord's limits for a poll (the API's, and what an import brings as a poll). */
export const POLL_QUESTION_CHARS = 300;
export const POLL_ANSWER_CHARS = 55;
export const POLL_ANSWERS = { min: 2, max: 10 };
export const POLL_HOURS = { min: 1, max: 768 };

/** Limits of a server's membership screening (src/parts/community/onboarding.ts; docs/api.md "Membership screening"). */
export const ONBOARDING_LIMITS = {
  rules: 20,
  ruleChars: 300,
  questions: 10,
  questionChars: 100,
  answers: 20,
  answerChars: 100,
  /** Roles and channels one answer names. */
  answerTargets: 10,
  defaultChannels: 20,
} as const;
