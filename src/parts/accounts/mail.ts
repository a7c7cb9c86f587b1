import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import nodemailer from 'nodemailer';
import SMTPTransport from 'nodemailer/lib/smtp-transport';
import { type Clock, MINUTE, SECOND, iso } from '../../core/clock';
import { after, failpoint, logFailure } from '../../core/callbacks';
import type { Config } from '../../core/config';
import type { Log } from '../../core/types';

export interface Mail {
  to: string;
  subject: string;
  text: string;
}

/** Sending is fire-and-forget: it never blocks or fails the HTTP request that caused it. */
export interface Mailer {
  send(mail: Mail): void;
  /** Stops pending retries so shutdown is prompt; later sends are dropped (and logged). */
  close?(): void;
  /** Resolves once nothing is being delivered or waiting for a retry (tests, tools). */
  idle?(): Promise<void>;
}

/** nodemailer waits minutes by default; a mail server that slow is treated as down and retried. */
export const SMTP_TIMEOUTS = {
  connectionTimeout: 10 * SECOND,
  greetingTimeout: 10 * SECOND,
  socketTimeout: 30 * SECOND,
  dnsTimeout: 10 * SECOND,
} as const;

/** Waits before each retry: four attempts in all, spread over about six minutes. */
export const RETRY_DELAYS_MS: readonly number[] = [10 * SECOND, MINUTE, 5 * MINUTE];

/** What a mailer is built from. */
export interface MailerParts {
  config: Pick<Config, 'smtpUrl' | 'dataDir' | 'mailFrom'>;
  clock: Clock;
  log: Log;
}

export interface MailerOptions {
  retryDelaysMs?: readonly number[];
}

/** Where a message goes: SMTP, or an .eml file. Resolves with a phrase for the log line. */
interface Delivery {
  deliver(message: nodemailer.SendMailOptions): Promise<string>;
  close(): void;
}

/**
 * SMTP through nodemailer when SMTP_URL is set, else the outbox: each message written as an
 * .eml file under DATA_DIR/outbox/, so a self-hoster without a mail server can still open links.
 */
export function createMailer(parts: MailerParts, options: MailerOptions = {}): Mailer {
  const { config } = parts;
  const delivery = config.smtpUrl ? smtpDelivery(config.smtpUrl) : outboxDelivery(path.join(config.dataDir, 'outbox'), parts.clock);
  return retryingMailer(parts, delivery, options.retryDelaysMs ?? RETRY_DELAYS_MS);
}

function smtpDelivery(url: string): Delivery {
  // Query parameters of SMTP_URL (?requireTLS=true, ?tls.rejectUnauthorized=false, ...) are
  // nodemailer options and override these timeouts. The transport is built directly because
  // createTransport({url, ...}) keeps only what the URL says and drops the other options.
  const transport = nodemailer.createTransport(new SMTPTransport({ url, ...SMTP_TIMEOUTS }));
  return {
    deliver: async (message) => {
      await transport.sendMail(message);
      return 'sent by SMTP';
    },
    close: () => transport.close(),
  };
}

function outboxDelivery(dir: string, clock: Clock): Delivery {
  const transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'windows' });
  return {
    deliver: async (message) => {
      const info = await transport.sendMail(message);
      await fs.promises.mkdir(dir, { recursive: true });
      // Names sort by time; the suffix keeps two messages in the same millisecond apart.
      const name = `${iso(clock.now()).replace(/[:.]/g, '-')}-${crypto.randomBytes(4).toString('hex')}`;
      const file = path.join(dir, `${name}.eml`);
      // The message holds a live token: readable by the service's user only. Beside the .eml
      // (quoted-printable, where a copied link comes out broken) goes a .txt to read and copy.
      await fs.promises.writeFile(file, info.message as Buffer, { mode: 0o600 });
      const to = typeof message.to === 'object' && message.to !== null && 'address' in message.to ? message.to.address : String(message.to);
      await fs.promises.writeFile(path.join(dir, `${name}.txt`), `To: ${to}\nSubject: ${message.subject}\n\n${message.text}`, { mode: 0o600 });
      return `written to ${file} and ${name}.txt beside it (SMTP_URL is not set)`;
    },
    close: () => {},
  };
}

/**
 * Log lines name the recipient and subject only: bodies carry tokens, and tokens never go
 * to logs (anyone reading the log could take over the account).
 */
function retryingMailer({ config, log }: MailerParts, delivery: Delivery, delays: readonly number[]): Mailer {
  /** Pending retries, with the label of the message each one would send. */
  const timers = new Map<NodeJS.Timeout, string>();
  let closed = false;
  let inFlight = 0;
  let idleWaiters: (() => void)[] = [];

  const finish = () => {
    if (--inFlight > 0) return;
    const waiters = idleWaiters;
    idleWaiters = [];
    for (const resolve of waiters) resolve();
  };

  const attempt = (mail: Mail, message: nodemailer.SendMailOptions, n: number) => {
    const label = `mail to ${mail.to} "${mail.subject}"`;
    // A transport that throws instead of rejecting (a retry runs from a timer) fails this
    // mail like any other failure, never the process.
    Promise.resolve()
      .then(() => (failpoint('mail.deliver'), delivery.deliver(message)))
      .then(
        (where) => {
          log(`${label} ${where}`);
          finish();
        },
        (err: unknown) => {
          const reason = err instanceof Error ? err.message : String(err);
          if (closed || n >= delays.length) {
            log(`${label} failed, giving up after ${n + 1} attempt(s): ${reason}`);
            finish();
            return;
          }
          const delay = delays[n];
          log(`${label} failed (attempt ${n + 1} of ${delays.length + 1}), retrying in ${Math.ceil(delay / SECOND)} s: ${reason}`);
          const timer = after(
            delay,
            'mail-retry',
            () => {
              timers.delete(timer);
              attempt(mail, message, n + 1);
            },
            log,
          );
          timers.set(timer, label);
        },
      )
      .catch(logFailure(log, label));
  };

  return {
    send(mail) {
      if (closed) {
        log(`mail to ${mail.to} "${mail.subject}" not sent: shutting down`);
        return;
      }
      inFlight++;
      // An address object, not a string: nodemailer never parses it as a list of recipients.
      attempt(mail, { from: config.mailFrom, to: { name: '', address: mail.to }, subject: mail.subject, text: mail.text }, 0);
    },
    close() {
      closed = true;
      for (const [timer, label] of timers) {
        clearTimeout(timer);
        log(`${label} retry dropped: shutting down`);
        finish();
      }
      timers.clear();
      delivery.close();
    },
    idle: () => (inFlight === 0 ? Promise.resolve() : new Promise<void>((resolve) => idleWaiters.push(resolve))),
  };
}
