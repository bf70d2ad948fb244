// In-process micro-benchmarks of the CPU one request costs on a member (issue #40), for A/B runs of two builds on
// a machine too busy for whole-cluster benches: `node dist/bench/micro-cpu.js <what> [--dist DIR] [--n N]`, where
// DIR is the dist folder of the build to time (default: this one) and <what> is
//   mvcc  single-put write txns of MvccStore on a real lmdb temp dir, as the apply path makes them (no prev_kv)
//   wal   WAL saves of 1 entry + hard state (no fsync: the CPU of encoding and writing, not the disk)
//   apply the applier and the v3 state machine applying put entries (decode, mvcc put, waiters), 10 a batch
//   request the KV.Put handler: checks, quota, proposal and its waiter, the answer (consensus and apply stubbed)
// It prints one JSON line: microseconds per operation (CPU and wall), the medians of 5 timed rounds after a warm-up.
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

/**
 * One warm-up round, then 5 timed ones. `run` returns its wall time per operation (µs; the parts it times); the
 * process's CPU time (user + system, all threads) per operation over the whole round is taken beside it: on a
 * loaded machine the CPU time is the steadier figure, since the wall time also counts the time others ran.
 */
async function rounds(n: number, run: () => Promise<number> | number): Promise<{ cpu: number; wall: number; cpuRounds: number[]; wallRounds: number[] }> {
  await run();
  const cpu: number[] = [];
  const wall: number[] = [];
  for (let i = 0; i < 5; i++) {
    const c0 = process.cpuUsage();
    wall.push(Math.round((await run()) * 100) / 100);
    const c = process.cpuUsage(c0);
    cpu.push(Math.round(((c.user + c.system) / n) * 100) / 100);
  }
  return { cpu: median(cpu), wall: median(wall), cpuRounds: cpu, wallRounds: wall };
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
  const res = await rounds(a.n, async () => {
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
  const res = await rounds(a.n, async () => {
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

async function benchApply(a: Args, tmp: string): Promise<unknown> {
  type Entry = { index: number; term: number; type: number; data: Uint8Array };
  const { openBackend } = await load<{ openBackend(l: unknown, f: string): { close(): void } }>(a.dist, 'server/storage/backend.js');
  const { nopLogger } = await load<{ nopLogger: unknown }>(a.dist, 'server/log/logger.js');
  const { V3StateMachine } = await load<{ V3StateMachine: new (b: unknown, o: unknown) => unknown }>(a.dist, 'server/core/state-machine.js');
  const { Applier } = await load<{ Applier: new (...args: unknown[]) => { applyEntries(es: Entry[]): void } }>(a.dist, 'server/core/applier.js');
  const { Membership } = await load<{ Membership: new (id: bigint) => unknown }>(a.dist, 'server/cluster/membership.js');
  const { V2Store } = await load<{ V2Store: new () => unknown }>(a.dist, 'server/core/v2store.js');
  const { encodeRequest } = await load<{ encodeRequest(r: unknown): Uint8Array }>(a.dist, 'server/core/requests.js');
  const backend = openBackend(nopLogger, path.join(tmp, 'db'));
  const kv = new V3StateMachine(backend, { logger: nopLogger, electionMs: 1000 });
  const applier = new Applier(
    { membership: new Membership(99n), v2: new V2Store(), alarms: [], appliedIndex: 0 },
    kv,
    { applyConfChange: () => undefined, isLeader: () => true, currentTerm: () => 2 },
    { addPeer: () => undefined, removePeer: () => undefined, updatePeer: () => undefined },
    { settle: () => false, confChangeApplied: () => undefined },
    { onLeaderFirstCommit: () => undefined, onRemoved: () => undefined, fatal: () => undefined },
    { apply: () => undefined },
    { proposalsApplied: 0 },
    { memberId: 1n, clusterId: 99n, localVersion: '3.4.23', logger: nopLogger, warningApplyMs: 100 },
  );
  const value = new Uint8Array(256).fill(120);
  let index = 0;
  const res = await rounds(a.n, async () => {
    // entries as a follower gets them: each with its own data buffer, ten to a batch
    const batches: Entry[][] = [];
    for (let i = 0; i < a.n; i += 10) {
      const b: Entry[] = [];
      for (let j = 0; j < 10; j++) {
        index++;
        const key = enc.encode(`/bench/key/${String(index % 1000).padStart(8, '0')}`);
        const put = { key, value, lease: 0n, prevKv: false, ignoreValue: false, ignoreLease: false };
        b.push({ index, term: 2, type: 0, data: encodeRequest({ id: BigInt(index), kind: 'put', put }) });
      }
      batches.push(b);
    }
    let busy = 0;
    for (let i = 0; i < batches.length; i++) {
      const t0 = performance.now();
      applier.applyEntries(batches[i]);
      busy += performance.now() - t0;
      if (i % 100 === 99) await tick();
    }
    return (busy * 1000) / a.n;
  });
  backend.close();
  return { what: 'apply of put entries (10 a batch, no prev_kv), µs/entry', ...res };
}

async function benchRequest(a: Args): Promise<unknown> {
  type Handler = (req: unknown, meta: unknown) => Promise<unknown>;
  const { kvService } = await load<{ kvService(d: unknown): { Put: Handler } }>(a.dist, 'server/api/v3/kv.js');
  const { Proposer } = await load<{ Proposer: new (...args: unknown[]) => { settle(id: bigint, r: unknown): boolean } }>(a.dist, 'server/core/proposer.js');
  const { Quota } = await load<{ Quota: new (d: unknown) => unknown }>(a.dist, 'server/core/quota.js');
  const { AuthGate } = await load<{ AuthGate: new (s: () => unknown) => unknown }>(a.dist, 'server/api/v3/auth-gate.js');
  const { Headers } = await load<{ Headers: new (f: unknown) => unknown }>(a.dist, 'server/api/v3/headers.js');
  const { decodeRequest } = await load<{ decodeRequest(d: Uint8Array): { id: bigint } }>(a.dist, 'server/core/requests.js');
  const { nopLogger } = await load<{ nopLogger: unknown }>(a.dist, 'server/log/logger.js');
  // the consensus core and the apply are a stand-in: every proposal of a turn is "applied" on the next turn
  let proposed: Uint8Array[] = [];
  const raft = {
    lead: 1n,
    propose: (data: Uint8Array) => {
      if (proposed.length === 0) setImmediate(applyAll);
      proposed.push(data);
    },
    proposeConfChange: () => undefined,
    readIndex: () => undefined,
    kick: () => undefined,
  };
  const stats = { proposalsPending: 0, proposalsFailed: 0, readIndexesFailed: 0 };
  const proposer = new Proposer(raft, { appliedIndex: 0, waitApplied: () => undefined }, { stopped: false, stopping: false }, stats, { maxRequestBytes: 1.5 * 1024 * 1024, electionMs: 1000, tickMs: 100 });
  function applyAll(): void {
    const batch = proposed;
    proposed = [];
    for (const d of batch) proposer.settle(decodeRequest(d).id, { revision: 2 });
  }
  const quota = new Quota({ memberId: 1n, quotaBytes: 2 * 1024 * 1024 * 1024, logger: nopLogger, alarms: () => [], dbSize: () => 1024 * 1024, proposals: proposer });
  const gate = new AuthGate(() => ({ enabled: false }));
  const headers = new Headers({ clusterId: 99n, memberId: 1n, revision: () => 2, term: 2 });
  const kv = kvService({ reads: {}, barrier: {}, proposals: proposer, quota, gate, headers, maxTxnOps: 128 });
  const value = Buffer.alloc(256, 120);
  const res = await rounds(a.n, async () => {
    const t0 = performance.now();
    for (let i = 0; i < a.n; i += 64) {
      // 64 in flight, as the put bench's higher concurrency
      const ps: Promise<unknown>[] = [];
      for (let j = 0; j < 64; j++) ps.push(kv.Put({ key: Buffer.from(`/bench/key/${String((i + j) % 1000).padStart(8, '0')}`), value, lease: '0' }, {}));
      await Promise.all(ps);
    }
    return ((performance.now() - t0) * 1000) / a.n;
  });
  return { what: 'KV.Put handler to proposal and answer (consensus and apply stubbed), µs/request', ...res };
}

async function main(): Promise<void> {
  const a = parseArgs(process.argv.slice(2));
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-micro-cpu-'));
  try {
    let r: unknown;
    if (a.what === 'mvcc') r = await benchMvcc(a, tmp);
    else if (a.what === 'wal') r = await benchWal(a, tmp);
    else if (a.what === 'apply') r = await benchApply(a, tmp);
    else if (a.what === 'request') r = await benchRequest(a);
    else throw new Error(`usage: micro-cpu.js mvcc|wal|apply|request [--dist DIR] [--n N] (not ${JSON.stringify(a.what)})`);
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
