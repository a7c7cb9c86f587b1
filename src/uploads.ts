import crypto from 'node:crypto';
import fs from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';
import { pipeline } from 'node:stream';
import busboy from 'busboy';
import type { App, Route } from './app';
import type { Body } from './http/body';
import { HttpError, badRequest, notFound } from './http/errors';
import { HANDLED } from './http/respond';
import { isUuid } from './http/router';
import { MAX_CONTENT_CHARS } from './messages';
import { type PreviewKind, SNIFF_BYTES, extensionOf, isInline, servedType, sniff } from './sniff';

/** Spec section 8: at most five files per message, each at most 25 MiB. */
export const MAX_ATTACHMENTS = 5;
export const MAX_ATTACHMENT_BYTES = 25 * 1024 * 1024;
/** A text field: `content` is at most 4000 characters, up to 4 bytes each in UTF-8. */
export const MAX_FIELD_BYTES = MAX_CONTENT_CHARS * 4;
/** The accepted fields are `content` and `reply_to`; a few more parts are tolerated, then refused. */
export const MAX_FIELDS = 2;
export const MAX_PARTS = MAX_ATTACHMENTS + MAX_FIELDS;
/** A part's headers; a browser sends two or three. */
export const MAX_PART_HEADERS = 16;
/** A whole multipart body: every file at its largest, plus room for fields and part headers. */
export const MAX_MULTIPART_BYTES = MAX_ATTACHMENTS * MAX_ATTACHMENT_BYTES + 1024 * 1024;
export const MAX_FILE_NAME_CHARS = 255;
/** Downloads may sit in the browser's private cache: an attachment id never changes content. */
export const DOWNLOAD_MAX_AGE_S = 24 * 60 * 60;

const FIELD_NAMES = new Set(['content', 'reply_to']);
const FILE_FIELD = 'attachments';

/** A file of a multipart message, already on disk under its attachment id. */
export interface ReceivedFile {
  id: string;
  name: string;
  contentType: string;
  size: number;
  previewKind: PreviewKind;
}

export interface UploadStore {
  /** Streams a multipart message body to disk: its text fields and its files. */
  receive(req: IncomingMessage): Promise<{ fields: Body; files: ReceivedFile[] }>;
  /** Removes files of a request that did not become a message. */
  discard(files: ReceivedFile[]): void;
  /** Removes the files of deleted attachments (after the delete committed). */
  deleteFiles(attachmentIds: string[]): void;
}

// C0 and C1 controls, and the bidirectional overrides and isolates that can make
// "evil\u202Egnp.exe" display as "evilexe.png".
const UNSAFE_NAME_CHARS = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** The client's file name without path parts or control characters, at most 255 characters. */
export function cleanFileName(raw: string | undefined): string {
  let name = (raw ?? '').replace(UNSAFE_NAME_CHARS, '');
  name = name.slice(Math.max(name.lastIndexOf('/'), name.lastIndexOf('\\')) + 1).trim();
  if (name === '.' || name === '..') name = '';
  const chars = [...name];
  if (chars.length > MAX_FILE_NAME_CHARS) {
    // Keep a short extension: it is what tells the person downloading what the file is.
    const ext = extensionOf(name);
    const tail = ext && ext.length <= 16 ? [...`.${ext}`] : [];
    name = [...chars.slice(0, MAX_FILE_NAME_CHARS - tail.length), ...tail].join('');
  }
  return name || 'file';
}

/**
 * Content-Disposition with a file name any browser reads safely (RFC 6266 section 4.3):
 * an ASCII `filename` for old clients, with quotes, backslashes and anything outside
 * printable ASCII replaced, and the exact name in `filename*` (RFC 8187 percent-encoding).
 */
export function contentDisposition(kind: 'inline' | 'attachment', name: string): string {
  const fallback = name.replace(/[^\x20-\x7e]|["\\%]/g, '_');
  const encoded = encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `${kind}; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}

/** One file of the request being received: its temporary and final paths, and when it is done. */
interface Incoming {
  file: ReceivedFile;
  temp: string;
  final: string;
  writer: fs.WriteStream;
  /** Settles when the file is closed and (on success) renamed: nothing of it is moving any more. */
  settled: Promise<void>;
  /** The part was an empty file input (no name, no bytes): not an attachment. */
  empty: boolean;
}

export function createUploadStore(app: App): UploadStore {
  const dir = path.join(app.config.dataDir, 'uploads');
  const pathOf = (id: string) => path.join(dir, id);
  // A .part file was still streaming when an earlier process stopped: it belongs to no message.
  for (const name of fs.readdirSync(dir)) if (name.endsWith('.part')) fs.rmSync(pathOf(name), { force: true });

  const unlink = (file: string) =>
    fs.unlink(file, (err) => {
      if (err && err.code !== 'ENOENT') app.log(`could not remove upload ${file}: ${err.code ?? err.message}`);
    });

  function receive(req: IncomingMessage): Promise<{ fields: Body; files: ReceivedFile[] }> {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > MAX_MULTIPART_BYTES) {
      return Promise.reject(
        new HttpError(413, `a message may carry at most ${MAX_ATTACHMENTS} files of at most 25 MiB each`, { Connection: 'close' }),
      );
    }
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: req.headers,
        // Browsers send file names as raw UTF-8; busboy would otherwise read them as Latin-1.
        defParamCharset: 'utf8',
        // Every limit is explicit: busboy's own file size limit is infinite. A limit is
        // reached when a part gets to that many bytes, so +1 lets exactly the maximum through.
        limits: {
          fileSize: MAX_ATTACHMENT_BYTES + 1,
          files: MAX_ATTACHMENTS,
          fields: MAX_FIELDS,
          fieldSize: MAX_FIELD_BYTES + 1,
          fieldNameSize: 100,
          // Unlike files and fields, the parts limit fires on reaching it, not on passing it.
          parts: MAX_PARTS + 1,
          headerPairs: MAX_PART_HEADERS,
        },
      });
    } catch {
      return Promise.reject(badRequest('multipart body needs a boundary in its Content-Type'));
    }

    return new Promise((resolve, reject) => {
      const fields: Body = Object.create(null);
      const incoming: Incoming[] = [];
      let failed = false;

      // Ends the request at the first problem, while it may still be streaming: stop parsing,
      // drop what the client still sends (never buffered), answer at once and close the
      // connection after the answer, then remove every file of the request once its writes stop.
      const fail = (err: HttpError) => {
        if (failed) return;
        failed = true;
        req.unpipe(parser);
        // Not at once: busboy may be inside its own write, still touching the part it reported.
        process.nextTick(() => parser.destroy());
        req.resume();
        for (const item of incoming) item.writer.destroy();
        void Promise.allSettled(incoming.map((item) => item.settled)).then(() => {
          for (const item of incoming) {
            unlink(item.temp);
            unlink(item.final);
          }
        });
        reject(req.complete ? err : new HttpError(err.status, err.message, { ...err.headers, Connection: 'close' }));
      };
      const tooLarge = (what: string) => fail(new HttpError(413, what));
      // A disk problem (full, read-only) is ours, not the client's: logged, and a plain 500.
      const diskFailed = (err: NodeJS.ErrnoException) => {
        app.log(`could not store an upload: ${err.code ?? err.message}`);
        fail(new HttpError(500, 'the upload could not be stored'));
      };

      parser.on('field', (name, value, info) => {
        if (failed) return;
        if (!FIELD_NAMES.has(name)) return fail(badRequest(`unexpected field "${name.slice(0, 100)}": fields are content and reply_to, files are attachments`));
        if (name in fields) return fail(badRequest(`${name} is given twice`));
        if (info.valueTruncated) {
          return fail(badRequest(name === 'content' ? `content must be at most ${MAX_CONTENT_CHARS} characters` : `${name} is too long`));
        }
        // Browsers send every line break of a form field as CRLF (HTML form encoding); store LF
        // as a JSON client would have sent it.
        fields[name] = value.replace(/\r\n/g, '\n');
      });

      parser.on('file', (name, stream, info) => {
        stream.on('error', () => {}); // the parser's own errors arrive on the parser too
        if (failed) return void stream.resume();
        if (name !== FILE_FIELD) {
          stream.resume();
          return fail(badRequest(`unexpected file field "${name.slice(0, 100)}": files go in attachments`));
        }
        const id = crypto.randomUUID();
        const item = {
          file: { id, name: cleanFileName(info.filename), contentType: '', size: 0, previewKind: 'code' },
          temp: pathOf(`${id}.part`),
          final: pathOf(id),
          writer: fs.createWriteStream(pathOf(`${id}.part`), { flags: 'wx' }),
          empty: false,
        } as Incoming;
        incoming.push(item);

        // The first bytes decide the content type; they are copied once, the rest streams through.
        const head: Buffer[] = [];
        let headBytes = 0;
        stream.on('data', (chunk: Buffer) => {
          item.file.size += chunk.length;
          if (headBytes < SNIFF_BYTES) {
            // A copy: a slice would pin the parser's whole read buffer until the file ends.
            head.push(Buffer.from(chunk.subarray(0, SNIFF_BYTES - headBytes)));
            headBytes += Math.min(chunk.length, SNIFF_BYTES - headBytes);
          }
        });
        stream.on('limit', () => tooLarge(`each attachment may be at most 25 MiB (${MAX_ATTACHMENT_BYTES} bytes)`));

        item.settled = new Promise<void>((settle) => {
          item.writer.on('error', diskFailed);
          item.writer.on('close', () => {
            if (failed || !item.writer.writableFinished) return settle();
            item.empty = item.file.size === 0 && !info.filename;
            const sniffed = sniff(Buffer.concat(head), item.file.name, item.file.size <= SNIFF_BYTES);
            item.file.contentType = sniffed.contentType;
            item.file.previewKind = sniffed.previewKind;
            // A file has its final name only once whole; the rename is the commit point.
            fs.rename(item.temp, item.final, (err) => {
              if (err) diskFailed(err);
              settle();
            });
          });
        });
        stream.pipe(item.writer);
      });

      parser.on('filesLimit', () => tooLarge(`a message may carry at most ${MAX_ATTACHMENTS} files`));
      parser.on('fieldsLimit', () => fail(badRequest('too many fields: fields are content and reply_to')));
      parser.on('partsLimit', () => tooLarge(`a message may have at most ${MAX_PARTS} parts`));
      parser.on('error', () => fail(badRequest('malformed multipart body')));
      parser.on('close', () => {
        if (failed) return;
        void Promise.all(incoming.map((item) => item.settled)).then(() => {
          if (failed) return;
          for (const item of incoming) if (item.empty) unlink(item.final);
          resolve({ fields, files: incoming.filter((item) => !item.empty).map((item) => item.file) });
        });
      });

      // A client that goes away mid-upload: nothing of its request stays on disk.
      req.on('error', () => fail(badRequest('upload interrupted')));
      req.on('close', () => {
        if (!req.complete) fail(badRequest('upload interrupted'));
      });
      req.pipe(parser);
    });
  }

  return {
    receive,
    discard(files) {
      for (const file of files) unlink(pathOf(file.id));
    },
    deleteFiles(attachmentIds) {
      // Ids come from the database, but a path is only ever built from a UUID.
      for (const id of attachmentIds) if (isUuid(id)) unlink(pathOf(id));
    },
  };
}

interface AttachmentRow {
  id: string;
  name: string;
  content_type: string;
  channel_id: string | null;
  conversation_id: string | null;
  server_id: string | null;
}

export function uploadsRoutes(app: App): Route[] {
  const attachmentById = app.db.prepare<[string], AttachmentRow>(
    `SELECT a.id, a.name, a.content_type, m.channel_id, m.conversation_id, c.server_id
       FROM attachments a
       JOIN messages m ON m.seq = a.message_seq
       LEFT JOIN channels c ON c.id = m.channel_id
      WHERE a.id = ?`,
  );
  const dir = path.join(app.config.dataDir, 'uploads');

  const canSee = (userId: string, row: AttachmentRow) =>
    row.server_id !== null
      ? app.perms.rank(userId, row.server_id) !== null
      : row.conversation_id !== null && app.perms.isConversationMember(userId, row.conversation_id);

  return [
    {
      // GET /uploads/{attachment_id} (and HEAD)
      // - Members of the attachment's server or conversation only; anyone else gets the same
      //   404 as for an unknown id, so ids cannot be probed.
      // - Raster images, audio and video render inline; everything else (HTML, SVG, XML,
      //   scripts, text, documents) is a download. Always nosniff and a sandbox CSP.
      // - Single byte ranges (206/416) so media can seek; ETag "<id>" with If-None-Match (304).
      method: 'GET',
      path: '/uploads/:attachment_id',
      handler: async (ctx) => {
        const row = attachmentById.get(ctx.params.attachment_id);
        if (!row || !canSee(ctx.user.id, row)) throw notFound('attachment not found');
        let handle: fs.promises.FileHandle;
        try {
          handle = await fs.promises.open(path.join(dir, row.id), 'r');
        } catch (err) {
          app.log(`attachment ${row.id} has no file: ${(err as NodeJS.ErrnoException).code ?? err}`);
          throw notFound('attachment not found');
        }
        try {
          const { size } = await handle.stat();
          serveFile(ctx.req, ctx.res, row, handle, size);
        } catch (err) {
          await handle.close();
          throw err;
        }
        return HANDLED;
      },
    },
  ];
}

/** Writes the download from an open file; takes ownership of `handle` (closed when done). */
function serveFile(req: IncomingMessage, res: ServerResponse, row: AttachmentRow, handle: fs.promises.FileHandle, size: number): void {
  const etag = `"${row.id}"`;
  const inline = isInline(row.content_type);
  // The file is untrusted content on our origin: even opened directly it may run nothing,
  // load nothing and be framed by no one.
  res.setHeader('Content-Security-Policy', "sandbox; default-src 'none'; frame-ancestors 'none'");
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Cross-Origin-Resource-Policy', 'same-origin');
  res.setHeader('Cache-Control', `private, max-age=${DOWNLOAD_MAX_AGE_S}`);
  res.setHeader('ETag', etag);
  res.setHeader('Accept-Ranges', 'bytes');

  if (etagMatches(req.headers['if-none-match'], etag)) {
    void handle.close();
    res.writeHead(304);
    res.end();
    return;
  }

  const ifRange = req.headers['if-range'];
  const range = ifRange === undefined || ifRange === etag ? parseRange(req.headers.range, size) : null;
  if (range === 'unsatisfiable') {
    void handle.close();
    throw new HttpError(416, 'range not satisfiable', { 'Content-Range': `bytes */${size}` });
  }
  const start = range ? range.start : 0;
  const end = range ? range.end : size - 1;
  res.writeHead(range ? 206 : 200, {
    'Content-Type': servedType(row.content_type),
    'Content-Disposition': contentDisposition(inline ? 'inline' : 'attachment', row.name),
    'Content-Length': end - start + 1,
    ...(range ? { 'Content-Range': `bytes ${start}-${end}/${size}` } : {}),
  });
  if (req.method === 'HEAD' || size === 0) {
    void handle.close();
    res.end();
    return;
  }
  const stream = handle.createReadStream({ start, end });
  pipeline(stream, res, () => {
    // A client that stops reading (seeking, closing the tab) is normal; the stream closes the file.
  });
}

/** If-None-Match against our one strong ETag (weak comparison, as RFC 9110 13.1.2 asks). */
function etagMatches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.split(',').some((tag) => {
    const t = tag.trim();
    return t === '*' || t === etag || t === `W/${etag}`;
  });
}

/**
 * One byte range of RFC 9110 section 14.1.2: `a-b`, `a-` or `-n`. A header that is absent,
 * malformed, in another unit or asks for several ranges is ignored (the whole file, 200):
 * multipart/byteranges is not worth its complexity for media seeking.
 */
export function parseRange(header: string | undefined, size: number): { start: number; end: number } | 'unsatisfiable' | null {
  if (!header) return null;
  const found = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!found || (found[1] === '' && found[2] === '')) return null;
  if (found[1] === '') {
    const suffix = Number(found[2]);
    if (suffix === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(found[1]);
  const end = found[2] === '' ? Infinity : Number(found[2]);
  if (end < start) return null;
  if (start >= size) return 'unsatisfiable';
  return { start, end: Math.min(end, size - 1) };
}
