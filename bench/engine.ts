// Storage engine benchmark for the v3 database file (<data-dir>/member/snap/db).
// The harness is engine-neutral (an EngineAdapter per engine); this file ships only the lmdb adapter
// so `npm run bench` needs nothing beyond lmdb and Node built-ins. The other engines compared in
// docs/storage-engine.md were measured with this same harness from a scratch directory.
//
// Figures: durable sequential puts in transactions of 100 x 1 KiB values, random get latency, a full
// ordered range scan, the file size after N keys, the cost of a consistent single-file copy, and a
// kill -9 of a child that writes in a loop (every acknowledged batch must be there, every value intact).
// measureWal adds the WAL's durable save rate, one save at a time and with group commit.
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { open as openLmdb, type Database } from 'lmdb';
import { nopLogger } from '../server/log/logger.js';
import { createWal } from '../server/storage/wal.js';

/** One open database of an engine under test. */
export interface EngineDb {
  /** Writes the pairs in one transaction; resolves once durable. */
  putBatch(pairs: [Buffer, Buffer][]): Promise<void>;
  get(key: Buffer): Promise<Buffer | undefined> | Buffer | undefined;
  /** Visits all pairs in key order; returns how many. */
  scan(visit: (key: Buffer, value: Buffer) => void): Promise<number> | number;
  /** A consistent copy of the whole database into one file, taken while open. */
  copyTo(file: string): Promise<void>;
  close(): Promise<void>;
}

/** How to open an engine at a path (a file or a directory, the engine's choice). */
export interface EngineAdapter {
  name: string;
  open(path: string): Promise<EngineDb>;
}

export interface BenchOptions {
  keys?: number;
  batch?: number;
  valueBytes?: number;
  randomGets?: number;
  /** For the kill -9 run: the module URL and export name the child imports its adapter from. */
  adapterModule?: { url: string; exportName: string };
}

/** Key i: fixed width so byte order equals numeric order. */
export function benchKey(i: number): Buffer {
  return Buffer.from(`k${i.toString().padStart(10, '0')}`);
}

/** The value of key i: deterministic pseudo-random bytes (incompressible, checkable after a crash). */
export function benchValue(i: number, bytes: number): Buffer {
  const out = Buffer.allocUnsafe(bytes);
  let x = (i * 2654435761) >>> 0 || 1;
  for (let o = 0; o + 4 <= bytes; o += 4) {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    out.writeUInt32LE(x, o);
  }
  for (let o = bytes - (bytes % 4); o < bytes; o++) out[o] = i & 0xff;
  return out;
}

function pathSize(p: string): number {
  const st = statSync(p);
  if (!st.isDirectory()) return st.blocks * 512;
  let total = 0;
  for (const n of readdirSync(p)) total += pathSize(join(p, n));
  return total;
}

function siblingsSize(path: string): number {
  // Engines may keep side files next to the main one (db-lock, -wal, -shm): count them all.
  const dir = join(path, '..');
  const base = path.slice(dir.length + 1);
  return readdirSync(dir)
    .filter((n) => n === base || n.startsWith(base + '-') || n.startsWith(base + '.'))
    .reduce((sum, n) => sum + pathSize(join(dir, n)), 0);
}

/** Runs every measurement against one engine. Keys are in thousands where named *_k. */
export async function measureEngine(adapter: EngineAdapter, opts: BenchOptions = {}): Promise<Record<string, number>> {
  const keys = opts.keys ?? 100_000;
  const batch = opts.batch ?? 100;
  const valueBytes = opts.valueBytes ?? 1024;
  const randomGets = opts.randomGets ?? 20_000;
  const root = mkdtempSync(join(tmpdir(), `bench-${adapter.name}-`));
  const out: Record<string, number> = {};
  try {
    const path = join(root, 'db');
    const db = await adapter.open(path);

    let t0 = performance.now();
    for (let i = 0; i < keys; i += batch) {
      const pairs: [Buffer, Buffer][] = [];
      for (let j = i; j < Math.min(keys, i + batch); j++) pairs.push([benchKey(j), benchValue(j, valueBytes)]);
      await db.putBatch(pairs);
    }
    const putMs = performance.now() - t0;
    out.put_keys_per_sec = Math.round(keys / (putMs / 1000));
    out.put_batch_commit_ms = +(putMs / Math.ceil(keys / batch)).toFixed(3);

    let seed = 12345;
    t0 = performance.now();
    for (let n = 0; n < randomGets; n++) {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      const i = seed % keys;
      const v = await db.get(benchKey(i));
      if (!v || v.length !== valueBytes) throw new Error(`${adapter.name}: key ${i} missing`);
    }
    out.get_random_us = +(((performance.now() - t0) * 1000) / randomGets).toFixed(2);

    t0 = performance.now();
    let prev: Buffer | undefined;
    const seen = await db.scan((k) => {
      if (prev && Buffer.compare(prev, k) >= 0) throw new Error(`${adapter.name}: scan out of order`);
      prev = k;
    });
    if (seen !== keys) throw new Error(`${adapter.name}: scan saw ${seen} of ${keys}`);
    out.scan_keys_per_sec = Math.round(keys / ((performance.now() - t0) / 1000));

    out.file_mib = +(siblingsSize(path) / 1048576).toFixed(1);

    const copy = join(root, 'copy.db');
    t0 = performance.now();
    await db.copyTo(copy);
    out.copy_ms = Math.round(performance.now() - t0);
    out.copy_mib = +(pathSize(copy) / 1048576).toFixed(1);
    await db.close();

    // The copy is a database of its own holding every key.
    const copied = await adapter.open(copy);
    const copiedKeys = await copied.scan(() => {});
    await copied.close();
    out.copy_complete = copiedKeys === keys ? 1 : 0;

    if (opts.adapterModule) Object.assign(out, await kill9(adapter, opts.adapterModule, join(root, 'crash'), valueBytes));
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  return out;
}

// A child that writes batches of 100 in a loop and prints each acknowledged batch.
const CHILD = (url: string, exportName: string, path: string, valueBytes: number): string => `
import * as m from ${JSON.stringify(url)};
const db = await m[${JSON.stringify(exportName)}].open(${JSON.stringify(path)});
for (let b = 0; ; b++) {
  const pairs = [];
  for (let j = b * 100; j < b * 100 + 100; j++) pairs.push([m.benchKey(j), m.benchValue(j, ${valueBytes})]);
  await db.putBatch(pairs);
  process.stdout.write('ok ' + b + '\\n');
}`;

async function kill9(
  adapter: EngineAdapter,
  mod: { url: string; exportName: string },
  path: string,
  valueBytes: number,
): Promise<Record<string, number>> {
  const acked = await new Promise<number>((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', CHILD(mod.url, mod.exportName, path, valueBytes)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let last = -1;
    let buf = '';
    child.stdout.on('data', (d: Buffer) => {
      buf += d.toString();
      const lines = buf.split('\n');
      buf = lines.pop()!;
      for (const l of lines) if (l.startsWith('ok ')) last = Number(l.slice(3));
      // Kill mid-stream, well after start-up, while writes are in flight.
      if (last >= 150) child.kill('SIGKILL');
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => (signal === 'SIGKILL' ? resolve(last + 1) : reject(new Error(`child exited ${code}`))));
  });
  const db = await adapter.open(path);
  let corrupt = 0;
  let count = 0;
  const n = await db.scan((k, v) => {
    const i = Number(k.toString().slice(1));
    if (!benchValue(i, valueBytes).equals(v)) corrupt++;
    count++;
  });
  let missing = 0;
  for (let i = 0; i < acked * 100; i++) if (!(await db.get(benchKey(i)))) missing++;
  await db.close();
  return { kill9_acked_batches: acked, kill9_keys_found: n || count, kill9_missing_acked: missing, kill9_corrupt: corrupt };
}

/** lmdb (a B+tree in one memory-mapped file, copy-on-write pages). */
export const lmdbAdapter: EngineAdapter = {
  name: 'lmdb',
  async open(path: string): Promise<EngineDb> {
    // noSubdir: `path` is the data file itself (plus a `<path>-lock` file), as member/snap/db must be.
    const db: Database<Buffer, Buffer> = openLmdb<Buffer, Buffer>({ path, noSubdir: true, encoding: 'binary', keyEncoding: 'binary' });
    return {
      async putBatch(pairs) {
        // db.batch, not db.transaction: with lmdb 3.5.6 on this Node the async transaction() promise
        // never settled in our runs, while batch() (one atomic write transaction) does.
        await db.batch(() => {
          for (const [k, v] of pairs) void db.put(k, v);
        });
        await db.flushed;
      },
      get: (k) => db.getBinary(k) ?? undefined,
      scan(visit) {
        let n = 0;
        for (const { key, value } of db.getRange()) {
          visit(key, value);
          n++;
        }
        return n;
      },
      async copyTo(file) {
        await db.backup(file, false);
      },
      async close() {
        await db.close();
      },
    };
  },
};

/** WAL saves of one 256-byte entry: one at a time, and with `inflight` saves outstanding (group commit). */
export async function measureWal(saves = 400, inflight = 16): Promise<Record<string, number>> {
  const root = mkdtempSync(join(tmpdir(), 'bench-wal-'));
  try {
    const wal = await createWal(nopLogger, join(root, 'wal'), new Uint8Array([1]));
    let index = 0;
    const save = () => {
      index++;
      return wal.save({ term: 1, vote: 1n, commit: index - 1 }, [{ term: 1, index, type: 0, data: benchValue(index, 256) }]);
    };
    let t0 = performance.now();
    for (let n = 0; n < saves; n++) await save();
    const serialMs = performance.now() - t0;
    const syncs0 = wal.fsyncCount;
    t0 = performance.now();
    let issued = 0;
    await Promise.all(
      Array.from({ length: inflight }, async () => {
        while (issued < saves) {
          issued++;
          await save();
        }
      }),
    );
    const groupMs = performance.now() - t0;
    const syncs = wal.fsyncCount - syncs0;
    await wal.close();
    return {
      wal_serial_saves_per_sec: Math.round(saves / (serialMs / 1000)),
      wal_group_saves_per_sec: Math.round(saves / (groupMs / 1000)),
      wal_group_saves_per_fsync: +(saves / Math.max(1, syncs)).toFixed(1),
    };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/** The `npm run bench` entry: lmdb figures for the v3 database, and the WAL's fsync/group-commit figures. */
export async function benchEngine(): Promise<Record<string, number>> {
  const figures = await measureEngine(lmdbAdapter, { adapterModule: { url: import.meta.url, exportName: 'lmdbAdapter' } });
  Object.assign(figures, await measureWal());
  console.log('storage engine (lmdb) and WAL:');
  for (const [k, v] of Object.entries(figures)) console.log(`  ${k.padEnd(26)} ${v}`);
  return figures;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await benchEngine();
}
