// In-process micro-benchmarks of the CPU one request costs on a member (issue #40), for A/B runs of two builds on
// a machine too busy for whole-cluster benches: `node dist/bench/micro-cpu.js <what> [--dist DIR] [--n N]`, where
// DIR is the dist folder of the build to time (default: this one) and <what> is
//   mvcc  single-put write txns of MvccStore on a real lmdb temp dir, as the apply path makes them (no prev_kv)
//   wal   WAL saves of 1 entry + hard state (no fsync: the CPU of encoding and writing, not the disk)
// It prints one JSON line: microseconds per operation, the median of 5 timed rounds after one warm-up round.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

interface Args {
  what: string;
  dist: string;
  n: number;
}

function parseArgs(argv: string[]): Args {
  const out: Args = { what: argv[0] ?? '', dist: here, n: 20000 };
  for (let i = 1; i < argv.length; i += 2) {
    if (argv[i] === '--dist') out.dist = path.resolve(argv[i + 1]);
    else if (argv[i] === '--n') out.n = Number(argv[i + 1]);
    else throw new Error(`unknown flag ${argv[i]}`);
  }
  return out;
}

async function load<T>(dist: string, rel: string): Promise<T> {
  return (await import(pathToFileURL(path.join(dist, rel)).href)) as T;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

async function rounds(run: () => Promise<number> | number): Promise<{ median: number; rounds: number[] }> {
  await run(); // warm-up
  const out: number[] = [];
  for (let i = 0; i < 5; i++) out.push(Math.round((await run()) * 100) / 100);
  return { median: median(out), rounds: out };
}

const enc = new TextEncoder();
const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

async function benchMvcc(a: Args, tmp: string): Promise<unknown> {
  type Store = { write(): { put(k: Uint8Array, v: Uint8Array, lease?: bigint, prev?: boolean): unknown; end(): void } };
  type BackendT = { setConsistentIndex(i: number): void; close(): void };
  const { openBackend } = await load<{ openBackend(l: unknown, f: string): BackendT }>(a.dist, 'server/storage/backend.js');
  const { nopLogger } = await load<{ nopLogger: unknown }>(a.dist, 'server/log/logger.js');
  const { MvccStore } = await load<{ MvccStore: new (b: BackendT) => Store }>(a.dist, 'server/mvcc/kvstore.js');
  const backend = openBackend(nopLogger, path.join(tmp, 'db'));
  const store = new MvccStore(backend);
  const keys = Array.from({ length: 1000 }, (_, i) => enc.encode(`/bench/key/${String(i).padStart(8, '0')}`));
  const value = new Uint8Array(256).fill(120);
  let ci = 0;
  const res = await rounds(async () => {
    let busy = 0;
    for (let i = 0; i < a.n; i += 1000) {
      // a fresh key/value per put, as the apply path decodes them from the entry
      const t0 = performance.now();
      for (let j = 0; j < 1000; j++) {
        backend.setConsistentIndex(++ci);
        const w = store.write();
        w.put(Uint8Array.from(keys[j]), Uint8Array.from(value), 0n, false);
        w.end();
      }
      busy += performance.now() - t0;
      await tick(); // the backend's timed batch commits run here, outside the timed part
    }
    return (busy * 1000) / a.n;
  });
  backend.close();
  return { what: 'mvcc put, µs/put', ...res };
}

async function benchWal(a: Args, tmp: string): Promise<unknown> {
  type WalT = { save(h: unknown, e: unknown[]): Promise<void>; close(): Promise<void> };
  const { createWal } = await load<{ createWal(l: unknown, d: string, m: Uint8Array, o: unknown): Promise<WalT> }>(a.dist, 'server/storage/wal.js');
  const { nopLogger } = await load<{ nopLogger: unknown }>(a.dist, 'server/log/logger.js');
  const wal = await createWal(nopLogger, path.join(tmp, 'wal'), enc.encode('meta'), { unsafeNoFsync: true, segmentSizeBytes: 256 * 1024 * 1024 });
  const data = new Uint8Array(300).fill(7);
  let index = 0;
  const res = await rounds(async () => {
    const t0 = performance.now();
    for (let i = 0; i < a.n; i += 8) {
      // eight saves per turn share one write, as a busy leader's group commit does
      const ps: Promise<void>[] = [];
      for (let j = 0; j < 8; j++) {
        index++;
        ps.push(wal.save({ term: 2, vote: 1n, commit: index }, [{ term: 2, index, type: 0, data }]));
      }
      await Promise.all(ps);
    }
    return ((performance.now() - t0) * 1000) / a.n;
  });
  await wal.close();
  return { what: 'wal save (1 entry of 300 B + hard state, no fsync), µs/save', ...res };
}

async function main(): Promise<void> {
  const a = parseArgs(process.argv.slice(2));
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-micro-cpu-'));
  try {
    let r: unknown;
    if (a.what === 'mvcc') r = await benchMvcc(a, tmp);
    else if (a.what === 'wal') r = await benchWal(a, tmp);
    else throw new Error(`usage: micro-cpu.js mvcc|wal [--dist DIR] [--n N] (not ${JSON.stringify(a.what)})`);
    console.log(JSON.stringify({ dist: a.dist, load: os.loadavg().map((x) => Math.round(x * 100) / 100), ...(r as object) }));
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
