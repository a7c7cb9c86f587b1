/**
 * Logging never throws and never stops the process. When the reader of stdout or stderr has gone
 * (`chat serve | tee log`, and tee dies), a write fails with EPIPE, reported as an 'error' event
 * on the stream: with no listener that is an uncaught exception, whose last-resort line
 * (src/server.ts) fails the same way on stderr, again and again, each on the next tick: the
 * process spun at 100 % CPU and never finished its drain. So both streams have a listener that
 * takes the error, and a stream that has failed is written to no more: what it would have said is
 * dropped, and everything else goes on.
 */
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', () => {
    // The reader has gone: later lines are dropped (write() below sees the stream destroyed).
  });
}

function write(stream: NodeJS.WriteStream, text: string): void {
  if (stream.destroyed || !stream.writable) return;
  try {
    stream.write(text);
  } catch {
    // A stream that throws rather than reports: dropped the same way.
  }
}

/**
 * The default log: lines are gathered and written once per turn of the event loop. stdout is
 * a pipe or a file, where Node writes synchronously: one write per request line cost about a
 * tenth of a message post under load (bench/post-message.ts). Lines still pending when the
 * process exits are written then.
 */
let pendingLines: string[] = [];
function flushLog(): void {
  if (pendingLines.length === 0) return;
  const text = `${pendingLines.join('\n')}\n`;
  pendingLines = [];
  write(process.stdout, text);
}
process.on('exit', flushLog);
export function stdoutLog(line: string): void {
  if (pendingLines.push(line) === 1) setImmediate(flushLog);
}

/** One line to stderr, at once (the entry point's errors and the last resort): never throws. */
export function stderrLine(line: string): void {
  write(process.stderr, `${line}\n`);
}
