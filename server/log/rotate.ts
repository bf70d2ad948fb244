// Log rotation (--enable-log-rotation, --log-rotation-config-json; 3.5) with the rules of the reference's rotating
// file: a write that would take the file past maxsize MiB first renames it to <name>-<time><ext> (UTC unless
// localtime, milliseconds in the time) and opens a new one; then backups beyond maxbackups (0: all kept) or older
// than maxage days (0: no limit) are removed, and with compress the others are gzipped (<backup>.gz).
import { closeSync, existsSync, fstatSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import { gzipSync } from 'node:zlib';

/** The rotation settings, as the reference's JSON names them. */
export interface LogRotation {
  maxsize: number;
  maxage: number;
  maxbackups: number;
  localtime: boolean;
  compress: boolean;
}

/** The reference's default --log-rotation-config-json. */
export const DEFAULT_LOG_ROTATION_JSON = '{"maxsize": 100, "maxage": 0, "maxbackups": 0, "localtime": false, "compress": false}';

const FIELDS: Record<keyof LogRotation, 'int' | 'bool'> = { maxsize: 'int', maxage: 'int', maxbackups: 'int', localtime: 'bool', compress: 'bool' };

/**
 * The settings of a --log-rotation-config-json value, or the reference's error text: a value that is not JSON is
 * "improperly formatted", a field of the wrong type "invalid". A field left out is zero, as in the reference.
 */
export function parseLogRotation(json: string): LogRotation | string {
  let v: unknown;
  try {
    v = JSON.parse(json);
  } catch (e) {
    return `improperly formatted log rotation config: ${(e as Error).message}`;
  }
  const out: LogRotation = { maxsize: 0, maxage: 0, maxbackups: 0, localtime: false, compress: false };
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return `invalid log rotation config: json: cannot unmarshal ${Array.isArray(v) ? 'array' : typeof v} into Go value of type logRotationConfig`;
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
    const field = Object.keys(FIELDS).find((f) => f === k.toLowerCase()) as keyof LogRotation | undefined;
    if (!field) continue; // unknown fields are ignored, as encoding/json does
    const want = FIELDS[field];
    if (want === 'int' ? !Number.isInteger(x) : typeof x !== 'boolean') {
      return `invalid log rotation config: json: cannot unmarshal ${typeof x} into Go struct field logRotationConfig.Logger.${field} of type ${want === 'int' ? 'int' : 'bool'}`;
    }
    (out as unknown as Record<string, unknown>)[field] = x;
  }
  return out;
}

const MiB = 1024 * 1024;

/** A file written through rotation: `write` appends, rotating first when the file would pass its size. */
export class RotatingFile {
  private fd: number;
  private size: number;
  private readonly max: number;

  constructor(
    private readonly path: string,
    private readonly r: LogRotation,
  ) {
    this.max = (r.maxsize > 0 ? r.maxsize : 100) * MiB;
    this.fd = openSync(path, 'a');
    this.size = fstatSync(this.fd).size;
  }

  write(chunk: string): void {
    const n = Buffer.byteLength(chunk);
    if (n > this.max) throw new Error(`write length ${n} exceeds maximum file size ${this.max}`);
    if (this.size + n > this.max) this.rotate();
    writeSync(this.fd, chunk);
    this.size += n;
  }

  close(): void {
    closeSync(this.fd);
  }

  private rotate(): void {
    closeSync(this.fd);
    renameSync(this.path, this.backupName(new Date()));
    this.fd = openSync(this.path, 'a');
    this.size = 0;
    this.prune();
  }

  /** <name>-2006-01-02T15-04-05.000<ext> beside the file. */
  private backupName(t: Date): string {
    const ext = extname(this.path);
    const stem = basename(this.path, ext);
    const local = this.r.localtime ? new Date(t.getTime() - t.getTimezoneOffset() * 60_000) : t;
    const stamp = local.toISOString().slice(0, 23).replace(/:/g, '-');
    return join(dirname(this.path), `${stem}-${stamp}${ext}`);
  }

  /** Removes backups beyond maxbackups or older than maxage, then compresses the rest when asked. */
  private prune(): void {
    const dir = dirname(this.path);
    const ext = extname(this.path);
    const stem = basename(this.path, ext);
    const pattern = new RegExp(`^${escape(stem)}-(\\d{4}-\\d{2}-\\d{2}T\\d{2}-\\d{2}-\\d{2}\\.\\d{3})${escape(ext)}(\\.gz)?$`);
    const backups = readdirSync(dir)
      .map((f) => ({ f, m: pattern.exec(f) }))
      .filter((x): x is { f: string; m: RegExpExecArray } => x.m !== null)
      .map(({ f, m }) => ({ f, time: m[1], gz: m[2] !== undefined }))
      .sort((a, b) => (a.time < b.time ? 1 : a.time > b.time ? -1 : 0));
    let keep = backups;
    if (this.r.maxbackups > 0) keep = keep.slice(0, this.r.maxbackups);
    if (this.r.maxage > 0) {
      const cutoff = new Date(Date.now() - this.r.maxage * 86_400_000).toISOString().slice(0, 23).replace(/:/g, '-');
      keep = keep.filter((b) => b.time >= cutoff);
    }
    for (const b of backups) if (!keep.includes(b)) rmSync(join(dir, b.f), { force: true });
    if (!this.r.compress) return;
    for (const b of keep) {
      if (b.gz) continue;
      const from = join(dir, b.f);
      if (!existsSync(from)) continue;
      writeFileSync(`${from}.gz`, gzipSync(readFileSync(from)), { mode: statSync(from).mode });
      rmSync(from);
    }
  }
}

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
