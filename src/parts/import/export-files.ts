import fs from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import yauzl from 'yauzl';

/**
 * The files of an export, from a folder or a zip, by their path inside it ('/'-separated, never
 * leaving it). A hostile export is refused with a clear error before anything is read: a zip entry
 * whose name climbs out (`..`, an absolute path, a drive letter), too many entries, an entry or a
 * whole that would unpack past the limits (a zip bomb); yauzl checks each entry's real size
 * against the size it declares while reading. Symbolic links in a folder are skipped.
 */
export interface ExportFiles {
  /** Every file's path, sorted. */
  paths(): string[];
  /** Its size in bytes, or undefined for no such file. */
  size(file: string): number | undefined;
  read(file: string): Promise<Buffer>;
  /** Its bytes in pieces as they unpack, for a reader that keeps less than the file holds (a channel file). */
  stream(file: string): AsyncIterable<Buffer>;
  close(): void;
}

export class ImportError extends Error {}

export interface ExportLimits {
  /** Files in an export at most. */
  files: number;
  /** Bytes of one file (JSON or media) at most. */
  fileBytes: number;
  /** Bytes of the whole export, unpacked, at most. */
  totalBytes: number;
}

/** A file is read in pieces of about this size. */
const PIECE_BYTES = 64 * 1024;

/**
 * A file's pieces; any failure to read it is the export's (a refusal naming the file): yauzl fails
 * a stream whose bytes unpacked differ from the size its entry declares. Leaving the loop early
 * closes the file.
 */
async function* pieces(file: string, open: () => Promise<Readable>): AsyncGenerator<Buffer> {
  let stream: Readable;
  try {
    stream = await open();
  } catch (err) {
    throw new ImportError(`${file}: cannot be read (${(err as Error).message})`);
  }
  try {
    for await (const chunk of stream) yield chunk as Buffer;
  } catch (err) {
    throw new ImportError(`${file}: ${(err as Error).message}`);
  } finally {
    stream.destroy();
  }
}

export const EXPORT_LIMITS: ExportLimits = { files: 500_000, fileBytes: 1024 * 1024 * 1024, totalBytes: 200 * 1024 * 1024 * 1024 };

/**
 * A path inside an export, normalized: backslashes (an export made on Windows) become '/', and a
 * path that would leave the export (absolute, a drive letter, `..` above its root) is null.
 */
export function insidePath(raw: string): string | null {
  const slashed = raw.replace(/\\/g, '/');
  if (slashed.startsWith('/') || /^[A-Za-z]:/.test(slashed) || slashed.includes('\0')) return null;
  const parts: string[] = [];
  for (const part of slashed.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (parts.length === 0) return null;
      parts.pop();
    } else parts.push(part);
  }
  return parts.length ? parts.join('/') : null;
}

/** Where an attachment's `url` points: a file of the export, a remote address (missing), or an error. */
export function assetPath(jsonFile: string, url: string): { file: string } | { remote: string } {
  if (/^[a-z][a-z0-9+.-]*:/i.test(url) && !/^[A-Za-z]:[\\/]/.test(url)) return { remote: url };
  let decoded = url;
  try {
    decoded = decodeURIComponent(url);
  } catch {
    // Not percent-encoded after all: taken as it is.
  }
  const dir = jsonFile.includes('/') ? jsonFile.slice(0, jsonFile.lastIndexOf('/') + 1) : '';
  const file = insidePath(dir + decoded);
  if (file === null) throw new ImportError(`${jsonFile}: an attachment path leaves the export: ${url.slice(0, 200)}`);
  return { file };
}

export async function openExport(source: string, limits: ExportLimits = EXPORT_LIMITS): Promise<ExportFiles> {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(source);
  } catch {
    throw new ImportError(`${source}: no such file or folder`);
  }
  return stat.isDirectory() ? openFolder(source, limits) : openZip(source, limits);
}

function openFolder(root: string, limits: ExportLimits): ExportFiles {
  const sizes = new Map<string, number>();
  let total = 0;
  const walk = (dir: string, prefix: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
      if (entry.isDirectory()) walk(path.join(dir, entry.name), rel);
      else if (entry.isFile()) {
        const size = fs.statSync(path.join(dir, entry.name)).size;
        if (sizes.size >= limits.files) throw new ImportError(`the export holds more than ${limits.files} files`);
        total += size;
        if (total > limits.totalBytes) throw new ImportError(`the export is larger than ${limits.totalBytes} bytes`);
        sizes.set(rel, size);
      }
    }
  };
  try {
    walk(root, '');
  } catch (err) {
    if (err instanceof ImportError) throw err;
    throw new ImportError(`${root}: cannot be read (${(err as Error).message})`);
  }
  return {
    paths: () => [...sizes.keys()].sort(),
    size: (file) => sizes.get(file),
    async read(file) {
      const size = sizes.get(file);
      if (size === undefined) throw new ImportError(`${file}: not in the export`);
      if (size > limits.fileBytes) throw new ImportError(`${file}: ${size} bytes, more than ${limits.fileBytes}`);
      return fs.promises.readFile(path.join(root, ...file.split('/'))).catch((err: Error) => {
        throw new ImportError(`${file}: cannot be read (${err.message})`);
      });
    },
    stream: (file) => {
      const size = sizes.get(file);
      if (size === undefined) throw new ImportError(`${file}: not in the export`);
      if (size > limits.fileBytes) throw new ImportError(`${file}: ${size} bytes, more than ${limits.fileBytes}`);
      return pieces(file, async () => fs.createReadStream(path.join(root, ...file.split('/')), { highWaterMark: PIECE_BYTES }));
    },
    close: () => {},
  };
}

async function openZip(file: string, limits: ExportLimits): Promise<ExportFiles> {
  let zip: yauzl.ZipFile;
  try {
    zip = await new Promise<yauzl.ZipFile>((resolve, reject) =>
      yauzl.open(file, { lazyEntries: true, autoClose: false, validateEntrySizes: true, strictFileNames: false }, (err, opened) =>
        err ? reject(err) : resolve(opened),
      ),
    );
  } catch (err) {
    throw new ImportError(`${file}: not a zip file (${(err as Error).message})`);
  }
  const entries = new Map<string, yauzl.Entry>();
  let total = 0;
  try {
    await new Promise<void>((resolve, reject) => {
      zip.on('error', reject);
      zip.on('end', resolve);
      zip.on('entry', (entry: yauzl.Entry) => {
        if (!entry.fileName.endsWith('/')) {
          const name = insidePath(entry.fileName);
          if (name === null) return reject(new ImportError(`${entry.fileName}: a path that leaves the export`));
          if (entries.size >= limits.files) return reject(new ImportError(`the export holds more than ${limits.files} files`));
          if (entry.uncompressedSize > limits.fileBytes)
            return reject(new ImportError(`${name}: ${entry.uncompressedSize} bytes unpacked, more than ${limits.fileBytes}`));
          total += entry.uncompressedSize;
          if (total > limits.totalBytes) return reject(new ImportError(`the export unpacks to more than ${limits.totalBytes} bytes`));
          entries.set(name, entry);
        }
        zip.readEntry();
      });
      zip.readEntry();
    });
  } catch (err) {
    zip.close();
    if (err instanceof ImportError) throw err;
    // yauzl refuses such names itself, before this code sees them.
    const climbing = /^(?:invalid relative path|absolute path): (.*)$/.exec((err as Error).message);
    if (climbing) throw new ImportError(`${climbing[1]}: a path that leaves the export`);
    throw new ImportError(`${file}: a damaged zip (${(err as Error).message})`);
  }
  const stream = (name: string) => {
    const entry = entries.get(name);
    if (!entry) throw new ImportError(`${name}: not in the export`);
    return pieces(
      name,
      () =>
        new Promise<Readable>((resolve, reject) => {
          zip.openReadStream(entry, (err, opened) => (err || !opened ? reject(err ?? new Error('no stream')) : resolve(opened)));
        }),
    );
  };
  return {
    paths: () => [...entries.keys()].sort(),
    size: (name) => entries.get(name)?.uncompressedSize,
    async read(name) {
      const chunks: Buffer[] = [];
      for await (const chunk of stream(name)) chunks.push(chunk);
      return Buffer.concat(chunks);
    },
    stream,
    close: () => zip.close(),
  };
}
