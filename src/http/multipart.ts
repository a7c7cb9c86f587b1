import type { IncomingMessage } from 'node:http';
import busboy from 'busboy';
import { HttpError, badRequest } from './errors';

/** busboy's limits; every one the caller relies on must be stated (busboy's file size limit is infinite). */
export type MultipartLimits = NonNullable<busboy.BusboyConfig['limits']>;

/** A multipart body being read: its parser, and the one way to end it at the first problem. */
export interface MultipartRead {
  parser: busboy.Busboy;
  /** True once `fail` ran: later parts are drained, not stored. */
  readonly failed: boolean;
  /**
   * Ends the request: stops parsing, drops what the client still sends (never buffered) and
   * rejects with `err`, closing the connection after the answer when the body has not all
   * arrived. The caller's `cleanUp` runs first, once; later calls do nothing.
   */
  fail(err: HttpError): void;
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
): MultipartRead {
  let parser: busboy.Busboy;
  try {
    parser = busboy({ headers: req.headers, ...options });
  } catch {
    throw badRequest('multipart body needs a boundary in its Content-Type');
  }
  let failed = false;
  const read: MultipartRead = {
    parser,
    get failed() {
      return failed;
    },
    fail(err) {
      if (failed) return;
      failed = true;
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
