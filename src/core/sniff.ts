/**
 * Content type of an uploaded file, decided from its first bytes and its name together.
 *
 * The client's claimed type is never used: a page could upload HTML labelled image/png and
 * then link to it. Media types (the ones that may render inline) come only from magic
 * numbers; the name only picks between variants of the same container (an MP4 box that is
 * audio, an OGG stream that is video) and names the kind of text a text file holds.
 */

export type PreviewKind = 'code' | 'image' | 'audio' | 'video';

/** How many leading bytes `sniff` looks at (magic numbers, and the text check). */
export const SNIFF_BYTES = 8192;

export interface Sniffed {
  contentType: string;
  previewKind: PreviewKind;
}

const OCTET = 'application/octet-stream';
const UTF8 = '; charset=utf-8';

// Raster images, audio and video a browser can show without running anything. Only these
// render inline on download; everything else is served as a download (see uploads.ts).
const INLINE = new Set([
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'image/bmp',
  'audio/mpeg',
  'audio/aac',
  'audio/ogg',
  'audio/wav',
  'audio/flac',
  'audio/mp4',
  'audio/webm',
  'video/mp4',
  'video/quicktime',
  'video/webm',
  'video/ogg',
]);

// Text by extension. Only used when the bytes are text (no NUL): the name alone never makes
// a file text, and never makes it media.
const TEXT_TYPES: Record<string, string> = {
  txt: 'text/plain',
  log: 'text/plain',
  text: 'text/plain',
  ini: 'text/plain',
  cfg: 'text/plain',
  conf: 'text/plain',
  env: 'text/plain',
  toml: 'text/plain',
  yaml: 'text/yaml',
  yml: 'text/yaml',
  md: 'text/markdown',
  markdown: 'text/markdown',
  csv: 'text/csv',
  tsv: 'text/tab-separated-values',
  html: 'text/html',
  htm: 'text/html',
  xhtml: 'application/xhtml+xml',
  css: 'text/css',
  js: 'text/javascript',
  mjs: 'text/javascript',
  cjs: 'text/javascript',
  json: 'application/json',
  xml: 'application/xml',
  svg: 'image/svg+xml',
  ts: 'text/plain',
  tsx: 'text/plain',
  jsx: 'text/plain',
  py: 'text/x-python',
  rb: 'text/plain',
  go: 'text/plain',
  rs: 'text/plain',
  java: 'text/plain',
  kt: 'text/plain',
  c: 'text/x-c',
  h: 'text/x-c',
  cpp: 'text/plain',
  hpp: 'text/plain',
  cs: 'text/plain',
  php: 'text/plain',
  sh: 'text/x-shellscript',
  bash: 'text/x-shellscript',
  sql: 'text/plain',
  diff: 'text/plain',
  patch: 'text/plain',
};

// ZIP containers known by their extension.
const ZIP_TYPES: Record<string, string> = {
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  odt: 'application/vnd.oasis.opendocument.text',
  ods: 'application/vnd.oasis.opendocument.spreadsheet',
  odp: 'application/vnd.oasis.opendocument.presentation',
  epub: 'application/epub+zip',
  jar: 'application/java-archive',
};

const AUDIO_EXTENSIONS = new Set(['m4a', 'm4b', 'aac', 'mp3', 'oga', 'ogg', 'opus', 'weba', 'wav', 'flac']);

/** The lower-case extension of a file name, without the dot ('' if none). */
export function extensionOf(name: string): string {
  const dot = name.lastIndexOf('.');
  return dot <= 0 ? '' : name.slice(dot + 1).toLowerCase();
}

const startsWith = (head: Uint8Array, bytes: number[], at = 0) => head.length >= at + bytes.length && bytes.every((b, i) => head[at + i] === b);
const ascii = (head: Uint8Array, text: string, at = 0) =>
  startsWith(
    head,
    [...text].map((c) => c.charCodeAt(0)),
    at,
  );
const includesAscii = (head: Uint8Array, text: string, within: number) =>
  Buffer.from(head.buffer, head.byteOffset, Math.min(head.length, within)).includes(text, 0, 'latin1');

/** The media type proven by magic numbers, or null. */
function fromMagic(head: Uint8Array, ext: string): string | null {
  if (startsWith(head, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'image/png';
  if (startsWith(head, [0xff, 0xd8, 0xff])) return 'image/jpeg';
  if (ascii(head, 'GIF87a') || ascii(head, 'GIF89a')) return 'image/gif';
  if (ascii(head, 'RIFF') && ascii(head, 'WEBP', 8)) return 'image/webp';
  if (ascii(head, 'RIFF') && ascii(head, 'WAVE', 8)) return 'audio/wav';
  // "BM" alone is too common at the start of text: the DIB header size must be a real one.
  if (ascii(head, 'BM') && head.length >= 18 && [12, 40, 52, 56, 64, 108, 124].includes(head[14] | (head[15] << 8)) && head[16] === 0 && head[17] === 0) {
    return 'image/bmp';
  }
  if (ascii(head, 'fLaC')) return 'audio/flac';
  if (ascii(head, 'ID3')) return 'audio/mpeg';
  if (ascii(head, 'OggS')) {
    // The first page names the codec; Theora means video, anything else (Vorbis, Opus, FLAC) audio.
    return includesAscii(head, 'theora', 64) || ext === 'ogv' ? 'video/ogg' : 'audio/ogg';
  }
  if (ascii(head, 'ftyp', 4)) {
    const brand = String.fromCharCode(...head.subarray(8, 12));
    if (brand === 'M4A ' || brand === 'M4B ' || AUDIO_EXTENSIONS.has(ext)) return 'audio/mp4';
    if (brand === 'qt  ') return 'video/quicktime';
    if (['avif', 'avis', 'heic', 'heix', 'mif1', 'msf1'].includes(brand)) return null;
    return 'video/mp4';
  }
  if (startsWith(head, [0x1a, 0x45, 0xdf, 0xa3])) {
    // EBML: the DocType says WebM (played by browsers) or Matroska (not reliably: a download).
    const webm = includesAscii(head, 'webm', 64);
    if (!webm && !includesAscii(head, 'matroska', 64)) return null;
    if (!webm) return ext === 'mka' ? 'audio/x-matroska' : 'video/x-matroska';
    return ext === 'weba' ? 'audio/webm' : 'video/webm';
  }
  // MPEG audio frame sync without an ID3 tag: 11 set bits, then a real layer (MP3) or
  // layer 0 (AAC in ADTS framing).
  if (head.length >= 2 && head[0] === 0xff && (head[1] & 0xe0) === 0xe0) {
    if ((head[1] & 0x06) !== 0 && (head[1] & 0x18) !== 0x08) return 'audio/mpeg';
    if ((head[1] & 0xf6) === 0xf0) return 'audio/aac';
  }
  if (ascii(head, '%PDF-')) return 'application/pdf';
  if (ascii(head, 'PK') && (startsWith(head, [3, 4], 2) || startsWith(head, [5, 6], 2))) {
    return ZIP_TYPES[ext] ?? 'application/zip';
  }
  if (startsWith(head, [0x1f, 0x8b])) return 'application/gzip';
  return null;
}

/**
 * Whether the bytes read as text: no NUL and valid UTF-8 (a sequence cut by the end of
 * `head` is allowed when the file goes on). Returns the charset suffix to use, or null.
 */
function textCharset(head: Uint8Array, complete: boolean): string | null {
  if (head.includes(0)) return null;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(head, { stream: !complete });
    return UTF8;
  } catch {
    return '';
  }
}

/**
 * Decides the content type and preview kind of a file.
 * @param head the first bytes of the file (up to SNIFF_BYTES)
 * @param name the cleaned file name
 * @param complete whether `head` is the whole file
 */
export function sniff(head: Uint8Array, name: string, complete: boolean): Sniffed {
  const ext = extensionOf(name);
  const media = fromMagic(head, ext);
  if (media) return { contentType: media, previewKind: previewKindOf(media) };
  const charset = textCharset(head, complete);
  if (charset !== null && TEXT_TYPES[ext]) return { contentType: TEXT_TYPES[ext] + charset, previewKind: 'code' };
  // Text of an unknown kind is plain text only when it is valid UTF-8; other bytes stay opaque.
  if (charset === UTF8) return { contentType: `text/plain${UTF8}`, previewKind: 'code' };
  return { contentType: OCTET, previewKind: 'code' };
}

const baseType = (contentType: string) => contentType.split(';')[0].trim().toLowerCase();

/** image, audio or video for media a browser shows without running anything; code for the rest (SVG included). */
export function previewKindOf(contentType: string): PreviewKind {
  const type = baseType(contentType);
  if (!INLINE.has(type)) return 'code';
  return type.startsWith('image/') ? 'image' : type.startsWith('audio/') ? 'audio' : 'video';
}

/** May this type be rendered by the browser when the file is opened? */
export function isInline(contentType: string): boolean {
  return INLINE.has(baseType(contentType));
}

// Types a browser would run or render as a document if it ever ignored Content-Disposition.
const ACTIVE = /html|xml|svg|javascript|ecmascript/;

/**
 * The Content-Type a download is served with: the stored type, except that markup and script
 * are labelled as plain text, so no browser can treat them as a document even when opened.
 */
export function servedType(contentType: string): string {
  const type = baseType(contentType);
  if (INLINE.has(type)) return type;
  if (ACTIVE.test(type)) return `text/plain${contentType.includes('charset=utf-8') ? UTF8 : ''}`;
  return contentType;
}
