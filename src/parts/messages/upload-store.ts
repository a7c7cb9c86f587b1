import crypto from 'node:crypto';
import fs from 'node:fs';
import type { IncomingMessage } from 'node:http';
import path from 'node:path';
import { HttpError, badRequest } from '../../core/http/errors';
import { quotedPartName, readMultipart } from '../../core/http/multipart';
import { failpoint, owned } from '../../core/callbacks';
import { isUuid } from '../../core/http/router';
import { MAX_CONTENT_CHARS } from '../../core/message-record';
import type { Config } from '../../core/config';
import type { DB } from '../../core/db';
import { type PreviewKind, SNIFF_BYTES, extensionOf, sniff } from '../../core/sniff';
import type { Body, Log } from '../../core/types';

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

const FILE_FIELD = 'attachments';

/** A file of a multipart message, already on disk under its attachment id. */
export interface ReceivedFile {
  id: string;
  name: string;
  contentType: string;
  size: number;
  previewKind: PreviewKind;
}

/** The text fields a multipart body may carry, at most how many bytes each, and where its files go. */
export interface FieldRule {
  names: ReadonlySet<string>;
  maxBytes: number;
  /** The one field name of its files, or any name (Discord's webhooks send files[0], files[1]...). */
  files: string | 'any';
  /** Text fields one body may carry: MAX_FIELDS unless said (a forum post has four). */
  maxFields?: number;
}

const MESSAGE_FIELDS: FieldRule = { names: new Set(['content', 'reply_to']), maxBytes: MAX_FIELD_BYTES, files: FILE_FIELD };

export interface UploadStore {
  /**
   * Streams a multipart message body to disk: its text fields and its files. `fields`: the text
   * fields accepted (a message's by default; a webhook's are its own) and their size.
   */
  receive(req: IncomingMessage, fields?: FieldRule): Promise<{ fields: Body; files: ReceivedFile[] }>;
  /** Ends every upload still streaming with 503 (shutdown); resolves once their files are gone. */
  abortAll(): Promise<void>;
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

export interface UploadStoreParts {
  db: DB;
  dataDir: string;
  durability: Config['durability'];
  log: Log;
}

/**
 * Attachment files under DATA_DIR/uploads/, named by attachment id.
 *
 * Writes are ordered so a crash (kill -9, power loss) can leave at most a file without a row,
 * never a row without a file: a file is renamed to its final name before its row is inserted,
 * and a row is deleted before its file. Start-up removes such files (and `.part` files still
 * streaming when the process stopped), and reports rows whose file is missing.
 */
export function createUploadStore({ db, dataDir, durability, log }: UploadStoreParts): UploadStore {
  const dir = path.join(dataDir, 'uploads');
  const pathOf = (id: string) => path.join(dir, id);
  sweepOrphans(db, dir, log);
  /** Uploads still streaming, each with the way to end it. */
  const active = new Set<(err: HttpError) => Promise<void>>();

  const removeFile = (file: string) =>
    fs.promises.unlink(file).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') log(`could not remove upload ${file}: ${err.code ?? err.message}`);
    });
  const unlink = (file: string) => void removeFile(file);
  // DURABILITY=strict: a file and the directory entry naming it reach the disk before its row
  // commits, so a power cut never leaves a row whose file is truncated or missing.
  const syncDir = () =>
    new Promise<void>((resolve, reject) => {
      fs.open(dir, 'r', (err, fd) => {
        if (err) return reject(err);
        fs.fsync(fd, (syncErr) => fs.close(fd, () => (syncErr ? reject(syncErr) : resolve())));
      });
    });

  function receive(req: IncomingMessage, rule: FieldRule = MESSAGE_FIELDS): Promise<{ fields: Body; files: ReceivedFile[] }> {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > MAX_MULTIPART_BYTES) {
      return Promise.reject(new HttpError(413, `a message may carry at most ${MAX_ATTACHMENTS} files of at most 25 MiB each`, { Connection: 'close' }));
    }
    return new Promise((resolve, reject) => {
      const fields: Body = Object.create(null);
      const incoming: Incoming[] = [];
      let filesRemoved: Promise<void> = Promise.resolve();

      // Ends the request at the first problem, while it may still be streaming (readMultipart),
      // then removes every file of the request once its writes stop.
      const read = readMultipart(
        req,
        {
          // Browsers send file names as raw UTF-8; busboy would otherwise read them as Latin-1.
          defParamCharset: 'utf8',
          // Every limit is explicit: busboy's own file size limit is infinite. A limit is
          // reached when a part gets to that many bytes, so +1 lets exactly the maximum through.
          limits: {
            fileSize: MAX_ATTACHMENT_BYTES + 1,
            files: MAX_ATTACHMENTS,
            fields: rule.maxFields ?? MAX_FIELDS,
            fieldSize: rule.maxBytes + 1,
            fieldNameSize: 100,
            // Unlike files and fields, the parts limit fires on reaching it, not on passing it.
            parts: MAX_ATTACHMENTS + (rule.maxFields ?? MAX_FIELDS) + 1,
            headerPairs: MAX_PART_HEADERS,
          },
        },
        reject,
        () => {
          for (const item of incoming) item.writer.destroy();
          filesRemoved = Promise.allSettled(incoming.map((item) => item.settled)).then(async () => {
            await Promise.all(incoming.flatMap((item) => [removeFile(item.temp), removeFile(item.final)]));
          });
          active.delete(stop);
        },
        log,
      );
      const { parser, fail } = read;
      const stop = (err: HttpError) => {
        fail(err);
        return filesRemoved;
      };
      active.add(stop);
      const tooLarge = (what: string) => fail(new HttpError(413, what));
      // A disk problem (full, read-only) is ours, not the client's: logged, and a plain 500.
      const diskFailed = (err: NodeJS.ErrnoException) => {
        log(`could not store an upload: ${err.code ?? err.message}`);
        fail(new HttpError(500, 'the upload could not be stored'));
      };

      read.on('field', (name, value, info) => {
        if (read.failed) return;
        if (!rule.names.has(name))
          return fail(badRequest(`unexpected field ${quotedPartName(name)}: fields are ${[...rule.names].join(' and ')}, files are attachments`));
        if (name in fields) return fail(badRequest(`${name} is given twice`));
        // A part may name its charset; one the parser cannot decode leaves no text at all.
        if (typeof value !== 'string') return fail(badRequest(`${name} could not be read: send form fields as UTF-8`));
        if (info.valueTruncated) {
          return fail(badRequest(name === 'content' ? `content must be at most ${MAX_CONTENT_CHARS} characters` : `${name} is too long`));
        }
        // Browsers send every line break of a form field as CRLF (HTML form encoding); store LF
        // as a JSON client would have sent it.
        fields[name] = value.replace(/\r\n/g, '\n');
      });

      read.on('file', (name, stream, info) => {
        stream.on('error', () => {}); // the parser's own errors arrive on the parser too
        if (read.failed) return void stream.resume();
        if (rule.files !== 'any' && name !== rule.files) {
          stream.resume();
          return fail(badRequest(`unexpected file field ${quotedPartName(name)}: files go in attachments`));
        }
        const id = crypto.randomUUID();
        const item = {
          file: { id, name: cleanFileName(info.filename), contentType: '', size: 0, previewKind: 'code' },
          temp: pathOf(`${id}.part`),
          final: pathOf(id),
          // flush: the file is fsynced before it closes (DURABILITY=strict).
          writer: fs.createWriteStream(pathOf(`${id}.part`), { flags: 'wx', flush: durability === 'strict' }),
          empty: false,
        } as Incoming;
        incoming.push(item);

        // The first bytes decide the content type; they are copied once, the rest streams through.
        const head: Buffer[] = [];
        let headBytes = 0;
        stream.on(
          'data',
          read.own((chunk: Buffer) => {
            item.file.size += chunk.length;
            if (headBytes < SNIFF_BYTES) {
              // A copy: a slice would pin the parser's whole read buffer until the file ends.
              head.push(Buffer.from(chunk.subarray(0, SNIFF_BYTES - headBytes)));
              headBytes += Math.min(chunk.length, SNIFF_BYTES - headBytes);
            }
          }),
        );
        stream.on('limit', () => tooLarge(`each attachment may be at most 25 MiB (${MAX_ATTACHMENT_BYTES} bytes)`));

        item.settled = new Promise<void>((settle) => {
          item.writer.on('error', diskFailed);
          // Settled whatever happens here: the clean-up of a failed request waits for it.
          const stored = owned(
            () => {
              failpoint('upload.stored');
              if (read.failed || !item.writer.writableFinished) return settle();
              item.empty = item.file.size === 0 && !info.filename;
              const sniffed = sniff(Buffer.concat(head), item.file.name, item.file.size <= SNIFF_BYTES);
              item.file.contentType = sniffed.contentType;
              item.file.previewKind = sniffed.previewKind;
              // A file has its final name only once whole; the rename is the commit point.
              fs.rename(item.temp, item.final, (err) => {
                if (err) diskFailed(err);
                settle();
              });
            },
            (err) => {
              settle();
              fail(err);
            },
          );
          item.writer.on('close', stored);
        });
        stream.pipe(item.writer);
      });

      read.on('filesLimit', () => tooLarge(`a message may carry at most ${MAX_ATTACHMENTS} files`));
      read.on('fieldsLimit', () => fail(badRequest(`too many fields: fields are ${[...rule.names].join(', ')}`)));
      read.on('partsLimit', () => tooLarge(`a message may have at most ${MAX_ATTACHMENTS + (rule.maxFields ?? MAX_FIELDS)} parts`));
      read.on('close', () => {
        if (read.failed) return;
        void Promise.all(incoming.map((item) => item.settled))
          .then(() => (durability === 'strict' && incoming.length > 0 ? syncDir().catch(diskFailed) : undefined))
          .then(() => {
            failpoint('upload.received');
            if (read.failed) return;
            active.delete(stop);
            for (const item of incoming) if (item.empty) unlink(item.final);
            resolve({ fields, files: incoming.filter((item) => !item.empty).map((item) => item.file) });
          })
          .catch(fail);
      });
      req.pipe(parser);
    });
  }

  return {
    receive,
    async abortAll() {
      await Promise.all([...active].map((stop) => stop(new HttpError(503, 'server shutting down', { Connection: 'close' }))));
    },
    discard(files) {
      for (const file of files) unlink(pathOf(file.id));
    },
    deleteFiles(attachmentIds) {
      // Ids come from the database, but a path is only ever built from a UUID.
      for (const id of attachmentIds) if (isUuid(id)) unlink(pathOf(id));
    },
  };
}

/** Start-up: files no row names are removed; rows no file backs are reported (they answer 404). */
function sweepOrphans(db: DB, dir: string, log: Log): void {
  const known = new Set(
    db
      .prepare<[], { id: string }>('SELECT id FROM attachments')
      .all()
      .map((row) => row.id),
  );
  let removed = 0;
  for (const name of fs.readdirSync(dir)) {
    const orphan = name.endsWith('.part') || (isUuid(name) && !known.has(name));
    known.delete(name);
    if (orphan) {
      fs.rmSync(path.join(dir, name), { force: true });
      removed++;
    }
  }
  if (removed > 0) log(`uploads: removed ${removed} file(s) that no message holds (left by a crash or a stop mid-upload)`);
  if (known.size > 0) {
    const some = [...known].slice(0, 5).join(', ');
    log(`uploads: ${known.size} attachment(s) have no file and answer 404: ${some}${known.size > 5 ? ', ...' : ''}`);
  }
}
