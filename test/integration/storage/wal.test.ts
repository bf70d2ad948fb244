import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { mkdtempSync, promises as fsp, readdirSync, readFileSync, rmSync, writeFileSync, cpSync, truncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LogFields, Logger } from '../../../server/log/logger.js';
import { EntryType, type Entry, type HardState } from '../../../server/raft/types.js';
import {
  createWal,
  openWal,
  openWalForRead,
  purgeFiles,
  repairWal,
  walExists,
  WalCorruptError,
  WalError,
  type Wal,
} from '../../../server/storage/wal.js';
import { scanSegment } from '../../../server/storage/wal-record.js';

/** A logger that keeps what it was told, to assert on warnings. */
class CaptureLogger implements Logger {
  readonly records: { level: string; msg: string; fields: LogFields }[] = [];
  debug(msg: string, fields: LogFields = {}): void {
    this.records.push({ level: 'debug', msg, fields });
  }
  info(msg: string, fields: LogFields = {}): void {
    this.records.push({ level: 'info', msg, fields });
  }
  warn(msg: string, fields: LogFields = {}): void {
    this.records.push({ level: 'warn', msg, fields });
  }
  error(msg: string, fields: LogFields = {}): void {
    this.records.push({ level: 'error', msg, fields });
  }
  child(): Logger {
    return this;
  }
  warnings(): { msg: string; fields: LogFields }[] {
    return this.records.filter((r) => r.level === 'warn');
  }
}

function entry(index: number, term = 1, size = 16): Entry {
  // Non-zero filler: a torn write must change bytes, and zeroed space must not look like data.
  const data = Buffer.alloc(size, 'x');
  data.write(`e${index}t${term}x`);
  return { index, term, type: EntryType.Normal, data: new Uint8Array(data) };
}

function hs(term: number, commit: number, vote = 7n): HardState {
  return { term, vote, commit };
}

const META = new Uint8Array(Buffer.from('cluster-id=abc member-id=def'));

function segments(dir: string): string[] {
  return readdirSync(dir)
    .filter((n) => n.endsWith('.wal'))
    .sort();
}

async function expectReject(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a rejection');
}

describe('wal', () => {
  let root: string;
  const log = new CaptureLogger();
  const open: Wal[] = [];

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'wal-test-'));
  });
  afterEach(async () => {
    for (const w of open.splice(0)) await w.close();
    rmSync(root, { recursive: true, force: true });
  });

  async function create(dir: string, segmentSizeBytes?: number): Promise<Wal> {
    // 1 MiB segments by default keep the tests' files small.
    const w = await createWal(log, dir, META, { segmentSizeBytes: segmentSizeBytes ?? 1024 * 1024 });
    open.push(w);
    return w;
  }

  async function reopen(dir: string, snap = { index: 0, term: 0 }, segmentSizeBytes?: number): Promise<{ w: Wal; read: Awaited<ReturnType<Wal['readAll']>> }> {
    const w = await openWal(log, dir, snap, segmentSizeBytes ? { segmentSizeBytes } : {});
    open.push(w);
    return { w, read: await w.readAll() };
  }

  async function closeAll(): Promise<void> {
    for (const w of open.splice(0)) await w.close();
  }

  it('round-trips many entries across several small segments', async () => {
    const dir = join(root, 'wal');
    const w = await create(dir, 4096);
    expect(walExists(dir)).to.equal(true);
    for (let i = 1; i <= 600; i += 3) {
      await w.save(hs(2, i - 1), [entry(i, 2, 60), entry(i + 1, 2, 60), entry(i + 2, 2, 60)]);
    }
    await w.save(hs(2, 600), []);
    await closeAll();
    expect(segments(dir).length).to.be.greaterThan(5);
    const { read } = await reopen(dir);
    expect(Buffer.from(read.metadata).toString()).to.equal(Buffer.from(META).toString());
    expect(read.hardState).to.deep.equal(hs(2, 600));
    expect(read.entries.map((e) => e.index)).to.deep.equal(Array.from({ length: 600 }, (_, i) => i + 1));
    for (const e of read.entries) expect(Buffer.from(e.data).toString()).to.equal(Buffer.from(entry(e.index, 2, 60).data).toString());
  });

  it('reads from a snapshot marker and keeps appending after reopen', async () => {
    const dir = join(root, 'wal');
    const w = await create(dir, 4096);
    for (let i = 1; i <= 100; i++) await w.save(hs(1, i), [entry(i)]);
    await w.saveSnapshot({ index: 50, term: 1, confState: { voters: [1n, 2n, 3n], learners: [] } });
    await closeAll();
    const { w: w2, read } = await reopen(dir, { index: 50, term: 1 }, 4096);
    expect(read.entries[0]!.index).to.equal(51);
    expect(read.entries.length).to.equal(50);
    await w2.save(hs(1, 101), [entry(101)]);
    await closeAll();
    const { read: again } = await reopen(dir, { index: 50, term: 1 });
    expect(again.entries.map((e) => e.index).at(-1)).to.equal(101);
    expect(again.hardState.commit).to.equal(101);
    await closeAll();
    const err = await expectReject(openWal(log, dir, { index: 50, term: 9 }).then((x) => (open.push(x), x.readAll())));
    expect((err as WalError).code).to.equal('WAL_SNAPSHOT_MISMATCH');
    await closeAll();
    const nf = await expectReject(openWal(log, dir, { index: 77, term: 1 }).then((x) => (open.push(x), x.readAll())));
    expect((nf as WalError).code).to.equal('WAL_SNAPSHOT_NOT_FOUND');
  });

  it('lets a later entry replace an overwritten uncommitted suffix', async () => {
    const dir = join(root, 'wal');
    const w = await create(dir);
    await w.save(hs(1, 3), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((i) => entry(i, 1)));
    // A new leader at term 2 overwrites from index 6.
    await w.save(hs(2, 5), [6, 7, 8].map((i) => entry(i, 2)));
    await closeAll();
    const { read } = await reopen(dir);
    expect(read.entries.map((e) => [e.index, e.term])).to.deep.equal([
      [1, 1],
      [2, 1],
      [3, 1],
      [4, 1],
      [5, 1],
      [6, 2],
      [7, 2],
      [8, 2],
    ]);
    expect(read.hardState.term).to.equal(2);
  });

  it('group-commits concurrent saves: one fsync for many, order kept, all durable', async () => {
    const dir = join(root, 'wal');
    const w = await create(dir);
    const before = w.fsyncCount;
    const n = 200;
    const done: number[] = [];
    await Promise.all(Array.from({ length: n }, (_, i) => w.save(hs(1, i), [entry(i + 1)]).then(() => done.push(i + 1))));
    const used = w.fsyncCount - before;
    expect(used).to.be.at.least(1);
    expect(used).to.be.at.most(2);
    expect(done).to.deep.equal(Array.from({ length: n }, (_, i) => i + 1));
    // Saves issued while a flush is in flight join the next batch.
    const wave: Promise<void>[] = [];
    const mid = w.fsyncCount;
    for (let i = n + 1; i <= n + 100; i++) {
      wave.push(w.save(hs(1, i), [entry(i)]));
      if (i % 10 === 0) await Promise.resolve();
    }
    await Promise.all(wave);
    expect(w.fsyncCount - mid).to.be.lessThan(100);
    // A commit-only hard state change needs no fsync (raft's MustSync rule).
    const s = w.fsyncCount;
    await w.save(hs(1, n + 100), []);
    expect(w.fsyncCount).to.equal(s);
    await closeAll();
    const { read } = await reopen(dir);
    expect(read.entries.length).to.equal(n + 100);
    expect(read.hardState.commit).to.equal(n + 100);
  });

  it('repairs a torn last record at every byte offset, keeping all earlier records', async function () {
    this.timeout(120000);
    const dir = join(root, 'src');
    const w = await create(dir, 64 * 1024);
    for (let i = 1; i <= 19; i++) await w.save(hs(1, i - 1), [entry(i)]);
    await w.save(undefined, [entry(20, 1, 150)]);
    await closeAll();
    const seg = join(dir, segments(dir)[0]!);
    const scan = scanSegment(readFileSync(seg));
    const last = scan.records[scan.records.length - 1]!;
    // Cut anywhere in the header or payload (a cut in the trailing padding leaves the record whole).
    const recordEnd = last.offset + 8 + readFileSync(seg).readUInt32LE(last.offset);
    expect(recordEnd - last.offset).to.be.greaterThan(150);
    let checked = 0;
    for (let cut = last.offset; cut < recordEnd; cut++) {
      const copy = join(root, `torn-${cut}`);
      cpSync(dir, copy, { recursive: true });
      const path = join(copy, segments(copy)[0]!);
      if (cut % 2 === 0) {
        truncateSync(path, cut); // the file ends mid-record
      } else {
        // The record was only partly written into the preallocated (zeroed) space.
        const fh = await fsp.open(path, 'r+');
        await fh.write(Buffer.alloc(scan.end - cut), 0, scan.end - cut, cut);
        await fh.close();
      }
      const warnsBefore = log.warnings().length;
      const { w: w2, read } = await reopen(copy);
      expect(read.entries.map((e) => e.index)).to.deep.equal(Array.from({ length: 19 }, (_, i) => i + 1));
      expect(read.hardState.commit).to.equal(18);
      if (cut > last.offset) {
        const warn = log.warnings().slice(warnsBefore).find((r) => r.msg.includes('torn'));
        expect(warn, `warning at cut ${cut}`).to.not.equal(undefined);
        expect(warn!.fields.path).to.equal(path);
        expect(warn!.fields.offset).to.equal(last.offset);
      }
      if (cut % 40 === 0) {
        // After the repair the WAL appends cleanly.
        await w2.save(hs(1, 20), [entry(20, 2)]);
        await closeAll();
        const { read: again } = await reopen(copy);
        expect(again.entries.at(-1)!.term).to.equal(2);
        expect(again.entries.length).to.equal(20);
      }
      await closeAll();
      rmSync(copy, { recursive: true, force: true });
      checked++;
    }
    expect(checked).to.equal(recordEnd - last.offset);
  });

  it('refuses a corrupt record that is followed by valid data, naming file and offset', async () => {
    const dir = join(root, 'wal');
    const w = await create(dir);
    for (let i = 1; i <= 30; i++) await w.save(hs(1, i), [entry(i)]);
    await closeAll();
    const path = join(dir, segments(dir)[0]!);
    const scan = scanSegment(readFileSync(path));
    const victim = scan.records[Math.floor(scan.records.length / 2)]!;
    const original = readFileSync(path);

    // 1. a flipped payload byte
    const bad = Buffer.from(original);
    bad[victim.offset + 10]! ^= 0xff;
    writeFileSync(path, bad);
    for (const attempt of [() => openWal(log, dir, { index: 0, term: 0 }), () => openWalForRead(log, dir, { index: 0, term: 0 })]) {
      const err = await expectReject(attempt());
      expect(err).to.be.instanceOf(WalCorruptError);
      expect((err as WalCorruptError).code).to.equal('WAL_CORRUPT');
      expect((err as WalCorruptError).file).to.equal(path);
      expect((err as WalCorruptError).offset).to.equal(victim.offset);
      expect(err.message).to.contain(path);
    }
    expect(await repairWal(log, dir)).to.equal(false);
    expect(readFileSync(path).equals(bad), 'a failed repair leaves the file alone').to.equal(true);

    // 2. a damaged length field (the reader cannot even find the next record by walking)
    const badLen = Buffer.from(original);
    badLen.writeUInt32LE(0x00ffffff, victim.offset);
    writeFileSync(path, badLen);
    const err2 = await expectReject(openWal(log, dir, { index: 0, term: 0 }));
    expect((err2 as WalError).code).to.equal('WAL_CORRUPT');
    expect((err2 as WalCorruptError).offset).to.equal(victim.offset);

    // 3. a zeroed header in the middle is not "the end of the log"
    const zeroed = Buffer.from(original);
    zeroed.fill(0, victim.offset, victim.offset + 8);
    writeFileSync(path, zeroed);
    expect(((await expectReject(openWal(log, dir, { index: 0, term: 0 }))) as WalError).code).to.equal('WAL_CORRUPT');

    // 4. the same damage in the LAST record, with nothing after it, is a torn tail: repaired
    const lastRec = scan.records[scan.records.length - 1]!;
    const tornLast = Buffer.from(original);
    tornLast[lastRec.offset + 9]! ^= 0xff;
    writeFileSync(path, tornLast);
    expect(await repairWal(log, dir)).to.equal(true);
    const { read } = await reopen(dir);
    expect(read.entries.length).to.equal(30); // the last record was the hard state of save 30
    expect(read.hardState.commit).to.equal(29);
  });

  it('refuses a missing middle segment and a broken segment chain', async () => {
    const dir = join(root, 'wal');
    const w = await create(dir, 2048);
    for (let i = 1; i <= 100; i++) await w.save(hs(1, i), [entry(i, 1, 40)]);
    await closeAll();
    const segs = segments(dir);
    expect(segs.length).to.be.greaterThan(3);
    const copy = join(root, 'copy');
    cpSync(dir, copy, { recursive: true });
    rmSync(join(copy, segs[1]!));
    expect(((await expectReject(openWal(log, copy, { index: 0, term: 0 }))) as WalError).code).to.equal('WAL_FILE_NOT_FOUND');
    // Drop the tail of a non-last segment: the next segment no longer continues it.
    const p = join(dir, segs[1]!);
    const scan = scanSegment(readFileSync(p));
    truncateSync(p, scan.records[scan.records.length - 1]!.offset);
    expect(((await expectReject(openWal(log, dir, { index: 0, term: 0 }))) as WalError).code).to.equal('WAL_CORRUPT');
  });

  it('reads a torn WAL read-only up to the tear without touching the file', async () => {
    const dir = join(root, 'wal');
    const w = await create(dir, 64 * 1024);
    for (let i = 1; i <= 10; i++) await w.save(hs(1, i), [entry(i)]);
    await closeAll();
    const path = join(dir, segments(dir)[0]!);
    const scan = scanSegment(readFileSync(path));
    truncateSync(path, scan.records.at(-1)!.offset + 5);
    const before = readFileSync(path);
    const ro = await openWalForRead(log, dir, { index: 0, term: 0 });
    const read = await ro.readAll();
    await ro.close();
    expect(read.entries.length).to.equal(10);
    expect(read.hardState.commit).to.equal(9);
    expect(readFileSync(path).equals(before)).to.equal(true);
    expect(((await expectReject(ro.save(hs(1, 10), []))) as WalError).code).to.equal('WAL_READ_ONLY');
  });

  it('refuses appends before readAll and after close', async () => {
    const dir = join(root, 'wal');
    const w = await create(dir);
    await w.save(hs(1, 1), [entry(1)]);
    await w.close();
    expect(((await expectReject(w.save(hs(1, 1), [entry(2)]))) as WalError).code).to.equal('WAL_CLOSED');
    const w2 = await openWal(log, dir, { index: 0, term: 0 });
    open.push(w2);
    expect(((await expectReject(w2.save(hs(1, 1), [entry(2)]))) as WalError).code).to.equal('WAL_NOT_READ');
    await w2.readAll();
    await w2.save(hs(1, 2), [entry(2)]);
  });

  it('refuses to create over an existing WAL', async () => {
    const dir = join(root, 'wal');
    await create(dir);
    await closeAll();
    expect(((await expectReject(createWal(log, dir, META))) as WalError).code).to.equal('WAL_EXISTS');
  });

  it('locks the WAL against a second writer, in this process and in another', async () => {
    const dir = join(root, 'wal');
    await create(dir);
    expect(((await expectReject(openWal(log, dir, { index: 0, term: 0 }))) as WalError).code).to.equal('WAL_LOCKED');
    const walJs = new URL('../../../server/storage/wal.js', import.meta.url).href;
    const logJs = new URL('../../../server/log/logger.js', import.meta.url).href;
    const script = `
      import { openWal } from ${JSON.stringify(walJs)};
      import { nopLogger } from ${JSON.stringify(logJs)};
      try { await openWal(nopLogger, ${JSON.stringify(dir)}, { index: 0, term: 0 }); console.log('OPENED'); }
      catch (e) { console.log(e.code); }`;
    const out = await runNode(script);
    expect(out.trim()).to.equal('WAL_LOCKED');
    await closeAll();
    // Released on close; a read-only open never needed it.
    const { w } = await reopen(dir);
    const ro = await openWalForRead(log, dir, { index: 0, term: 0 });
    expect((await ro.readAll()).entries).to.deep.equal([]);
    await ro.close();
    await w.close();
    // A lock left by a dead process is stale and taken over.
    const deadPid = Number((await runNode('console.log(process.pid)')).trim());
    writeFileSync(join(dir, 'LOCK'), JSON.stringify({ pid: deadPid, start: '1', host: 'x' }));
    const { read } = await reopen(dir);
    expect(read.entries).to.deep.equal([]);
  });

  it('purges old segments below releaseLockTo, keeping the newest N and every held segment', async () => {
    const dir = join(root, 'wal');
    const w = await create(dir, 2048);
    for (let i = 1; i <= 200; i++) await w.save(hs(1, i), [entry(i, 1, 40)]);
    const all = segments(dir);
    expect(all.length).to.be.greaterThan(8);
    // Nothing released yet: every segment is held.
    expect(await purgeFiles(log, dir, '.wal', 2)).to.deep.equal([]);
    await w.saveSnapshot({ index: 150, term: 1 });
    w.releaseLockTo(150);
    const removed = await purgeFiles(log, dir, '.wal', 2);
    expect(removed.length).to.be.greaterThan(0);
    const left = segments(dir);
    expect(left).to.deep.equal(all.filter((n) => !removed.includes(n)));
    expect(left.length).to.be.at.least(2);
    // The segment holding index 150 survives, so the WAL still opens from the snapshot.
    await closeAll();
    const { read } = await reopen(dir, { index: 150, term: 1 });
    expect(read.entries[0]!.index).to.equal(151);
    expect(read.entries.at(-1)!.index).to.equal(200);
    // With no WAL open, purge keeps exactly the newest `max`.
    await closeAll();
    await purgeFiles(log, dir, '.wal', 1);
    expect(segments(dir)).to.deep.equal(left.slice(-1));
  });
});

function runNode(script: string): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('exit', () => resolvePromise(out));
  });
}
