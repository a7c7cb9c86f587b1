import crypto from 'node:crypto';
import fs from 'node:fs';
import type { IncomingMessage } from 'node:http';
import path from 'node:path';
import busboy from 'busboy';
import { failpoint, owned } from '../callbacks';
import type { Log } from '../types';
import { HttpError, badRequest } from './errors';
import { mediaType } from './body';
import { toHttpError } from './respond';

/** busboy's limits; every one the caller relies on must be stated (busboy's file size limit is infinite). */
export type MultipartLimits = NonNullable<busboy.BusboyConfig['limits']>;

/** A multipart body being read: its parser, and the one way to end it at the first problem. */
export interface MultipartRead {
  parser: busboy.Busboy;
  /**
   * Adds a handler for one of the parser's events. busboy calls it from its own stream
   * callbacks, outside the request's promise: what it throws fails this request (an HttpError
   * as it says, anything else a logged 500), never the process.
   */
  on<E extends keyof busboy.BusboyEvents>(event: E, handler: busboy.BusboyEvents[E]): void;
  /** A callback of this read's own (a file's writer closing): its errors fail this request too. */
  own<A extends unknown[]>(fn: (...args: A) => void): (...args: A) => void;
  /** True once `fail` ran: later parts are drained, not stored. */
  readonly failed: boolean;
  /**
   * Ends the request: stops parsing, drops what the client still sends (never buffered) and
   * rejects with `err`, closing the connection after the answer when the body has not all
   * arrived. The caller's `cleanUp` runs first, once; later calls do nothing. Anything but an
   * HttpError is unexpected: logged with its stack, answered 500.
   */
  fail(err: unknown): void;
}

/**
 * Starts reading a multipart body into busboy. A body without a boundary throws 400; a
 * malformed body and a client that goes away mid-body fail the read (400), so the caller only
 * adds its part handlers, then pipes: `req.pipe(read.parser)`.
 */
export function readMultipart(
  req: IncomingMessage,
  options: { limits: MultipartLimits; defParamCharset?: string },
  reject: (err: HttpError) => void,
  cleanUp: () => void,
  log: Log,
): MultipartRead {
  let parser: busboy.Busboy;
  try {
    parser = busboy({ headers: req.headers, ...options });
  } catch {
    throw badRequest('multipart body needs a boundary in its Content-Type');
  }
  let failed = false;
  const own = <A extends unknown[]>(fn: (...args: A) => void) => owned(fn, (err) => read.fail(err));
  const read: MultipartRead = {
    parser,
    own,
    on(event, handler) {
      const fn = handler as (...args: unknown[]) => void;
      parser.on(
        event,
        own((...args: unknown[]) => (failpoint(`multipart.${event}`), fn(...args))),
      );
    },
    get failed() {
      return failed;
    },
    fail(thrown) {
      if (failed) return;
      failed = true;
      const err = toHttpError(thrown, log);
      req.unpipe(parser);
      // Not at once: busboy may be inside its own write, still touching the part it reported.
      process.nextTick(() => parser.destroy());
      req.resume();
      cleanUp();
      reject(req.complete ? err : new HttpError(err.status, err.message, { ...err.headers, Connection: 'close' }));
    },
  };
  parser.on('error', () => read.fail(badRequest('malformed multipart body')));
  req.on('error', () => read.fail(badRequest('upload interrupted')));
  req.on('close', () => {
    if (!req.complete) read.fail(badRequest('upload interrupted'));
  });
  return read;
}

/** A part's name as a refusal quotes it: busboy reports a missing or empty name as undefined. */
export const quotedPartName = (name: string | undefined): string => (name ? `"${name.slice(0, 100)}"` : 'without a name');

/**
 * Streams the one file of a multipart body (field `field`, nothing else) to a new temporary
 * file in `dir`, never holding it in memory; its path. 415 for another body, 413 past `maxBytes`
 * (said before reading when the length is declared), 400 for other fields or files. The caller
 * removes the file once done with it.
 */
export async function receiveFile(req: IncomingMessage, spec: { field: string; what: string; maxBytes: number; dir: string }, log: Log): Promise<string> {
  return (await receiveForm(req, { ...spec, textFields: [] }, log)).file;
}

/** The longest text field receiveForm takes, in bytes (a name, a description). */
export const MAX_FORM_FIELD_BYTES = 1024;

/**
 * receiveFile with text fields beside the file: those named in `textFields` (each at most
 * MAX_FORM_FIELD_BYTES, 400 past it), any of them absent; 400 for any other field.
 */
export function receiveForm(
  req: IncomingMessage,
  spec: { field: string; what: string; maxBytes: number; dir: string; textFields: readonly string[] },
  log: Log,
): Promise<{ file: string; fields: Record<string, string> }> {
  const { field, what, maxBytes, dir, textFields } = spec;
  const size =
    maxBytes >= 1024 * 1024 * 1024
      ? `${maxBytes / 1024 / 1024 / 1024} GiB`
      : maxBytes >= 1024 * 1024
        ? `${maxBytes / 1024 / 1024} MiB`
        : `${maxBytes / 1024} KiB`;
  if (mediaType(req) !== 'multipart/form-data') {
    const also = textFields.length > 0 ? ` (and ${textFields.join(', ')})` : '';
    return Promise.reject(new HttpError(415, `send ${what} as multipart/form-data with one file in the field ${field}${also}`));
  }
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes + 64 * 1024) {
    return Promise.reject(new HttpError(413, `${what} may be at most ${size}`, { Connection: 'close' }));
  }
  const temp = path.join(dir, `${crypto.randomUUID()}.upload.part`);
  const fields: Record<string, string> = {};
  return new Promise((resolve, reject) => {
    let writer: fs.WriteStream | null = null;
    let written: Promise<void> | null = null;
    const read = readMultipart(
      req,
      {
        limits: {
          fileSize: maxBytes + 1,
          files: 1,
          fields: textFields.length,
          fieldSize: MAX_FORM_FIELD_BYTES + 1,
          parts: 2 + textFields.length,
          headerPairs: 16,
        },
        defParamCharset: 'utf8',
      },
      reject,
      () => {
        // A part cut off mid-file never ends its writer by itself: close it, then remove the file.
        writer?.destroy();
        void (written ?? Promise.resolve()).finally(() => fs.rm(temp, { force: true }, () => {}));
      },
      log,
    );
    const { parser, fail } = read;
    read.on('file', (name, stream) => {
      stream.on('error', () => {});
      if (read.failed) return void stream.resume();
      if (name !== field) {
        stream.resume();
        return fail(badRequest(`unexpected file field ${quotedPartName(name)}: the file goes in ${field}`));
      }
      const file = (writer = fs.createWriteStream(temp, { flags: 'wx' }));
      written = new Promise((settle) => file.on('close', settle));
      file.on('error', () => fail(new HttpError(500, `${what} could not be stored`)));
      stream.on('limit', () => fail(new HttpError(413, `${what} may be at most ${size}`)));
      stream.pipe(file);
    });
    read.on('field', (name, value, info) => {
      if (!textFields.includes(name)) {
        const others = textFields.length > 0 ? ` and ${textFields.join(', ')}` : '';
        return fail(badRequest(`unexpected field ${quotedPartName(name)}: send only the file ${field}${others}`));
      }
      if (info.valueTruncated || Buffer.byteLength(value) > MAX_FORM_FIELD_BYTES) return fail(badRequest(`${name} is too long`));
      if (Object.hasOwn(fields, name)) return fail(badRequest(`${name} is given twice`));
      fields[name] = value;
    });
    read.on('fieldsLimit', () =>
      fail(badRequest(textFields.length > 0 ? `send only the file ${field} and ${textFields.join(', ')}` : `send only the file ${field}`)),
    );
    read.on('filesLimit', () => fail(badRequest('send one file')));
    read.on('partsLimit', () => fail(badRequest('send one file')));
    read.on('close', () => {
      if (read.failed) return;
      if (!written) return fail(badRequest(`no file: send it in the field ${field}`));
      void written.then(() => {
        if (!read.failed) resolve({ file: temp, fields });
      });
    });
    req.pipe(parser);
  });
}
