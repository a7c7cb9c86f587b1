/** What counts as one emoji: for reactions (and anything else that takes a single emoji). */
export const MAX_EMOJI_UTF16 = 32;

// One emoji, built the way Unicode builds them (UTS #51): a pictograph with an optional
// variation selector or skin tone and optional tag characters (subdivision flags), possibly
// joined to more of the same by ZWJ; or a flag (two regional indicators); or a keycap.
// Anything else, such as text, two emoji, or an emoji under stacked combining marks, is not one.
const PICTOGRAPH = String.raw`\p{Extended_Pictographic}(?:\uFE0F|\p{Emoji_Modifier})?(?:[\u{E0020}-\u{E007E}]+\u{E007F})?`;
const ONE_EMOJI = new RegExp(
  String.raw`^(?:\p{Regional_Indicator}{2}|[0-9#*]\uFE0F?\u20E3|${PICTOGRAPH}(?:\u200D${PICTOGRAPH})*)$`,
  'u',
);

// A named emoji as chat clients write them (`:thumbsup:`, `:+1:`), for clients that send names.
const SHORTCODE = /^:[a-z0-9_+-]{1,30}:$/;

/**
 * One emoji (flags, keycaps and ZWJ sequences included) or one `:shortcode:`, at most
 * MAX_EMOJI_UTF16 code units: never free text.
 */
export function isEmoji(value: unknown): value is string {
  return typeof value === 'string' && value.length <= MAX_EMOJI_UTF16 && (ONE_EMOJI.test(value) || SHORTCODE.test(value));
}
