import type { App } from './app';

export interface Mail {
  to: string;
  subject: string;
  text: string;
}

/** Sending is fire-and-forget: it never blocks or fails the HTTP request that caused it. */
export interface Mailer {
  send(mail: Mail): void;
  close?(): void;
}

// Placeholder until the email issue: logs that a mail would be sent, without its body
// (bodies carry tokens, which never go to logs).
export function createMailer(app: App): Mailer {
  return { send: (mail) => app.log(`mail to ${mail.to}: ${mail.subject} (delivery not configured)`) };
}

export function mailRoutes(_app: App): import('./app').Route[] {
  return [];
}
