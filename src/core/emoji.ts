import fs from 'node:fs';
import path from 'node:path';

/** What counts as one emoji: for reactions (and anything else that takes a single emoji). */
export const MAX_EMOJI_UTF16 = 32;

// One emoji, built the way Unicode builds them (UTS #51): a pictograph with an optional
// variation selector or skin tone and optional tag characters (subdivision flags), possibly
// joined to more of the same by ZWJ; or a flag (two regional indicators); or a keycap.
// Anything else, such as text, two emoji, or an emoji under stacked combining marks, is not one.
const PICTOGRAPH = String.raw`\p{Extended_Pictographic}(?:\uFE0F|\p{Emoji_Modifier})?(?:[\u{E0020}-\u{E007E}]+\u{E007F})?`;
const ONE_EMOJI = new RegExp(String.raw`^(?:\p{Regional_Indicator}{2}|[0-9#*]\uFE0F?\u20E3|${PICTOGRAPH}(?:\u200D${PICTOGRAPH})*)$`, 'u');

// A named emoji as chat clients write them (`:thumbsup:`, `:+1:`), for clients that send names.
const SHORTCODE = /^:[a-z0-9_+-]{1,30}:$/;

/**
 * One emoji (flags, keycaps and ZWJ sequences included) or one `:shortcode:`, at most
 * MAX_EMOJI_UTF16 code units: never free text.
 */
export function isEmoji(value: unknown): value is string {
  return typeof value === 'string' && value.length <= MAX_EMOJI_UTF16 && (ONE_EMOJI.test(value) || SHORTCODE.test(value));
}

/**
 * The emoji a reaction stores: a Unicode emoji as sent, or a `:shortcode:` of a real emoji
 * turned into that emoji (`:+1:` and `:thumbsup:` are both 👍). An unknown shortcode is null:
 * shortcodes are names of emoji, not free text, so no client can mint thousands of distinct
 * "emoji" on one message.
 */
export function resolveEmoji(value: unknown): string | null {
  if (!isEmoji(value)) return null;
  if (!SHORTCODE.test(value)) return value;
  return shortcodes().get(value.slice(1, -1)) ?? null;
}

// Shortcodes as GitHub, Slack/Discord (iamcal) and Emojibase name them, from emojibase-data,
// the data set the emoji picker uses too. Read on first use: most servers never see a shortcode.
let byShortcode: Map<string, string> | undefined;
function shortcodes(): Map<string, string> {
  if (byShortcode) return byShortcode;
  const dir = path.dirname(require.resolve('emojibase-data/package.json'));
  const read = (file: string) => JSON.parse(fs.readFileSync(path.join(dir, 'en', file), 'utf8'));
  const unicode = new Map<string, string>();
  for (const emoji of read('compact.json') as { hexcode: string; unicode: string; skins?: { hexcode: string; unicode: string }[] }[]) {
    unicode.set(emoji.hexcode, emoji.unicode);
    for (const skin of emoji.skins ?? []) unicode.set(skin.hexcode, skin.unicode);
  }
  byShortcode = new Map();
  for (const file of ['shortcodes/github.json', 'shortcodes/iamcal.json', 'shortcodes/emojibase.json']) {
    for (const [hexcode, names] of Object.entries(read(file) as Record<string, string | string[]>)) {
      const emoji = unicode.get(hexcode);
      if (!emoji) continue;
      for (const name of Array.isArray(names) ? names : [names]) if (!byShortcode.has(name)) byShortcode.set(name, emoji);
    }
  }
  return byShortcode;
}
