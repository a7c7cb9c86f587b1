import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { SMTPServer } from 'smtp-server';

/** A message as a test reads it: envelope recipients, subject and decoded text. */
export interface ReceivedMail {
  to: string[];
  subject: string;
  text: string;
  raw: string;
}

/**
 * A real SMTP server on 127.0.0.1 (port 0) that keeps every message it accepts.
 * STARTTLS and AUTH are off, so nodemailer talks plain SMTP to it without any special option.
 */
export class SmtpSink {
  readonly received: ReceivedMail[] = [];
  /** Messages to refuse (451, a temporary failure) before accepting again. */
  rejectNext = 0;
  private unread: ReceivedMail[] = [];
  private waiters: { match: (m: ReceivedMail) => boolean; resolve: (m: ReceivedMail) => void }[] = [];
  private readonly server: SMTPServer;
  port = 0;

  constructor() {
    this.server = new SMTPServer({
      disabledCommands: ['STARTTLS', 'AUTH'],
      // close() waits this long for clients still connected before cutting them off.
      closeTimeout: 100,
      logger: false,
      onData: (stream, session, callback) => {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => {
          if (this.rejectNext > 0) {
            this.rejectNext--;
            const err = Object.assign(new Error('try again later'), { responseCode: 451 });
            callback(err);
            return;
          }
          const mail = parseMail(Buffer.concat(chunks).toString('utf8'));
          mail.to = session.envelope.rcptTo.map((r) => r.address);
          this.received.push(mail);
          this.deliver(mail);
          callback();
        });
      },
    });
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.server.address() as net.AddressInfo).port;
    return this;
  }

  get url(): string {
    return `smtp://127.0.0.1:${this.port}`;
  }

  /** The next unread message to this address (waits for it). */
  next(to: string): Promise<ReceivedMail> {
    const match = (m: ReceivedMail) => m.to.some((address) => address.toLowerCase() === to.toLowerCase());
    const index = this.unread.findIndex(match);
    if (index >= 0) return Promise.resolve(this.unread.splice(index, 1)[0]);
    return new Promise((resolve) => this.waiters.push({ match, resolve }));
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private deliver(mail: ReceivedMail): void {
    const index = this.waiters.findIndex((w) => w.match(mail));
    if (index === -1) {
      this.unread.push(mail);
      return;
    }
    this.waiters.splice(index, 1)[0].resolve(mail);
  }
}

/** Parses a single-part text message (what the mailer sends): headers, then the decoded body. */
export function parseMail(raw: string): ReceivedMail {
  const split = raw.search(/\r?\n\r?\n/);
  const head = raw.slice(0, split).replace(/\r?\n[ \t]+/g, ' ');
  const body = raw.slice(split).replace(/^\r?\n\r?\n/, '');
  const header = (name: string) =>
    head
      .split(/\r?\n/)
      .find((line) => line.toLowerCase().startsWith(`${name.toLowerCase()}:`))
      ?.slice(name.length + 1)
      .trim() ?? '';
  const encoding = header('Content-Transfer-Encoding').toLowerCase();
  let text = body;
  if (encoding === 'quoted-printable') {
    text = decodeQuotedPrintable(body);
  } else if (encoding === 'base64') {
    text = Buffer.from(body, 'base64').toString('utf8');
  }
  return {
    to: header('To')
      .split(',')
      .map((s) => s.trim().replace(/^.*<|>$/g, '')),
    subject: header('Subject'),
    text,
    raw,
  };
}

/** RFC 2045 quoted-printable: soft line breaks dropped, =XX turned back into bytes. */
function decodeQuotedPrintable(body: string): string {
  const flat = body.replace(/=\r?\n/g, '');
  const bytes: number[] = [];
  for (let i = 0; i < flat.length; i++) {
    const hex = flat.slice(i + 1, i + 3);
    if (flat[i] === '=' && /^[0-9A-F]{2}$/i.test(hex)) {
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else {
      bytes.push(flat.charCodeAt(i));
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

/** The first absolute link in the message whose path starts with `pathPrefix`. */
export function linkIn(mail: ReceivedMail, pathPrefix: string): URL {
  for (const found of mail.text.matchAll(/https?:\/\/\S+/g)) {
    const url = new URL(found[0]);
    if (url.pathname.startsWith(pathPrefix)) return url;
  }
  throw new Error(`no ${pathPrefix} link in:\n${mail.text}`);
}

/** The token a link carries. */
export const tokenOf = (link: URL): string => link.searchParams.get('token') ?? '';

/** Every message the outbox default wrote under DATA_DIR/outbox/, oldest first. */
export function readOutbox(dataDir: string): (ReceivedMail & { file: string })[] {
  const dir = path.join(dataDir, 'outbox');
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((name) => name.endsWith('.eml'))
    .sort()
    .map((name) => ({ ...parseMail(fs.readFileSync(path.join(dir, name), 'utf8')), file: path.join(dir, name) }));
}

/** A port on 127.0.0.1 where nothing listens: a mail server that is down. */
export async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A server that accepts connections and never says a word: a mail server that hangs. */
export async function silentServer(): Promise<{ port: number; connected: Promise<void>; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  let onConnect = () => {};
  const connected = new Promise<void>((resolve) => (onConnect = resolve));
  const server = net.createServer((socket) => {
    sockets.add(socket);
    onConnect();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    connected,
    close: () =>
      new Promise<void>((resolve) => {
        // A 421 greeting, not a bare hang-up: nodemailer then clears its greeting timer at once.
        for (const socket of sockets) socket.end('421 shutting down\r\n');
        server.close(() => resolve());
      }),
  };
}
