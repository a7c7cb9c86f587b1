import crypto from 'node:crypto';
import http from 'node:http';
import zlib from 'node:zlib';
import type { Wire } from './requests';

/**
 * Sends a request exactly as generated (node:http: no URL normalization, malformed bodies go
 * out as they are), bounded in time, and tracks what is in flight so a crash of the in-process
 * server can fail those requests at once instead of leaving them hanging.
 */
export interface Answer {
  status: number;
  contentType: string | null;
  headers: http.IncomingHttpHeaders;
  text: string;
  /** The whole body arrived (not cut off by the server). */
  complete: boolean;
}

export class NoAnswer extends Error {}

const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
const inFlight = new Set<http.ClientRequest>();

/** Fails every request still waiting (after the server process crashed). */
export function abortInFlight(reason: string): void {
  for (const req of inFlight) req.destroy(new NoAnswer(reason));
}

export function closeAgent(): void {
  agent.destroy();
}

export function send(base: string, wire: Wire, timeoutMs: number): Promise<Answer> {
  const url = new URL(base);
  return new Promise<Answer>((resolve, reject) => {
    const headers: Record<string, string> = { ...wire.headers };
    if (wire.body) headers['content-length'] = String(wire.body.length);
    if (wire.upgrade) {
      headers.connection = 'Upgrade';
      headers.upgrade = 'websocket';
      headers['sec-websocket-version'] = '13';
      headers['sec-websocket-key'] = crypto.randomBytes(16).toString('base64');
    }
    let req: http.ClientRequest;
    try {
      req = http.request({
        host: url.hostname,
        port: url.port,
        method: wire.method,
        path: wire.target,
        headers,
        agent: wire.upgrade ? false : agent,
        insecureHTTPParser: true,
      });
    } catch (err) {
      reject(new Error(`the request could not be written: ${(err as Error).message}`));
      return;
    }
    inFlight.add(req);
    let answered = false;
    const timer = setTimeout(() => req.destroy(new NoAnswer(`no answer within ${timeoutMs} ms`)), timeoutMs);
    const done = () => {
      clearTimeout(timer);
      inFlight.delete(req);
    };
    req.on('upgrade', (res, socket) => {
      answered = true;
      done();
      socket.destroy();
      resolve({ status: res.statusCode ?? 0, contentType: null, headers: res.headers, text: '', complete: true });
    });
    req.on('response', (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', () => {});
      res.on('close', () => {
        done();
        resolve({
          status: res.statusCode ?? 0,
          contentType: res.headers['content-type'] ?? null,
          headers: res.headers,
          text: decoded(Buffer.concat(chunks), res.headers['content-encoding']).toString('utf8'),
          complete: res.complete,
        });
      });
    });
    req.on('error', (err) => {
      if (answered) return; // the server answered early and closed while the body was still going out
      done();
      reject(err instanceof NoAnswer ? err : new NoAnswer(`the connection failed without an answer: ${err.message}`));
    });
    if (wire.body) req.end(wire.body);
    else req.end();
  });
}

/**
 * The body as the server meant it: a request that says `Accept-Encoding: gzip, br` may get a
 * compressed answer. One that does not decode is left as it came, and fails the checks after.
 */
function decoded(body: Buffer, coding: string | undefined): Buffer {
  try {
    if (coding === 'br') return zlib.brotliDecompressSync(body);
    if (coding === 'gzip') return zlib.gunzipSync(body);
  } catch {
    // left as it came
  }
  return body;
}
