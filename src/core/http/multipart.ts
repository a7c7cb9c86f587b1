import type { IncomingMessage } from 'node:http';
import busboy from 'busboy';
import { failpoint, owned } from '../callbacks';
import type { Log } from '../types';
import { HttpError, badRequest } from './errors';
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
      parser.on(event, own((...args: unknown[]) => (failpoint(`multipart.${event}`), fn(...args))));
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
