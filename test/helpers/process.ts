import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';

/** The built server (dist/server.js), as `make run` starts it. */
export const SERVER = path.join(__dirname, '..', '..', 'dist', 'server.js');

export interface ServerProcess {
  child: ChildProcess;
  url: string;
  /** Everything it printed so far, stdout and stderr together. */
  output(): string;
  /** Resolves with the exit code once it has exited. */
  exited: Promise<number | null>;
}

/**
 * Starts dist/server.js in a process of its own on a free port of 127.0.0.1; resolves with its
 * base URL once it listens. Only PATH and `env` reach it, rate limits off unless `env` says.
 */
export function startServerProcess(dataDir: string, env: Record<string, string> = {}): Promise<ServerProcess> {
  const child = spawn(process.execPath, [SERVER], {
    env: { PATH: process.env.PATH ?? '', PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, RATE_LIMIT: 'off', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no listening line within 30 s:\n${out}`)), 30_000); // a busy machine (the whole suite beside it) starts a process slowly
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const found = /listening on (http:\/\/[^\s]+)/.exec(out);
      if (found) {
        clearTimeout(timer);
        resolve({ child, url: found[1], output: () => out, exited });
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => (out += chunk.toString()));
    void exited.then((code) => reject(new Error(`exited with ${code} before listening:\n${out}`)));
  });
}

/** Kills the process with SIGKILL and waits until it is gone. */
export const killed = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
