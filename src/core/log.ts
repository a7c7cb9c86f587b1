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
  process.stdout.write(text);
}
process.on('exit', flushLog);
export function stdoutLog(line: string): void {
  if (pendingLines.push(line) === 1) setImmediate(flushLog);
}
