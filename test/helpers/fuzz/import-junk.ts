import zlib from 'node:zlib';

/**
 * Hostile exports for the import's upload (issue 45, docs/security.md "Import memory"): zips of a
 * few KiB whose one channel file is a MiB of junk where the format ignores it, inside an array it
 * keeps, past an array's bound, in a kept string past its length, nested past any depth, or not an
 * object at all. Each must be answered with a 4xx (or checked, for junk the format ignores), never
 * with a 5xx or a server that stops answering. Built here, deflated, without a zip library (the
 * fuzzer's cases are made synchronously).
 */
const JUNK = 1024 * 1024;
const head = '{"guild":{"id":"800000000000000001","name":"Fuzz"},"channel":{"id":"810000000000000001","type":"GuildTextChat","name":"general"},"messages":[';
const message =
  '{"id":"900000000000000001","type":"Default","timestamp":"2024-01-01T00:00:00+00:00","content":"hi","author":{"id":"700000000000000001","name":"a"}';
const junk = (unit: string) => unit.repeat(Math.floor(JUNK / unit.length));

const FILES: Record<string, string> = {
  ignoredField: `${head}${message},"junk":[${junk('[],')}[]]}]}`,
  keptArray: `${head}${message},"mentions":[${junk('[],')}[]]}]}`,
  pastMaxItems: `${head}${message},"mentions":[${junk('{},')}{}]}]}`,
  longKeptString: `${head}${message.replace('"content":"hi"', `"content":"${junk('x')}"`)}}]}`,
  deep: `${head}${message},"junk":${'['.repeat(JUNK / 4)}}]}`,
  notAnObject: `[${junk('[],')}[]]`,
};

/** A zip holding `name` with `text`, deflated. */
function zipOf(name: string, text: string): Uint8Array {
  const data = Buffer.from(text);
  const packed = zlib.deflateRawSync(data);
  const crc = zlib.crc32(data);
  const file = Buffer.from(name);
  const local = Buffer.alloc(30);
  local.writeUInt32LE(0x04034b50, 0);
  local.writeUInt16LE(20, 4);
  local.writeUInt16LE(8, 8);
  local.writeUInt16LE(0x21, 12);
  local.writeUInt32LE(crc, 14);
  local.writeUInt32LE(packed.length, 18);
  local.writeUInt32LE(data.length, 22);
  local.writeUInt16LE(file.length, 26);
  const central = Buffer.alloc(46);
  central.writeUInt32LE(0x02014b50, 0);
  central.writeUInt16LE(20, 4);
  central.writeUInt16LE(20, 6);
  central.writeUInt16LE(8, 10);
  central.writeUInt16LE(0x21, 14);
  central.writeUInt32LE(crc, 16);
  central.writeUInt32LE(packed.length, 20);
  central.writeUInt32LE(data.length, 24);
  central.writeUInt16LE(file.length, 28);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(1, 8);
  end.writeUInt16LE(1, 10);
  end.writeUInt32LE(central.length + file.length, 12);
  end.writeUInt32LE(local.length + file.length + packed.length, 16);
  return Buffer.concat([local, file, packed, central, file, end]);
}

export const HOSTILE_EXPORTS: Record<string, Uint8Array> = Object.fromEntries(
  Object.entries(FILES).map(([what, text]) => [what, zipOf('Fuzz - general [810000000000000001].json', text)]),
);
