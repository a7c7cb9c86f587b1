/**
 * The ceiling for "post a message" (issue 10): the least such a request can cost on this
 * machine in our process model. One node:http process parses a small JSON body, runs one
 * prepared better-sqlite3 INSERT into a WAL database (same pragmas as src/core/db.ts) and answers
 * the record as JSON. No sessions, router, validation or permissions. Benchmark use only.
 *
 * POST /messages {content} -> 201 {id, channel_id, author_id, content, created_at}
 * Prints "ceiling listening on http://127.0.0.1:PORT". DATA_DIR names the directory of its
 * database. Stops on SIGTERM.
 */
import Database from 'better-sqlite3';
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

const db = new Database(path.join(process.env.DATA_DIR ?? '.', 'ceiling.db'));
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.exec(`CREATE TABLE IF NOT EXISTS messages (
  seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, channel_id TEXT NOT NULL, author_id TEXT NOT NULL,
  content TEXT NOT NULL, created_at TEXT NOT NULL)`);
const insert = db.prepare('INSERT INTO messages (id, channel_id, author_id, content, created_at) VALUES (?, ?, ?, ?, ?)');
const channelId = crypto.randomUUID();
const authorId = crypto.randomUUID();

const server = http.createServer((req, res) => {
  if (req.method !== 'POST' || req.url !== '/messages') {
    res.writeHead(404).end();
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    let content: unknown;
    try {
      content = JSON.parse(Buffer.concat(chunks).toString()).content;
    } catch {
      content = undefined;
    }
    if (typeof content !== 'string') {
      res.writeHead(400).end();
      return;
    }
    const record = { id: crypto.randomUUID(), channel_id: channelId, author_id: authorId, content, created_at: new Date().toISOString() };
    insert.run(record.id, record.channel_id, record.author_id, record.content, record.created_at);
    const body = JSON.stringify(record);
    res.writeHead(201, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body) }).end(body);
  });
});

server.listen(0, '127.0.0.1', () => {
  console.log(`ceiling listening on http://127.0.0.1:${(server.address() as AddressInfo).port}`);
});

process.once('SIGTERM', () => {
  server.close(() => {
    db.close();
    process.exit(0);
  });
  server.closeAllConnections();
});
