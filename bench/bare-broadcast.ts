/**
 * The baseline for bench/fanout.ts: the textbook `ws` broadcast (serialize once, send to every
 * client) with no sessions, database or permissions. POST /messages {content} answers 201 with
 * a record shaped like ours and broadcasts it; any upgrade path is accepted. With `frame` in
 * the body too (a string), that string is what it broadcasts and answers, byte for byte:
 * bench/user-stream.ts sends the chat server's own frames so both write the same bytes; with
 * `every: k`, only every k-th socket (in the order they connected) is sent it.
 * POST /welcome {frame}: every socket opened from then on is sent that string first (the
 * baseline for the user stream's `ready`: the same bytes, nothing built).
 * Prints "bare listening on http://127.0.0.1:PORT". Stops on SIGTERM.
 */
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';

const wss = new WebSocketServer({ noServer: true, maxPayload: 4 * 1024 });

let welcome: string | null = null;

const server = http.createServer((req, res) => {
  if (req.method !== 'POST' || (req.url !== '/messages' && req.url !== '/welcome')) {
    res.writeHead(404).end();
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    // every: k sends to every k-th socket only (a channel half the members see: k = 2).
    const { content, frame, every = 1 } = JSON.parse(Buffer.concat(chunks).toString());
    if (req.url === '/welcome') {
      welcome = frame;
      res.writeHead(204).end();
      return;
    }
    const id = crypto.randomUUID();
    const record = {
      id,
      author_id: id,
      author: { user_id: id, username: 'bare' },
      content,
      reply_to: null,
      reply_preview: null,
      attachments: [],
      reactions: [],
      created_at: new Date().toISOString(),
      edited_at: null,
    };
    const data = typeof frame === 'string' ? frame : JSON.stringify(record);
    let i = 0;
    for (const client of wss.clients) if (i++ % every === 0) client.send(data);
    res.writeHead(201, { 'Content-Type': 'application/json' }).end(data);
  });
});

server.on('upgrade', (req, socket, head) => {
  socket.on('error', () => socket.destroy());
  wss.handleUpgrade(req, socket, head, (ws) => {
    ws.on('error', () => {});
    if (welcome !== null) ws.send(welcome);
  });
});

server.listen(0, '127.0.0.1', () => {
  console.log(`bare listening on http://127.0.0.1:${(server.address() as AddressInfo).port}`);
});

process.once('SIGTERM', () => {
  for (const client of wss.clients) client.terminate();
  server.close(() => process.exit(0));
});
