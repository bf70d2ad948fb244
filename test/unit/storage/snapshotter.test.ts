import { expect } from 'chai';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nopLogger, type LogFields, type Logger } from '../../../server/log/logger.js';
import type { Snapshot } from '../../../server/raft/types.js';
import { snapName, Snapshotter, walSnapshots } from '../../../server/storage/snapshotter.js';
import { createWal, purgeFiles } from '../../../server/storage/wal.js';

function snap(term: number, index: number, body = `state@${index}`): Snapshot {
  return {
    metadata: { term, index, confState: { voters: [0x8e9e05c52164694dn, 2n], learners: [0xffffffffffffffffn] } },
    data: new Uint8Array(Buffer.from(body)),
  };
}

const warnings: { msg: string; fields: LogFields }[] = [];
const captureLogger: Logger = {
  debug() {},
  info() {},
  warn(msg, fields = {}) {
    warnings.push({ msg, fields });
  },
  error() {},
  child() {
    return captureLogger;
  },
};

describe('snapshotter', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'snap-test-'));
    warnings.length = 0;
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('saves term-index named files and loads the newest', async () => {
    const dir = join(root, 'snap');
    const s = new Snapshotter(nopLogger, dir);
    expect(await s.loadNewestAvailable()).to.equal(undefined);
    await s.save(snap(1, 0)); // empty: not written
    await s.save(snap(1, 10));
    await s.save(snap(2, 20));
    await s.save(snap(2, 15));
    expect(s.snapNames()).to.deep.equal([snapName(2, 20), snapName(2, 15), snapName(1, 10)]);
    expect(snapName(2, 20)).to.equal('0000000000000002-0000000000000014.snap');
    expect(readdirSync(dir).some((n) => n.endsWith('.tmp'))).to.equal(false);
    const got = await s.loadNewestAvailable();
    expect(got).to.deep.equal(snap(2, 20));
  });

  it('renames a corrupt file *.broken with a warning and falls back to the next older one', async () => {
    const dir = join(root, 'snap');
    const s = new Snapshotter(captureLogger, dir);
    await s.save(snap(1, 10));
    await s.save(snap(1, 20));
    await s.save(snap(1, 30));
    const newest = join(dir, snapName(1, 30));
    const b = readFileSync(newest);
    b[b.length - 2]! ^= 0x55;
    writeFileSync(newest, b);
    writeFileSync(join(dir, snapName(1, 25)), Buffer.alloc(0)); // empty file
    const got = await s.loadNewestAvailable();
    expect(got!.metadata.index).to.equal(20);
    const names = readdirSync(dir).sort();
    expect(names).to.include(snapName(1, 30) + '.broken');
    expect(names).to.include(snapName(1, 25) + '.broken');
    expect(names).to.not.include(snapName(1, 30));
    expect(warnings.some((w) => w.msg === 'renamed to a broken snap file' && w.fields.path === newest)).to.equal(true);
    expect(s.snapNames()).to.deep.equal([snapName(1, 20), snapName(1, 10)]);
  });

  it('picks the newest snapshot the WAL also records as committed', async () => {
    const dir = join(root, 'snap');
    const walDir = join(root, 'wal');
    const s = new Snapshotter(nopLogger, dir);
    const w = await createWal(nopLogger, walDir, new Uint8Array([9]), { segmentSizeBytes: 64 * 1024 });
    const ents = Array.from({ length: 40 }, (_, i) => ({ term: 1, index: i + 1, type: 0, data: new Uint8Array([i]) }));
    await w.save({ term: 1, vote: 1n, commit: 30 }, ents);
    for (const i of [10, 20, 30]) {
      await s.save(snap(1, i));
      await w.saveSnapshot({ index: i, term: 1 });
    }
    // A snapshot file written but not (yet) recorded in the WAL, and a marker beyond the commit index.
    await s.save(snap(1, 35));
    await w.saveSnapshot({ index: 38, term: 1 });
    await w.close();
    const markers = await walSnapshots(nopLogger, walDir);
    expect(markers.map((m) => m.index)).to.deep.equal([0, 10, 20, 30]);
    const got = await s.loadNewestAvailable(markers);
    expect(got!.metadata.index).to.equal(30);
    expect((await s.loadNewestAvailable())!.metadata.index).to.equal(35);
  });

  it('purge keeps the newest N snapshot files', async () => {
    const dir = join(root, 'snap');
    const s = new Snapshotter(nopLogger, dir);
    for (let i = 1; i <= 8; i++) await s.save(snap(1, i * 100));
    writeFileSync(join(dir, 'db'), 'not mine');
    const removed = await purgeFiles(nopLogger, dir, '.snap', 5);
    expect(removed).to.deep.equal([snapName(1, 100), snapName(1, 200), snapName(1, 300)]);
    expect(s.snapNames()).to.deep.equal([800, 700, 600, 500, 400].map((i) => snapName(1, i)));
    expect(readdirSync(dir)).to.include('db');
  });
});
