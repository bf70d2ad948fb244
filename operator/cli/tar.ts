// A tar archive (POSIX ustar) of small in-memory text files: what `report` writes, gzipped, so any `tar -xzf` reads it.
import { Buffer } from 'node:buffer';

/** One file of the archive. */
export interface TarEntry {
  /** Path inside the archive (at most 100 bytes). */
  name: string;
  data: string | Buffer;
}

const BLOCK = 512;

/** The ustar archive of `entries` (regular files, mode 0644, modified `mtime`). */
export function tarArchive(entries: readonly TarEntry[], mtime = new Date()): Buffer {
  const parts: Buffer[] = [];
  for (const e of entries) {
    const data = typeof e.data === 'string' ? Buffer.from(e.data) : e.data;
    if (Buffer.byteLength(e.name) > 100) throw new Error(`tar entry name longer than 100 bytes: ${e.name}`);
    const h = Buffer.alloc(BLOCK);
    const field = (off: number, len: number, v: string) => h.write(v, off, len, 'ascii');
    const octal = (off: number, len: number, n: number) => field(off, len, `${n.toString(8).padStart(len - 1, '0')}\0`);
    h.write(e.name, 0, 100, 'utf8');
    octal(100, 8, 0o644);
    octal(108, 8, 0);
    octal(116, 8, 0);
    octal(124, 12, data.length);
    octal(136, 12, Math.floor(mtime.getTime() / 1000));
    field(148, 8, ' '.repeat(8)); // the checksum counts its own field as spaces
    field(156, 1, '0');
    field(257, 6, 'ustar\0');
    field(263, 2, '00');
    let sum = 0;
    for (const b of h) sum += b;
    field(148, 8, `${sum.toString(8).padStart(6, '0')}\0 `);
    parts.push(h, data, Buffer.alloc((BLOCK - (data.length % BLOCK)) % BLOCK));
  }
  parts.push(Buffer.alloc(2 * BLOCK));
  return Buffer.concat(parts);
}
