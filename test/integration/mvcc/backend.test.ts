import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { BackendError, backendFileProblem, openBackend, type Backend } from '../../../server/storage/backend.js';
import { nopLogger } from '../../../server/log/logger.js';
import { MvccStore } from '../../../server/mvcc/kvstore.js';
import { b, backendIn, s, tempDir } from '../../unit/mvcc/helpers.js';

describe('backend (lmdb)', () => {
  let t: ReturnType<typeof tempDir>;
  let be: Backend;
  beforeEach(() => {
    t = tempDir();
    be = backendIn(t.dir, { batchIntervalMs: 0 });
  });
  afterEach(() => {
    be.close();
    t.cleanup();
  });

  it('creates member/snap/db and shows buffered writes before they are committed', () => {
    expect(fs.existsSync(path.join(t.dir, 'member', 'snap', 'db'))).to.equal(true);
    const tx = be.batchTx();
    tx.put('key', b('a'), b('1'));
    tx.put('key', b('c'), b('3'));
    tx.end();
    expect(be.stats().pendingOps).to.equal(2);
    expect(s(be.readTx().get('key', b('a'))!)).to.equal('1');
    be.forceCommit();
    expect(be.stats().pendingOps).to.equal(0);
    tx.put('key', b('b'), b('2'));
    tx.delete('key', b('c'));
    tx.put('key', b('d'), b('4'));
    const all = be.readTx().range('key', b(''), null).map((e) => `${s(e.key)}=${s(e.value)}`);
    expect(all).to.deep.equal(['a=1', 'b=2', 'd=4']);
    expect(be.readTx().range('key', b('b'), b('d')).map((e) => s(e.key))).to.deep.equal(['b']);
    expect(be.readTx().range('key', b('a'), null, 2).map((e) => s(e.key))).to.deep.equal(['a', 'b']);
    expect(be.readTx().get('key', b('c'))).to.equal(undefined);
  });

  it('refuses a db file of garbage as corrupt, naming the file and the way out (lmdb-js would crash the process)', () => {
    const tx = be.batchTx();
    tx.put('key', b('a'), b('1'));
    tx.end();
    be.forceCommit();
    be.close();
    const file = path.join(t.dir, 'member', 'snap', 'db');
    expect(backendFileProblem(file)).to.equal(undefined);
    const size = fs.statSync(file).size;
    fs.writeFileSync(file, crypto.randomBytes(size));
    expect(backendFileProblem(file)).to.equal('its first meta page has no lmdb magic');
    expect(() => openBackend(nopLogger, file)).to.throw(BackendError, /database file .*member\/snap\/db is corrupt \(its first meta page has no lmdb magic\).*replace the member/);
    // a good first meta page with a garbage second one
    fs.writeFileSync(file, Buffer.alloc(0));
    be = backendIn(t.dir, { batchIntervalMs: 0 }); // an empty file: lmdb creates the database again
    be.forceCommit();
    be.close();
    const good = fs.readFileSync(file);
    const psize = good.readUInt32LE(48);
    crypto.randomFillSync(good, psize, psize);
    fs.writeFileSync(file, good);
    expect(backendFileProblem(file)).to.equal('its second meta page has no lmdb magic');
    fs.writeFileSync(file, Buffer.alloc(0));
    be = backendIn(t.dir, { batchIntervalMs: 0 });
  });

  it('commits at a txn boundary once batchLimit ops are pending', () => {
    be.close();
    be = backendIn(t.dir, { batchIntervalMs: 0, batchLimit: 3 });
    const tx = be.batchTx();
    tx.put('key', b('a'), b('1'));
    tx.put('key', b('b'), b('1'));
    tx.put('key', b('c'), b('1'));
    expect(be.stats().pendingOps).to.equal(3);
    tx.end();
    expect(be.stats().pendingOps).to.equal(0);
    expect(be.stats().commits).to.equal(1);
  });

  it('keeps the consistent index with the data across reopen', () => {
    be.setConsistentIndex(42, 3);
    be.batchTx().put('members', b('m1'), b('x'));
    be.batchTx().end();
    be.close();
    be = backendIn(t.dir);
    expect(be.consistentIndex()).to.equal(42);
    expect(be.consistentTerm()).to.equal(3);
    expect(s(be.readTx().get('members', b('m1'))!)).to.equal('x');
  });

  it('hash covers the data but not the consistent index', () => {
    be.batchTx().put('key', b('k'), b('v'));
    const h1 = be.hash();
    be.setConsistentIndex(7);
    be.forceCommit();
    expect(be.hash()).to.equal(h1);
    be.batchTx().put('key', b('k'), b('w'));
    expect(be.hash()).to.not.equal(h1);
  });

  it('hash is the same after reopen, including buckets created by name', () => {
    be.batchTx().put('custom-bucket', b('k'), b('v'));
    be.batchTx().put('key', b('k'), b('v'));
    const h = be.hash();
    be.close();
    be = backendIn(t.dir, { batchIntervalMs: 0 });
    expect(be.hash()).to.equal(h);
    expect(be.readTx().range('custom-bucket', b('z'), b('a'))).to.deep.equal([]);
  });

  it('snapshot copy is a valid db whose size is a multiple of 512', async () => {
    const store = new MvccStore(be);
    for (let i = 0; i < 500; i++) store.put(b(`key${i}`), b('x'.repeat(100 + i)));
    be.setConsistentIndex(500);
    const file = path.join(t.dir, 'snap.db');
    const info = await be.snapshotTo(file);
    expect(info.size).to.equal(fs.statSync(file).size);
    expect(info.size % 512).to.equal(0);
    expect(info.sha256).to.equal(crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex'));
    // Writes after the snapshot are not in it.
    store.put(b('late'), b('1'));
    const copy = openBackend(nopLogger, file);
    try {
      expect(copy.consistentIndex()).to.equal(500);
      const restored = new MvccStore(copy);
      expect(restored.rev()).to.equal(501);
      expect(restored.range(b('key0'), b('\0')).count).to.equal(500);
      expect(restored.range(b('late')).count).to.equal(0);
    } finally {
      copy.close();
    }
  });

  it('closing while a snapshot copy runs lets the copy finish', async () => {
    for (let i = 0; i < 2000; i++) be.batchTx().put('key', b(`k${i}`), b('v'.repeat(200)));
    const file = path.join(t.dir, 'during-close.db');
    const p = be.snapshotTo(file);
    be.close();
    const info = await p;
    expect(info.size % 512).to.equal(0);
    const copy = openBackend(nopLogger, file, { batchIntervalMs: 0 });
    try {
      expect(copy.readTx().range('key', b(''), null).length).to.equal(2000);
    } finally {
      copy.close();
    }
  });

  it('replacing the db file while a copy still runs opens the new file, not the closing one', async () => {
    for (let i = 0; i < 3000; i++) be.batchTx().put('key', b(`old${i}`), b('v'.repeat(200)));
    const other = path.join(t.dir, 'other', 'db');
    const ob = openBackend(nopLogger, other, { batchIntervalMs: 0 });
    ob.batchTx().put('key', b('new'), b('1'));
    ob.close();
    const copy = be.snapshotTo(path.join(t.dir, 'copy.db'));
    be.close();
    fs.renameSync(other, be.path);
    be = openBackend(nopLogger, be.path, { batchIntervalMs: 0 });
    expect(be.readTx().range('key', b(''), null).map((e) => s(e.key))).to.deep.equal(['new']);
    be.batchTx().put('key', b('after'), b('1'));
    be.forceCommit();
    await copy;
    be.close();
    be = openBackend(nopLogger, be.path, { batchIntervalMs: 0 });
    expect(be.readTx().range('key', b(''), null).map((e) => s(e.key))).to.deep.equal(['after', 'new']);
  });

  it('snapshot stream yields the same bytes, a multiple of 512, and removes its temp file', async () => {
    for (let i = 0; i < 100; i++) be.batchTx().put('key', b(`k${i}`), b('v'));
    const snap = await be.openSnapshot(32 * 1024);
    const parts: Uint8Array[] = [];
    for await (const c of snap.chunks) parts.push(c);
    const all = Buffer.concat(parts);
    expect(all.length).to.equal(snap.size);
    expect(all.length % 512).to.equal(0);
    expect(crypto.createHash('sha256').update(all).digest('hex')).to.equal(snap.sha256);
    expect(fs.readdirSync(path.dirname(be.path)).filter((f) => f.endsWith('.tmp'))).to.deep.equal([]);
    let n = 0;
    for await (const c of be.snapshotStream()) n += c.byteLength;
    expect(n % 512).to.equal(0);
  });

  it('defrag shrinks the file, keeps the data and the writes made meanwhile', async () => {
    const big = b('z'.repeat(4000));
    for (let i = 0; i < 400; i++) be.batchTx().put('key', b(`k${i}`), big);
    be.forceCommit();
    for (let i = 0; i < 390; i++) be.batchTx().delete('key', b(`k${i}`));
    be.forceCommit();
    const before = be.size();
    const p = be.defrag();
    be.batchTx().put('key', b('during'), b('1'));
    await p;
    expect(be.size()).to.be.lessThan(before);
    expect(be.readTx().range('key', b(''), null).length).to.equal(11);
    be.close();
    be = backendIn(t.dir);
    expect(s(be.readTx().get('key', b('during'))!)).to.equal('1');
    expect(be.sizeInUse()).to.be.greaterThan(0);
    expect(be.sizeInUse()).to.be.at.most(be.size());
  });

  it('survives kill -9 of a writer: opens, and the consistent index matches the data', async function () {
    this.timeout(30000);
    const here = path.dirname(fileURLToPath(import.meta.url));
    const file = path.join(t.dir, 'crash', 'db');
    for (let round = 0; round < 4; round++) {
      const args = [path.join(here, 'fixtures', 'crash-writer.js'), file, round >= 2 ? 'defrag' : 'plain'];
      const child = spawn(process.execPath, args, {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      const target = 2000 + round * 1500 + Math.floor(Math.random() * 1000);
      await new Promise<void>((resolve, reject) => {
        let buf = '';
        child.stdout!.on('data', (d: Buffer) => {
          buf += d.toString();
          const lines = buf.trim().split('\n');
          if (Number(lines[lines.length - 1]) >= target) {
            child.kill('SIGKILL');
          }
        });
        child.on('exit', (code, signal) => (signal === 'SIGKILL' ? resolve() : reject(new Error(`exit ${code}`))));
      });
      const re = openBackend(nopLogger, file, { batchIntervalMs: 0 });
      try {
        const ci = re.consistentIndex();
        expect(ci).to.be.greaterThan(0);
        const store = new MvccStore(re);
        // One put per index: the data holds exactly the entries up to the consistent index.
        expect(store.rev()).to.equal(ci + 1);
        const r = store.range(b('k'), b('\0'), { countOnly: true });
        expect(r.count).to.equal(ci);
        const last = store.range(b(`k${String(ci).padStart(8, '0')}`));
        expect(last.kvs.length).to.equal(1);
        expect(fs.readdirSync(path.dirname(file)).filter((f) => f.endsWith('.tmp'))).to.deep.equal([]);
      } finally {
        re.close();
      }
    }
  });
});
