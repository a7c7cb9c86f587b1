import { type Embed, charCount, isObject, own } from '../../../core/embed';
import { badRequest } from '../../../core/http/errors';
import { MAX_CONTENT_CHARS } from '../../../core/message-record';
import {
  COLORS,
  type DraftField,
  type IncomingMessage,
  WEBHOOK_USERNAME_MAX,
  asList,
  buildEmbed,
  clean,
  fitEmbeds,
  linkOf,
  listAt,
  oneLine,
  payloadObject,
  stringAt,
} from './common';

/**
 * Slack's incoming-webhook body (https://api.slack.com/messaging/webhooks): `text` in mrkdwn and
 * `blocks`. Slack shows the blocks and uses `text` for notifications and plain clients: here
 * `text` is the message's content (what notifies, what a plain reader gets) and the blocks are a
 * card under it (a header its title, an image beside a section its thumbnail); without `text`,
 * the blocks' text is the content. Each legacy attachment is an embed after that. `username` and
 * `icon_url` override the webhook's; `icon_emoji`, `channel` and the rest are ignored.
 */
export function fromSlack(body: unknown): IncomingMessage {
  const payload = payloadObject(body, 'the Slack payload');
  const formatted = own(payload, 'mrkdwn') !== false;
  const mrkdwn = stringAt(payload, 'text');
  const text = mrkdwn !== undefined && mrkdwn.trim() !== '' ? slackMarkdown(mrkdwn, formatted) : undefined;
  const content = text ?? slackBlocksText(own(payload, 'blocks'));
  const length = charCount(content);
  if (length > MAX_CONTENT_CHARS)
    throw badRequest(`a Slack message's text must be at most ${MAX_CONTENT_CHARS} characters once converted; this one has ${length}`);
  const blocksCard = text === undefined ? null : slackBlocksEmbed(own(payload, 'blocks'));
  const embeds = fitEmbeds([blocksCard, ...listAt(payload, 'attachments').map(slackAttachment)]);
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

/** The blocks as a card: a first header is its title, the first image beside a section its thumbnail, the rest its text. */
function slackBlocksEmbed(value: unknown): Embed | null {
  const blocks = asList(value).filter(isObject);
  const first = blocks[0];
  const header = first !== undefined && own(first, 'type') === 'header' ? slackTextObject(own(first, 'text')) : undefined;
  const accessory = blocks.map((block) => own(block, 'accessory')).find((item) => isObject(item) && own(item, 'type') === 'image');
  return buildEmbed({
    title: header,
    description: slackBlocksText(header === undefined ? blocks : blocks.slice(1)),
    thumbnail: isObject(accessory) ? own(accessory, 'image_url') : undefined,
  });
}

/**
 * Block Kit (https://api.slack.com/reference/block-kit/blocks) reduced to text: sections (text
 * and fields), headers as a bold line, context elements, dividers, images as a link (a title or
 * the alt text, and the URL: never loaded); other blocks carry no text we can show. Blocks are
 * separated by blank lines, so that a divider's `---` is a rule and never turns the line above
 * it into a heading.
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
      return listAt(block, 'elements')
        .map(slackTextObject)
        .filter((part) => part.trim() !== '')
        .join(' ');
    case 'divider':
      return '---';
    case 'image': {
      const url = linkOf(own(block, 'image_url'));
      if (url === undefined) return '';
      const label = (slackTextObject(own(block, 'title')) || (stringAt(block, 'alt_text') ?? '')).replace(/\s+/g, ' ').trim();
      return label === '' ? url : `${label} (${url})`;
    }
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
