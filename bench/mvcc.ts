// Benchmark of the mvcc store on a real lmdb file: puts per second through write txns (with the backend's
// periodic batch commits), multi-put txns, point and prefix range latency, restart (index rebuild) time.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openBackend } from '../server/storage/backend.js';
import { nopLogger } from '../server/log/logger.js';
import { MvccStore } from '../server/mvcc/kvstore.js';

const enc = new TextEncoder();

function key(i: number): Uint8Array {
  return enc.encode(`/bench/key/${String(i).padStart(8, '0')}`);
}

/** Runs the mvcc benchmark; returns named measurements. */
export async function benchMvcc(opts: { puts?: number } = {}): Promise<Record<string, number>> {
  const n = opts.puts ?? 50000;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-mvcc-'));
  const file = path.join(dir, 'member', 'snap', 'db');
  const out: Record<string, number> = {};
  try {
    let backend = openBackend(nopLogger, file);
    let store = new MvccStore(backend);
    const value = new Uint8Array(256).fill(120);

    // Single-put txns; yield to the event loop now and then so the timed batch commits run as in a server.
    let t0 = performance.now();
    for (let i = 0; i < n; i++) {
      backend.setConsistentIndex(i + 1);
      store.put(key(i % 10000), value);
      if (i % 1000 === 999) await new Promise((r) => setImmediate(r));
    }
    out.putsPerSec = Math.round(n / ((performance.now() - t0) / 1000));

    // Ten puts per txn.
    const txns = Math.floor(n / 10);
    t0 = performance.now();
    for (let i = 0; i < txns; i++) {
      const tw = store.write();
      for (let j = 0; j < 10; j++) tw.put(key((i * 10 + j) % 10000), value);
      tw.end();
      if (i % 100 === 99) await new Promise((r) => setImmediate(r));
    }
    out.txn10PutsPerSec = Math.round((txns * 10) / ((performance.now() - t0) / 1000));
    backend.forceCommit();

    // Point reads.
    const reads = 20000;
    t0 = performance.now();
    for (let i = 0; i < reads; i++) store.range(key((i * 7) % 10000));
    out.pointRangeMicros = Math.round(((performance.now() - t0) * 1000) / reads * 100) / 100;

    // Prefix ranges of 100 keys.
    const ranges = 1000;
    t0 = performance.now();
    for (let i = 0; i < ranges; i++) {
      const start = (i * 97) % 9900;
      store.range(key(start), key(start + 100));
    }
    out.range100Micros = Math.round(((performance.now() - t0) * 1000) / ranges);

    // Historical read below the current revision.
    t0 = performance.now();
    for (let i = 0; i < reads; i++) store.range(key(i % 10000), undefined, { rev: Math.max(2, store.rev() - 50000) });
    out.historicalRangeMicros = Math.round(((performance.now() - t0) * 1000) / reads * 100) / 100;

    // Compaction and restart.
    t0 = performance.now();
    const { done } = store.compact(store.rev() - 1000);
    out.compactIndexMs = Math.round(performance.now() - t0);
    await done;
    out.compactMs = Math.round(performance.now() - t0);
    backend.close();
    t0 = performance.now();
    backend = openBackend(nopLogger, file);
    store = new MvccStore(backend);
    out.reopenMs = Math.round(performance.now() - t0);
    out.dbSizeBytes = backend.size();
    backend.close();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return out;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  benchMvcc().then(
    (r) => console.log(JSON.stringify(r, null, 2)),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}
